"""Op database: the upsample ops behind tp.interpolate (kernels/upsample.cpp): upsample_nearest1d/2d/3d,
_upsample_nearest_exact1d/2d/3d, upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d and
upsample_trilinear3d, with and without align_corners and explicit scales.

References (adapted from test_interpolate.py): each spatial dim gets an [out, in] resampling matrix built from
PyTorch's sampling rule, applied along its axis in float64. Nearest: floor(dst * scale), computed in float32
as PyTorch does (the index is discontinuous, so float64 would pick other pixels at exact ties); linear: two
taps; cubic: Keys' kernel with A = -0.75 and clamped taps.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

_TOL = {tp.float32: (1e-5, 1e-5), tp.float16: (2e-3, 2e-3), tp.bfloat16: (2e-2, 2e-2)}
A = -0.75  # Keys' cubic convolution kernel, as PyTorch's bicubic


def _scale(n_in, n_out, align_corners, sf, dtype=np.float64):
    """Source pixels per destination pixel: from the explicit scale if given (1 / sf), else from the sizes."""
    if align_corners:
        return dtype((n_in - 1) / (n_out - 1)) if n_out > 1 else dtype(0)
    return dtype(1.0 / sf) if sf else dtype(n_in) / dtype(n_out)


def _keys(t):
    """The four cubic weights for taps at offsets -1, 0, 1, 2 from floor(src), t = the fraction."""
    near = lambda x: ((A + 2) * x - (A + 3)) * x * x + 1  # noqa: E731  |x| <= 1
    far = lambda x: ((A * x - 5 * A) * x + 8 * A) * x - 4 * A  # noqa: E731  1 < |x| < 2
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def matrix(mode, n_in, n_out, align_corners=False, sf=None):
    """The [n_out, n_in] matrix that resamples one dim."""
    m = np.zeros((n_out, n_in))
    if mode in ("nearest", "nearest-exact"):
        sc = _scale(n_in, n_out, False, sf, np.float32)
        for o in range(n_out):
            if mode == "nearest":
                src = np.floor(np.float32(o) * sc)
            else:
                src = np.floor(np.float32(float(max(sc * np.float32(o + 0.5) - np.float32(0.5), 0)) + 0.5))
            m[o, min(int(src), n_in - 1)] = 1
        return m
    sc = _scale(n_in, n_out, align_corners, sf)
    for o in range(n_out):
        src = sc * o if align_corners else sc * (o + 0.5) - 0.5
        if mode == "linear":
            if n_in == n_out:
                m[o, o] = 1
                continue
            src = max(src, 0.0)
            i = min(int(math.floor(src)), n_in - 1)
            lam = min(max(src - i, 0.0), 1.0)
            m[o, i] += 1 - lam
            m[o, min(i + 1, n_in - 1)] += lam
        else:  # cubic: taps clamped to the border
            i = min(int(math.floor(src)), n_in - 1)
            for j, w in enumerate(_keys(min(max(src - i, 0.0), 1.0))):
                m[o, min(max(i - 1 + j, 0), n_in - 1)] += w
    return m


def resample(a, mode, size, align_corners=False, scales=None):
    r = a
    for i, n_out in enumerate(size):
        ax = a.ndim - len(size) + i
        m = matrix(mode, a.shape[ax], n_out, align_corners, scales[i] if scales else None)
        r = np.moveaxis(np.tensordot(m, np.moveaxis(r, ax, 0), axes=1), 0, ax)
    return r


def _ref(mode, nsp, linear):
    """A reference with the op's signature: (self, output_size, [align_corners,] *scales)."""

    def ref(a, output_size, *rest):
        align, scales = (rest[0], rest[1:]) if linear else (False, rest)
        scales = tuple(scales) + (None,) * (nsp - len(scales))
        return resample(a, mode, list(output_size), align, None if all(s is None for s in scales) else scales)

    return ref


SPATIAL = {1: (5,), 2: (4, 5), 3: (3, 4, 2)}


