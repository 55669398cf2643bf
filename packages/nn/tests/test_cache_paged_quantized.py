"""Tests of PagedCache and QuantizedCache (nn/cache/paged.py, nn/cache/quantized.py; the contract is
shared/reference/llm-api.md, "Caches"): the protocol (update / get_seq_length / reset / len), the page layout
checked slot by slot against NumPy, growth and the num_blocks cap, the int8 codes and scales against a NumPy
quantiser and their error bounds, and greedy `generate` through a small attention LM giving the same tokens
with every cache."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn.cache import Cache, DynamicCache, PagedCache, QuantizedCache, StaticCache
from tensorplay.nn.generation import generate


def _kv(b: int, h: int, t: int, dk: int, dv: int | None = None, seed: int = 0) -> tuple[tp.Tensor, tp.Tensor]:
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((b, h, t, dk)).astype(np.float32)
    v = rng.standard_normal((b, h, t, dv or dk)).astype(np.float32)
    return tp.tensor(k), tp.tensor(v)


def _np_pages(pool: np.ndarray, table: np.ndarray, block: int, length: int) -> np.ndarray:
    """Read positions 0..length-1 of every row out of `pool` [N, block, H, D] slot by slot: [B, H, S, D]."""
    b = table.shape[0]
    out = np.empty((b, pool.shape[2], length, pool.shape[3]), pool.dtype)
    for row in range(b):
        for p in range(length):
            out[row, :, p] = pool[table[row, p // block], p % block]
    return out


# ---------------------------------------------------------------------------------------------- PagedCache


@pytest.mark.parametrize("cache", [PagedCache(), PagedCache(4, 16), QuantizedCache()], ids=repr)
def test_both_caches_are_caches_and_start_empty(cache: Cache) -> None:
    assert isinstance(cache, Cache)
    assert len(cache) == 0
    assert cache.get_seq_length() == 0 and cache.get_seq_length(3) == 0


def test_paged_defaults() -> None:
    cache = PagedCache()
    assert cache.block_size == 16 and cache.num_blocks is None
    assert cache.key_pools == [] and cache.value_pools == [] and cache.block_tables == []


@pytest.mark.parametrize("bad", [0, -4, 2.5, True, None])
def test_paged_rejects_a_bad_block_size(bad: object) -> None:
    with pytest.raises(ValueError, match=rf"PagedCache: block_size must be a positive int, got {bad!r}"):
        PagedCache(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_paged_rejects_a_bad_num_blocks(bad: object) -> None:
    with pytest.raises(
        ValueError, match=rf"PagedCache: num_blocks must be a positive int or None, got {bad!r}"
    ):
        PagedCache(4, bad)  # type: ignore[arg-type]


def test_paged_pages_across_block_boundaries_against_numpy() -> None:
    block = 4
    cache = PagedCache(block)
    writes = [_kv(2, 3, t, 5, 6, seed=t) for t in (6, 1, 1, 5, 3)]  # 6 | 7 | 8 | 13 | 16: every boundary case
    ref_k = np.zeros((2, 3, 0, 5), np.float32)
    ref_v = np.zeros((2, 3, 0, 6), np.float32)
    for k, v in writes:
        k_all, v_all = cache.update(k, v, 0)
        ref_k = np.concatenate([ref_k, k.numpy()], 2)
        ref_v = np.concatenate([ref_v, v.numpy()], 2)
        s = ref_k.shape[2]
        np.testing.assert_array_equal(k_all.numpy(), ref_k)
        np.testing.assert_array_equal(v_all.numpy(), ref_v)
        assert k_all.is_contiguous() and v_all.is_contiguous()
        assert cache.get_seq_length(0) == s
        # Exactly ceil(S / block) pages per row, row b owning ids b*bpr ... b*bpr + bpr - 1.
        bpr = -(-s // block)
        assert tuple(cache.key_pools[0].shape) == (2 * bpr, block, 3, 5)
        assert tuple(cache.value_pools[0].shape) == (2 * bpr, block, 3, 6)
        table = cache.block_tables[0]
        assert table.dtype == tp.int64
        np.testing.assert_array_equal(table.numpy(), np.arange(2 * bpr).reshape(2, bpr))
        # The pages hold the positions slot by slot; slots past S are still zero.
        kp, vp = cache.key_pools[0].numpy(), cache.value_pools[0].numpy()
        np.testing.assert_array_equal(_np_pages(kp, table.numpy(), block, s), ref_k)
        np.testing.assert_array_equal(_np_pages(vp, table.numpy(), block, s), ref_v)
        for row in range(2):
            last = table.numpy()[row, -1]
            np.testing.assert_array_equal(kp[last, (s - 1) % block + 1 :], 0.0)
    assert len(cache) == 1


def test_paged_single_slot_blocks_and_single_head() -> None:
    cache = PagedCache(1)
    k, v = _kv(1, 1, 3, 2, 4, seed=7)
    k_all, v_all = cache.update(k, v)
    np.testing.assert_array_equal(k_all.numpy(), k.numpy())
    np.testing.assert_array_equal(cache.key_pools[0].numpy()[:, 0, 0], k.numpy()[0, 0])
    assert tuple(cache.value_pools[0].shape) == (3, 1, 1, 4)


def test_paged_layers_are_lazy_and_independent() -> None:
    cache = PagedCache(2)
    k, v = _kv(2, 1, 3, 4, seed=1)
    cache.update(k, v, layer_idx=2)
    assert len(cache) == 3
    assert cache.key_pools[:2] == [None, None] and cache.block_tables[0] is None
    assert cache.get_seq_length(0) == 0 and cache.get_seq_length(2) == 3
    k1, v1 = _kv(2, 2, 1, 3, seed=2)  # another layer may have other heads and widths
    k_all, _ = cache.update(k1, v1, layer_idx=0)
    np.testing.assert_array_equal(k_all.numpy(), k1.numpy())
    assert cache.get_seq_length(0) == 1 and cache.get_seq_length(2) == 3
    cache.reset()
    assert len(cache) == 0 and cache.get_seq_length(2) == 0
    assert cache.key_pools == [] and cache.value_pools == [] and cache.block_tables == []


def test_paged_num_blocks_caps_blocks_per_row() -> None:
    cache = PagedCache(4, num_blocks=2)
    k, v = _kv(3, 2, 8, 4, seed=3)
    cache.update(k, v)  # exactly the cap: 2 full pages per row
    pools_before = cache.key_pools[0].numpy().copy()
    one_k, one_v = _kv(3, 2, 1, 4, seed=4)
    with pytest.raises(
        RuntimeError, match=r"holds 8 positions, adding 1 needs 3 blocks per row of 4 \(num_blocks=2\)"
    ):
        cache.update(one_k, one_v)
    # The failed write changed nothing.
    assert cache.get_seq_length() == 8
    np.testing.assert_array_equal(cache.key_pools[0].numpy(), pools_before)
    with pytest.raises(RuntimeError, match=r"num_blocks=2"):
        PagedCache(4, num_blocks=2).update(*_kv(1, 1, 9, 2))


def test_paged_batch_is_fixed_by_the_first_write() -> None:
    cache = PagedCache(4)
    cache.update(*_kv(2, 1, 3, 4), layer_idx=0)
    with pytest.raises(
        ValueError, match=r"batch size is fixed at 2 by the first write, got key \(3, 1, 1, 4\)"
    ):
        cache.update(*_kv(3, 1, 1, 4), layer_idx=1)  # even in another layer
    assert len(cache) == 1  # the refused write created no slot
    cache.reset()
    k_all, _ = cache.update(*_kv(3, 1, 1, 4), layer_idx=1)
    assert tuple(k_all.shape) == (3, 1, 1, 4)


def test_paged_rejects_other_heads_or_widths_in_a_layer() -> None:
    cache = PagedCache(4)
    cache.update(*_kv(1, 2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"layer 0 holds 2 heads of key width 4 and value width 5"):
        cache.update(*_kv(1, 3, 1, 4, 5))
    with pytest.raises(ValueError, match=r"layer 0 holds 2 heads of key width 4 and value width 5"):
        cache.update(*_kv(1, 2, 1, 4, 4))
    with pytest.raises(ValueError, match=r"PagedCache.update: key and value must be 4-D"):
        cache.update(tp.zeros(2, 3), tp.zeros(2, 3))
    with pytest.raises(ValueError, match=r"layer_idx must be a non-negative int, got -1"):
        cache.update(*_kv(1, 2, 1, 4, 5), layer_idx=-1)
    assert cache.get_seq_length() == 3


def test_paged_pools_take_dtype_and_accept_non_contiguous_inputs() -> None:
    cache = PagedCache(2)
    k, v = _kv(2, 3, 3, 4, seed=5)
    kt = k.transpose(1, 2).contiguous().transpose(1, 2)  # same values, other strides
    assert not kt.is_contiguous()
    k_all, v_all = cache.update(kt.double(), v.double()[..., :])
    assert cache.key_pools[0].dtype == tp.float64 and k_all.dtype == tp.float64
    np.testing.assert_array_equal(k_all.numpy(), k.numpy().astype(np.float64))
    np.testing.assert_array_equal(v_all.numpy(), v.numpy().astype(np.float64))


def test_paged_size_zero_write() -> None:
    cache = PagedCache(4)
    k_all, v_all = cache.update(*_kv(2, 1, 0, 3))
    assert tuple(k_all.shape) == (2, 1, 0, 3) and cache.get_seq_length() == 0
    k, v = _kv(2, 1, 5, 3, seed=8)
    k_all, _ = cache.update(k, v)
    np.testing.assert_array_equal(k_all.numpy(), k.numpy())


def _np_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    """Float64 attention of q [B, Hq, T, D] over k, v [B, Hkv, S, D*] with the bottom-right causal mask."""
    b, hq, t, _ = q.shape
    hkv, s = k.shape[1], k.shape[2]
    out = np.empty((b, hq, t, v.shape[3]))
    visible = np.arange(s)[None, :] <= (s - t + np.arange(t))[:, None]
    for h in range(hq):
        g = h // (hq // hkv)
        logits = np.where(visible, q[:, h] @ k[:, g].transpose(0, 2, 1) * scale, -np.inf)
        p = np.exp(logits - logits.max(-1, keepdims=True))
        out[:, h] = (p / p.sum(-1, keepdims=True)) @ v[:, g]
    return out


@pytest.mark.parametrize("block", [1, 4, 16])
@pytest.mark.parametrize("heads,kv_heads", [(2, 2), (4, 2), (3, 1)])
def test_paged_attend_equals_sdpa_over_the_gathered_state(block: int, heads: int, kv_heads: int) -> None:
    cache = PagedCache(block)
    rng = np.random.default_rng(block + heads)
    keys, values = np.zeros((2, kv_heads, 0, 8)), np.zeros((2, kv_heads, 0, 5))
    for t in (7, 1, 3, 1):  # a prefill, a decode step, a chunk into a non-empty cache, a decode step
        k = rng.standard_normal((2, kv_heads, t, 8)).astype(np.float32)
        v = rng.standard_normal((2, kv_heads, t, 5)).astype(np.float32)
        q = tp.tensor(rng.standard_normal((2, heads, t, 8)).astype(np.float32))
        k_all, v_all = cache.update(tp.tensor(k), tp.tensor(v))
        keys, values = np.concatenate([keys, k], 2), np.concatenate([values, v], 2)
        got = cache.attend(q)
        assert tuple(got.shape) == (2, heads, t, 5)
        s = keys.shape[2]
        mask = tp.tensor(np.arange(s)[None, :] <= (s - t + np.arange(t))[:, None])
        sdpa = tp.scaled_dot_product_attention(q, k_all, v_all, attn_mask=mask, enable_gqa=heads != kv_heads)
        np.testing.assert_allclose(got.numpy(), sdpa.numpy(), atol=1e-5, rtol=1e-5)
        want = _np_attention(q.numpy().astype(np.float64), keys, values, 8**-0.5)
        np.testing.assert_allclose(got.numpy(), want, atol=2e-5, rtol=1e-5)


def test_paged_attend_scale_layers_and_errors() -> None:
    cache = PagedCache(4)
    rng = np.random.default_rng(9)
    k = rng.standard_normal((1, 1, 5, 4)).astype(np.float32)
    cache.update(tp.tensor(k), tp.tensor(k), layer_idx=1)
    q = rng.standard_normal((1, 2, 1, 4)).astype(np.float32)
    got = cache.attend(tp.tensor(q), layer_idx=1, scale=0.3)
    np.testing.assert_allclose(got.numpy(), _np_attention(q.astype(np.float64), k, k, 0.3), atol=2e-6)
    for layer in (0, 2):
        with pytest.raises(RuntimeError, match=rf"PagedCache.attend: layer {layer} has not been written"):
            cache.attend(tp.tensor(q), layer_idx=layer)
    with pytest.raises(RuntimeError, match="paged_attention"):
        cache.attend(tp.tensor(rng.standard_normal((1, 2, 6, 4)).astype(np.float32)), layer_idx=1)  # T > S


# ----------------------------------------------------------------------------------------- QuantizedCache


def _np_quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The int8 quantiser in NumPy float32: per-vector absmax / 127, floored at 1e-8, round half to even."""
    x = x.astype(np.float32)
    scale = np.maximum(np.abs(x).max(-1, keepdims=True) / np.float32(127.0), np.float32(1e-8))
    return np.clip(np.round(x / scale), -127, 127).astype(np.int8), scale


