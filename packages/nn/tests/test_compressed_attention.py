"""Tests of CompressedSparseAttention and its parts (nn/modules/compressed_attention.py and
_compressed_parts.py): a float64 NumPy re-implementation of the whole forward (windows, compressed entries,
the indexer's top-k, the sink, the output rotation), the compressor's state continuation, `_block_bias`,
causality, cached decoding and chunked prefill against one full pass, gradients, a tiny LM that trains,
greedy `generate` with the model's SlidingWindowCache, and the runnable examples of the docstrings and of
docs/mixers/compressed_sparse_attention.md."""

from __future__ import annotations

import contextlib
import doctest
import importlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn.cache import DynamicCache, SlidingWindowCache
from tensorplay.nn.generation import generate
from tensorplay.nn.modules import compressed_attention as csa_module
from tensorplay.nn.modules.compressed_attention import (
    CompressedSparseAttention,
    _block_bias,
    _LightningIndexer,
    _WindowCompressor,
)
from tensorplay.nn.modules.modern_block import TransformerBlock
from tensorplay.nn.modules.rotary import RotaryEmbedding

DOC = Path(__file__).resolve().parents[3] / "docs" / "mixers" / "compressed_sparse_attention.md"


def _csa(seed: int = 0, dtype=None, **kwargs) -> CompressedSparseAttention:
    """A small CSA whose zero/one-initialised weights (sinks, position biases, norms) are made non-trivial, so
    that a reference ignoring one of them disagrees."""
    tp.manual_seed(seed)
    cfg = dict(
        hidden_size=16,
        num_heads=2,
        head_dim=8,
        q_lora_rank=8,
        compress_rate=3,
        window_size=4,
        rope_head_dim=4,
        index_n_heads=2,
        index_head_dim=4,
        index_topk=2,
    )
    cfg.update(kwargs)
    m = CompressedSparseAttention(**cfg, dtype=dtype)
    with tp.no_grad():
        for name, p in m.named_parameters():
            if name == "sinks" or name.endswith("position_bias"):
                p.copy_(tp.randn(*p.shape, dtype=p.dtype))
            elif name.endswith("norm.weight"):
                p.copy_(tp.rand(*p.shape, dtype=p.dtype) + 0.5)
    return m


def _x(b: int, t: int, c: int, seed: int = 0, dtype=tp.float32) -> tp.Tensor:
    return tp.tensor(np.random.default_rng(seed).standard_normal((b, t, c)), dtype=dtype)


# ---------------------------------------------------------------------------------------------------------
# A float64 NumPy reference, written from the contract with explicit loops (sharing no code with the module).


def _w(linear) -> np.ndarray:
    return linear.weight.detach().numpy().astype(np.float64)


def _p(param) -> np.ndarray:
    return param.detach().numpy().astype(np.float64)


def _np_rms(x: np.ndarray, norm) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + norm.eps) * _p(norm.weight)


def _np_rope(v: np.ndarray, pos: float, rope_dim: int, base: float, sign: float = 1.0) -> np.ndarray:
    """Turn the vector `v` `[D]` at position `pos`: pairs (i, i + h) with h = min(rope_dim, D) / 2 pairs."""
    h = min(rope_dim, v.shape[-1]) // 2
    ang = pos * base ** (-np.arange(0, 2 * h, 2) / rope_dim)
    c, s = np.cos(ang), sign * np.sin(ang)
    out = v.copy()
    out[:h], out[h : 2 * h] = v[:h] * c - v[h : 2 * h] * s, v[h : 2 * h] * c + v[:h] * s
    return out


def _np_compress(comp, x: np.ndarray, start: int, rope_dim: int, base: float):
    """Entries `[B, n, D]` and their last positions for the complete windows of x `[B, T, C]`."""
    m, d = comp.compress_rate, comp.head_dim
    kv, gate, bias = x @ _w(comp.kv_proj).T, x @ _w(comp.gate_proj).T, _p(comp.position_bias)
    n = x.shape[1] // m
    entries = np.zeros((x.shape[0], n, d))
    for b in range(x.shape[0]):
        for w in range(n):
            slots, gates = [], []
            if w > 0:  # the previous window's first halves
                for r in range(m):
                    slots.append(kv[b, (w - 1) * m + r, :d])
                    gates.append(gate[b, (w - 1) * m + r, :d] + bias[r, :d])
            for r in range(m):  # this window's second halves
                slots.append(kv[b, w * m + r, d:])
                gates.append(gate[b, w * m + r, d:] + bias[r, d:])
            g = np.exp(np.array(gates) - np.max(gates, 0))
            pooled = (g / g.sum(0) * np.array(slots)).sum(0)
            entries[b, w] = _np_rope(_np_rms(pooled, comp.kv_norm), start + w * m, rope_dim, base)
    return entries, start + np.arange(n) * m + m - 1


