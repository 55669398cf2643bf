"""`CrossAttention` (queries from one sequence, keys and values from another) and `CausalEncoderDecoder`
(a stack of encoder blocks whose output, the memory, seeds and conditions a stack of decoder blocks).

Where it sits: beside `TransformerBlock` (modules/modern_block.py), whose blocks both stacks are made of; the
token mixer of every block comes from a factory, `GroupedQueryAttention` by default, so any mixer of the zoo
(MLA, the delta-rule mixers, ...) can be tried in an encoder-decoder. docs/mixers/encoder_decoder.md gives the
maths and an example.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .causal_attention import GroupedQueryAttention
from .container import ModuleList
from .linear import Linear
from .modern_block import TransformerBlock
from .module import Module
from .normalization import RMSNorm

__all__ = ["CrossAttention", "CausalEncoderDecoder"]


class CrossAttention(Module):
    """Multi-head attention of `x` over a memory sequence, without mask or cache.

    For `x` `[B, T, C]` and `memory` `[B, S, kv_dim]`, with `H` heads of width `D`::

        q = split(q_proj(x)) [B, H, T, D],   k, v = split(k_proj(memory)), split(v_proj(memory)) [B, H, S, D]
        out = o_proj(merge(softmax(q kᵀ · D^-1/2) v)) [B, T, C]

    Every query sees every memory position (no causal mask).

    Args:
        hidden_size: width `C` of `x` and of the output (divisible by `num_heads`). num_heads: `H`.
        head_dim: `D` (default `C // H`). kv_dim: width of `memory` (default `C`). bias: of the four
        projections.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.causal_encoder_decoder import CrossAttention
        >>> xattn = CrossAttention(32, num_heads=4, kv_dim=16)
        >>> xattn(tp.randn(2, 5, 32), tp.randn(2, 7, 16)).shape
        tensorplay.Size([2, 5, 32])
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        head_dim: int | None = None,
        kv_dim: int | None = None,
        bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_heads <= 0:
            raise ValueError(f"CrossAttention: num_heads must be positive, got {num_heads}")
        if hidden_size % num_heads:
            raise ValueError(
                f"CrossAttention: hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads})"
            )
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = head_dim if head_dim is not None else hidden_size // num_heads
        self.kv_dim = kv_dim if kv_dim is not None else hidden_size
        self.scaling = self.head_dim**-0.5
        factory = {"device": device, "dtype": dtype}
        inner = num_heads * self.head_dim
        self.q_proj = Linear(hidden_size, inner, bias=bias, **factory)
        self.k_proj = Linear(self.kv_dim, inner, bias=bias, **factory)
        self.v_proj = Linear(self.kv_dim, inner, bias=bias, **factory)
        self.o_proj = Linear(inner, hidden_size, bias=bias, **factory)

    def forward(self, x: Tensor, memory: Tensor) -> Tensor:
        if x.dim() != 3 or int(x.shape[-1]) != self.hidden_size:
            raise ValueError(f"CrossAttention: expected x [B, T, {self.hidden_size}], got {tuple(x.shape)}")
        if (
            memory.dim() != 3
            or int(memory.shape[-1]) != self.kv_dim
            or int(memory.shape[0]) != int(x.shape[0])
        ):
            raise ValueError(
                f"CrossAttention: expected memory [{int(x.shape[0])}, S, {self.kv_dim}], "
                f"got {tuple(memory.shape)}"
            )
        b, t, _ = (int(d) for d in x.shape)
        s = int(memory.shape[1])
        h, d = self.num_heads, self.head_dim
        q = self.q_proj(x).view(b, t, h, d).transpose(1, 2)
        k = self.k_proj(memory).view(b, s, h, d).transpose(1, 2)
        v = self.v_proj(memory).view(b, s, h, d).transpose(1, 2)
        out = tp.scaled_dot_product_attention(q, k, v, scale=self.scaling)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, h * d))

    def extra_repr(self) -> str:
        return (
            f"hidden_size={self.hidden_size}, num_heads={self.num_heads}, head_dim={self.head_dim}, "
            f"kv_dim={self.kv_dim}"
        )


