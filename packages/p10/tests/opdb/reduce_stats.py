"""Op database: statistical reductions (var, std, their _mean forms, logsumexp, norm, quantile) and scans
(cumsum, cumprod, cummax, cummin, logcumsumexp) — kernels/reduce_stats.cpp, reduce_order.cpp and scan.cpp.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, float_dtype, register
from . import same_dtype as same
from .reduce import _axis, _check_indices, distinct_tensor, reduction_samples
from .samples import from_array, make_tensor, rng_for, strided, transposed

NUMERIC = FLOATS + INTS


def _var_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4, 5), dtype, rng)
    yield SampleInput(x, name="all dims, unbiased")
    yield SampleInput(x, (False,), name="unbiased=False")
    yield SampleInput(x, (1,), name="dim=1")
    yield SampleInput(x, ((0, 2), False, True), name="dims (0,2), biased, keepdim")
    yield SampleInput(x, kwargs={"dim": -1, "correction": 0}, name="correction=0")
    yield SampleInput(
        x, kwargs={"dim": (0, 1), "correction": 2, "keepdim": True}, name="correction=2, keepdim"
    )
    yield SampleInput(x, kwargs={"dim": None, "correction": 1}, name="dim=None via correction")
    yield SampleInput(make_tensor((1, 3), dtype, rng), (0,), name="size-1 dim: nan")
    yield SampleInput(make_tensor((), dtype, rng), kwargs={"correction": 0}, name="0-d")
    yield SampleInput(transposed(make_tensor((4, 6), dtype, rng)), (0,), name="transposed")
    yield SampleInput(strided(make_tensor((4, 6), dtype, rng)), (1,), name="strided")


def _var_ref(fn):
    def ref(x, *args, dim=None, correction=None, keepdim=False):
        unbiased = True
        if args and isinstance(args[0], bool):  # var(x, unbiased)
            unbiased = args[0]
        elif args:  # var(x, dim, unbiased=True, keepdim=False)
            dim = args[0]
            unbiased = args[1] if len(args) > 1 else True
            keepdim = args[2] if len(args) > 2 else keepdim
        ddof = (1 if unbiased else 0) if correction is None else correction
        with np.errstate(all="ignore"):
            v = np.var(x, axis=_axis(dim), ddof=ddof, keepdims=keepdim)
            if fn.startswith("std"):
                v = np.sqrt(v)
            if fn.endswith("_mean"):
                return v, np.mean(x, axis=_axis(dim), keepdims=keepdim)
        return v

    return ref


for _name in ("var", "std", "var_mean", "std_mean"):
    register(
        OpInfo(
            _name,
            ref=_var_ref(_name),
            dtypes=FLOATS,
            sample_inputs=_var_samples,
            result_dtype=same,
            error_inputs=lambda op: [
                ErrorInput(
                    SampleInput(tp.ones(3, dtype=tp.int64)),
                    RuntimeError,
                    "std and var only support floating point",
                    False,
                )
            ],
        )
    )


def _logsumexp_ref(x, dim, keepdim=False):
    with np.errstate(all="ignore"):
        x = np.asarray(x, np.float64)
        ax = _axis(dim) if dim != () else None
        m = np.max(x, axis=ax, keepdims=True) if x.size else np.zeros((1,) * x.ndim)
        m = np.where(np.isfinite(m), m, 0)
        r = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
        return r if keepdim else np.squeeze(r, axis=ax) if ax is not None else r.reshape(())


def _logsumexp_samples(op, dtype):
    for s in reduction_samples(op, dtype):
        if s.args:
            yield s
    if dtype.is_floating_point:
        x = from_array(np.array([[-np.inf, -np.inf], [np.inf, 1.0], [1000.0, 1000.0]]), dtype)
        yield SampleInput(x, (1,), name="±inf, large values stay finite")


register(
    OpInfo(
        "logsumexp",
        ref=_logsumexp_ref,
        dtypes=FLOATS + INTS,
        sample_inputs=_logsumexp_samples,
        result_dtype=float_dtype,
        tolerances={tp.bfloat16: (2e-2, 2e-2)},
    )
)


def _norm_ref(x, p=2, dim=None, keepdim=False, dtype=None):
    ax = _axis(dim)
    a = np.abs(np.asarray(x, np.float64))
    if p == "fro":
        p = 2
    if p == np.inf:
        return np.max(a, axis=ax, keepdims=keepdim)
    if p == -np.inf:
        return np.min(a, axis=ax, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=ax, keepdims=keepdim).astype(np.float64)
    with np.errstate(all="ignore"):
        return np.sum(a**p, axis=ax, keepdims=keepdim) ** (1.0 / p)


def _norm_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4, 5), dtype, rng)
    yield SampleInput(x, name="2-norm of all")
    for p in (1, 3, 0, float("inf"), float("-inf"), 0.5):
        yield SampleInput(x, (p, 1), name=f"p={p}, dim=1")
    yield SampleInput(x, ("fro", (0, 1)), name="fro over (0,1)")
    yield SampleInput(x, (2, -1, True), name="keepdim")
    yield SampleInput(make_tensor((), dtype, rng), name="0-d")
    yield SampleInput(make_tensor((0, 3), dtype, rng), (2, 0), name="size-0 dim")
    yield SampleInput(transposed(make_tensor((4, 6), dtype, rng)), (2, 0), name="transposed")


register(OpInfo("norm", ref=_norm_ref, dtypes=FLOATS, sample_inputs=_norm_samples, result_dtype=same))


# quantile / nanquantile: q a float or a 1-d tensor, every interpolation, NaN handling.
def _quantile_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 5), dtype, rng)
    yield SampleInput(x, (0.3,), name="q=0.3, all")
    yield SampleInput(x, (0.3, 1), name="q=0.3, dim=1")
    yield SampleInput(x, (0.7, 0, True), name="keepdim")
    q = from_array(np.array([0.0, 0.25, 0.6, 1.0]), dtype)
    yield SampleInput(x, (q, 1), name="tensor q")
    for mode in ("lower", "higher", "nearest", "midpoint"):
        yield SampleInput(x, (0.3, 1), {"interpolation": mode}, name=mode)
    yield SampleInput(transposed(x.t().contiguous().t().clone()), (0.5, 0), name="dim 0")
    yield SampleInput(make_tensor((), dtype, rng), (0.5,), name="0-d")
    if dtype.is_floating_point:
        xn = from_array(np.array([[1.0, np.nan, 3.0, 4.0], [np.nan, np.nan, np.nan, np.nan]]), dtype)
        yield SampleInput(xn, (0.4, 1), name="nan")


def _quantile_ref(fn):
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        with np.errstate(all="ignore"):
            r = fn(x, q, axis=dim, keepdims=keepdim, method=interpolation)
        if dim is None and keepdim:
            r = r.reshape(np.shape(q) + (1,) * x.ndim)
        return r

    return ref


def _quantile_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(3), (1.5,)), RuntimeError, r"quantile\(\) q values must be in the range \[0, 1\]"
    )
    yield ErrorInput(
        SampleInput(tp.ones(3, dtype=tp.int64), (0.5,)),
        RuntimeError,
        r"quantile\(\) input tensor must be either float",
    )


register(
    OpInfo(
        "quantile",
        ref=_quantile_ref(np.quantile),
        dtypes=(tp.float32, tp.float64),
        sample_inputs=_quantile_samples,
        result_dtype=same,
        error_inputs=_quantile_errors,
    ),
    OpInfo(
        "nanquantile",
        ref=_quantile_ref(np.nanquantile),
        dtypes=(tp.float32, tp.float64),
        sample_inputs=_quantile_samples,
        result_dtype=same,
        error_inputs=_quantile_errors,
    ),
)


# Scans along one dim.
def _scan_samples(op, dtype, distinct=False, low=None, high=None, kwargs=None):
    rng = rng_for(op.id, str(dtype))

    def t(shape):
        return (
            distinct_tensor(shape, dtype, rng)
            if distinct
            else make_tensor(shape, dtype, rng, low=low, high=high)
        )

    x = t((3, 4, 5))
    for d in (0, 1, -1):
        yield SampleInput(x, (d,), dict(kwargs or {}), f"dim={d}")
    yield SampleInput(t(()), (0,), name="0-d")
    yield SampleInput(t((2, 0)), (1,), name="size-0")
    yield SampleInput(t((1, 3)), (0,), name="size-1 dim")
    yield SampleInput(transposed(t((4, 6))), (1,), name="transposed")
    yield SampleInput(strided(t((4, 6))), (0,), name="strided")


def _scan_ref(fn):
    def ref(x, dim, dtype=None):
        if x.ndim == 0:
            return fn(x.reshape(1), axis=0).reshape(())
        with np.errstate(all="ignore"):
            return fn(x, axis=dim)

    return ref


def _cum_dtype(sample, dtype):
    if "dtype" in sample.kwargs:
        return sample.kwargs["dtype"]
    d = sample.input.dtype
    return d if d.is_floating_point else tp.int64


def _cumext_ref(fn):
    def ref(x, dim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        return fn.accumulate(x, axis=dim), None

    return ref


def _logcumsumexp(x, axis):
    return np.logaddexp.accumulate(np.asarray(x, np.float64), axis=axis)


register(
    OpInfo(
        "cumsum",
        out_casts=True,
        ref=_scan_ref(np.cumsum),
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: [
            *_scan_samples(op, d),
            *_scan_samples(op, d, kwargs={"dtype": tp.float64}),
        ],
        out=True,
        result_dtype=_cum_dtype,
        tolerances={tp.bfloat16: (3e-2, 3e-2), tp.float16: (3e-3, 3e-3)},
    ),
    OpInfo(
        "cumprod",
        ref=_scan_ref(np.cumprod),
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: _scan_samples(op, d, low=-2, high=2),
        result_dtype=_cum_dtype,
    ),
    OpInfo(
        "cummax",
        ref=_cumext_ref(np.maximum),
        dtypes=NUMERIC,
        sample_inputs=_scan_samples,
        result_dtype=same,
        check=_check_indices(reduced=False),
    ),
    OpInfo(
        "cummin",
        ref=_cumext_ref(np.minimum),
        dtypes=NUMERIC,
        sample_inputs=_scan_samples,
        result_dtype=same,
        check=_check_indices(reduced=False),
    ),
    OpInfo(
        "logcumsumexp",
        ref=_scan_ref(_logcumsumexp),
        dtypes=FLOATS,
        sample_inputs=_scan_samples,
        result_dtype=same,
    ),
)
