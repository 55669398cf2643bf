"""Op database: reductions (kernels/reduce.cpp, reduce_order.cpp): sums, means, products, extrema with
and without indices, all/any, count_nonzero, median and mode. Statistics and scans are in reduce_stats.py.

Samples reduce a (3, 4, 5) block over every dim form the schema takes (None, an int, a negative int, a tuple,
keepdim), 0-d inputs, size-0 and size-1 dims, and transposed/strided layouts. Ops that also return indices
draw distinct values (``distinct_tensor``) so the index of the maximum is unique; where PyTorch leaves the
index among equal values unspecified (mode) the check gathers the values at the returned indices instead.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import BOOL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, long_dtype, register
from . import same_dtype as same
from .samples import from_array, make_tensor, rng_for, strided, transposed

NUMERIC = FLOATS + INTS


def distinct_tensor(shape, dtype, rng):
    """Distinct values (a shuffled range, exact in every dtype for up to 120 elements), so max/sort indices
    are unique."""
    n = int(np.prod(shape))
    base = np.arange(n) - (n // 2 if dtype not in (tp.uint8,) else 0)
    return from_array(rng.permutation(base).reshape(shape), dtype)


def _axis(dim):
    if dim is None or dim == () or dim == []:
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def reduction_samples(op, dtype, dims="list", keepdim=True, distinct=False, low=None, high=None, kwargs=None):
    """``dims``: "list" (int[]? : None, int, tuple), "opt" (int?), "int" (a required int)."""
    rng = rng_for(op.id, str(dtype))
    kw = dict(kwargs or {})

    def t(shape):
        return (
            distinct_tensor(shape, dtype, rng)
            if distinct
            else make_tensor(shape, dtype, rng, low=low, high=high)
        )

    forms = {"list": [None, 1, -1, (0, 2), (2, 0)], "opt": [None, 0, -1, 1], "int": [0, -1, 1]}[dims]
    x = t((3, 4, 5))
    for d in forms:
        args = () if d is None else (d,)
        yield SampleInput(x, args, dict(kw), f"dim={d}")
        if keepdim and d is not None:
            yield SampleInput(x, args, {**kw, "keepdim": True}, f"dim={d}, keepdim")
    d0 = () if dims == "list" else (0,) if dims == "int" else ()
    yield SampleInput(t(()), d0, dict(kw), "0-d")
    yield SampleInput(t((1, 1)), (0,) if dims != "list" or True else (), dict(kw), "size-1")
    yield SampleInput(t((2, 0, 3)), (0,), dict(kw), "size-0 dim kept")
    y = t((4, 6))
    yield SampleInput(transposed(y), (0,) if dims != "list" else (1,), dict(kw), "transposed")
    yield SampleInput(strided(y), () if dims != "int" else (1,), dict(kw), "strided")


def _np_reduce(fn, cast_bool=False):
    """A reference ``fn(x, axis=, keepdims=)`` adapted to PyTorch's (dim, keepdim, dtype=) arguments."""

    def ref(x, dim=None, keepdim=False, dtype=None):
        if cast_bool and x.dtype == np.bool_:
            x = x.astype(np.int64)
        with np.errstate(all="ignore"):
            return fn(x, axis=_axis(dim), keepdims=keepdim)

    return ref


def _sum_dtype(sample, dtype):
    if "dtype" in sample.kwargs:
        return sample.kwargs["dtype"]
    d = sample.input.dtype
    return tp.int64 if d is tp.bool or not (d.is_floating_point or d.is_complex) else d


def _sum_samples(op, dtype):
    yield from reduction_samples(op, dtype)
    if dtype is not tp.bool:
        yield SampleInput(
            make_tensor((3, 4), dtype, rng_for(op.id, "dt")),
            (1,),
            {"dtype": tp.float64},
            name="dtype=float64",
        )


def _large_reduce(op):
    x = make_tensor((1024, 1024), tp.float32, rng_for(op.id, "large"), low=0.5, high=1.5)
    return SampleInput(x, (), name="1M elements, full reduction")


def _large_reduce_dim(op):
    x = make_tensor((1024, 1024), tp.float32, rng_for(op.id, "large"), low=0.5, high=1.5)
    return SampleInput(transposed(x), (1,), name="1M elements, dim 1, transposed")


_LARGE_TOL = {tp.float32: (1e-4, 1e-4)}

