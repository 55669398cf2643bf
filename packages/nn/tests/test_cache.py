"""Tests of tensorplay.nn.cache: the Cache protocol, DynamicCache, StaticCache and SlidingWindowCache
(shared/reference/llm-api.md, "Caches"), against NumPy concatenation and slicing as the reference."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay as tp
from tensorplay.nn.cache import Cache, DynamicCache, SlidingWindowCache, StaticCache


def _kv(b: int, h: int, t: int, dk: int, dv: int | None = None, seed: int = 0) -> tuple[tp.Tensor, tp.Tensor]:
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((b, h, t, dk)).astype(np.float32)
    v = rng.standard_normal((b, h, t, dv or dk)).astype(np.float32)
    return tp.tensor(k), tp.tensor(v)


def test_the_base_class_is_abstract() -> None:
    c = Cache()
    k, v = _kv(1, 1, 1, 2)
    with pytest.raises(NotImplementedError, match="update"):
        c.update(k, v, 0)
    with pytest.raises(NotImplementedError, match="get_seq_length"):
        c.get_seq_length(0)
    with pytest.raises(NotImplementedError, match="reset"):
        c.reset()


@pytest.mark.parametrize("cache", [DynamicCache(), StaticCache(8), SlidingWindowCache(4)], ids=type)
def test_every_cache_is_a_cache_and_starts_empty(cache: Cache) -> None:
    assert isinstance(cache, Cache)
    assert len(cache) == 0
    assert cache.get_seq_length() == 0 and cache.get_seq_length(5) == 0


def test_dynamic_first_update_returns_the_very_tensors() -> None:
    cache = DynamicCache()
    k, v = _kv(2, 3, 4, 5)
    k_all, v_all = cache.update(k, v, 0)
    assert k_all is k and v_all is v
    assert cache.key_cache[0] is k and cache.value_cache[0] is v


def test_dynamic_appends_along_seq_with_different_value_width() -> None:
    cache = DynamicCache()
    k1, v1 = _kv(2, 1, 3, 4, 6, seed=1)
    k2, v2 = _kv(2, 1, 1, 4, 6, seed=2)
    cache.update(k1, v1, 0)
    k_all, v_all = cache.update(k2, v2, 0)
    np.testing.assert_array_equal(k_all.numpy(), np.concatenate([k1.numpy(), k2.numpy()], 2))
    np.testing.assert_array_equal(v_all.numpy(), np.concatenate([v1.numpy(), v2.numpy()], 2))
    assert tuple(v_all.shape) == (2, 1, 4, 6)
    assert cache.get_seq_length(0) == 4


def test_dynamic_layers_are_lazy_with_none_holes_and_iterable() -> None:
    cache = DynamicCache()
    k, v = _kv(1, 2, 3, 4)
    cache.update(k, v, layer_idx=2)
    assert len(cache) == 3
    assert cache.key_cache[:2] == [None, None] and cache.value_cache[0] is None
    assert cache.get_seq_length(0) == 0 and cache.get_seq_length(2) == 3
    pairs = list(cache)
    assert pairs[2].key is k and pairs[2].value is v and pairs[0].key is None
    key, value = pairs[2]  # a named tuple unpacks too
    assert key is k and value is v
    cache.reset()
    assert len(cache) == 0 and cache.get_seq_length(2) == 0


def test_dynamic_rejects_mismatched_pairs_with_clear_messages() -> None:
    cache = DynamicCache()
    k, v = _kv(1, 2, 3, 4)
    with pytest.raises(ValueError, match=r"DynamicCache.update: key and value must be 4-D"):
        cache.update(k[0], v[0], 0)
    with pytest.raises(ValueError, match=r"must agree in batch, heads and seq"):
        cache.update(k, v[:, :, :2], 0)
    with pytest.raises(ValueError, match=r"layer_idx must be a non-negative int, got -1"):
        cache.update(k, v, -1)
    cache.update(k, v, 0)
    k3, v3 = _kv(1, 3, 1, 4)
    with pytest.raises(
        ValueError, match=r"layer 0 holds keys of shape \(1, 2, 3, 4\), cannot append \(1, 3, 1, 4\)"
    ):
        cache.update(k3, v3, 0)


def test_static_writes_at_the_cursor_and_returns_prefix_views() -> None:
    cache = StaticCache(6)
    k1, v1 = _kv(2, 2, 4, 3, 5, seed=3)
    k2, v2 = _kv(2, 2, 1, 3, 5, seed=4)
    k_all, v_all = cache.update(k1, v1, 1)
    assert tuple(cache.key_cache[1].shape) == (2, 2, 6, 3) and tuple(cache.value_cache[1].shape) == (
        2,
        2,
        6,
        5,
    )
    assert cache.key_cache[0] is None and len(cache) == 2
    assert tuple(k_all.shape) == (2, 2, 4, 3)
    k_all, v_all = cache.update(k2, v2, 1)
    np.testing.assert_array_equal(k_all.numpy(), np.concatenate([k1.numpy(), k2.numpy()], 2))
    np.testing.assert_array_equal(v_all.numpy(), np.concatenate([v1.numpy(), v2.numpy()], 2))
    assert cache.get_seq_length(1) == 5 and cache.get_seq_length(0) == 0
    # The returned pair are views into the buffers: writing the buffer shows through.
    cache.key_cache[1][0, 0, 0, 0] = 42.0
    assert k_all[0, 0, 0, 0].item() == 42.0
    # The unwritten tail is zero.
    np.testing.assert_array_equal(cache.key_cache[1].numpy()[:, :, 5:], 0.0)


def test_static_buffers_take_the_input_dtype() -> None:
    cache = StaticCache(4)
    k, v = _kv(1, 1, 2, 2)
    k_all, _ = cache.update(k.double(), v.double())
    assert cache.key_cache[0].dtype == tp.float64 and k_all.dtype == tp.float64


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_static_rejects_a_non_positive_capacity(bad: object) -> None:
    with pytest.raises(ValueError, match=rf"StaticCache: max_seq_len must be a positive int, got {bad!r}"):
        StaticCache(bad)  # type: ignore[arg-type]


def test_static_overflow_is_a_runtime_error_and_keeps_state() -> None:
    cache = StaticCache(4)
    k, v = _kv(1, 1, 3, 2)
    cache.update(k, v)
    with pytest.raises(RuntimeError, match=r"holds 3 positions, cannot add 2 more \(max_seq_len=4\)"):
        cache.update(k[:, :, :2], v[:, :, :2])
    assert cache.get_seq_length() == 3
    cache.update(k[:, :, :1], v[:, :, :1])
    assert cache.get_seq_length() == 4
    cache.reset()
    assert len(cache) == 0 and cache.get_seq_length() == 0


def test_static_accepts_non_contiguous_inputs() -> None:
    cache = StaticCache(5)
    k, v = _kv(1, 3, 2, 4)
    kt, vt = k.transpose(1, 2).contiguous().transpose(1, 2), v[..., :]
    assert not kt.is_contiguous()
    k_all, v_all = cache.update(kt, vt)
    np.testing.assert_array_equal(k_all.numpy(), k.numpy())
    np.testing.assert_array_equal(v_all.numpy(), v.numpy())


def test_sliding_window_keeps_the_tail_and_absolute_positions() -> None:
    cache = SlidingWindowCache(3)
    k1, v1 = _kv(2, 1, 5, 2, seed=5)
    k_all, v_all = cache.update(k1, v1)
    # The first write keeps the whole block, even past the window.
    assert k_all is k1 and v_all is v1 and cache.get_window_length() == 5
    assert cache.positions[0].tolist() == [[0, 1, 2, 3, 4]] * 2
    assert cache.positions[0].dtype == tp.int64
    steps = [_kv(2, 1, 1, 2, seed=6 + i) for i in range(2)]
    ref_k = k1.numpy()
    for k, v in steps:
        k_all, _ = cache.update(k, v)
        ref_k = np.concatenate([ref_k, k.numpy()], 2)[:, :, -3:]
        np.testing.assert_array_equal(k_all.numpy(), ref_k)
    assert cache.get_seq_length() == 7
    assert cache.get_window_length() == 3
    assert cache.positions[0].tolist() == [[4, 5, 6]] * 2


def test_sliding_window_short_writes_and_layers() -> None:
    cache = SlidingWindowCache(4)
    k, v = _kv(1, 2, 2, 3)
    cache.update(k, v, 1)
    cache.update(k, v, 1)
    assert cache.get_window_length(1) == 4 and cache.get_seq_length(1) == 4
    cache.update(k[:, :, :1], v[:, :, :1], 1)
    assert cache.positions[1].tolist() == [[1, 2, 3, 4]]
    assert cache.get_window_length(0) == 0 and cache.positions[0] is None
    cache.reset()
    assert len(cache) == 0 and cache.get_seq_length(1) == 0 and cache.positions == []


@pytest.mark.parametrize("bad", [0, -1])
def test_sliding_window_rejects_a_non_positive_window(bad: int) -> None:
    with pytest.raises(
        ValueError, match=rf"SlidingWindowCache: window_size must be a positive int, got {bad}"
    ):
        SlidingWindowCache(bad)


def test_sliding_window_keeps_one_copy_when_key_is_value() -> None:
    cache = SlidingWindowCache(3)
    rng = np.random.default_rng(0)
    chunks = [rng.standard_normal((1, 1, t, 2)).astype(np.float32) for t in (2, 1, 2)]
    for c in chunks:
        x = tp.tensor(c)
        k, v = cache.update(x, x)
        assert k is v and cache.key_cache[0] is cache.value_cache[0]
    np.testing.assert_allclose(cache.key_cache[0].numpy(), np.concatenate(chunks, 2)[:, :, -3:])
    # different tensors for key and value keep two
    other = SlidingWindowCache(3)
    x, y = tp.tensor(chunks[0]), tp.tensor(chunks[0] * 2)
    other.update(x, y)
    k, v = other.update(x, y)
    assert k is not v
    np.testing.assert_allclose(v.numpy(), 2 * k.numpy())
