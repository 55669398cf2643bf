"""Property tests (hypothesis): broadcasting, promotion and views agree with NumPy on random inputs."""

import numpy as np
import pytest
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


@settings(max_examples=150, deadline=None)
@given(st.lists(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3), min_size=1, max_size=4))
def test_broadcast_shapes_function_matches_numpy(shape_list):
    """tp.broadcast_shapes agrees with np.broadcast_shapes, and fails exactly where NumPy fails."""
    try:
        expected = np.broadcast_shapes(*shape_list)
    except ValueError:
        with pytest.raises(RuntimeError):
            tp.broadcast_shapes(*shape_list)
        return
    assert tuple(tp.broadcast_shapes(*shape_list)) == expected
    tensors = [tp.zeros(*s) for s in shape_list]
    assert [tuple(t.shape) for t in tp.broadcast_tensors(tensors)] == [expected] * len(shape_list)


# PyTorch's promote_types table (c10/core/ScalarType.cpp), written out so a change in either is visible.
_ORDER = ["u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "b", "bf16"]
_PROMOTE_ROWS = """
      u8   i8   i16  i32  i64  f16  f32  f64  b    bf16
u8    u8   i16  i16  i32  i64  f16  f32  f64  u8   bf16
i8    i16  i8   i16  i32  i64  f16  f32  f64  i8   bf16
i16   i16  i16  i16  i32  i64  f16  f32  f64  i16  bf16
i32   i32  i32  i32  i32  i64  f16  f32  f64  i32  bf16
i64   i64  i64  i64  i64  i64  f16  f32  f64  i64  bf16
f16   f16  f16  f16  f16  f16  f16  f32  f64  f16  f32
f32   f32  f32  f32  f32  f32  f32  f32  f64  f32  f32
f64   f64  f64  f64  f64  f64  f64  f64  f64  f64  f64
b     u8   i8   i16  i32  i64  f16  f32  f64  b    bf16
bf16  bf16 bf16 bf16 bf16 bf16 f32  f32  f64  bf16 bf16
"""
_SHORT = {
    "u8": tp.uint8,
    "i8": tp.int8,
    "i16": tp.int16,
    "i32": tp.int32,
    "i64": tp.int64,
    "f16": tp.float16,
    "f32": tp.float32,
    "f64": tp.float64,
    "b": tp.bool,
    "bf16": tp.bfloat16,
}
PROMOTE = {
    (_SHORT[row[0]], _SHORT[col]): _SHORT[out]
    for row in (line.split() for line in _PROMOTE_ROWS.strip().splitlines()[1:])
    for col, out in zip(_ORDER, row[1:], strict=True)
}


def test_promote_types_matches_the_table():
    for (a, b), want in PROMOTE.items():
        assert tp.promote_types(a, b) is want, (a, b)


def _category(d):
    return 0 if d is tp.bool else 2 if d.is_floating_point else 1


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower tier only matters when it is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(higher) == 2:
        return higher
    if higher is tp.bool or _category(lower) == 2:
        return PROMOTE[higher, lower]
    return higher


def _reference_result_type(operands):
    """Three tiers — tensors with dims, 0-d tensors, Python numbers — each promoted within, then combined."""
    tiers = [None, None, None]
    for kind, d in operands:
        if kind == "number":  # a Python float is the default float dtype, an int int64, a bool bool
            d = tp.get_default_dtype() if d.is_floating_point else d
        tier = {"dims": 0, "zero-dim": 1, "number": 2}[kind]
        tiers[tier] = d if tiers[tier] is None else PROMOTE[tiers[tier], d]
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


_NUMBER = {tp.bool: True, tp.int64: 3, tp.float64: 2.5}
operand = st.one_of(
    st.tuples(st.just("dims"), st.sampled_from(list(_SHORT.values()))),
    st.tuples(st.just("zero-dim"), st.sampled_from(list(_SHORT.values()))),
    st.tuples(st.just("number"), st.sampled_from(list(_NUMBER))),
)


def _make_operand(kind, d):
    if kind == "number":
        return _NUMBER[d]
    return tp.ones(2, dtype=d) if kind == "dims" else tp.ones((), dtype=d)


@settings(max_examples=300, deadline=None)
@given(operand, operand)
def test_result_type_matches_the_three_tier_rule(a, b):
    if a[0] == "number" and b[0] == "number":
        return  # result_type needs a tensor
    want = _reference_result_type([a, b])
    x, y = _make_operand(*a), _make_operand(*b)
    assert tp.result_type(x, y) is want
    # The arithmetic ops use the same rule (the first operand of `add` must be a tensor).
    if isinstance(x, tp.Tensor):
        assert (x + y).dtype is want or want is tp.bool


# Indexing: random subscripts, in the forms where NumPy's rules are PyTorch's.
@st.composite
def _subscripts(draw, shape):
    """A basic subscript (ints, slices, None, one Ellipsis) or one with advanced indices: adjacent integer
    arrays (broadcast against each other) or one bool mask, among slices; ints are not mixed with arrays
    (NumPy treats such an int as advanced, PyTorch as a select)."""
    advanced = draw(st.booleans()) and len(shape) > 0
    items, dim = [], 0
    adv_start = draw(st.integers(0, len(shape) - 1)) if advanced else -1
    used_ellipsis = False
    while dim < len(shape):
        n = shape[dim]
        if dim == adv_start:
            if draw(st.booleans()) or n == 0:
                run = draw(st.integers(1, len(shape) - dim))
                bshape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3))
                for k in range(run):
                    m = shape[dim + k]
                    if m == 0:
                        items.append(np.zeros((0,), np.int64))
                    else:
                        items.append(draw(hnp.arrays(np.int64, bshape, elements=st.integers(-m, m - 1))))
                dim += run
            else:
                items.append(draw(hnp.arrays(np.bool_, (n,))))
                dim += 1
            continue
        kind = draw(st.sampled_from(["slice", "slice", "none", "int", "ellipsis"]))
        if kind == "int" and n > 0 and not advanced:
            items.append(draw(st.integers(-n, n - 1)))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not used_ellipsis and not advanced:
            used_ellipsis = True
            items.append(Ellipsis)
            dim = len(shape)
        else:
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(slice(start, stop, step))
            dim += 1
    if any(isinstance(i, np.ndarray) and i.dtype == np.int64 for i in items):
        # Shapes of adjacent integer arrays must broadcast: they share one drawn shape (or are empty).
        arrays = [i for i in items if isinstance(i, np.ndarray) and i.dtype == np.int64]
        if len({a.shape for a in arrays}) > 1:
            items = [
                i if not (isinstance(i, np.ndarray) and i.dtype == np.int64) else i.reshape(-1)[:0]
                for i in items
            ]
    return tuple(items)