register(
    OpInfo(
        "sum",
        out_casts=True,
        ref=_np_reduce(np.sum, True),
        dtypes=NUMERIC + BOOL,
        sample_inputs=_sum_samples,
        out=True,
        result_dtype=_sum_dtype,
        large=_large_reduce,
        tolerances=_LARGE_TOL,
    ),
    OpInfo(
        "nansum",
        ref=_np_reduce(np.nansum, True),
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: [
            *reduction_samples(op, d),
            *(
                [SampleInput(from_array(np.array([[1.0, np.nan], [np.nan, np.nan]]), d), (1,), name="nan")]
                if d.is_floating_point
                else []
            ),
        ],
        result_dtype=_sum_dtype,
        large=_large_reduce_dim,
    ),
    OpInfo(
        "mean",
        ref=_np_reduce(np.mean),
        dtypes=FLOATS,
        sample_inputs=reduction_samples,
        out=True,
        result_dtype=lambda s, d: s.kwargs.get("dtype", s.input.dtype),
        large=_large_reduce,
        tolerances=_LARGE_TOL,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(3, dtype=tp.int64)), RuntimeError, "mean.*could not infer output dtype"
            )
        ],
    ),
    OpInfo(
        "nanmean",
        ref=_np_reduce(np.nanmean),
        dtypes=FLOATS,
        sample_inputs=lambda op, d: [
            *reduction_samples(op, d),
            SampleInput(from_array(np.array([[1.0, np.nan], [np.nan, np.nan]]), d), (1,), name="nan"),
        ],
        result_dtype=same,
    ),
    OpInfo(
        "prod",
        ref=_np_reduce(np.prod, True),
        dtypes=NUMERIC + BOOL,
        sample_inputs=lambda op, d: reduction_samples(op, d, dims="opt", low=-2, high=2),
        result_dtype=_sum_dtype,
    ),
    OpInfo(
        "prod",
        variant="dim",
        out_casts=True,
        ref=_np_reduce(np.prod, True),
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: reduction_samples(op, d, dims="int", low=-2, high=2),
        out=True,
        result_dtype=_sum_dtype,
    ),
    OpInfo(
        "amax",
        ref=_np_reduce(np.amax),
        dtypes=NUMERIC + BOOL,
        sample_inputs=lambda op, d: [s for s in reduction_samples(op, d) if "size-0" not in s.name],
        result_dtype=same,
        large=_large_reduce_dim,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(0, 3), (0,)),
                IndexError,
                "amax.*reduction dim 0 .*size 0|Expected reduction dim",
            )
        ],
    ),
    OpInfo(
        "amin",
        ref=_np_reduce(np.amin),
        dtypes=NUMERIC + BOOL,
        sample_inputs=lambda op, d: [s for s in reduction_samples(op, d) if "size-0" not in s.name],
        result_dtype=same,
    ),
    OpInfo(
        "all",
        ref=_np_reduce(np.all),
        dtypes=NUMERIC + BOOL,
        sample_inputs=lambda op, d: reduction_samples(op, d, low=0, high=2),
        result_dtype=lambda s, d: tp.uint8 if s.input.dtype is tp.uint8 else tp.bool,
        differentiable=False,
    ),
    OpInfo(
        "any",
        ref=_np_reduce(np.any),
        dtypes=NUMERIC + BOOL,
        sample_inputs=lambda op, d: reduction_samples(op, d, low=-1, high=0),
        result_dtype=lambda s, d: tp.uint8 if s.input.dtype is tp.uint8 else tp.bool,
        differentiable=False,
    ),
    OpInfo(
        "count_nonzero",
        ref=lambda x, dim=None: np.count_nonzero(x, axis=_axis(dim)),
        dtypes=NUMERIC + BOOL,
        sample_inputs=lambda op, d: reduction_samples(op, d, keepdim=False, low=-1, high=1),
        result_dtype=long_dtype,
        differentiable=False,
    ),
)


# max/min with and without a dim, argmax/argmin, aminmax.
def _full_samples(op, dtype, distinct=True):
    rng = rng_for(op.id, str(dtype))
    mk = distinct_tensor if distinct else (lambda s, d, r: make_tensor(s, d, r))
    for shape in [(3, 4, 5), (), (1,), (7,)]:
        yield SampleInput(mk(shape, dtype, rng), name=f"shape {shape}")
    yield SampleInput(transposed(mk((4, 6), dtype, rng)), name="transposed")
    if dtype.is_floating_point:
        yield SampleInput(from_array(np.array([1.0, np.nan, 3.0]), dtype), name="nan propagates")


def _pair_ref(vfn, ifn):
    def ref(x, dim, keepdim=False):
        return vfn(x, axis=dim, keepdims=keepdim), ifn(x, axis=dim, keepdims=keepdim)

    return ref


def _empty_reduce_error(name):
    return lambda op: [
        ErrorInput(
            SampleInput(tp.ones(0)),
            RuntimeError if name in ("max", "min") else IndexError,
            f"{name}.*(empty|size 0|numel\\(\\) == 0)|Expected reduction dim",
        )
    ]


for _name, _vf, _if in [("max", np.max, np.argmax), ("min", np.min, np.argmin)]:
    register(
        OpInfo(
            _name,
            ref=_vf,
            dtypes=NUMERIC + BOOL,
            sample_inputs=_full_samples,
            result_dtype=same,
            error_inputs=_empty_reduce_error(_name),
            large=_large_reduce,
        ),
        OpInfo(
            _name,
            variant="dim",
            ref=_pair_ref(_vf, _if),
            dtypes=NUMERIC,
            sample_inputs=lambda op, d: [
                s for s in reduction_samples(op, d, dims="int", distinct=True) if "size-0" not in s.name
            ],
            result_dtype=same,
        ),
    )


