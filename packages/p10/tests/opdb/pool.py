"""Op database: pooling (kernels/pool.cpp, pool_adaptive.cpp): max_pool1d/2d/3d and their _with_indices forms,
avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d.

References are float64 loops over output positions written from the definitions (adapted from test_pool.py):
each window's taps are listed explicitly (padding and dilation applied, out-of-range taps dropped), the
maximum is the first largest value or the last NaN, and its index is flat within the spatial plane.
"""

from __future__ import annotations

import itertools

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

_TOL = {tp.float32: (1e-5, 1e-5), tp.float16: (2e-3, 2e-3), tp.bfloat16: (2e-2, 2e-2)}


def _expand(v, nsp):
    v = [v] if isinstance(v, int) else list(v)
    return v * nsp if len(v) == 1 else v


def _out_size(n, k, s, p, d, ceil):
    """PyTorch's pooling output size: floor (or ceil) division; the last window must start inside the input
    or the left padding."""
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def _planes(a, nsp):
    return a.reshape((-1,) + a.shape[-nsp:])


def _flat(a):
    """[planes, *window] -> [planes, window size] (a -1 cannot be inferred when there are no planes)."""
    return a.reshape(a.shape[0], int(np.prod(a.shape[1:])))


def _argmax(w):
    """The index PyTorch's max pooling picks: the last NaN if any, else the first maximum."""
    nan = np.flatnonzero(np.isnan(w))
    return nan[-1] if nan.size else int(np.argmax(w))


def max_pool_ref(nsp):
    def ref(a, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k = _expand(kernel_size, nsp)
        s = k if stride in (None, [], ()) else _expand(stride, nsp)
        p, d = _expand(padding, nsp), _expand(dilation, nsp)
        sp = a.shape[-nsp:]
        planes = _planes(a, nsp)
        outs = [_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nsp)]
        vals = np.empty((planes.shape[0],) + tuple(outs), a.dtype)
        idx = np.empty(vals.shape, np.int64)
        for pos in itertools.product(*[range(o) for o in outs]):
            taps = [[pos[i] * s[i] - p[i] + j * d[i] for j in range(k[i])] for i in range(nsp)]
            taps = [[t for t in tt if 0 <= t < sp[i]] for i, tt in enumerate(taps)]
            flat = np.ravel_multi_index(np.ix_(*taps), sp).reshape(-1)
            win = _flat(planes)[:, flat]
            for q in range(planes.shape[0]):
                j = _argmax(win[q])
                vals[(q,) + pos], idx[(q,) + pos] = win[q][j], flat[j]
        shape = a.shape[:-nsp] + tuple(outs)
        return vals.reshape(shape), idx.reshape(shape)

    return ref