def _np_topk(mod, x: np.ndarray, pos: np.ndarray, start: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The indexer's choice `[B, T, k]` (ties to the lower index) and its scores `[B, T, n]`."""
    ix, rope = mod.indexer, mod.rope
    entries, ends = _np_compress(ix.compressor, x, start, rope.dim, rope.base)
    n = entries.shape[1]
    if n == 0:
        return None
    b_, t_ = pos.shape
    qr = _np_rms(x @ _w(mod.q_a_proj).T, mod.q_a_norm)
    q = (qr @ _w(ix.q_b_proj).T).reshape(b_, t_, ix.index_n_heads, ix.index_head_dim)
    w = x @ _w(ix.weights_proj).T * ix.index_n_heads**-0.5
    scores = np.full((b_, t_, n), -np.inf)
    for b in range(b_):
        for t in range(t_):
            for j in range(n):
                if ends[j] <= pos[b, t]:
                    dots = [
                        _np_rope(q[b, t, h], pos[b, t], rope.dim, rope.base) @ entries[b, j] for h in range(2)
                    ]
                    scores[b, t, j] = sum(w[b, t, h] * max(dots[h], 0.0) for h in range(2)) / np.sqrt(
                        ix.index_head_dim
                    )
    k = min(ix.index_topk, n)
    return np.argsort(-scores, axis=-1, kind="stable")[..., :k], scores


def _np_csa(mod: CompressedSparseAttention, x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    b_, t_, _ = x.shape
    h_, d, r, base, win = mod.num_heads, mod.head_dim, mod.rope.dim, mod.rope.base, mod.sliding_window
    start = int(pos[:, 0].max())
    qr = _np_rms(x @ _w(mod.q_a_proj).T, mod.q_a_norm)
    q = (qr @ _w(mod.q_b_proj).T).reshape(b_, t_, h_, d)
    kv = _np_rms(x @ _w(mod.kv_proj).T, mod.kv_norm)
    kv = np.array([[_np_rope(kv[b, t], pos[b, t], r, base) for t in range(t_)] for b in range(b_)])
    entries, ends = _np_compress(mod.compressor, x, start, r, base)
    chosen = _np_topk(mod, x, pos, start)
    sinks = _p(mod.sinks)
    out = np.zeros((b_, t_, h_, d))
    for b in range(b_):
        for t in range(t_):
            keys = [kv[b, s] for s in range(t_) if 0 <= pos[b, t] - pos[b, s] < win]
            if chosen is not None:
                keys += [entries[b, j] for j in chosen[0][b, t] if ends[j] <= pos[b, t]]
            keys = np.array(keys)
            for h in range(h_):
                qh = _np_rope(q[b, t, h], pos[b, t], r, base)
                logits = np.append(keys @ qh / np.sqrt(d), sinks[h])
                p = np.exp(logits - logits.max())
                o = (p[:-1] / p.sum()) @ keys
                out[b, t, h] = _np_rope(o, pos[b, t], r, base, sign=-1.0)
    return out.reshape(b_, t_, h_ * d) @ _w(mod.o_proj).T


# ---------------------------------------------------------------------------------------------------------


def test_attributes_parameters_and_init() -> None:
    m = CompressedSparseAttention(64, 4, 16, 24, layer_idx=2)
    assert (m.hidden_size, m.num_heads, m.head_dim, m.compress_rate, m.sliding_window, m.layer_idx) == (
        64,
        4,
        16,
        4,
        128,
        2,
    )
    assert m.scaling == 16**-0.5 and m.rope.dim == 16 and m.rope.interleaved is False
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert shapes["q_a_proj.weight"] == (24, 64) and shapes["q_b_proj.weight"] == (64, 24)
    assert shapes["kv_proj.weight"] == (16, 64) and shapes["o_proj.weight"] == (64, 64)
    assert shapes["sinks"] == (4,) and not any(n.endswith(".bias") for n in shapes)
    assert shapes["compressor.kv_proj.weight"] == (32, 64) and shapes["compressor.position_bias"] == (4, 32)
    assert shapes["indexer.compressor.gate_proj.weight"] == (64, 64)  # 2 * index_head_dim (32)
    assert shapes["indexer.q_b_proj.weight"] == (128, 24) and shapes["indexer.weights_proj.weight"] == (4, 64)
    assert float(m.sinks.abs().sum()) == 0 and float(m.compressor.position_bias.abs().sum()) == 0
    assert isinstance(m.q_a_norm, nn.RMSNorm) and isinstance(m.compressor.kv_norm, nn.RMSNorm)
    ix = m.indexer
    assert isinstance(ix, _LightningIndexer) and isinstance(m.compressor, _WindowCompressor)
    assert (ix.index_n_heads, ix.index_head_dim, ix.index_topk) == (4, 32, 16)
    assert ix.softmax_scale == 32**-0.5 and ix.weights_scaling == 4**-0.5
    p = CompressedSparseAttention(
        32, 2, 8, 8, rope_head_dim=4, rope_base=500.0, rms_norm_eps=1e-5, dtype=tp.float64
    )
    assert p.rope.dim == 4 and p.rope.base == 500.0 and p.kv_norm.eps == 1e-5 and p.sinks.dtype == tp.float64
    assert "compress_rate=4" in repr(p) and "window_size=128" in repr(p)


def test_value_errors() -> None:
    with pytest.raises(ValueError, match=r"hidden_size \(30\) must be divisible by num_heads \(4\)"):
        CompressedSparseAttention(30, 4, 8, 8)
    with pytest.raises(ValueError, match=r"rope_head_dim \(12\) must not exceed head_dim \(8\)"):
        CompressedSparseAttention(16, 2, 8, 8, rope_head_dim=12)
    with pytest.raises(ValueError, match=r"compress_rate \(0\) and window_size \(4\)"):
        CompressedSparseAttention(16, 2, 8, 8, compress_rate=0, window_size=4)
    with pytest.raises(ValueError, match="RotaryEmbedding: dim must be a positive even number, got 3"):
        CompressedSparseAttention(16, 2, 8, 8, rope_head_dim=3)
    with pytest.raises(ValueError, match=r"index_topk \(0\) must be positive"):
        CompressedSparseAttention(16, 2, 8, 8, index_topk=0)
    m = _csa()
    with pytest.raises(ValueError, match=r"expected hidden_states \[B, T, 16\], got \(2, 3, 8\)"):
        m(tp.zeros(2, 3, 8))
    with pytest.raises(ValueError, match=r"position_ids must be \[1, 3\], got \(1, 4\)"):
        m(tp.zeros(1, 3, 16), position_ids=tp.arange(4)[None])
    with pytest.raises(ValueError, match=r"entry_end \[3\], got \(1, 2\) and \(2,\)"):
        _block_bias(None, tp.tensor([2, 5]), tp.tensor([[1, 2]]), 3)
    with pytest.raises(ValueError, match=r"topk_indices hold 3, but there are only 2 entries"):
        _block_bias(tp.tensor([[[3]]]), tp.tensor([2, 5]), tp.tensor([[6]]), 2)


@pytest.mark.parametrize("t", [0, 1, 2, 3, 7, 20])
def test_forward_shapes(t: int) -> None:
    m = _csa()
    assert tuple(m(_x(2, t, 16)).shape) == (2, t, 16)
    assert tuple(m(_x(0, 5, 16)).shape) == (0, 5, 16)
    wide = _x(2, 9, 32)[..., ::2]  # non-contiguous input
    np.testing.assert_allclose(m(wide).detach().numpy(), m(wide.contiguous()).detach().numpy(), atol=1e-6)


@pytest.mark.parametrize(
    "cfg,offset",
    [
        ({}, 0),  # partial rope (4 of 8), 3 entries, top-2
        ({"rope_head_dim": None, "index_topk": 5}, 3),  # rope wider than the indexer (Note [Narrow rope])
        ({"compress_rate": 2, "window_size": 1, "index_topk": 1}, 5),  # one key of window, one entry
    ],
)
def test_forward_matches_numpy_float64(cfg: dict, offset: int) -> None:
    m = _csa(seed=1, dtype=tp.float64, **cfg)
    x = _x(2, 11, 16, seed=2, dtype=tp.float64)
    pos = np.tile(np.arange(offset, offset + 11), (2, 1))
    got = m(x, position_ids=tp.tensor(pos) if offset else None).detach().numpy()
    # 1e-6, not 1e-12: RotaryEmbedding computes its angles in float32 even for float64 inputs (the contract).
    np.testing.assert_allclose(got, _np_csa(m, x.numpy(), pos), atol=1e-6, rtol=0)


def test_forward_matches_numpy_float32() -> None:
    m = _csa(seed=3)
    x = _x(2, 13, 16, seed=4)
    pos = np.tile(np.arange(13), (2, 1))
    np.testing.assert_allclose(
        m(x).detach().numpy(), _np_csa(m, x.numpy().astype(np.float64), pos), atol=3e-5
    )


def test_sinks_and_position_bias_matter() -> None:
    m = _csa(seed=5)
    x = _x(1, 9, 16, seed=6)
    with tp.no_grad():
        base = m(x)
        m.sinks.add_(2.0)
        shifted = m(x)
        m.compressor.position_bias.zero_()
        unbiased = m(x)
    assert float((base - shifted).abs().max()) > 1e-3
    assert float((shifted[:, 5:] - unbiased[:, 5:]).abs().max()) > 1e-4  # entries exist from position 2
    np.testing.assert_allclose(shifted[:, :2].numpy(), unbiased[:, :2].numpy(), atol=1e-7)  # before any entry


def test_window_compressor_matches_numpy_and_continues_its_state() -> None:
    comp = _csa(seed=7).compressor
    rope = RotaryEmbedding(4)
    x = _x(2, 14, 16, seed=8)
    with tp.no_grad():
        whole, state = comp(x, rope, seq_start=2, state={})
    want, ends = _np_compress(comp, x.numpy().astype(np.float64), 2, 4, 10000.0)
    np.testing.assert_allclose(whole.numpy(), want, atol=2e-5)
    assert state["entry_end"].tolist() == ends.tolist() == [4, 7, 10, 13]
    assert tuple(state["tail_kv"].shape) == (2, 2, 16) and state["tail_start"] == 14
    assert tuple(state["overlap_kv"].shape) == (2, 3, 8) and tuple(state["overlap_gate"].shape) == (2, 3, 8)
    # Pieces of every length (shorter and longer than a window, empty) give the same entries and state.
    st: dict = {}
    with tp.no_grad():
        for a, b in [(0, 1), (1, 1), (1, 5), (5, 6), (6, 13), (13, 14)]:
            before = {k: v for k, v in st.items()}
            entries, st = comp(x[:, a:b], rope, seq_start=2 + a, state=st)
            assert st is not before and all(st_v is before[k] or k in st for k, st_v in before.items())
    np.testing.assert_allclose(entries.numpy(), whole.numpy(), atol=1e-6)
    for key in ("tail_kv", "tail_gate", "overlap_kv", "overlap_gate"):
        np.testing.assert_allclose(st[key].numpy(), state[key].numpy(), atol=1e-6)
    assert st["entry_end"].tolist() == [4, 7, 10, 13] and st["tail_start"] == 14
    # No complete window: nothing, and the input state is left as it was.
    empty: dict = {}
    none, st1 = comp(x[:, :2], rope, 0, empty)
    assert none is None and empty == {} and "entries" not in st1 and st1["tail_start"] == 0


def test_window_compressor_uniform_gates_average_the_votes() -> None:
    # Identity projections and zero gates: each entry is kv_norm of the mean of its 2m (or m) votes.
    comp = _WindowCompressor(8, 4, 2)
    with tp.no_grad():
        comp.kv_proj.weight.copy_(tp.eye(8))
        comp.gate_proj.weight.zero_()
    x = _x(1, 4, 8, seed=9)
    entries, _ = comp(x, RotaryEmbedding(4), 0, {})
    xs = x.numpy().astype(np.float64)
    first = xs[0, :2, 4:].mean(0)
    second = np.concatenate([xs[0, :2, :4], xs[0, 2:, 4:]]).mean(0)
    want = [_np_rope(_np_rms(v, comp.kv_norm), p, 4, 10000.0) for v, p in [(first, 0), (second, 2)]]
    np.testing.assert_allclose(entries[0].detach().numpy(), np.array(want), atol=1e-5)


def test_indexer_picks_the_numpy_top_k_of_complete_entries() -> None:
    m = _csa(seed=10, index_topk=3, compress_rate=2)
    x = _x(2, 12, 16, seed=11)
    pos = tp.arange(12)[None].expand(2, 12)
    with tp.no_grad():
        state, top = m.indexer(x, m.q_a_norm(m.q_a_proj(x)), pos, m.rope, 0, {})
    want, scores = _np_topk(m, x.numpy().astype(np.float64), pos.numpy(), 0)
    assert tuple(top.shape) == (2, 12, 3) and state["entry_end"].tolist() == [1, 3, 5, 7, 9, 11]
    for b in range(2):
        for t in range(12):
            visible = int(np.isfinite(scores[b, t]).sum())
            k = min(3, visible)  # past the visible ones the choice is free (they are masked)
            assert sorted(top[b, t, :k].tolist()) == sorted(want[b, t, :k].tolist()), (b, t)
    none_state, none = m.indexer(x[:, :1], m.q_a_norm(m.q_a_proj(x[:, :1])), pos[:, :1], m.rope, 0, {})
    assert none is None and "entries" not in none_state
    small = _csa(seed=10, index_topk=30, compress_rate=2)
    assert tuple(small.indexer(x, small.q_a_norm(small.q_a_proj(x)), pos, small.rope, 0, {})[1].shape) == (
        2,
        12,
        6,
    )


def test_block_bias_semantics() -> None:
    ends = tp.tensor([1, 3, 5])
    pos = tp.tensor([[4, 5], [0, 9]])
    top = tp.tensor([[[0, 2], [2, 1]], [[0, -1], [-1, -1]]])
    bias = _block_bias(top, ends, pos, 3)
    inf = float("-inf")
    assert tuple(bias.shape) == (2, 1, 2, 3) and bias.dtype == tp.float32
    assert bias[:, 0].tolist() == [
        [[0.0, inf, inf], [inf, 0.0, 0.0]],  # entry 2 ends at 5: not complete at 4, complete at 5
        [[inf, inf, inf], [inf, inf, inf]],  # entry 0 is not complete at 0; -1 selects nothing
    ]
    assert bias.tolist() == CompressedSparseAttention._block_bias(top, ends, pos, 3).tolist()
    assert _block_bias(None, ends, pos, 3).eq(inf).all()
    assert tuple(_block_bias(tp.zeros(1, 0, 2, dtype=tp.int64), ends, pos[:1, :0], 3).shape) == (1, 1, 0, 3)


def test_causality_and_blocking() -> None:
    m = _csa(seed=12, window_size=5)
    x = _x(2, 23, 16, seed=13)
    y = m(x).detach().numpy()
    for cut in (4, 11, 17):
        x2 = x.clone()
        x2[:, cut:] = 50.0
        y2 = m(x2).detach().numpy()
        np.testing.assert_allclose(y2[:, :cut], y[:, :cut], atol=1e-6)
        assert np.abs(y2[:, cut:] - y[:, cut:]).max() > 1e-3
    # Query blocks (Note [Blocked window attention]) change no result, whatever their size.
    old = csa_module._QUERY_BLOCK
    try:
        for block in (1, 4, 7):
            csa_module._QUERY_BLOCK = block
            np.testing.assert_allclose(m(x).detach().numpy(), y, atol=1e-6)
    finally:
        csa_module._QUERY_BLOCK = old


def test_token_by_token_decoding_equals_one_pass() -> None:
    m = _csa(seed=14, layer_idx=1, compress_rate=2, window_size=6, index_topk=3)
    x = _x(2, 19, 16, seed=15)
    with tp.no_grad():
        full = m(x).numpy()
        cache = SlidingWindowCache(m.sliding_window)
        steps = [m(x[:, t : t + 1], past_key_values=cache).numpy() for t in range(19)]
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-5)
    assert cache.get_seq_length(1) == 19 and cache.get_window_length(1) == 6 and cache.get_seq_length(0) == 0
    assert cache.positions[1].tolist() == [list(range(13, 19))] * 2 and tuple(cache.key_cache[1].shape) == (
        2,
        1,
        6,
        8,
    )
    layer = cache.csa_states[1]
    assert set(cache.csa_states) == {1} and set(layer) == {"compressor", "indexer"}
    assert tuple(layer["compressor"]["entries"].shape) == (2, 9, 8)
    assert (
        tuple(layer["indexer"]["entries"].shape) == (2, 9, 4)
        and layer["indexer"]["entry_end"].tolist()[-1] == 17
    )
    assert tuple(layer["compressor"]["tail_kv"].shape) == (2, 1, 16)


@pytest.mark.parametrize(
    "make_cache", [lambda: SlidingWindowCache(4), DynamicCache], ids=["sliding", "dynamic"]
)
def test_chunked_prefill_then_decode_equals_one_pass(make_cache) -> None:
    m = _csa(seed=16, window_size=4)
    x = _x(2, 21, 16, seed=17)
    with tp.no_grad():
        full = m(x).numpy()
        cache = make_cache()
        # Chunks longer than the window (Note [Chunk crossing the window]), of one token, and odd lengths.
        parts = [
            m(x[:, a:b], past_key_values=cache).numpy() for a, b in [(0, 7), (7, 13), (13, 14), (14, 16)]
        ]
        parts += [m(x[:, t : t + 1], past_key_values=cache).numpy() for t in range(16, 21)]
    np.testing.assert_allclose(np.concatenate(parts, 1), full, atol=1e-5)
    assert cache.get_seq_length() == 21


def test_cache_reset_starts_a_fresh_sequence() -> None:
    m = _csa(seed=18)
    x, z = _x(1, 10, 16, seed=19), _x(1, 8, 16, seed=20)
    cache = SlidingWindowCache(m.sliding_window)
    with tp.no_grad():
        m(x, past_key_values=cache)
        cache.reset()
        parts = [m(z[:, :5], past_key_values=cache).numpy()] + [
            m(z[:, t : t + 1], past_key_values=cache).numpy() for t in range(5, 8)
        ]
        full = m(z).numpy()
    np.testing.assert_allclose(np.concatenate(parts, 1), full, atol=1e-5)


def test_gradients_are_finite_and_reach_every_trained_parameter() -> None:
    m = _csa(seed=21)
    x = _x(2, 14, 16, seed=22).requires_grad_(True)
    m(x).square().sum().backward()
    assert x.grad is not None and bool(tp.isfinite(x.grad).all())
    for name, p in m.named_parameters():
        if name.startswith("indexer."):  # chooses by top-k: no gradient reaches it (see its docstring)
            assert p.grad is None, name
        else:
            assert p.grad is not None and bool(tp.isfinite(p.grad).all()), name
            assert float(p.grad.abs().sum()) > 0, name
    m64 = _csa(seed=23, dtype=tp.float64)
    x64 = _x(1, 8, 16, seed=24, dtype=tp.float64).requires_grad_(True)
    assert tp.autograd.gradcheck(m64, (x64,))
    # The sink logits too (every row of the window sees them), by finite differences on a copy put in place.
    sinks = m64.sinks.detach().clone().requires_grad_(True)
    assert tp.autograd.gradcheck(lambda s: _with_sinks(m64, s, x64.detach()), (sinks,))


def _with_sinks(m: CompressedSparseAttention, sinks: tp.Tensor, x: tp.Tensor) -> tp.Tensor:
    """`m(x)` with `sinks` in place of its parameter (so gradcheck can perturb the sink logits)."""
    saved = m._parameters["sinks"]
    m._parameters["sinks"] = sinks
    try:
        return m(x)
    finally:
        m._parameters["sinks"] = saved


def test_gradients_through_a_cached_chunk_equal_the_full_pass() -> None:
    # The second chunk reads the first chunk's keys (held by the cache, or recorded) and the compressor's
    # tail: its gradient must equal the full pass's, whether the first chunk ran with or without autograd.
    m = _csa(seed=30, window_size=4, compress_rate=3)
    x = _x(1, 13, 16, seed=31)
    w = _x(1, 13, 16, seed=32)
    for first_chunk_grad in (True, False):
        a = x[:, :7].clone().requires_grad_(first_chunk_grad)
        b = x[:, 7:].clone().requires_grad_(True)
        cache = SlidingWindowCache(4)
        with tp.autograd.set_grad_enabled(first_chunk_grad):
            ya = m(a, past_key_values=cache)
        yb = m(b, past_key_values=cache)
        loss = (yb * w[:, 7:]).sum() + ((ya * w[:, :7]).sum() if first_chunk_grad else 0.0)
        loss.backward()
        full_x = tp.cat([a.detach().requires_grad_(first_chunk_grad), b.detach().requires_grad_(True)], 1)
        y = m(full_x)
        weight = w if first_chunk_grad else tp.cat([tp.zeros(1, 7, 16), w[:, 7:]], 1)
        grads = tp.autograd.grad((y * weight).sum(), [full_x])[0]
        np.testing.assert_allclose(b.grad.numpy(), grads[:, 7:].numpy(), atol=1e-5)
        if first_chunk_grad:
            np.testing.assert_allclose(a.grad.numpy(), grads[:, :7].numpy(), atol=1e-5)


class _CsaLM(nn.Module):
    """A tiny byte-level LM with CSA mixers, and the generation contract's `create_empty_cache`."""

    def __init__(self, vocab: int = 16, hidden: int = 32, layers: int = 2, window: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                hidden,
                CompressedSparseAttention(
                    hidden,
                    4,
                    8,
                    16,
                    compress_rate=2,
                    window_size=window,
                    index_n_heads=2,
                    index_head_dim=8,
                    index_topk=2,
                    layer_idx=i,
                ),
                mlp_intermediate_size=48,
            )
            for i in range(layers)
        )
        self.norm = nn.RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.caches_made = 0

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.lm_head(self.norm(x))

    def create_empty_cache(self) -> SlidingWindowCache:
        self.caches_made += 1
        return SlidingWindowCache(self.blocks[0].mixer.sliding_window)


