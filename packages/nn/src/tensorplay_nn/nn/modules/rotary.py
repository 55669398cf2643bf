"""Rotary position embedding (RoPE, Su et al. 2021): `RotaryEmbedding` makes the angles, `apply_rotary_emb`
turns queries and keys by them.

Where it sits: inside the attention mixers (`GroupedQueryAttention`), between the per-head q/k norm and the
cache write, so cached keys are already rotated for their absolute positions.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .module import Module

__all__ = ["RotaryEmbedding", "apply_rotary_emb"]


def _rotate(x: Tensor, cos: Tensor, sin: Tensor, interleaved: bool) -> Tensor:
    """Rotate the first `r = 2 * cos.shape[-1]` channels of `x` `[B, H, T, D]`; pass the rest through."""
    half = int(cos.shape[-1])
    rot = 2 * half
    if rot > int(x.shape[-1]):
        raise ValueError(
            f"apply_rotary_emb: cos/sin cover {rot} channels but the input has only {int(x.shape[-1])}"
        )
    # [B, T, r/2] -> [B, 1, T, r/2]: the same angle for every head.
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    if interleaved:
        # Pairs (2i, 2i+1): rotate, then zip the two halves back into adjacent channels.
        x1, x2 = x[..., 0:rot:2], x[..., 1:rot:2]
        out = tp.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).flatten(-2)
    else:
        # Halves layout: channel i pairs with channel i + r/2.
        x1, x2 = x[..., :half], x[..., half:rot]
        out = tp.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)
    if rot == int(x.shape[-1]):
        return out
    return tp.cat([out, x[..., rot:]], -1)


def apply_rotary_emb(
    q: Tensor, k: Tensor, cos: Tensor, sin: Tensor, interleaved: bool = False
) -> tuple[Tensor, Tensor]:
    """Rotate queries `[B, Hq, T, D]` and keys `[B, Hk, T, D]` by angles with `cos`/`sin` `[B, T, r/2]`.

    For each pair of channels `(a, b)` and angle `θ` (position × frequency)::

        a' = a·cos θ − b·sin θ,    b' = b·cos θ + a·sin θ

    Pairs are `(i, i + r/2)` (halves layout, `interleaved=False`) or `(2i, 2i + 1)` (`interleaved=True`). Only
    the first `r` channels turn; the rest pass through. Passing `-sin` applies the inverse rotation.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.rotary import RotaryEmbedding, apply_rotary_emb
        >>> rope = RotaryEmbedding(8)
        >>> q, k = tp.randn(1, 4, 5, 8), tp.randn(1, 2, 5, 8)
        >>> cos, sin = rope(q, tp.arange(5)[None])
        >>> q2, k2 = apply_rotary_emb(q, k, cos, sin)
        >>> tuple(q2.shape), tuple(k2.shape)
        ((1, 4, 5, 8), (1, 2, 5, 8))
    """
    if tuple(cos.shape) != tuple(sin.shape) or cos.dim() != 3:
        raise ValueError(
            "apply_rotary_emb: cos and sin must both be [B, T, r/2], "
            f"got {tuple(cos.shape)} and {tuple(sin.shape)}"
        )
    return _rotate(q, cos, sin, interleaved), _rotate(k, cos, sin, interleaved)


class RotaryEmbedding(Module):
    """The cos/sin tables of rotary position embedding for positions `position_ids`.

    `inv_freq[i] = base^(-2i/dim)` for `i < dim/2` (a non-persistent buffer, so checkpoints do not carry it);
    `forward(x, position_ids [B, T])` returns `cos(θ)` and `sin(θ)` with `θ[b, t, i] = position_ids[b, t] ·
    inv_freq[i]`, each `[B, T, dim/2]`, computed in float32 and cast to `x.dtype` (only `x`'s dtype and device
    are read).

    Args:
        dim: channels rotated per head (even; `ValueError` otherwise).
        base: the wavelength base (10000 in the original paper).
        interleaved: the pair layout `apply_rotary_emb` uses with these tables (stored for the mixers).

    Example::

        >>> import tensorplay as tp
        >>> rope = tp.nn.RotaryEmbedding(4)
        >>> cos, sin = rope(tp.zeros(1), tp.tensor([[0, 1]]))
        >>> cos.shape, sin[0, 1, 0].item() == tp.tensor(1.0).sin().item()
        (tensorplay.Size([1, 2, 2]), True)
    """

    def __init__(self, dim: int, base: float = 10000.0, interleaved: bool = False, device=None) -> None:
        super().__init__()
        if dim <= 0 or dim % 2:
            raise ValueError(f"RotaryEmbedding: dim must be a positive even number, got {dim}")
        self.dim = dim
        self.base = float(base)
        self.interleaved = interleaved
        exponents = tp.arange(0, dim, 2, dtype=tp.float32, device=device) / dim
        self.register_buffer("inv_freq", 1.0 / (self.base**exponents), persistent=False)

    def forward(self, x: Tensor, position_ids: Tensor) -> tuple[Tensor, Tensor]:
        if position_ids.dim() != 2:
            raise ValueError(
                f"RotaryEmbedding: position_ids must be [batch, seq], got shape {tuple(position_ids.shape)}"
            )
        inv_freq = self.inv_freq.to(device=x.device)
        angles = position_ids.to(dtype=tp.float32, device=x.device).unsqueeze(-1) * inv_freq
        return angles.cos().to(x.dtype), angles.sin().to(x.dtype)

    def extra_repr(self) -> str:
        return f"{self.dim}, base={self.base}, interleaved={self.interleaved}"