def _to_tp_subscript(sub):
    return tuple(tp.tensor(i) if isinstance(i, np.ndarray) else i for i in sub)


@settings(max_examples=200, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), st.data())
def test_random_getitem_matches_numpy(shape, data):
    arr = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    sub = data.draw(_subscripts(shape))
    expected = arr[sub]
    got = tp.tensor(arr)[_to_tp_subscript(sub)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=150, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), st.data())
def test_random_setitem_matches_numpy(shape, data):
    """Writes through basic subscripts, one unique integer array, or a mask: no index repeats, so the result
    does not depend on the order of writes."""
    arr = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    d = data.draw(st.integers(0, len(shape) - 1))
    kind = data.draw(st.sampled_from(["basic", "array", "mask"]))
    lead = (slice(None),) * d
    if kind == "basic":
        sub = data.draw(_subscripts(shape))
        if any(isinstance(i, np.ndarray) for i in sub):
            sub = lead + (slice(0, None, 2),)
    elif kind == "array":
        k = data.draw(st.integers(0, shape[d]))
        sub = lead + (np.array(data.draw(st.permutations(range(shape[d])))[:k], np.int64),)
    else:
        sub = lead + (data.draw(hnp.arrays(np.bool_, (shape[d],))),)
    target_shape = arr[sub].shape
    scalar = data.draw(st.booleans())
    value = (
        -1.5 if scalar else -np.arange(int(np.prod(target_shape)), dtype=np.float32).reshape(target_shape) - 1
    )
    t = tp.tensor(arr)
    t[_to_tp_subscript(sub)] = value if scalar else tp.tensor(value)
    arr[sub] = value
    np.testing.assert_array_equal(t.numpy(), arr)