class CausalEncoderDecoder(Module):
    """An encoder stack whose normed, projected output (the memory) seeds a decoder stack that also
    cross-attends to it::

        e = x;       e = encoder[i](e)                       for each encoder layer i
        memory = memory_proj(encoder_final_norm(e))          [B, T, C]
        d = memory;  d = decoder[i](d);  d = d + cross_attention[i](d, memory)   for each decoder layer i
        return d                                             [B, T, C]

    Every block is a `TransformerBlock(hidden_size, mixer_factory(hidden_size, layer_idx), ...)`, with
    `layer_idx` counting from 0 in each stack; the default factory is `GroupedQueryAttention(hidden_size,
    num_heads, num_kv_heads=num_kv_heads, layer_idx=layer_idx)`. With causal mixers the memory at position `t`
    depends only on inputs `<= t`, but the cross-attention is unmasked, so every output position reads the
    whole memory: the model as a whole is not causal. No cache, no positions (each mixer numbers its tokens
    from 0).

    Args:
        hidden_size: width `C`. num_heads: heads of the default mixers and of the cross-attentions.
        n_encoder_layers, n_decoder_layers: depth of each stack. mixer_factory: `(hidden_size, layer_idx) ->
        Module` making each block's token mixer. num_kv_heads: of the default mixers. mlp_intermediate_size,
        rms_norm_eps: of every `TransformerBlock` (and `rms_norm_eps` of `encoder_final_norm`).

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.causal_encoder_decoder import CausalEncoderDecoder
        >>> model = CausalEncoderDecoder(32, num_heads=4, num_kv_heads=2)
        >>> model(tp.randn(2, 6, 32)).shape
        tensorplay.Size([2, 6, 32])
        >>> [block.mixer.layer_idx for block in model.decoder]
        [0, 1]
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        n_encoder_layers: int = 2,
        n_decoder_layers: int = 2,
        mixer_factory: Callable[[int, int], Module] | None = None,
        num_kv_heads: int | None = None,
        mlp_intermediate_size: int | None = None,
        rms_norm_eps: float = 1e-6,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_heads <= 0 or hidden_size % num_heads:
            raise ValueError(
                f"CausalEncoderDecoder: hidden_size ({hidden_size}) must be divisible by "
                f"num_heads ({num_heads})"
            )
        factory = {"device": device, "dtype": dtype}
        if mixer_factory is None:

            def mixer_factory(size: int, layer_idx: int) -> Module:
                return GroupedQueryAttention(
                    size, num_heads, num_kv_heads=num_kv_heads, layer_idx=layer_idx, **factory
                )

        def stack(depth: int) -> ModuleList:
            return ModuleList(
                TransformerBlock(
                    hidden_size,
                    mixer_factory(hidden_size, i),
                    mlp_intermediate_size=mlp_intermediate_size,
                    rms_norm_eps=rms_norm_eps,
                    **factory,
                )
                for i in range(depth)
            )

        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.encoder = stack(n_encoder_layers)
        self.encoder_final_norm = RMSNorm(hidden_size, eps=rms_norm_eps, **factory)
        self.memory_proj = Linear(hidden_size, hidden_size, bias=False, **factory)
        self.decoder = stack(n_decoder_layers)
        self.cross_attention = ModuleList(
            CrossAttention(hidden_size, num_heads, **factory) for _ in range(n_decoder_layers)
        )

    def forward(self, hidden_states: Tensor) -> Tensor:
        if hidden_states.dim() != 3 or int(hidden_states.shape[-1]) != self.hidden_size:
            raise ValueError(
                f"CausalEncoderDecoder: expected hidden_states [B, T, {self.hidden_size}], "
                f"got {tuple(hidden_states.shape)}"
            )
        states = hidden_states
        for block in self.encoder:
            states = block(states)
        memory = self.memory_proj(self.encoder_final_norm(states))
        states = memory
        for block, cross in zip(self.decoder, self.cross_attention, strict=True):
            states = block(states)
            states = states + cross(states, memory)
        return states
