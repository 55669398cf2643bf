"""`GroupedQueryAttention`: causal self-attention with grouped key/value heads, RoPE, optional q/k RMS norm
and a key/value cache — the token mixer of the README's TinyLM and of Llama/Qwen-style models.

Where it sits: a mixer inside `TransformerBlock` (modules/modern_block.py); it files its rotated keys and its
values in a `Cache` (nn/cache/) under `layer_idx`, and attends through the core op
`scaled_dot_product_attention` (blockwise online softmax with GQA broadcast, P10).
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from ..cache import Cache
from .linear import Linear
from .module import Module
from .normalization import RMSNorm
from .rotary import RotaryEmbedding, apply_rotary_emb

__all__ = ["GroupedQueryAttention"]


class GroupedQueryAttention(Module):
    """Multi-head causal self-attention where groups of query heads share one key/value head (GQA).

    For input `x` `[B, T, C]`, with `H` query heads, `KV` key/value heads and head width `D`::

        q = split(q_proj(x)) [B, H, T, D],  k, v = split(k_proj(x)), split(v_proj(x)) [B, KV, T, D]
        q, k = q_norm(q), k_norm(k)                      (per-head RMSNorm, if qk_norm)
        q, k = rope(q, positions), rope(k, positions)
        k, v = cache.update(k, v, layer_idx)             (if a cache is given: [B, KV, S, D])
        o = softmax(q kᵀ · D^-1/2 + causal mask) v       (query head h reads kv head h // (H / KV))
        out = o_proj(merge(o)) [B, T, C]

    Positions default to `arange(offset, offset + T)` with `offset = cache.get_seq_length(layer_idx)`. The
    causal mask is applied when the query and key lengths agree (a prefill); a decode step attends to
    everything cached. `num_kv_heads == num_heads` is ordinary multi-head attention, `num_kv_heads == 1`
    multi-query.

    Args:
        embed_dim: model width `C`. num_heads: `H`. num_kv_heads: `KV` (default `H`; must divide `H`).
        head_dim: `D` (default `C // H`; `C % H` must be 0 even when given). dropout: on the attention
        weights, in training only. bias: of the four projections. qk_norm: RMS-normalise q and k per head.
        rms_norm_eps: eps of those norms. rope_base, rope_interleaved: of the `RotaryEmbedding`.
        layer_idx: the cache slot this layer reads and writes.

    Example::

        >>> import tensorplay as tp
        >>> attn = tp.nn.GroupedQueryAttention(64, num_heads=8, num_kv_heads=2)
        >>> attn(tp.randn(2, 5, 64)).shape
        tensorplay.Size([2, 5, 64])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        num_kv_heads: int | None = None,
        head_dim: int | None = None,
        dropout: float = 0.0,
        bias: bool = False,
        qk_norm: bool = False,
        rms_norm_eps: float = 1e-6,
        rope_base: float = 10000.0,
        rope_interleaved: bool = False,
        layer_idx: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if num_heads <= 0 or num_kv_heads <= 0:
            raise ValueError(
                f"GroupedQueryAttention: num_heads ({num_heads}) and num_kv_heads ({num_kv_heads}) "
                "must be positive"
            )
        if embed_dim % num_heads:
            raise ValueError(
                f"GroupedQueryAttention: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
            )
        if num_heads % num_kv_heads:
            raise ValueError(
                f"GroupedQueryAttention: num_heads ({num_heads}) must be divisible by "
                f"num_kv_heads ({num_kv_heads})"
            )
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim if head_dim is not None else embed_dim // num_heads
        self.dropout = dropout
        self.layer_idx = layer_idx
        self.qk_norm = bool(qk_norm)
        self.scaling = self.head_dim**-0.5
        factory = {"device": device, "dtype": dtype}
        self.q_proj = Linear(embed_dim, num_heads * self.head_dim, bias=bias, **factory)
        self.k_proj = Linear(embed_dim, num_kv_heads * self.head_dim, bias=bias, **factory)
        self.v_proj = Linear(embed_dim, num_kv_heads * self.head_dim, bias=bias, **factory)
        self.o_proj = Linear(num_heads * self.head_dim, embed_dim, bias=bias, **factory)
        if self.qk_norm:
            self.q_norm = RMSNorm(self.head_dim, eps=rms_norm_eps, **factory)
            self.k_norm = RMSNorm(self.head_dim, eps=rms_norm_eps, **factory)
        else:
            self.q_norm = None
            self.k_norm = None
        self.rope = RotaryEmbedding(
            self.head_dim, base=rope_base, interleaved=rope_interleaved, device=device
        )

    def forward(
        self, hidden_states: Tensor, position_ids: Tensor | None = None, past_key_values: Cache | None = None
    ) -> Tensor:
        if hidden_states.dim() != 3 or int(hidden_states.shape[-1]) != self.embed_dim:
            raise ValueError(
                f"GroupedQueryAttention: expected hidden_states [B, T, {self.embed_dim}], "
                f"got {tuple(hidden_states.shape)}"
            )
        b, t, _ = (int(s) for s in hidden_states.shape)
        d = self.head_dim
        q = self.q_proj(hidden_states).view(b, t, self.num_heads, d).transpose(1, 2)
        k = self.k_proj(hidden_states).view(b, t, self.num_kv_heads, d).transpose(1, 2)
        v = self.v_proj(hidden_states).view(b, t, self.num_kv_heads, d).transpose(1, 2)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        if position_ids is None:
            offset = past_key_values.get_seq_length(self.layer_idx) if past_key_values is not None else 0
            position_ids = tp.arange(offset, offset + t, dtype=tp.int64, device=hidden_states.device).expand(
                b, t
            )
        cos, sin = self.rope(q, position_ids)
        q, k = apply_rotary_emb(q, k, cos, sin, interleaved=self.rope.interleaved)
        if past_key_values is not None:
            k, v = past_key_values.update(k, v, self.layer_idx)
        out = tp.scaled_dot_product_attention(
            q,
            k,
            v,
            dropout_p=self.dropout if self.training else 0.0,
            # Only a prefill (queries and keys of one length) needs the mask; see the class docstring.
            is_causal=t > 1 and t == int(k.shape[2]),
            scale=self.scaling,
            enable_gqa=self.num_kv_heads != self.num_heads,
        )
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.num_heads * d))

    def extra_repr(self) -> str:
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, num_kv_heads={self.num_kv_heads}, "
            f"head_dim={self.head_dim}, qk_norm={self.qk_norm}, layer_idx={self.layer_idx}"
        )