def avg_pool_ref(nsp):
    def ref(a, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor=None):
        k = _expand(kernel_size, nsp)
        s = k if stride in (None, [], ()) else _expand(stride, nsp)
        p = _expand(padding, nsp)
        sp = a.shape[-nsp:]
        planes = _planes(a, nsp)
        outs = [_out_size(sp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(nsp)]
        res = np.empty((planes.shape[0],) + tuple(outs))
        for pos in itertools.product(*[range(o) for o in outs]):
            lo = [pos[i] * s[i] - p[i] for i in range(nsp)]
            hi = [min(lo[i] + k[i], sp[i] + p[i]) for i in range(nsp)]  # the window, padding included
            padded = int(np.prod([hi[i] - lo[i] for i in range(nsp)]))
            lo, hi = [max(v, 0) for v in lo], [min(hi[i], sp[i]) for i in range(nsp)]
            box = planes[(slice(None),) + tuple(slice(lo[i], hi[i]) for i in range(nsp))]
            inside = int(np.prod([hi[i] - lo[i] for i in range(nsp)]))
            n = divisor or (padded if count_include_pad else inside)
            res[(slice(None),) + pos] = _flat(box).sum(1) / n
        return res.reshape(a.shape[:-nsp] + tuple(outs))

    return ref


def adaptive_ref(nsp, kind):
    """Output cell i of a dim of size n covers [floor(i n / o), ceil((i + 1) n / o))."""

    def ref(a, output_size):
        sp = a.shape[-nsp:]
        planes = _planes(a, nsp)
        size = _expand(output_size, nsp)
        vals = np.empty((planes.shape[0],) + tuple(size))
        idx = np.empty(vals.shape, np.int64)
        for pos in itertools.product(*[range(o) for o in size]):
            rr = [range(pos[i] * sp[i] // size[i], -(-(pos[i] + 1) * sp[i] // size[i])) for i in range(nsp)]
            flat = np.ravel_multi_index(np.ix_(*rr), sp).reshape(-1)
            win = _flat(planes)[:, flat]
            if kind == "avg":
                vals[(slice(None),) + pos] = win.mean(1)
                continue
            for q in range(planes.shape[0]):
                j = _argmax(win[q])
                vals[(q,) + pos], idx[(q,) + pos] = win[q][j], flat[j]
        shape = a.shape[:-nsp] + tuple(size)
        return (vals.reshape(shape), idx.reshape(shape)) if kind == "max" else vals.reshape(shape)

    return ref


def _mk(op, dtype):
    rng = rng_for(op.id, str(dtype))
    return lambda *shape: make_tensor(shape, dtype, rng)


SPATIAL = {1: (9,), 2: (7, 6), 3: (5, 4, 6)}


def _channels_last(t):
    """Channels stored innermost (the layout conv nets keep activations in)."""
    perm = (0,) + tuple(range(2, t.dim())) + (1,)
    back = tuple(int(i) for i in np.argsort(perm))
    return t.permute(perm).contiguous().permute(back)


def _pool_samples(nsp, kind):
    def gen(op, dtype):
        t = _mk(op, dtype)
        sp = SPATIAL[nsp]
        x = t(2, 3, *sp)
        yield SampleInput(x, (2,), name="kernel 2 (stride = kernel)")
        yield SampleInput(x, (3, 2, 1), name="kernel 3, stride 2, padding 1")
        yield SampleInput(x, (3, 2, 1), {"ceil_mode": True}, name="ceil_mode")
        yield SampleInput(x, ([2] * nsp, [1] * nsp), name="overlapping windows")
        if kind == "max":
            yield SampleInput(x, (2, 1, 1, 2), name="dilation 2")
            yield SampleInput(x, (3, 3, 1, 1, True), name="ceil_mode, last window partly outside")
        else:
            yield SampleInput(x, (3, 2, 1, False, False), name="count_include_pad=False")
            yield SampleInput(x, (3, 2, 1, True, False), name="ceil_mode, count_include_pad=False")
            if nsp > 1:
                yield SampleInput(x, (2, 1, 1, False, True, 3), name="divisor_override=3")
        yield SampleInput(t(3, *sp), (2,), name="unbatched")
        yield SampleInput(t(2, 3, *(1,) * nsp), (1,), name="size-1 spatial dims")
        if nsp > 1:
            yield SampleInput(t(0, 3, *sp), (2,), name="batch 0")
            yield SampleInput(_channels_last(x), (3, 2, 1), name="channels-last")
        yield SampleInput(transposed(x), (2, 1), name="transposed")
        yield SampleInput(strided(x), (2,), name="strided")

    return gen


def _adaptive_samples(nsp):
    def gen(op, dtype):
        t = _mk(op, dtype)
        sp = SPATIAL[nsp]
        x = t(2, 3, *sp)
        yield SampleInput(x, ([3, 2, 4][:nsp],), name="down-sampling, uneven cells")
        yield SampleInput(x, (list(sp),), name="output size = input size")
        yield SampleInput(x, ([1] * nsp,), name="global pooling")
        yield SampleInput(t(2, 3, *(2,) * nsp), ([3] * nsp,), name="up-sampling (overlapping cells)")
        yield SampleInput(t(3, *sp), ([2] * nsp,), name="unbatched")
        yield SampleInput(t(0, 3, *sp), ([2] * nsp,), name="batch 0")
        yield SampleInput(transposed(x), ([2] * nsp,), name="transposed")
        if nsp > 1:
            yield SampleInput(_channels_last(x), ([3] * nsp,), name="channels-last")

    return gen


def _first_of(ref):
    return lambda *a, **k: ref(*a, **k)[0]


def _large(op):
    return SampleInput(
        make_tensor((8, 8, 128, 128), tp.float32, rng_for(op.id, "large")), (3, 2, 1), name="1M elements"
    )


def _errors(cases):
    return lambda op: [
        ErrorInput(SampleInput(x, args, kw), RuntimeError, rx, names) for x, args, kw, rx, names in cases
    ]


_MAX_ERRORS = {
    1: [
        (tp.zeros(1, 1, 4), (3, 1, 2), {}, r"max_pool1d\(\) padding should be at most half", True),
        (tp.zeros(1, 1, 1, 4), (3,), {}, r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor", True),
        (tp.zeros(1, 1, 2), (3,), {}, r"max_pool1d\(\) Invalid computed output size: 0", True),
    ],
    2: [
        (tp.zeros(1, 1, 4, 4), (3, 1, 2), {}, "pad should be at most half of effective kernel", False),
        (tp.zeros(1, 1, 2, 2), (3,), {}, r"Given input size: \(1x2x2\). Calculated output size", False),
        (tp.zeros(1, 1, 4, 4), ([2, 2, 2],), {}, "max_pool2d: kernel_size must either be a single", True),
        (tp.zeros(1, 1, 4, 4), (2, 0), {}, "stride should not be zero", False),
        (tp.zeros(1, 1, 4, 4), (2,), {"dilation": 0}, "but got dilationH: 0 dilationW: 0", False),
    ],
    3: [
        (tp.zeros(1, 4, 4), (2,), {}, "non-empty 4D or 5D", False),
        (tp.zeros(1, 1, 4, 4, 4), (2, -1), {}, "stride should be greater than zero, but got dT: -1", False),
    ],
}
_AVG_ERRORS = {
    1: [
        (tp.zeros(1, 1, 1, 4), (2,), {}, r"Expected 2 to 3 dimensions, .* for avg_pool1d\)", True),
        (
            tp.zeros(1, 4),
            ([2, 2],),
            {},
            r"avg_pool1d\(\) argument 'kernel_size' should contain one int",
            True,
        ),
    ],
    2: [
        (tp.zeros(1, 1, 4, 4), (2,), {"divisor_override": 0}, "divisor must be not zero", False),
        (tp.zeros(1, 1, 4, 4), (2, 1, -1), {}, "pad must be non-negative", False),
    ],
    3: [],
}
_ADAPTIVE_ERRORS = {
    "adaptive_max_pool1d": [
        (tp.zeros(1, 4), ([2, 2],), {}, r"argument 'output_size' should contain one int \(got 2\)", True)
    ],
    "adaptive_avg_pool2d": [
        (
            tp.zeros(1, 1, 4, 4),
            ([-1, 2],),
            {},
            "elements of output_size must be greater than or equal",
            False,
        ),
        (tp.zeros(1, 1, 4, 4), ([2],), {}, "adaptive_avg_pool2d: output_size must be 2", True),
        (tp.zeros(4), ([2, 2],), {}, r"Expected 3D or 4D tensor, but got \[4\]", False),
    ],
    "adaptive_max_pool2d": [
        (tp.zeros(1, 2, 0, 4), ([2, 2],), {}, "non-zero size for non-batch dimensions", False),
    ],
}


_F = lambda name: lambda torch: getattr(torch.nn.functional, name)  # noqa: E731
for _n in (1, 2, 3):
    _max = max_pool_ref(_n)
    register(
        OpInfo(
            f"max_pool{_n}d",
            ref=_first_of(_max),
            dtypes=FLOATS + (tp.int64, tp.uint8),
            sample_inputs=_pool_samples(_n, "max"),
            result_dtype=same_dtype,
            large=_large if _n == 2 else None,
            torch_may_reject=True,  # PyTorch's CPU max_pool1d has no integer kernel
            error_inputs=_errors(_MAX_ERRORS[_n]) if _MAX_ERRORS[_n] else None,
        ),
        OpInfo(
            f"max_pool{_n}d_with_indices",
            ref=_max,
            dtypes=FLOATS + (tp.int64,),
            sample_inputs=_pool_samples(_n, "max"),
            result_dtype=same_dtype,
            # torch.max_pool1d_with_indices is there; 2-d/3-d are F.max_pool{n}d(..., return_indices=True)
            torch=True
            if _n == 1
            else (
                lambda n: (
                    lambda torch: (
                        lambda *a, **k: getattr(torch.nn.functional, f"max_pool{n}d")(
                            *a, **k, return_indices=True
                        )
                    )
                )
            )(_n),
        ),
        OpInfo(
            f"avg_pool{_n}d",
            ref=avg_pool_ref(_n),
            dtypes=FLOATS,
            sample_inputs=_pool_samples(_n, "avg"),
            result_dtype=same_dtype,
            tolerances=_TOL,
            out=_n > 1,
            large=_large if _n == 2 else None,
            error_inputs=_errors(_AVG_ERRORS[_n]) if _AVG_ERRORS[_n] else None,
            torch=True if _n == 1 else _F(f"avg_pool{_n}d"),
        ),
        OpInfo(
            f"adaptive_avg_pool{_n}d",
            ref=adaptive_ref(_n, "avg"),
            dtypes=FLOATS,
            sample_inputs=_adaptive_samples(_n),
            result_dtype=same_dtype,
            tolerances=_TOL,
            out=_n > 1,
            error_inputs=_errors(_ADAPTIVE_ERRORS.get(f"adaptive_avg_pool{_n}d", []))
            if f"adaptive_avg_pool{_n}d" in _ADAPTIVE_ERRORS
            else None,
            torch=True if _n == 1 else _F(f"adaptive_avg_pool{_n}d"),
        ),
        OpInfo(
            f"adaptive_max_pool{_n}d",
            ref=adaptive_ref(_n, "max"),
            dtypes=FLOATS,
            sample_inputs=_adaptive_samples(_n),
            result_dtype=same_dtype,
            error_inputs=_errors(_ADAPTIVE_ERRORS[f"adaptive_max_pool{_n}d"])
            if f"adaptive_max_pool{_n}d" in _ADAPTIVE_ERRORS
            else None,
            torch=True
            if _n == 1
            else (
                lambda n: (
                    lambda torch: (
                        lambda *a, **k: getattr(torch.nn.functional, f"adaptive_max_pool{n}d")(
                            *a, **k, return_indices=True
                        )
                    )
                )
            )(_n),
        ),
    )
