"""Property tests (hypothesis): broadcasting, promotion and views agree with NumPy on random inputs."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorplay_p10 as tp

NP = {
    tp.bool: np.bool_,
    tp.uint8: np.uint8,
    tp.int8: np.int8,
    tp.int16: np.int16,
    tp.int32: np.int32,
    tp.int64: np.int64,
    tp.float32: np.float32,
    tp.float64: np.float64,
}

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


@settings(max_examples=150, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
def test_broadcast_shapes_match_numpy(shapes2):
    (a, b), result = shapes2
    x, y = tp.ones(*a), tp.ones(*b)
    assert tuple((x + y).shape) == result
    assert tuple((x * y).shape) == result


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(list(NP)), st.sampled_from(list(NP)))
def test_same_category_promotion_matches_numpy(a, b):
    cat = lambda d: 0 if d is tp.bool else 2 if d.is_floating_point else 1  # noqa: E731
    if cat(a) != cat(b):
        return  # across categories PyTorch keeps the float dtype where NumPy widens: see test_dtype.py
    assert np.dtype(NP[tp.promote_types(a, b)]) == np.promote_types(NP[a], NP[b])
    assert (tp.ones(2, dtype=a) + tp.ones(2, dtype=b)).dtype is tp.promote_types(a, b)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float32, shapes, elements=st.floats(-100, 100, width=32)), st.data())
def test_random_view_chains_match_numpy(arr, data):
    t = tp.from_numpy(arr.copy())
    ref = arr.copy()
    for _ in range(data.draw(st.integers(0, 4))):
        if ref.ndim == 0:
            break
        kind = data.draw(st.sampled_from(["transpose", "slice", "select", "unsqueeze", "flatten"]))
        d = data.draw(st.integers(0, ref.ndim - 1))
        if kind == "transpose":
            e = data.draw(st.integers(0, ref.ndim - 1))
            t, ref = t.transpose(d, e), np.swapaxes(ref, d, e)
        elif kind == "slice":
            start = data.draw(st.integers(-5, 5))
            step = data.draw(st.integers(1, 3))
            idx = (slice(None),) * d + (slice(start, None, step),)
            t, ref = t[idx], ref[idx]
        elif kind == "select" and ref.shape[d] > 0:
            i = data.draw(st.integers(-ref.shape[d], ref.shape[d] - 1))
            t, ref = t.select(d, i), ref[(slice(None),) * d + (i,)]
        elif kind == "unsqueeze":
            t, ref = t.unsqueeze(d), np.expand_dims(ref, d)
        elif kind == "flatten":
            t, ref = t.flatten(), ref.reshape(-1)
    assert tuple(t.shape) == ref.shape
    np.testing.assert_array_equal(t.numpy(), ref)
    # Both sides are views (or both copied by flatten), so strides agree wherever they matter (size > 1).
    if ref.size:  # an empty tensor's strides are arbitrary on both sides
        for size, mine, theirs in zip(ref.shape, t.stride(), ref.strides, strict=True):
            if size > 1:
                assert mine == theirs // 4


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(np.float64, shapes, elements=st.floats(-1e6, 1e6)),
    st.sampled_from([np.float32, np.int32, np.int64, np.float16]),
)
def test_copy_conversion_matches_numpy(arr, target):
    t = tp.from_numpy(arr.copy()).to(tp.from_numpy(np.zeros(0, target)).dtype)
    with np.errstate(over="ignore"):  # float16 overflows to inf on both sides
        expected = arr.astype(target) if target not in (np.int32, np.int64) else np.trunc(arr).astype(target)
    np.testing.assert_array_equal(t.numpy(), expected)