def test_tiny_lm_with_csa_trains() -> None:
    tp.manual_seed(25)
    model = _CsaLM(layers=1)  # one block keeps 200 steps at a few seconds of CPU
    rng = np.random.default_rng(26)
    # Each row repeats a random 12-token motif: its second half sits beyond the 6-token window.
    motifs = rng.integers(0, 16, (4, 12))
    data = tp.tensor(np.concatenate([motifs, motifs], 1))
    opt = tp.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(200):
        logits = model(data[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 16), data[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert all(np.isfinite(losses))
    assert np.mean(losses[-10:]) < 0.1 * losses[0], (losses[0], losses[-10:])


def test_greedy_generate_with_the_models_cache_equals_cache_free_decoding() -> None:
    tp.manual_seed(27)
    model = _CsaLM(window=5)
    with tp.no_grad():
        for p in model.parameters():
            p.mul_(3.0)  # spread the logits, so that argmax is far from ties
    prompt = tp.tensor(np.random.default_rng(28).integers(0, 16, (2, 7)))
    cached = generate(model, prompt, max_new_tokens=18)
    assert model.caches_made == 1
    uncached = generate(model, prompt, max_new_tokens=18, use_cache=False)
    np.testing.assert_array_equal(cached.numpy(), uncached.numpy())
    seq = prompt
    with tp.no_grad():  # the definition: argmax of a full recompute at every step
        for _ in range(18):
            seq = tp.cat([seq, model(seq)[:, -1].argmax(-1, keepdim=True)], 1)
    np.testing.assert_array_equal(cached.numpy(), seq.numpy())
    # The logits themselves, through both TransformerBlocks: prefill + cached decode == one full pass (on
    # the model as initialised: the weights scaled above also scale float32 rounding).
    model = _CsaLM(window=5)
    with tp.no_grad():
        full = model(seq).numpy()
        cache = model.create_empty_cache()
        steps = [model(seq[:, :7], past_key_values=cache).numpy()]
        steps += [model(seq[:, t : t + 1], past_key_values=cache).numpy() for t in range(7, 25)]
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-5, rtol=0)
    assert sorted(cache.csa_states) == [0, 1] and len(cache) == 2


@pytest.mark.parametrize("name", ["compressed_attention", "_compressed_parts"])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"tensorplay_nn.nn.modules.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_doc_page_example_prints_what_it_says() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, "docs/mixers/compressed_sparse_attention.md should hold one python example"
    code = blocks[0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {})
    # Every print line of the example says in its comment what it prints.
    want = [line.split("# ", 1)[1].strip() for line in code.splitlines() if line.startswith("print(")]
    assert printed.getvalue().splitlines() == want