def test_quantized_codes_and_scales_match_numpy_per_chunk() -> None:
    cache = QuantizedCache()
    writes = [_kv(2, 3, t, 8, 6, seed=10 + t) for t in (5, 1, 2)]
    for k, v in writes:
        cache.update(k, v)
    assert cache.get_seq_length() == 8 and len(cache) == 1
    assert [tuple(c.shape) for c in cache.key_codes[0]] == [(2, 3, 5, 8), (2, 3, 1, 8), (2, 3, 2, 8)]
    assert [tuple(s.shape) for s in cache.value_scales[0]] == [(2, 3, 5, 1), (2, 3, 1, 1), (2, 3, 2, 1)]
    for i, (k, v) in enumerate(writes):
        for x, codes, scales in (
            (k, cache.key_codes[0][i], cache.key_scales[0][i]),
            (v, cache.value_codes[0][i], cache.value_scales[0][i]),
        ):
            want_codes, want_scale = _np_quantize(x.numpy())
            assert codes.dtype == tp.int8 and scales.dtype == tp.float32
            np.testing.assert_allclose(scales.numpy(), want_scale, rtol=1e-7)
            np.testing.assert_array_equal(codes.numpy(), want_codes)


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
def test_quantized_returns_float32_within_the_error_bounds(dtype) -> None:
    cache = QuantizedCache()
    rng = np.random.default_rng(3)
    refs_k, refs_v = [], []
    for t in (7, 1, 1):
        # Vectors of very different magnitudes: the bound is relative to each vector's own absmax.
        k = rng.standard_normal((1, 2, t, 16)) * rng.choice([1e-3, 1.0, 50.0], (1, 2, t, 1))
        v = rng.standard_normal((1, 2, t, 4))
        refs_k.append(k)
        refs_v.append(v)
        k_all, v_all = cache.update(tp.tensor(k, dtype=dtype), tp.tensor(v, dtype=dtype))
        assert k_all.dtype == tp.float32 and v_all.dtype == tp.float32
    for got, refs in ((k_all, refs_k), (v_all, refs_v)):
        x = np.concatenate(refs, 2)
        absmax = np.abs(x).max(-1, keepdims=True)
        err = np.abs(got.numpy().astype(np.float64) - x)
        scale = absmax / 127.0
        assert (err <= scale / 2 * (1 + 1e-5) + 1e-12).all()
        assert (err <= 0.05 * absmax).all()
        assert err.max() > 0  # it really is quantised


