"""The blocks of a modern decoder-only language model: `SwiGLUMLP` (the gated feed-forward of Llama/Qwen) and
`TransformerBlock` (a pre-norm residual block around any token mixer).

Where it sits: above the mixers (`GroupedQueryAttention` today, the linear-attention mixers later); the
README's TinyLM stacks these blocks between an embedding and an lm head.
"""

from __future__ import annotations

from tensorplay_p10 import Tensor

from .. import functional as F
from ..cache import Cache
from .linear import Linear
from .module import Module
from .normalization import RMSNorm

__all__ = ["SwiGLUMLP", "TransformerBlock"]


class SwiGLUMLP(Module):
    """The SwiGLU feed-forward network (Shazeer 2020): `down_proj(silu(gate_proj(x)) * up_proj(x))`.

    `gate_proj` and `up_proj` map `hidden_size → intermediate_size` (default `(8 * hidden_size) // 3`, which
    keeps the parameter count of a 4x MLP), `down_proj` maps back. Works on any leading shape.

    Example::

        >>> import tensorplay as tp
        >>> mlp = tp.nn.SwiGLUMLP(48)
        >>> mlp.intermediate_size, mlp(tp.randn(2, 3, 48)).shape
        (128, tensorplay.Size([2, 3, 48]))
    """

    def __init__(
        self,
        hidden_size: int,
        intermediate_size: int | None = None,
        bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.intermediate_size = (
            intermediate_size if intermediate_size is not None else (8 * hidden_size) // 3
        )
        factory = {"device": device, "dtype": dtype}
        self.gate_proj = Linear(hidden_size, self.intermediate_size, bias=bias, **factory)
        self.up_proj = Linear(hidden_size, self.intermediate_size, bias=bias, **factory)
        self.down_proj = Linear(self.intermediate_size, hidden_size, bias=bias, **factory)

    def forward(self, x: Tensor) -> Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class TransformerBlock(Module):
    """A pre-norm residual block around a token mixer, then a SwiGLU MLP::

        x = x + mixer(input_norm(x), position_ids=position_ids, past_key_values=past_key_values)
        x = x + mlp(post_norm(x))

    `mixer` is any module with the mixer contract `forward(hidden_states, position_ids=, past_key_values=)`
    (it reads its own `layer_idx` slot of the cache). Both norms are `RMSNorm(hidden_size, eps=rms_norm_eps)`.

    Example::

        >>> import tensorplay as tp
        >>> block = tp.nn.TransformerBlock(64, tp.nn.GroupedQueryAttention(64, 8, num_kv_heads=2))
        >>> block(tp.randn(1, 7, 64)).shape
        tensorplay.Size([1, 7, 64])
    """

    def __init__(
        self,
        hidden_size: int,
        mixer: Module,
        mlp_intermediate_size: int | None = None,
        rms_norm_eps: float = 1e-6,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.hidden_size = hidden_size
        self.mixer = mixer
        self.mlp = SwiGLUMLP(hidden_size, mlp_intermediate_size, **factory)
        self.input_norm = RMSNorm(hidden_size, eps=rms_norm_eps, **factory)
        self.post_norm = RMSNorm(hidden_size, eps=rms_norm_eps, **factory)

    def forward(
        self, hidden_states: Tensor, position_ids: Tensor | None = None, past_key_values: Cache | None = None
    ) -> Tensor:
        x = hidden_states + self.mixer(
            self.input_norm(hidden_states), position_ids=position_ids, past_key_values=past_key_values
        )
        return x + self.mlp(self.post_norm(x))
