"""The parts of `CompressedSparseAttention` below the mixer: `_WindowCompressor` (one entry per window of
`compress_rate` tokens), `_LightningIndexer` (which entries each query may read) and `_block_bias` (that
choice as an additive mask).

Where it sits: private to modules/compressed_attention.py, which re-exports these three names (programs import
them from there). Both compressors keep a running state dict between calls, so a sequence fed in pieces yields
the entries one pass would; the mixer files those dicts on the cache object (`csa_states`).
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import is_grad_enabled, no_grad

from .. import functional as F
from ..parameter import Parameter
from .linear import Linear
from .module import Module
from .normalization import RMSNorm
from .rotary import RotaryEmbedding, _rotate

__all__: list[str] = []  # private parts; compressed_attention.py re-exports them


def _cat(tensors: list[Tensor], dim: int) -> Tensor:
    """`tp.cat`, with correct gradients when only some pieces need one.

    Note [cat with constant pieces]: the recorded backward of `cat` is not told the sizes of pieces that need
    no gradient, so it hands every later piece a slice of the gradient shifted by them (tensorplay_tpx
    autograd/formulas/shape.py, `_cat`). Here such pieces (the first window's empty slots, a cached window or
    tail read back from a no-grad call) are given a gradient slot of their own, a throw-away leaf, which keeps
    the slices right.
    """
    if is_grad_enabled() and any(t.requires_grad for t in tensors):
        tensors = [t if t.requires_grad else t.detach().requires_grad_(True) for t in tensors]
    return tp.cat(tensors, dim)


def _part(x: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """`x.narrow(dim, start, stop - start)`, or `x` itself when that is all of it (no autograd node)."""
    return x if start == 0 and stop == int(x.shape[dim]) else x.narrow(dim, start, stop - start)


def _upcast(x: Tensor) -> Tensor:
    """`x` in at least float32: half-precision softmaxes round near-tied weights together (float64 stays)."""
    return x.to(tp.promote_types(x.dtype, tp.float32))


def _rope_tables(rope: RotaryEmbedding, x: Tensor, position_ids: Tensor, width: int) -> tuple[Tensor, Tensor]:
    """`rope`'s cos/sin `[B, T, r/2]` at `position_ids`, cut to at most `width // 2` pairs.

    Note [Narrow rope]: the indexer (width `index_head_dim`) shares the mixer's rope (width `rope_head_dim or
    head_dim`). When the rope is wider than the vectors it turns, only their first `width // 2` pairs rotate,
    with the rope's first (fastest) frequencies; queries and entries of one width use the same cut, so their
    dot product still depends on relative position only.
    """
    cos, sin = rope(x, position_ids)
    half = min(int(cos.shape[-1]), width // 2)
    if half < int(cos.shape[-1]):
        cos, sin = cos[..., :half], sin[..., :half]
    return cos, sin


class _WindowCompressor(Module):
    """Compress each complete window of `m = compress_rate` tokens into one vector of width `D = head_dim`.

    Every token projects to `kv_proj(x)` and `gate_proj(x)` (`2D` channels each; `position_bias[r]` is added
    to the gates of the token at offset `r` of its window). The first half `[:D]` votes for the **next**
    window, the second half `[D:]` for the token's own window. Window `w` (tokens `w·m … w·m + m − 1` after
    `seq_start`) gathers `2m` slots: the previous window's first halves and its own second halves, and pools
    them with a softmax over the slots (in at least float32), separately per channel `c`::

        entry_w[c] = Σ_s softmax_s(gate[s, c]) · kv[s, c]        (s over the 2m slots)
        entry_w    = rope(kv_norm(entry_w), position = start of window w)

    The very first window has no previous window: those `m` slots are empty (gate −inf, weight 0).

    `forward(hidden_states [B, T, C], rope, seq_start, state)` returns `(entries, new_state)`: `entries` are
    **all** entries so far `[B, n, D]` (None before the first complete window). `state` is not changed; the
    new dict holds `tail_kv`, `tail_gate` (`[B, t, 2D]`, the incomplete window's projections, t < m; gates
    without `position_bias`), `tail_start` (its first position), `overlap_kv`, `overlap_gate` (`[B, m, D]`,
    the last complete window's first halves, gates with `position_bias`), `entries` and `entry_end` (int64
    `[n]`, each window's last position). Passing the returned state back continues the sequence: feeding
    tokens in pieces gives the entries of one pass. A continuation takes its window starts from `tail_start`
    and ignores `seq_start`.

    Args:
        hidden_size: `C`. head_dim: `D`. compress_rate: `m`, tokens per window. rms_norm_eps: of `kv_norm`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.compressed_attention import _WindowCompressor
        >>> comp, rope = _WindowCompressor(16, 8, compress_rate=4), tp.nn.RotaryEmbedding(8)
        >>> entries, state = comp(tp.randn(2, 10, 16), rope, seq_start=0, state={})
        >>> tuple(entries.shape), state["entry_end"].tolist(), state["tail_start"]
        ((2, 2, 8), [3, 7], 8)
    """

    def __init__(
        self,
        hidden_size: int,
        head_dim: int,
        compress_rate: int,
        rms_norm_eps: float = 1e-6,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if compress_rate <= 0 or head_dim <= 0:
            raise ValueError(
                f"_WindowCompressor: compress_rate ({compress_rate}) and head_dim ({head_dim}) must be "
                "positive"
            )
        factory = {"device": device, "dtype": dtype}
        self.head_dim = head_dim
        self.compress_rate = compress_rate
        self.kv_proj = Linear(hidden_size, 2 * head_dim, bias=False, **factory)
        self.gate_proj = Linear(hidden_size, 2 * head_dim, bias=False, **factory)
        self.position_bias = Parameter(tp.zeros(compress_rate, 2 * head_dim, **factory))
        self.kv_norm = RMSNorm(head_dim, eps=rms_norm_eps, **factory)

    def forward(
        self, hidden_states: Tensor, rope: RotaryEmbedding, seq_start: int, state: dict
    ) -> tuple[Tensor | None, dict]:
        b = int(hidden_states.shape[0])
        m, d = self.compress_rate, self.head_dim
        kv, gate = self.kv_proj(hidden_states), self.gate_proj(hidden_states)
        if state.get("tail_kv") is not None:  # continue the window the last call left open
            kv = _cat([state["tail_kv"], kv], 1)
            gate = _cat([state["tail_gate"], gate], 1)
            base = int(state["tail_start"])
        else:
            base = int(seq_start)
        n = int(kv.shape[1]) // m
        used = n * m
        new_state = {"tail_kv": kv[:, used:], "tail_gate": gate[:, used:], "tail_start": base + used}
        if n == 0:  # no window completed: everything else carries over
            for key in ("overlap_kv", "overlap_gate", "entries", "entry_end"):
                if key in state:
                    new_state[key] = state[key]
            return state.get("entries"), new_state

        kv = _part(kv, 1, 0, used).reshape(b, n, m, 2 * d)
        gate = _part(gate, 1, 0, used).reshape(b, n, m, 2 * d) + self.position_bias
        ahead_kv, ahead_gate = kv[..., :d], gate[..., :d]  # votes for the next window
        own_kv, own_gate = kv[..., d:], gate[..., d:]  # votes for this window
        if state.get("overlap_kv") is not None:
            first_kv, first_gate = state["overlap_kv"].unsqueeze(1), state["overlap_gate"].unsqueeze(1)
        else:  # the sequence's first window: empty slots that the softmax weighs 0
            first_kv = tp.zeros(b, 1, m, d, dtype=kv.dtype, device=kv.device)
            first_gate = tp.full((b, 1, m, d), float("-inf"), dtype=gate.dtype, device=gate.device)
        slots_kv = _cat([_cat([first_kv, ahead_kv[:, :-1]], 1), own_kv], 2)  # [B, n, 2m, D]
        slots_gate = _cat([_cat([first_gate, ahead_gate[:, :-1]], 1), own_gate], 2)
        # Slots last ([B, n, D, 2m]): the softmax and the sum run along contiguous rows.
        weights = _upcast(slots_gate).transpose(2, 3).softmax(-1)
        pooled = (_upcast(slots_kv).transpose(2, 3) * weights).sum(-1).to(kv.dtype)

        starts = tp.arange(n, dtype=tp.int64, device=kv.device) * m + base
        entries = self.kv_norm(pooled)
        cos, sin = _rope_tables(rope, entries, starts.expand(b, n), d)
        entries = _rotate(entries.unsqueeze(1), cos, sin, rope.interleaved).squeeze(1)
        entry_end = starts + (m - 1)
        if state.get("entries") is not None:
            entries = _cat([state["entries"], entries], 1)
            entry_end = tp.cat([state["entry_end"], entry_end])
        new_state.update(
            overlap_kv=ahead_kv[:, -1], overlap_gate=ahead_gate[:, -1], entries=entries, entry_end=entry_end
        )
        return entries, new_state

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, compress_rate={self.compress_rate}"


class _LightningIndexer(Module):
    """Choose, for every query, the `index_topk` compressed entries it may read.

    A small copy of the mixer's compression runs beside it (`compressor`, width `Di = index_head_dim`, the
    same windows, so entry `j` here is entry `j` there). With `Hi = index_n_heads` scoring heads::

        q_h      = rope(q_b_proj(q_residual))_h                    [B, T, Hi, Di]
        w_h      = weights_proj(x)_h · Hi^-1/2                      [B, T, Hi]
        score[j] = Σ_h w_h · ReLU(q_h · entry_j) · Di^-1/2          (−inf where entry_end[j] > query position)

    and the indices of the `min(index_topk, n)` largest scores, ties to the lower index. An entry whose window
    is not complete at the query's position can still be picked when fewer are visible than `index_topk`;
    `_block_bias` masks it.

    Top-k is a choice, not a function with a slope: nothing in the attention output depends smoothly on the
    scores, so the indexer's weights (its compressor, `q_b_proj`, `weights_proj`) get no gradient from the
    attention loss, and the scores are computed without recording autograd.

    `forward(hidden_states, q_residual, position_ids, rope, seq_start, state)` returns `(new_state,
    topk_indices [B, T, min(index_topk, n)] or None)` (None while no entry exists); `new_state` is the
    compressor's, with `entries` and `entry_end`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.compressed_attention import _LightningIndexer
        >>> idx = _LightningIndexer(16, 8, compress_rate=2, index_n_heads=2, index_head_dim=4, index_topk=2)
        >>> x, rope = tp.randn(1, 7, 16), tp.nn.RotaryEmbedding(4)
        >>> state, top = idx(x, tp.randn(1, 7, 8), tp.arange(7)[None], rope, 0, {})
        >>> tuple(top.shape), state["entry_end"].tolist()
        ((1, 7, 2), [1, 3, 5])
    """

    def __init__(
        self,
        hidden_size: int,
        q_lora_rank: int,
        compress_rate: int,
        index_n_heads: int,
        index_head_dim: int,
        index_topk: int,
        rms_norm_eps: float = 1e-6,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if index_n_heads <= 0 or index_head_dim <= 0 or index_topk <= 0:
            raise ValueError(
                f"_LightningIndexer: index_n_heads ({index_n_heads}), index_head_dim ({index_head_dim}) and "
                f"index_topk ({index_topk}) must be positive"
            )
        factory = {"device": device, "dtype": dtype}
        self.index_n_heads = index_n_heads
        self.index_head_dim = index_head_dim
        self.index_topk = index_topk
        self.softmax_scale = index_head_dim**-0.5
        self.weights_scaling = index_n_heads**-0.5
        self.compressor = _WindowCompressor(
            hidden_size, index_head_dim, compress_rate, rms_norm_eps, **factory
        )
        self.q_b_proj = Linear(q_lora_rank, index_n_heads * index_head_dim, bias=False, **factory)
        self.weights_proj = Linear(hidden_size, index_n_heads, bias=False, **factory)

    def forward(
        self,
        hidden_states: Tensor,
        q_residual: Tensor,
        position_ids: Tensor,
        rope: RotaryEmbedding,
        seq_start: int,
        state: dict,
    ) -> tuple[dict, Tensor | None]:
        with no_grad():  # feeds only top-k (see the class docstring)
            entries, state = self.compressor(hidden_states, rope, seq_start, state)
            if entries is None or int(entries.shape[1]) == 0:
                return state, None
            b, t = int(hidden_states.shape[0]), int(hidden_states.shape[1])
            h, d, n = self.index_n_heads, self.index_head_dim, int(entries.shape[1])
            q = self.q_b_proj(q_residual).view(b, t, h, d).transpose(1, 2)  # [B, Hi, T, Di]
            cos, sin = _rope_tables(rope, hidden_states, position_ids, d)
            q = _rotate(q, cos, sin, rope.interleaved)
            dots = tp.matmul(_upcast(q), _upcast(entries).unsqueeze(1).transpose(-1, -2))  # [B, Hi, T, n]
            weights = _upcast(self.weights_proj(hidden_states)) * self.weights_scaling  # [B, T, Hi]
            # Σ_h w_h · ReLU(dot_h), as [B, T, 1, Hi] @ [B, T, Hi, n].
            scores = (
                tp.matmul(weights.unsqueeze(2), F.relu(dots).transpose(1, 2)).squeeze(2) * self.softmax_scale
            )
            future = state["entry_end"].view(1, 1, n) > position_ids.unsqueeze(-1)
            scores = scores.masked_fill(future, float("-inf"))
            return state, tp.topk(scores, min(self.index_topk, n), dim=-1).indices

    def extra_repr(self) -> str:
        return (
            f"index_n_heads={self.index_n_heads}, index_head_dim={self.index_head_dim}, "
            f"index_topk={self.index_topk}"
        )


def _block_bias(
    topk_indices: Tensor | None, entry_end: Tensor, position_ids: Tensor, num_entries: int
) -> Tensor:
    """The additive mask `[B, 1, T, num_entries]` of the compressed slots: 0 where the query at
    `position_ids[b, t]` may read entry `j`, −inf elsewhere.

    Entry `j` is readable iff the indexer selected it (`j` among `topk_indices[b, t]`; negative indices are
    padding and select nothing) **and** its window is complete, `entry_end[j] <= position_ids[b, t]`.
    `topk_indices=None` selects nothing.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.compressed_attention import _block_bias
        >>> bias = _block_bias(tp.tensor([[[0, 2], [2, 1]]]), tp.tensor([1, 3, 5]), tp.tensor([[4, 5]]), 3)
        >>> bias.shape, bias[0, 0].tolist()
        (tensorplay.Size([1, 1, 2, 3]), [[0.0, -inf, -inf], [-inf, 0.0, 0.0]])
    """
    if position_ids.dim() != 2 or entry_end.dim() != 1 or int(entry_end.shape[0]) != num_entries:
        raise ValueError(
            f"_block_bias: expected position_ids [B, T] and entry_end [{num_entries}], got "
            f"{tuple(position_ids.shape)} and {tuple(entry_end.shape)}"
        )
    b, t = int(position_ids.shape[0]), int(position_ids.shape[1])
    device = position_ids.device
    complete = entry_end.to(device=device).view(1, 1, num_entries) <= position_ids.unsqueeze(-1)  # [B, T, n]
    if topk_indices is None:
        chosen = tp.zeros(b, t, num_entries, dtype=tp.bool, device=device)
    else:
        if topk_indices.dim() != 3 or tuple(topk_indices.shape[:2]) != (b, t):
            raise ValueError(
                f"_block_bias: topk_indices must be [{b}, {t}, k], got {tuple(topk_indices.shape)}"
            )
        if topk_indices.numel() and int(topk_indices.max()) >= num_entries:
            raise ValueError(
                f"_block_bias: topk_indices hold {int(topk_indices.max())}, but there are only "
                f"{num_entries} entries"
            )
        # Count the picks of each entry (a scatter, not a [B, T, k, n] comparison); padding adds 0.
        picks = (topk_indices >= 0).float()
        counts = tp.zeros(b, t, num_entries, device=device).scatter_add(-1, topk_indices.clamp(min=0), picks)
        chosen = counts > 0
    zero = tp.zeros((), device=device)
    return tp.where(chosen & complete, zero, float("-inf")).unsqueeze(1)