def _samples(nsp, linear):
    def gen(op, dtype):
        rng = rng_for(op.id, str(dtype))
        t = lambda *shape: make_tensor(shape, dtype, rng, low=0 if dtype is tp.uint8 else None)  # noqa: E731
        sp = SPATIAL[nsp]
        x = t(2, 3, *sp)
        flags = (False, True) if linear else (None,)
        for ac in flags:
            extra = () if ac is None else (ac,)
            tag = "" if ac is None else f", align_corners={ac}"
            up = [2 * n + 1 for n in sp]
            yield SampleInput(x, (up, *extra), name="up-sampling" + tag)
            yield SampleInput(x, ([max(n // 2, 1) for n in sp], *extra), name="down-sampling" + tag)
            yield SampleInput(x, (list(sp), *extra), name="same size" + tag)
            yield SampleInput(t(2, 3, *(1,) * nsp), ([3] * nsp, *extra), name="from size 1" + tag)
            yield SampleInput(x, ([1] * nsp, *extra), name="to size 1" + tag)
        extra = (False,) if linear else ()
        # 2n + 1 outputs: PyTorch's 2-d nearest ignores the scales when the output is 1x or 2x the input
        yield SampleInput(x, ([2 * n + 1 for n in sp], *extra, *(2.5,) * nsp), name="explicit scales 2.5")
        yield SampleInput(t(0, 3, *sp), ([3] * nsp, *extra), name="batch 0")
        yield SampleInput(transposed(x), ([3] * nsp, *extra), name="transposed")
        yield SampleInput(strided(x), ([4] * nsp, *extra), name="strided")
        if nsp > 1:
            perm = (0,) + tuple(range(2, x.dim())) + (1,)
            back = tuple(int(i) for i in np.argsort(perm))
            yield SampleInput(
                x.permute(perm).contiguous().permute(back), ([5] * nsp, *extra), name="chan-last"
            )

    return gen


_NEAREST = FLOATS + (tp.uint8,)
# (op, mode, spatial dims, takes align_corners, dtypes)
_OPS = [(f"upsample_nearest{n}d", "nearest", n, False, _NEAREST) for n in (1, 2, 3)]
_OPS += [(f"_upsample_nearest_exact{n}d", "nearest-exact", n, False, _NEAREST) for n in (1, 2, 3)]
_OPS += [("upsample_linear1d", "linear", 1, True, FLOATS), ("upsample_bilinear2d", "linear", 2, True, FLOATS)]
_OPS += [("upsample_bicubic2d", "cubic", 2, True, FLOATS)]
_BAD_RANK = [
    ErrorInput(
        SampleInput(tp.zeros(1, 3, 3), ([2, 2], False)),
        RuntimeError,
        "It is expected input_size equals to 4, but got size 3",
        False,
    )
]
for _name, _mode, _n, _linear, _dtypes in _OPS:
    register(
        OpInfo(
            _name,
            # private names (_upsample_nearest_exact*) are not tp attributes: called through the dispatcher
            op=lambda *a, name=_name, **k: tp.ops.call(name, *a, **k),
            ref=_ref(_mode, _n, _linear),
            dtypes=_dtypes,
            sample_inputs=_samples(_n, _linear),
            result_dtype=same_dtype,
            tolerances=_TOL,
            out=True,
            differentiable=False,  # tpx has no upsample formula yet
            torch=lambda torch, name=_name: getattr(torch._C._nn, name),
            error_inputs=(lambda op: _BAD_RANK) if _name == "upsample_bilinear2d" else None,
        )
    )
register(
    OpInfo(
        "upsample_trilinear3d",
        ref=_ref("linear", 3, True),
        dtypes=FLOATS,
        sample_inputs=_samples(3, True),
        result_dtype=same_dtype,
        tolerances=_TOL,
        out=True,
        differentiable=False,
        torch=lambda torch: torch._C._nn.upsample_trilinear3d,
        large=lambda op: SampleInput(
            make_tensor((2, 4, 16, 32, 32), tp.float32, rng_for(op.id, "large")), ([32, 64, 64], False)
        ),
    )
)
