"""`CompressedSparseAttention` (CSA): sliding-window attention over one shared key/value head, plus one
compressed entry per `compress_rate` tokens, of which a lightning indexer lets each query read at most
`index_topk` — recent tokens exactly, the distant past in summary (the long-context mixer of DeepSeek-V3.2/V4
style models).

Where it sits: a mixer inside `TransformerBlock` (modules/modern_block.py). Its window of rotated keys lives
in a `SlidingWindowCache` under `layer_idx`; the compressors' running state rides on that cache object as
`csa_states`. The compressor, the indexer and the entry mask are in _compressed_parts.py (re-exported here,
where programs import them). The maths, shapes and state layout: docs/mixers/compressed_sparse_attention.md.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from ..cache import Cache, SlidingWindowCache
from ..parameter import Parameter
from ._compressed_parts import _block_bias, _cat, _LightningIndexer, _part, _upcast, _WindowCompressor
from .linear import Linear
from .module import Module
from .normalization import RMSNorm
from .rotary import RotaryEmbedding, _rotate, apply_rotary_emb

__all__ = ["CompressedSparseAttention"]

# Queries per block of the attention loop (Note [Blocked window attention]).
_QUERY_BLOCK = 128


class CompressedSparseAttention(Module):
    """Sliding-window attention plus compressed, indexer-selected entries of the far past, with sinks.

    For input `x` `[B, T, C]`, `H` query heads of width `D`, rope width `r = rope_head_dim or D`, window `W`::

        c   = q_a_norm(q_a_proj(x))                                  [B, T, q_lora_rank]
        q   = rope(q_b_proj(c))                                      [B, H, T, D]  (first r channels turn)
        kv  = rope(kv_norm(kv_proj(x)))                              [B, 1, T, D]  (one head; key = value)
        e   = compressor(x)                                          [B, n, D]     (one per m tokens)
        top = indexer(x, c)                                          [B, T, k]     (entry indices)
        a   = softmax over [q·kv_j·D^-1/2 (window) ; q·e_j·D^-1/2 (entries) ; sinks_h]  (≥ float32)
        o   = Σ_j a_j kv_j + Σ_j a_j e_j                             (the sink reads no value)
        out = o_proj(merge(rope⁻¹(o)))                               (turned back with −sin at the query)

    Key `j` is visible to the query at position `p` iff `0 <= p − pos_j < W`. Entry `j` (window of `m =
    compress_rate` tokens ending at `entry_end[j]`) is visible iff the indexer chose it and
    `entry_end[j] <= p`. The sink is one learnt logit per head with no value: it lets a head put weight on
    nothing. Turning the output back by the query's angle leaves, in each value's rope channels, only its
    angle relative to the query.

    Top-k selection has no gradient, so the indexer's weights get none from the loss (see
    `_LightningIndexer`); every other parameter, the compressor and `sinks` included, does.

    With a cache (`SlidingWindowCache(mod.sliding_window)`), positions default to `arange(offset, offset + T)`
    with `offset = cache.get_seq_length(layer_idx)`; `cache.update(kv, kv, layer_idx)` files the rotated keys
    and `cache.positions[layer_idx]` gives their positions; the compressor and indexer states are kept in
    `cache.csa_states[layer_idx] = {"compressor": {...}, "indexer": {...}}`. Masks come from absolute
    positions, so token-by-token decoding and chunked prefill equal one full pass.

    Args:
        hidden_size: `C` (divisible by `num_heads`). num_heads: `H`. head_dim: `D`. q_lora_rank: width of the
        query bottleneck. compress_rate: `m`, tokens per compressed entry. window_size: `W`. rope_head_dim:
        `r` (even, at most `D`; default `D`). index_n_heads, index_head_dim, index_topk: the indexer's scoring
        heads, their width and the entries each query may read. rope_base: of the rope. rms_norm_eps: of
        every norm. layer_idx: the cache slot this layer reads and writes.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.compressed_attention import CompressedSparseAttention
        >>> attn = CompressedSparseAttention(32, num_heads=4, head_dim=8, q_lora_rank=16, window_size=8,
        ...                                  index_head_dim=8, index_topk=2)
        >>> attn(tp.randn(2, 20, 32)).shape
        tensorplay.Size([2, 20, 32])
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        head_dim: int,
        q_lora_rank: int,
        compress_rate: int = 4,
        window_size: int = 128,
        rope_head_dim: int | None = None,
        index_n_heads: int = 4,
        index_head_dim: int = 32,
        index_topk: int = 16,
        rope_base: float = 10000.0,
        rms_norm_eps: float = 1e-6,
        layer_idx: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_heads <= 0 or head_dim <= 0 or q_lora_rank <= 0:
            raise ValueError(
                f"CompressedSparseAttention: num_heads ({num_heads}), head_dim ({head_dim}) and q_lora_rank "
                f"({q_lora_rank}) must be positive"
            )
        if hidden_size % num_heads:
            raise ValueError(
                f"CompressedSparseAttention: hidden_size ({hidden_size}) must be divisible by num_heads "
                f"({num_heads})"
            )
        if compress_rate <= 0 or window_size <= 0:
            raise ValueError(
                f"CompressedSparseAttention: compress_rate ({compress_rate}) and window_size ({window_size}) "
                "must be positive"
            )
        rope_dim = rope_head_dim if rope_head_dim is not None else head_dim
        if rope_dim > head_dim:
            raise ValueError(
                f"CompressedSparseAttention: rope_head_dim ({rope_dim}) must not exceed head_dim ({head_dim})"
            )
        factory = {"device": device, "dtype": dtype}
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.compress_rate = compress_rate
        self.sliding_window = window_size
        self.layer_idx = layer_idx
        self.scaling = head_dim**-0.5
        self.q_a_proj = Linear(hidden_size, q_lora_rank, bias=False, **factory)
        self.q_a_norm = RMSNorm(q_lora_rank, eps=rms_norm_eps, **factory)
        self.q_b_proj = Linear(q_lora_rank, num_heads * head_dim, bias=False, **factory)
        self.kv_proj = Linear(hidden_size, head_dim, bias=False, **factory)
        self.kv_norm = RMSNorm(head_dim, eps=rms_norm_eps, **factory)
        self.o_proj = Linear(num_heads * head_dim, hidden_size, bias=False, **factory)
        self.sinks = Parameter(tp.zeros(num_heads, **factory))
        self.rope = RotaryEmbedding(rope_dim, base=rope_base, device=device)
        self.compressor = _WindowCompressor(hidden_size, head_dim, compress_rate, rms_norm_eps, **factory)
        self.indexer = _LightningIndexer(
            hidden_size,
            q_lora_rank,
            compress_rate,
            index_n_heads,
            index_head_dim,
            index_topk,
            rms_norm_eps,
            **factory,
        )

    # The entry mask, also reachable as a method (programs call `mod._block_bias(...)`).
    _block_bias = staticmethod(_block_bias)

    def forward(
        self, hidden_states: Tensor, position_ids: Tensor | None = None, past_key_values: Cache | None = None
    ) -> Tensor:
        if hidden_states.dim() != 3 or int(hidden_states.shape[-1]) != self.hidden_size:
            raise ValueError(
                f"CompressedSparseAttention: expected hidden_states [B, T, {self.hidden_size}], "
                f"got {tuple(hidden_states.shape)}"
            )
        b, t = int(hidden_states.shape[0]), int(hidden_states.shape[1])
        h, d = self.num_heads, self.head_dim
        if b == 0 or t == 0:  # nothing to attend or to file
            return self.o_proj(tp.zeros(b, t, h * d, dtype=hidden_states.dtype, device=hidden_states.device))
        cache = past_key_values
        offset = cache.get_seq_length(self.layer_idx) if cache is not None else 0
        if position_ids is None:
            position_ids = tp.arange(offset, offset + t, dtype=tp.int64, device=hidden_states.device).expand(
                b, t
            )
        elif tuple(position_ids.shape) != (b, t):
            raise ValueError(
                f"CompressedSparseAttention: position_ids must be [{b}, {t}], got {tuple(position_ids.shape)}"
            )

        cos, sin = self.rope(hidden_states, position_ids)
        q_residual = self.q_a_norm(self.q_a_proj(hidden_states))
        q = self.q_b_proj(q_residual).view(b, t, h, d).transpose(1, 2)
        kv = self.kv_norm(self.kv_proj(hidden_states)).view(b, t, 1, d).transpose(1, 2)
        q, kv = apply_rotary_emb(q, kv, cos, sin, interleaved=self.rope.interleaved)
        keys, key_pos = self._window_keys(kv, position_ids, cache, offset)

        state = self._layer_state(cache, offset)
        seq_start = int(position_ids[:, 0].max())
        entries, state["compressor"] = self.compressor(
            hidden_states, self.rope, seq_start, state["compressor"]
        )
        state["indexer"], topk = self.indexer(
            hidden_states, q_residual, position_ids, self.rope, seq_start, state["indexer"]
        )
        entry_end = entry_bias = None
        if entries is not None and int(entries.shape[1]):
            entry_end = state["compressor"]["entry_end"]
            entry_bias = _block_bias(topk, entry_end, position_ids, int(entries.shape[1]))

        out = self._attend(q, keys, key_pos, position_ids, entries, entry_end, entry_bias)
        out = _rotate(out, cos, -sin, self.rope.interleaved)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, h * d))

    def _window_keys(
        self, kv: Tensor, position_ids: Tensor, cache: Cache | None, offset: int
    ) -> tuple[Tensor, Tensor]:
        """The keys this call attends over `[B, 1, S, D]` and their absolute positions `[B, S]`.

        Note [Chunk crossing the window]: a `SlidingWindowCache` trims to the last `W` positions *after*
        appending, so for several new tokens it can drop keys that the chunk's first queries still see. The
        window held before the write, plus the new keys, covers every query of the chunk; that is what is
        returned then (the cache itself is still written through `update`).
        """
        if cache is None:
            return kv, position_ids
        i, b, t = self.layer_idx, int(kv.shape[0]), int(kv.shape[2])
        held = None
        if isinstance(cache, SlidingWindowCache) and i < len(cache.key_cache):
            held, held_pos = cache.key_cache[i], cache.positions[i]
        keys, _ = cache.update(kv, kv, i)
        if held is not None and int(keys.shape[2]) < int(held.shape[2]) + t:
            new_pos = tp.arange(offset, offset + t, dtype=tp.int64, device=kv.device).expand(b, t)
            return _cat([held, kv], 2), tp.cat([held_pos, new_pos], 1)
        positions = getattr(cache, "positions", None)
        if positions is not None and i < len(positions) and positions[i] is not None:
            return keys, positions[i]
        s = int(keys.shape[2])  # a cache without positions returns the latest s positions
        return keys, tp.arange(offset + t - s, offset + t, dtype=tp.int64, device=kv.device).expand(b, s)

    def _layer_state(self, cache: Cache | None, offset: int) -> dict:
        """This layer's `{"compressor": ..., "indexer": ...}` dict: on the cache (`csa_states`) or, without
        one, fresh. A cache that has seen no token of this layer (new, or `reset()`) starts a fresh state."""
        if cache is None:
            return {"compressor": {}, "indexer": {}}
        states = getattr(cache, "csa_states", None)
        if states is None:
            states = cache.csa_states = {}
        if offset == 0 or self.layer_idx not in states:
            states[self.layer_idx] = {"compressor": {}, "indexer": {}}
        return states[self.layer_idx]

    def _attend(
        self,
        q: Tensor,
        keys: Tensor,
        key_pos: Tensor,
        query_pos: Tensor,
        entries: Tensor | None,
        entry_end: Tensor | None,
        entry_bias: Tensor | None,
    ) -> Tensor:
        """Softmax attention of `q` `[B, H, T, D]` over the visible window keys, the visible entries and the
        sink; returns `[B, H, T, D]`.

        Note [Blocked window attention]: queries go in blocks of `_QUERY_BLOCK`. A block reads only the
        keys whose positions can fall in its window (`[min pos − W + 1, max pos]`, a contiguous key range
        found from the positions) and only the entries complete by its last query, so a long prefill builds
        blocks of `block × (block + W)` scores instead of one `T × T` matrix. Visibility inside a block still
        comes from the positions, so the blocks change no result.
        """
        b, h, t, _ = (int(s) for s in q.shape)
        n_entries = 0 if entries is None else int(entries.shape[1])
        key_lo, key_hi = key_pos.min(0).values, key_pos.max(0).values  # [S], over the batch
        sink = self.sinks.to(q.dtype).view(1, h, 1, 1)
        zero = tp.zeros((), dtype=q.dtype, device=q.device)
        blocks = []
        for i0 in range(0, t, _QUERY_BLOCK):
            i1 = min(t, i0 + _QUERY_BLOCK)
            qb, pos = _part(q, 2, i0, i1), _part(query_pos, 1, i0, i1)
            first, last = int(pos.min()), int(pos.max())
            near = ((key_hi > first - self.sliding_window) & (key_lo <= last)).nonzero()
            j0, j1 = (int(near[0, 0]), int(near[-1, 0]) + 1) if int(near.shape[0]) else (0, 0)
            dist = pos.unsqueeze(-1) - _part(key_pos, 1, j0, j1).unsqueeze(1)  # [B, tb, s]
            visible = ((dist >= 0) & (dist < self.sliding_window)).unsqueeze(1)
            # Keys and values in one tensor (key = value): the window's, then the entries complete by the
            # block's last query (entries end in order, so those are a prefix).
            kv, bias = _part(keys, 2, j0, j1), tp.where(visible, zero, float("-inf"))
            ne = int((entry_end <= last).sum()) if n_entries else 0
            if ne:
                kv = _cat([kv, _part(entries, 1, 0, ne).unsqueeze(1)], 2)
                eb = _part(_part(entry_bias, 2, i0, i1), 3, 0, ne).to(q.dtype)
                bias = tp.cat([bias, eb], -1)
            logits = tp.matmul(qb, kv.transpose(-1, -2)) * self.scaling + bias  # [B, H, tb, s (+ ne)]
            logits = _cat([logits, sink.expand(b, h, i1 - i0, 1)], -1)  # the sink's column, last
            weights = _upcast(logits).softmax(-1).to(q.dtype)
            blocks.append(tp.matmul(weights[..., :-1], kv))
        return blocks[0] if len(blocks) == 1 else tp.cat(blocks, 2)

    def extra_repr(self) -> str:
        return (
            f"hidden_size={self.hidden_size}, num_heads={self.num_heads}, head_dim={self.head_dim}, "
            f"compress_rate={self.compress_rate}, window_size={self.sliding_window}, "
            f"layer_idx={self.layer_idx}"
        )