def _arg_ref(fn):
    def ref(x, dim=None, keepdim=False):
        if dim is None:  # the flat index; keepdim keeps every dim as size 1
            r = fn(x)
            return np.reshape(r, (1,) * x.ndim) if keepdim else r
        return fn(x, axis=dim, keepdims=keepdim)

    return ref


for _name, _if in [("argmax", np.argmax), ("argmin", np.argmin)]:
    register(
        OpInfo(
            _name,
            ref=_arg_ref(_if),
            dtypes=NUMERIC,
            sample_inputs=lambda op, d: [
                s for s in reduction_samples(op, d, dims="opt", distinct=True) if "size-0" not in s.name
            ],
            result_dtype=long_dtype,
            differentiable=False,
            large=_large_reduce_dim,
        )
    )


def _aminmax_ref(x, dim=None, keepdim=False):
    return np.amin(x, axis=dim, keepdims=keepdim), np.amax(x, axis=dim, keepdims=keepdim)


def _aminmax_samples(op, dtype):
    for s in reduction_samples(op, dtype, dims="opt"):
        if "size-0" in s.name:
            continue
        yield SampleInput(s.input, (), {**s.kwargs, **({"dim": s.args[0]} if s.args else {})}, s.name)


register(
    OpInfo(
        "aminmax",
        ref=_aminmax_ref,
        dtypes=NUMERIC + BOOL,
        sample_inputs=_aminmax_samples,
        result_dtype=same,
    )
)


# median, nanmedian, mode: the lower median (not NumPy's mean of the two middle values) and its index.
def _lower_median(x, axis=None, keepdims=False, nan_skip=False):
    if x.ndim == 0:
        return x.copy()
    if axis is None:
        x, axis = x.reshape(-1), 0
    s = np.sort(x, axis=axis)  # NaNs sort last
    n = x.shape[axis]
    if nan_skip and x.dtype.kind == "f":
        cnt = np.sum(~np.isnan(x), axis=axis, keepdims=True)
        k = np.where(cnt > 0, (cnt - 1) // 2, 0)
        v = np.take_along_axis(s, k, axis=axis)
        v = np.where(cnt == 0, np.nan, v)
    else:
        v = np.take(s, [(n - 1) // 2], axis=axis)
        if x.dtype.kind == "f":
            v = np.where(np.any(np.isnan(x), axis=axis, keepdims=True), np.nan, v)
    return v if keepdims else np.squeeze(v, axis=axis)


def _check_indices(dim_arg=0, reduced=True):
    """The returned indices point at the returned values (along the reduced dim; ``reduced=False``: a scan,
    whose outputs have the input's shape)."""

    def check(sample, result):
        values, indices = result
        x = sample.input
        if x.dim() == 0 or x.numel() == 0:
            return
        d = sample.args[dim_arg] if len(sample.args) > dim_arg else sample.kwargs.get("dim", -1)
        keep = values.dim() == x.dim() or not reduced
        got = x.gather(d, indices if keep else indices.unsqueeze(d))
        want = values if keep else values.unsqueeze(d)
        np.testing.assert_array_equal(got.to(tp.float64).numpy(), want.to(tp.float64).numpy())

    return check


for _name, _nan in [("median", False), ("nanmedian", True)]:
    register(
        OpInfo(
            _name,
            ref=lambda x, nan=_nan: _lower_median(x, nan_skip=nan),
            dtypes=NUMERIC,
            sample_inputs=lambda op, d: [s for s in _full_samples(op, d, distinct=False) if s.input.numel()],
            result_dtype=same,
        ),
        OpInfo(
            _name,
            variant="dim",
            ref=lambda x, dim, keepdim=False, nan=_nan: (_lower_median(x, dim, keepdim, nan), None),
            dtypes=NUMERIC,
            sample_inputs=lambda op, d: [
                s for s in reduction_samples(op, d, dims="int") if "size-0" not in s.name
            ],
            result_dtype=same,
            check=_check_indices(),
        ),
    )


def _mode_ref(x, dim=-1, keepdim=False):
    """The most frequent value per slice; among equally frequent values, the smallest."""
    if x.ndim == 0:
        return x.copy(), None
    moved = np.moveaxis(x, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    vals = []
    for row in flat:
        u, c = np.unique(row, return_counts=True)
        vals.append(u[np.argmax(c)])
    v = np.array(vals, x.dtype).reshape(moved.shape[:-1])
    return (np.expand_dims(v, dim) if keepdim else v), None


register(
    OpInfo(
        "mode",
        ref=_mode_ref,
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: [
            s for s in reduction_samples(op, d, dims="int", low=-2, high=2) if "size-0" not in s.name
        ],
        result_dtype=same,
        check=_check_indices(),
        differentiable=False,
    )
)
