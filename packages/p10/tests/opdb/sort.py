"""Op database: sorting and searching (kernels/sort.cpp): sort, argsort, msort, topk, kthvalue, unique,
unique_consecutive, searchsorted, bucketize, histc, bincount.

Sort-like ops with index outputs get values with ties (small integers) and a ``stable=True`` sample, whose
indices are fully determined; without ``stable`` the check gathers values at the returned indices.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, long_dtype, register, same_dtype
from .reduce import _check_indices, distinct_tensor
from .samples import from_array, make_tensor, rng_for, strided, transposed

NUMERIC = FLOATS + INTS


def _sort_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    ties = make_tensor((3, 4, 5), dtype, rng, low=-3, high=3)
    ties = ties.round() if dtype.is_floating_point else ties
    yield SampleInput(ties, kwargs={"stable": True}, name="ties, stable")
    yield SampleInput(ties, (1, True), {"stable": True}, name="dim 1, descending, stable")
    yield SampleInput(distinct_tensor((4, 6), dtype, rng), (0,), name="distinct, dim 0")
    yield SampleInput(
        transposed(distinct_tensor((4, 6), dtype, rng)), (-1, True), name="transposed, descending"
    )
    yield SampleInput(strided(distinct_tensor((3, 5), dtype, rng)), name="strided")
    yield SampleInput(make_tensor((), dtype, rng), name="0-d")
    yield SampleInput(make_tensor((2, 0), dtype, rng), name="size-0")
    if dtype.is_floating_point:
        x = from_array(np.array([3.0, np.nan, -np.inf, 1.0, np.inf, np.nan, -0.0]), dtype)
        yield SampleInput(x, kwargs={"stable": True}, name="nan sorts last, stable")
        yield SampleInput(x, (0, True), {"stable": True}, name="nan sorts first descending")


def _sort_ref(x, dim=-1, descending=False, stable=None):
    """A stable sort in PyTorch's order: NaN is the largest value; equal values keep their input order."""
    if x.ndim == 0 or x.size == 0:
        return x.copy(), np.zeros(x.shape, np.int64)
    moved = np.moveaxis(x, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]).astype(np.float64)
    idx = np.empty(rows.shape, np.int64)
    for r, row in enumerate(rows):
        nan = np.isnan(row)
        key = np.where(nan, 0.0, row)
        # lexsort is stable and sorts by its last key first: NaN placement, then the value.
        idx[r] = np.lexsort((-key, ~nan)) if descending else np.lexsort((key, nan))
    idx = np.moveaxis(idx.reshape(moved.shape), -1, dim)
    return np.take_along_axis(x, idx, axis=dim), idx


def _sort_check(sample, result):
    if not sample.kwargs.get("stable"):
        values, indices = result
        if sample.input.dim():
            d = sample.args[0] if sample.args else -1
            np.testing.assert_array_equal(
                sample.input.gather(d, indices).to(tp.float64).numpy(), values.to(tp.float64).numpy()
            )


def _unstable(ref):
    """Indices of a sort without ``stable=True`` are checked by gathering, not compared."""

    def wrapped(x, *args, **kwargs):
        values, indices = ref(x, *args, **kwargs)
        return values, indices if kwargs.get("stable") else None

    return wrapped


def _argsort_ref(x, dim=-1, descending=False, stable=False):
    return _sort_ref(x, dim, descending)[1] if stable else None


register(
    OpInfo(
        "sort",
        ref=_unstable(_sort_ref),
        dtypes=NUMERIC,
        sample_inputs=_sort_samples,
        result_dtype=same_dtype,
        check=_sort_check,
        error_inputs=lambda op: [
            ErrorInput(SampleInput(tp.ones(3), (1,)), IndexError, "Dimension out of range", False)
        ],
    ),
    OpInfo(
        "argsort",
        ref=_argsort_ref,
        dtypes=NUMERIC,
        sample_inputs=_sort_samples,
        result_dtype=long_dtype,
        differentiable=False,
    ),
    OpInfo(
        "msort",
        ref=lambda x: np.sort(x, axis=0) if x.ndim else x.copy(),
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: (
            [s for s in _sort_samples(op, d) if not s.args and not s.kwargs]
            + [SampleInput(s.input) for s in _sort_samples(op, d) if s.args]
        ),
        result_dtype=same_dtype,
    ),
)