def test_quantized_zero_vectors_use_the_scale_floor() -> None:
    cache = QuantizedCache()
    k = tp.zeros(1, 1, 2, 3)
    k_all, _ = cache.update(k, k)
    np.testing.assert_array_equal(cache.key_scales[0][0].numpy(), np.full((1, 1, 2, 1), 1e-8, np.float32))
    np.testing.assert_array_equal(cache.key_codes[0][0].numpy(), 0)
    np.testing.assert_array_equal(k_all.numpy(), 0.0)


def test_quantized_codes_saturate_at_127() -> None:
    cache = QuantizedCache()
    x = tp.tensor([[[[-3.0, 3.0, 1.5, 0.0]]]])
    cache.update(x, x)
    assert cache.key_codes[0][0].tolist() == [[[[-127, 127, 64, 0]]]]  # 63.5 rounds half to even


def test_quantized_layers_reset_and_errors() -> None:
    cache = QuantizedCache()
    cache.update(*_kv(1, 2, 3, 4), layer_idx=1)
    assert len(cache) == 2 and cache.key_codes[0] is None and cache.get_seq_length(0) == 0
    with pytest.raises(
        ValueError, match=r"QuantizedCache.update: layer 1 holds keys of shape \(1, 2, 3, 4\)"
    ):
        cache.update(*_kv(1, 1, 1, 4), layer_idx=1)
    with pytest.raises(ValueError, match=r"must agree in batch, heads and seq"):
        cache.update(tp.zeros(1, 2, 3, 4), tp.zeros(1, 2, 2, 4))
    assert cache.get_seq_length(1) == 3
    cache.reset()
    assert len(cache) == 0 and cache.get_seq_length(1) == 0
    assert cache.key_codes == [] and cache.value_scales == []


