"""Tests of `LinearStateCache` (nn/cache/linear_state.py) on its own: the conv window (prepend, trailing
columns kept, the documented narrow-window quirk), the recurrent state (stored as the same object),
`has_previous_state`, `reset`, constant memory in the sequence length, errors and the docstring example.
The mixers that use it are tested in test_gated_delta.py and test_kimi_delta.py."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import tensorplay as tp
from tensorplay.nn.cache import Cache, LinearStateCache


def _inputs(b: int, c: int, t: int, start: float = 0.0) -> tp.Tensor:
    """[B, C, T] whose value at [.., t] is start + t (so columns are recognisable)."""
    return (tp.arange(t, dtype=tp.float32) + start).expand(b, c, t).contiguous()


def test_fresh_cache_and_protocol() -> None:
    cache = LinearStateCache()
    assert cache.conv_states == {} and cache.recurrent_states == {}
    assert not cache.has_previous_state() and not cache.has_previous_state(3)
    assert not isinstance(cache, Cache)
    for missing in ("update", "get_seq_length", "__len__", "crop", "reorder"):
        assert not hasattr(cache, missing), missing


def test_first_conv_update_returns_inputs_and_keeps_the_trailing_window() -> None:
    cache = LinearStateCache()
    x = _inputs(2, 3, 6)
    out = cache.update_conv_state(1, x, kernel_size=4)
    assert out is x  # nothing stored before: the inputs come back as they are
    np.testing.assert_array_equal(cache.conv_states[1].numpy(), x.numpy()[:, :, 3:])
    assert tuple(cache.conv_states[1].shape) == (2, 3, 3)
    assert cache.has_previous_state(1) and not cache.has_previous_state(0)


def test_later_updates_prepend_the_window_and_slide_it() -> None:
    cache = LinearStateCache()
    full = np.arange(10, dtype=np.float32)
    cache.update_conv_state(0, _inputs(1, 2, 5), kernel_size=3)  # inputs 0..4, keeps 3, 4
    out = cache.update_conv_state(0, _inputs(1, 2, 1, start=5.0), kernel_size=3)
    np.testing.assert_array_equal(out.numpy()[0, 0], full[3:6])  # (k-1) + T columns
    out = cache.update_conv_state(0, _inputs(1, 2, 3, start=6.0), kernel_size=3)
    np.testing.assert_array_equal(out.numpy()[0, 1], full[4:9])
    np.testing.assert_array_equal(cache.conv_states[0].numpy()[0, 0], full[7:9])
    # The window's memory stays k-1 columns however long the sequence grows.
    for step in range(9, 30):
        cache.update_conv_state(0, _inputs(1, 2, 1, start=float(step)), kernel_size=3)
        assert tuple(cache.conv_states[0].shape) == (1, 2, 2)
    np.testing.assert_array_equal(cache.conv_states[0].numpy()[0, 0], [28.0, 29.0])


def test_short_prefill_quirk_narrow_window_is_ignored_by_the_next_call() -> None:
    cache = LinearStateCache()
    cache.update_conv_state(0, _inputs(1, 2, 2), kernel_size=4)  # shorter than k-1 = 3
    assert tuple(cache.conv_states[0].shape) == (1, 2, 2)  # a narrower window is stored ...
    new = _inputs(1, 2, 1, start=7.0)
    out = cache.update_conv_state(0, new, kernel_size=4)
    assert out is new  # ... and not prepended (the documented quirk)
    assert tuple(cache.conv_states[0].shape) == (1, 2, 1)
    out = cache.update_conv_state(0, _inputs(1, 2, 2, start=8.0), kernel_size=4)
    assert tuple(out.shape) == (1, 2, 2)  # the window stays narrower than 3: still no prepending
    cache.update_conv_state(0, _inputs(1, 2, 3, start=10.0), kernel_size=4)  # a call of k-1 inputs heals it
    out = cache.update_conv_state(0, _inputs(1, 2, 1, start=13.0), kernel_size=4)
    np.testing.assert_array_equal(out.numpy()[0, 0], [10.0, 11.0, 12.0, 13.0])


def test_kernel_size_one_keeps_an_empty_window() -> None:
    cache = LinearStateCache()
    x = _inputs(1, 2, 4)
    assert cache.update_conv_state(0, x, kernel_size=1) is x
    assert tuple(cache.conv_states[0].shape) == (1, 2, 0)
    out = cache.update_conv_state(0, _inputs(1, 2, 1), kernel_size=1)
    assert tuple(out.shape) == (1, 2, 1)


def test_recurrent_state_is_stored_as_is_and_layers_are_independent() -> None:
    cache = LinearStateCache()
    state = tp.randn(2, 4, 8, 6)
    assert cache.update_recurrent_state(2, state) is state
    assert cache.recurrent_states[2] is state
    assert cache.has_previous_state(2) and not cache.has_previous_state(0)
    newer = tp.zeros(2, 4, 8, 6)
    cache.update_recurrent_state(2, newer)
    assert cache.recurrent_states[2] is newer and len(cache.recurrent_states) == 1
    cache.update_conv_state(0, _inputs(2, 5, 4), kernel_size=2)
    assert sorted(cache.conv_states) == [0] and sorted(cache.recurrent_states) == [2]
    assert "layers=[0, 2]" in repr(cache)


def test_reset_clears_both_dicts() -> None:
    cache = LinearStateCache()
    cache.update_conv_state(0, _inputs(1, 2, 4), kernel_size=4)
    cache.update_recurrent_state(1, tp.zeros(1, 1, 2, 2))
    conv_states, recurrent_states = cache.conv_states, cache.recurrent_states
    cache.reset()
    assert cache.conv_states == {} and cache.recurrent_states == {}
    assert conv_states is cache.conv_states and recurrent_states is cache.recurrent_states
    assert not cache.has_previous_state(0) and not cache.has_previous_state(1)
    # After a reset the first write behaves like a fresh cache's (no stale window prepended).
    x = _inputs(1, 2, 1)
    assert cache.update_conv_state(0, x, kernel_size=2) is x


def test_stored_window_does_not_alias_the_caller_inputs() -> None:
    cache = LinearStateCache()
    x = _inputs(1, 2, 5)
    cache.update_conv_state(0, x, kernel_size=3)
    x.zero_()
    np.testing.assert_array_equal(cache.conv_states[0].numpy()[0, 0], [3.0, 4.0])


def test_errors_name_the_method_and_values() -> None:
    cache = LinearStateCache()
    with pytest.raises(
        ValueError, match=r"update_conv_state: conv_state must be \[B, conv_dim, T\], got \(2, 3\)"
    ):
        cache.update_conv_state(0, tp.zeros(2, 3), kernel_size=4)
    with pytest.raises(ValueError, match=r"kernel_size must be a positive int, got 0"):
        cache.update_conv_state(0, tp.zeros(1, 2, 3), kernel_size=0)
    cache.update_conv_state(0, tp.zeros(1, 2, 5), kernel_size=4)
    with pytest.raises(
        ValueError, match=r"layer 0 holds a window of shape \(1, 2, 3\), cannot continue with "
    ):
        cache.update_conv_state(0, tp.zeros(1, 7, 1), kernel_size=4)


def test_docstring_example() -> None:
    module = importlib.import_module("tensorplay_nn.nn.cache.linear_state")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