# topk and kthvalue on distinct values (their indices are then determined).
def _topk_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = distinct_tensor((4, 6), dtype, rng)
    if op.name == "topk":
        yield SampleInput(x, (3,), name="k=3 largest")
        yield SampleInput(x, (2, 0, False), name="k=2 smallest, dim 0")
        yield SampleInput(x, (6,), name="k = size")
        yield SampleInput(x, (0,), name="k=0")
        yield SampleInput(transposed(x), (2, 0), name="transposed")
        yield SampleInput(distinct_tensor((), dtype, rng), (1,), name="0-d")
    else:
        yield SampleInput(x, (2,), name="k=2")
        yield SampleInput(x, (1, 0, True), name="k=1, dim 0, keepdim")
        yield SampleInput(x, (6,), name="k = size")
        yield SampleInput(transposed(x), (3, 0), name="transposed")
        yield SampleInput(distinct_tensor((), dtype, rng), (1,), name="0-d")


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.argsort(-x.astype(np.float64) if largest else x, axis=dim, kind="stable")
    idx = np.take(idx, range(k), axis=dim)
    return np.take_along_axis(x, idx, axis=dim), idx


def _kthvalue_ref(x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.take(np.argsort(x, axis=dim, kind="stable"), [k - 1], axis=dim)
    v = np.take_along_axis(x, idx, axis=dim)
    return (v, idx) if keepdim else (np.squeeze(v, dim), np.squeeze(idx, dim))


register(
    OpInfo(
        "topk",
        ref=_topk_ref,
        dtypes=NUMERIC,
        sample_inputs=_topk_samples,
        result_dtype=same_dtype,
        error_inputs=lambda op: [
            ErrorInput(SampleInput(tp.ones(3), (4,)), RuntimeError, "selected index k out of range", False)
        ],
    ),
    OpInfo(
        "kthvalue",
        ref=_kthvalue_ref,
        dtypes=NUMERIC,
        sample_inputs=_topk_samples,
        result_dtype=same_dtype,
        check=_check_indices(1),
    ),
)


# unique / unique_consecutive: sorted values, inverse and counts, over all or along a dim.
def _unique_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5), dtype, rng, low=-2, high=2)
    x = x.round() if dtype.is_floating_point else x
    consecutive = op.name == "unique_consecutive"
    flags = [(), (True, True)] if consecutive else [(), (True, True, True)]
    for f in flags:
        yield SampleInput(x, f, name=f"flags {f}")
    rows = make_tensor((3, 2), dtype, rng, low=0, high=1)
    rows = tp.cat([rows, rows[:1]]).round() if dtype.is_floating_point else tp.cat([rows, rows[:1]])
    kw = {"return_inverse": True, "return_counts": True, "dim": 0}
    yield SampleInput(rows, kwargs=kw, name="unique rows")
    yield SampleInput(transposed(x), kwargs={"return_counts": True}, name="transposed")
    yield SampleInput(make_tensor((0,), dtype, rng), name="size-0")
    yield SampleInput(make_tensor((), dtype, rng), kwargs={"return_inverse": True}, name="0-d")


def _unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    u, inv, cnt = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    inv = inv.reshape(x.shape if dim is None else (x.shape[dim],))
    out = [u]
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(cnt)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        moved = np.moveaxis(x, dim, 0).reshape(x.shape[dim], -1)
        change = (
            np.concatenate([[True], np.any(moved[1:] != moved[:-1], axis=1)])
            if len(moved)
            else np.zeros(0, bool)
        )
        vals = np.take(x, np.flatnonzero(change), axis=dim)
    else:
        flat = x.reshape(-1)
        change = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        vals = flat[change]
    inv = (np.cumsum(change) - 1).reshape(x.shape if dim is None else (x.shape[dim],))
    cnt = np.diff(np.append(np.flatnonzero(change), change.size))
    out = [vals]
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(cnt)
    return out[0] if len(out) == 1 else tuple(out)


register(
    OpInfo(
        "unique",
        ref=_unique_ref,
        dtypes=NUMERIC,
        sample_inputs=_unique_samples,
        meta=False,
        differentiable=False,
    ),
    OpInfo(
        "unique_consecutive",
        ref=_unique_consecutive_ref,
        dtypes=NUMERIC,
        sample_inputs=_unique_samples,
        meta=False,
        differentiable=False,
    ),
)