# ------------------------------------------------------------------------------- every cache under generate


VOCAB = 32


class _AttentionLM(nn.Module):
    """Embedding, two pre-norm blocks around GroupedQueryAttention, final norm, head (generate's contract)."""

    def __init__(self, hidden: int = 32, heads: int = 4, kv_heads: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.blocks = nn.ModuleList(
            nn.TransformerBlock(hidden, nn.GroupedQueryAttention(hidden, heads, kv_heads, layer_idx=i))
            for i in range(2)
        )
        self.norm = nn.RMSNorm(hidden)
        self.head = nn.Linear(hidden, VOCAB, bias=False)

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.head(self.norm(x))


def _greedy_by_full_recompute(model: nn.Module, prompt: np.ndarray, n: int) -> np.ndarray:
    seq = prompt
    with tp.no_grad():
        for _ in range(n):
            logits = model(tp.tensor(seq)).numpy()[:, -1]
            seq = np.concatenate([seq, logits.argmax(-1)[:, None]], 1)
    return seq


@pytest.mark.parametrize(
    "make_cache",
    [DynamicCache, lambda: StaticCache(32), lambda: PagedCache(4, 16), QuantizedCache, lambda: None],
    ids=["dynamic", "static", "paged", "quantized", "none"],
)
@pytest.mark.parametrize("kv_heads", [4, 2])
def test_generate_gives_the_same_greedy_tokens_with_every_cache(make_cache, kv_heads: int) -> None:
    tp.manual_seed(0)
    model = _AttentionLM(kv_heads=kv_heads).eval()
    prompt = np.random.default_rng(1).integers(0, VOCAB, (2, 5))
    want = _greedy_by_full_recompute(model, prompt, 12)
    cache = make_cache()
    got = generate(model, tp.tensor(prompt), max_new_tokens=12, past_key_values=cache)
    np.testing.assert_array_equal(got.numpy(), want)
    uncached = generate(model, tp.tensor(prompt), max_new_tokens=12, use_cache=False)
    np.testing.assert_array_equal(got.numpy(), uncached.numpy())
    if cache is not None:  # prompt + 11 fed tokens in each of the two layers
        assert len(cache) == 2 and cache.get_seq_length(0) == cache.get_seq_length(1) == 16


@pytest.mark.parametrize("name", ["paged", "quantized"])
def test_docstring_examples_run(name: str) -> None:
    import doctest
    import importlib

    module = importlib.import_module(f"tensorplay_nn.nn.cache.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


_CACHES_DOC = Path(__file__).resolve().parents[3] / "docs" / "mixers" / "caches.md"


def _doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", _CACHES_DOC.read_text(), re.S)


def test_the_caches_page_has_an_example_per_cache() -> None:
    blocks = _doc_blocks()
    for name in ("DynamicCache", "StaticCache", "SlidingWindowCache", "PagedCache", "QuantizedCache"):
        assert any(f"cache = {name}(" in b for b in blocks), name
    assert any("LinearStateCache()" in b for b in blocks)


@pytest.mark.parametrize("index", range(len(_doc_blocks())))
def test_caches_doc_examples_run(index: int) -> None:
    # Each block is a self-contained program with its own asserts (docs/mixers/caches.md).
    exec(compile(_doc_blocks()[index], f"caches.md block {index}", "exec"), {"__name__": "__doc_example__"})