@settings(max_examples=150, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), st.data())
def test_writes_through_views_reach_the_base(shape, data):
    """A chain of views, then an in-place write through the last one: the base tensor changes exactly where
    NumPy's base array changes through the same chain (views share storage; nothing is copied)."""
    base_np = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    base = tp.tensor(base_np)
    t, ref = base, base_np
    for _ in range(data.draw(st.integers(1, 4))):
        if ref.ndim == 0:
            break
        kind = data.draw(
            st.sampled_from(
                ["transpose", "slice", "select", "unsqueeze", "narrow", "diagonal", "permute", "unfold"]
            )
        )
        d = data.draw(st.integers(0, ref.ndim - 1))
        n = ref.shape[d]
        if kind == "transpose":
            e = data.draw(st.integers(0, ref.ndim - 1))
            t, ref = t.transpose(d, e), np.swapaxes(ref, d, e)
        elif kind == "slice":
            start, step = data.draw(st.integers(0, max(n - 1, 0))), data.draw(st.integers(1, 3))
            idx = (slice(None),) * d + (slice(start, None, step),)
            t, ref = t[idx], ref[idx]
        elif kind == "select" and n > 0:
            i = data.draw(st.integers(-n, n - 1))
            # The Ellipsis keeps NumPy's result a (0-d) view where a plain index would copy out a scalar.
            t, ref = t.select(d, i), ref[(slice(None),) * d + (i, Ellipsis)]
        elif kind == "unsqueeze":
            t, ref = t.unsqueeze(d), np.expand_dims(ref, d)
        elif kind == "narrow" and n > 0:
            start = data.draw(st.integers(0, n - 1))
            length = data.draw(st.integers(0, n - start))
            t, ref = t.narrow(d, start, length), ref[(slice(None),) * d + (slice(start, start + length),)]
        elif kind == "diagonal" and ref.ndim >= 2:
            e = (d + 1) % ref.ndim
            off = data.draw(st.integers(-2, 2))
            t, ref = t.diagonal(off, d, e), np.diagonal(ref, off, d, e)
        elif kind == "permute":
            perm = data.draw(st.permutations(range(ref.ndim)))
            t, ref = t.permute(perm), np.transpose(ref, perm)
        elif kind == "unfold" and n > 0:
            size = data.draw(st.integers(1, n))
            step = data.draw(st.integers(1, 2))
            # Overlapping windows alias: write only when they do not (step >= size).
            if step >= size:
                t = t.unfold(d, size, step)
                ref = np.lib.stride_tricks.sliding_window_view(ref, size, axis=d)[
                    (slice(None),) * d + (slice(None, None, step),)
                ]
    assert tuple(t.shape) == ref.shape
    values = -np.arange(ref.size, dtype=np.float32).reshape(ref.shape) - 1
    t.copy_(tp.tensor(values))
    _np_write(base_np, ref, values)
    np.testing.assert_array_equal(base.numpy(), base_np)


def _np_write(base, view, values):
    """Write ``values`` into ``base`` at the elements ``view`` (a view of it, maybe read-only) refers to."""
    if view.size == 0:
        return
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    target = np.lib.stride_tricks.as_strided(
        base.reshape(-1)[start // base.itemsize :], view.shape, view.strides, writeable=True
    )
    target[...] = values