# searchsorted / bucketize / histc / bincount
def _search_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    seq = tp.sort(make_tensor((7,), dtype, rng)).values
    vals = make_tensor((3, 4), dtype, rng)
    with_ties = tp.cat([seq[:3], seq[2:3]]) if op.name == "bucketize" else None
    if op.name == "searchsorted":
        yield SampleInput(seq, (vals,), name="1-d sequence")
        yield SampleInput(seq, (vals,), {"right": True}, name="right")
        yield SampleInput(seq, (seq,), {"side": "right"}, name="values equal to boundaries")
        rows = tp.sort(make_tensor((3, 5), dtype, rng), dim=-1).values
        yield SampleInput(rows, (make_tensor((3, 2), dtype, rng),), name="batched")
        yield SampleInput(seq, (vals,), {"out_int32": True}, name="out_int32")
        yield SampleInput(seq, (3,), name="a number")
    else:
        yield SampleInput(vals, (seq,), name="boundaries")
        yield SampleInput(vals, (seq,), {"right": True}, name="right")
        yield SampleInput(seq, (seq,), name="values equal to boundaries")
        yield SampleInput(transposed(vals), (seq,), {"out_int32": True}, name="out_int32, transposed")
        yield SampleInput(make_tensor((), dtype, rng), (tp.sort(with_ties).values,), name="0-d")


def _searchsorted_ref(seq, vals, out_int32=False, right=False, side=None):
    right = right or side == "right"
    s = "right" if right else "left"
    if seq.ndim == 1:
        r = np.searchsorted(seq, vals, side=s)
    else:
        r = np.stack([np.searchsorted(a, v, side=s) for a, v in zip(seq, vals, strict=True)])
    return r.astype(np.int32 if out_int32 else np.int64)


def _int_or_long(sample, dtype):
    return tp.int32 if sample.kwargs.get("out_int32") else tp.int64


register(
    OpInfo(
        "searchsorted",
        ref=_searchsorted_ref,
        dtypes=NUMERIC,
        sample_inputs=_search_samples,
        result_dtype=_int_or_long,
        differentiable=False,
    ),
    OpInfo(
        "bucketize",
        ref=lambda v, b, out_int32=False, right=False: _searchsorted_ref(b, v, out_int32, right),
        dtypes=NUMERIC,
        sample_inputs=_search_samples,
        result_dtype=_int_or_long,
        differentiable=False,
    ),
)


def _histc_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((50,), dtype, rng, low=-4, high=4)
    yield SampleInput(x, name="100 bins over the data's range")
    yield SampleInput(x, (5, -2, 2), name="5 bins, out-of-range values ignored")
    yield SampleInput(transposed(make_tensor((6, 5), dtype, rng)), (4,), name="transposed")
    yield SampleInput(make_tensor((0,), dtype, rng), (3, 0, 1), name="size-0")
    yield SampleInput(
        from_array(np.array([1.0, 1.0, 1.0]), dtype), (3,), name="all equal: range widened by 1"
    )


def _histc_ref(x, bins=100, min=0, max=0):
    x = x.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep = x[(x >= lo) & (x <= hi)]
    idx = np.minimum(((keep - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return np.bincount(idx, minlength=bins).astype(np.float64)


def _bincount_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = tp.tensor(rng.integers(0, 6, 20)).to(dtype)
    yield SampleInput(x, name="counts")
    yield SampleInput(x, (make_tensor((20,), tp.float32, rng),), name="float32 weights")
    yield SampleInput(x, kwargs={"minlength": 10}, name="minlength")
    yield SampleInput(tp.tensor(np.zeros(0, np.int64)).to(dtype), name="size-0")


def _bincount_ref(x, weights=None, minlength=0):
    return np.bincount(x, weights, minlength)


def _bincount_dtype(sample, dtype):
    w = sample.args[0] if sample.args else None
    return tp.int64 if w is None else (tp.float64 if w.dtype is tp.float64 else tp.float64)


register(
    OpInfo(
        "histc",
        ref=_histc_ref,
        dtypes=(tp.float32, tp.float64),
        sample_inputs=_histc_samples,
        result_dtype=same_dtype,
        differentiable=False,
    ),
    OpInfo(
        "bincount",
        ref=_bincount_ref,
        dtypes=(tp.int64, tp.int32, tp.uint8),
        sample_inputs=_bincount_samples,
        result_dtype=None,
        meta=False,
        differentiable=False,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.tensor([1, -1])),
                RuntimeError,
                "bincount only supports 1-d non-negative integral inputs",
                False,
            )
        ],
    ),
)
