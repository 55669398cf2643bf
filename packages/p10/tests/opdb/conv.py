"""Op database: convolutions (kernels/conv.cpp) and im2col / col2im (kernels/im2col.cpp): convolution,
conv1d/2d/3d (numeric and 'same'/'valid' padding), conv_transpose1d/2d/3d, im2col, col2im.

References are direct float64 convolutions (adapted from test_conv.py): a loop over kernel taps adding
strided slices of the padded input times one weight tap, per group; transposed convolutions scatter the same
way. They share nothing with the im2col + GEMM kernels they check.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

CONV_DTYPES = FLOATS + (tp.int64,)  # PyTorch's CPU convolution takes integers too (exact sums)
_TOL = {tp.float32: (1e-4, 1e-4), tp.float16: (5e-3, 5e-3), tp.bfloat16: (4e-2, 4e-2)}
SPATIAL = {1: (9,), 2: (6, 5), 3: (4, 5, 3)}
KERNEL = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}


def _ntuple(v, d):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


def _batched(fn):
    """References take [N, C, *spatial]; an unbatched [C, *spatial] input gets a batch of one and loses it."""

    def ref(x, w, *args, **kw):
        if x.ndim == w.ndim - 1:
            return fn(x[None], w, *args, **kw)[0]
        return fn(x, w, *args, **kw)

    return ref


@_batched
def conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """float64 direct convolution: x [N, C, *in], w [O, C / groups, *k] -> [N, O, *out]."""
    d = w.ndim - 2
    s, dl, k = _ntuple(stride, d), _ntuple(dilation, d), w.shape[2:]
    if padding == "valid":
        padding = 0
    if padding == "same":  # PyTorch puts the odd extra pad on the right
        pads = [(dl[i] * (k[i] - 1) // 2, dl[i] * (k[i] - 1) - dl[i] * (k[i] - 1) // 2) for i in range(d)]
    else:
        pads = [(p, p) for p in _ntuple(padding, d)]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    out_sz = [(xp.shape[2 + i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    n, o = x.shape[0], w.shape[0]
    cg, og = x.shape[1] // groups, o // groups
    out = np.zeros((n, o, *out_sz), np.result_type(x, w, np.float64))
    for tap in np.ndindex(*k):
        win = tuple(
            slice(tap[i] * dl[i], tap[i] * dl[i] + s[i] * (out_sz[i] - 1) + 1, s[i]) for i in range(d)
        )
        patch = xp[(slice(None), slice(None)) + win]
        for g in range(groups):
            wg = w[(slice(g * og, (g + 1) * og), slice(None)) + tap]
            out[:, g * og : (g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * cg : (g + 1) * cg], wg)
    if b is not None:
        out += b.reshape((1, o) + (1,) * d)
    return out


@_batched
def conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """float64 transposed convolution: x [N, C, *in], w [C, O / groups, *k] -> [N, O, *out], by scattering."""
    d = w.ndim - 2
    s, p, op = _ntuple(stride, d), _ntuple(padding, d), _ntuple(output_padding, d)
    dl = _ntuple(dilation, d)
    n, c = x.shape[:2]
    cg, og = c // groups, w.shape[1]
    k, ins = w.shape[2:], x.shape[2:]
    full = [(ins[i] - 1) * s[i] + dl[i] * (k[i] - 1) + 1 + op[i] for i in range(d)]
    acc = np.zeros((n, og * groups, *full))
    for tap in np.ndindex(*k):
        win = tuple(slice(tap[i] * dl[i], tap[i] * dl[i] + s[i] * (ins[i] - 1) + 1, s[i]) for i in range(d))
        for g in range(groups):
            wg = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap]
            acc[(slice(None), slice(g * og, (g + 1) * og)) + win] += np.einsum(
                "nc...,co->no...", x[:, g * cg : (g + 1) * cg], wg
            )
    out_sz = [(ins[i] - 1) * s[i] - 2 * p[i] + dl[i] * (k[i] - 1) + op[i] + 1 for i in range(d)]
    out = acc[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + out_sz[i]) for i in range(d))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * d)
    return out


def _convolution_ref(x, w, b, stride, padding, dilation, transposed_, output_padding, groups):
    if transposed_:
        return conv_transpose_ref(x, w, b, stride, padding, output_padding, groups, dilation)
    return conv_ref(x, w, b, stride, padding, dilation, groups)


def _mk(op, dtype):
    rng = rng_for(op.id, str(dtype))
    return lambda *shape: make_tensor(shape, dtype, rng, low=-3, high=3)


def _layout(t):
    """A non-contiguous tensor with ``t``'s values: last two dims swapped in memory, or a strided slice."""
    return transposed(t) if t.dim() >= 3 else strided(t)


def _conv_samples(d):
    # (stride, padding, dilation, groups, bias): plain, padded with bias, strided, grouped, dilated, depthwise
    configs = [(1, 0, 1, 1, False), (1, 1, 1, 1, True), (2, 0, 1, 1, True), (2, 1, 1, 2, False)]
    configs += [(1, 1, 2, 1, True), (1, 0, 1, 4, True)]

    def gen(op, dtype):
        t = _mk(op, dtype)
        sp, k = SPATIAL[d], KERNEL[d]
        x = t(2, 4, *sp)
        for s, p, dl, g, bias in configs:
            w, b = t(4, 4 // g, *k), (t(4) if bias else None)
            yield SampleInput(x, (w, b, s, p, dl, g), name=f"stride {s} pad {p} dil {dl} groups {g}")
        w = t(3, 4, *k)
        yield SampleInput(x, (w, None, 1, "same"), name="padding='same' (even kernel pads right)")
        yield SampleInput(x, (w, t(3), 1, "same", 2), name="padding='same', dilation 2")
        yield SampleInput(x, (w, None, 1, "valid"), name="padding='valid'")
        yield SampleInput(t(4, *sp), (w, t(3)), name="unbatched")
        yield SampleInput(t(0, 4, *sp), (w,), name="batch 0")
        yield SampleInput(t(1, 1, *sp), (t(1, 1, *(1,) * d),), name="one channel, 1x1 kernel")
        yield SampleInput(_layout(x), (_layout(w), t(3), 1, 1), name="non-contiguous input and weight")

    return gen


def _conv_transpose_samples(d):
    # (stride, padding, output_padding, groups, dilation, bias)
    configs = [(1, 0, 0, 1, 1, False), (2, 1, 1, 1, 1, True), (2, 0, 0, 2, 1, True), (1, 1, 0, 1, 2, True)]

    def gen(op, dtype):
        t = _mk(op, dtype)
        sp, k = SPATIAL[d], KERNEL[d]
        x = t(2, 4, *sp)
        for s, p, op_, g, dl, bias in configs:
            w, b = t(4, 6 // g, *k), (t(6 // g * g) if bias else None)
            yield SampleInput(x, (w, b, s, p, op_, g, dl), name=f"stride {s} pad {p} out_pad {op_} g {g}")
        w = t(4, 3, *k)
        yield SampleInput(t(4, *sp), (w,), name="unbatched")
        yield SampleInput(t(0, 4, *sp), (w,), name="batch 0")
        yield SampleInput(_layout(x), (_layout(w), t(3), 2), name="non-contiguous input and weight")

    return gen


def _convolution_samples(op, dtype):
    t = _mk(op, dtype)
    x = t(2, 4, 6, 5)
    yield SampleInput(x, (t(6, 2, 3, 2), t(6), [2, 1], [1, 0], [1, 2], False, [0, 0], 2), name="2-d, groups")
    yield SampleInput(t(2, 4, 7), (t(4, 3, 3), None, [2], [1], [1], True, [1], 1), name="1-d transposed")
    yield SampleInput(
        transposed(t(1, 4, 3, 4, 5)),
        (t(2, 4, 2, 2, 2), None, [1, 1, 1], [0, 1, 0], [1, 1, 1], False, [0, 0, 0], 1),
        name="3-d, transposed layout",
    )


_CONV_ERRORS = [
    (lambda: (tp.ones(5, 5), (tp.ones(6, 4, 3, 3),)), r"Expected 3D \(unbatched\) or 4D \(batched\) input"),
    (
        lambda: (tp.ones(2, 4, 5, 5), (tp.ones(6, 4, 3, 3), tp.ones(5))),
        r"expected bias to be 1-dimensional with 6 elements, but got bias of size \[5\] instead",
    ),
    (
        lambda: (tp.ones(2, 4, 5, 5), (tp.ones(6, 4, 3, 3, dtype=tp.float64),)),
        r"Input type \(float32\) and weight type \(float64\) should be the same",
    ),
    (
        lambda: (tp.ones(2, 4, 5, 5), (tp.ones(6, 4, 3, 3), None, 2, "same")),
        "padding='same' is not supported for strided convolutions",
    ),
    (lambda: (tp.ones(2, 4, 5, 5), (tp.ones(6, 4, 3, 3), None, 1, "full")), "Invalid padding string: 'full'"),
]
_CONV_T_ERRORS = [
    (
        lambda: (tp.ones(2, 4, 5, 5), (tp.ones(6, 2, 3, 3),)),
        r"Given transposed=1, weight of size \[6, 2, 3, 3\], expected input\[2, 4, 5, 5\] to have 6 channels",
    ),
    (
        lambda: (tp.ones(2, 4, 5, 5), (tp.ones(4, 2, 3, 3), None, 1, 0, 1)),
        "output padding must be smaller than either stride or dilation",
    ),
    (
        lambda: (tp.ones(2, 4, 5, 5), (tp.ones(4, 2, 3, 3), None, 1, 4)),
        r"Calculated output size per channel: \(-1 x -1\). Output size is too small",
    ),
]


def _errors(cases):
    return lambda op: [ErrorInput(SampleInput(*c()), RuntimeError, rx, False) for c, rx in cases]


for _d in (1, 2, 3):
    register(
        OpInfo(
            f"conv{_d}d",
            ref=conv_ref,
            dtypes=CONV_DTYPES,
            sample_inputs=_conv_samples(_d),
            result_dtype=same_dtype,
            tolerances=_TOL,
            error_inputs=_errors(_CONV_ERRORS) if _d == 2 else None,
        ),
        OpInfo(
            f"conv_transpose{_d}d",
            ref=conv_transpose_ref,
            dtypes=CONV_DTYPES,
            sample_inputs=_conv_transpose_samples(_d),
            result_dtype=same_dtype,
            tolerances=_TOL,
            error_inputs=_errors(_CONV_T_ERRORS) if _d == 2 else None,
        ),
    )
register(
    OpInfo(
        "convolution",
        ref=_convolution_ref,
        dtypes=CONV_DTYPES,
        sample_inputs=_convolution_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        large=lambda op: SampleInput(
            make_tensor((4, 16, 128, 128), tp.float32, rng_for(op.id, "large")),
            (make_tensor((8, 16, 3, 3), tp.float32, rng_for(op.id, "w")), None, [1, 1], [1, 1], [1, 1]),
            {"transposed": False, "output_padding": [0, 0], "groups": 1},
            name="1M-element input",
        ),
    )
)


# im2col / col2im (F.unfold / F.fold): 2 spatial dims, [N, C, H, W] <-> [N, C * kh * kw, L].
def _unfold_geometry(h, w, k, dl, p, s):
    return [(n + 2 * p[i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i, n in enumerate((h, w))]


def im2col_ref(x, kernel_size, dilation, padding, stride):
    """Each output column is one window of the padded input, channels outermost, then kernel rows."""
    if x.ndim == 3:
        return im2col_ref(x[None], kernel_size, dilation, padding, stride)[0]
    k, dl, p, s = (_ntuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh, ow = _unfold_geometry(h, w, k, dl, p, s)
    out = np.zeros((n, c, k[0], k[1], oh, ow), x.dtype)
    for i, j in np.ndindex(*k):
        out[:, :, i, j] = xp[:, :, i * dl[0] :: s[0], j * dl[1] :: s[1]][:, :, :oh, :ow]
    return out.reshape(n, c * k[0] * k[1], oh * ow)


def col2im_ref(col, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of im2col: every column entry added back to the pixel it came from."""
    if col.ndim == 2:
        return col2im_ref(col[None], output_size, kernel_size, dilation, padding, stride)[0]
    k, dl, p, s = (_ntuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    n, (h, w) = col.shape[0], output_size
    c = col.shape[1] // (k[0] * k[1])
    oh, ow = _unfold_geometry(h, w, k, dl, p, s)
    cols = col.reshape(n, c, k[0], k[1], oh, ow)
    acc = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), col.dtype)
    for i, j in np.ndindex(*k):
        rows = slice(i * dl[0], i * dl[0] + s[0] * (oh - 1) + 1, s[0])
        acc[:, :, rows, j * dl[1] : j * dl[1] + s[1] * (ow - 1) + 1 : s[1]] += cols[:, :, i, j]
    return acc[:, :, p[0] : p[0] + h, p[1] : p[1] + w]


# (kernel, dilation, padding, stride)
_UNFOLD = [(2, 1, 0, 1), ((3, 2), (1, 2), (1, 0), (2, 1)), (1, 1, 0, 1), (3, 1, 1, 2)]


def _im2col_samples(op, dtype):
    t = _mk(op, dtype)
    x = t(2, 3, 6, 5)
    for k, dl, p, s in _UNFOLD:
        yield SampleInput(x, (k, dl, p, s), name=f"k {k} dil {dl} pad {p} stride {s}")
    yield SampleInput(t(3, 6, 5), (2, 1, 1, 1), name="unbatched")
    yield SampleInput(t(0, 3, 4, 4), (2, 1, 0, 1), name="batch 0")
    yield SampleInput(transposed(x), (2, 1, 1, 2), name="transposed")


def _col2im_samples(op, dtype):
    t = _mk(op, dtype)
    for k, dl, p, s in _UNFOLD:
        kk = _ntuple(k, 2)
        oh, ow = _unfold_geometry(6, 5, kk, _ntuple(dl, 2), _ntuple(p, 2), _ntuple(s, 2))
        yield SampleInput(t(2, 3 * kk[0] * kk[1], oh * ow), ((6, 5), k, dl, p, s), name=f"k {k} stride {s}")
    yield SampleInput(t(12, 20), ((6, 5), 2, 1, 0, 1), name="unbatched")
    yield SampleInput(t(0, 12, 20), ((6, 5), 2, 1, 0, 1), name="batch 0")
    yield SampleInput(transposed(t(2, 12, 20)), ((6, 5), 2, 1, 0, 1), name="transposed")


register(
    OpInfo(
        "im2col",
        ref=im2col_ref,
        dtypes=FLOATS + (tp.int64, tp.bool),
        sample_inputs=_im2col_samples,
        result_dtype=same_dtype,
        differentiable=False,
        torch=lambda torch: torch._C._nn.im2col,
        torch_may_reject=True,  # PyTorch has no integer im2col kernel
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(1, 2, 5, 5), (2, 0, 0, 1)), RuntimeError, "dilation should be", False
            ),
            ErrorInput(
                SampleInput(tp.ones(5, 5), (2, 1, 0, 1)), RuntimeError, r"Expected 3D or 4D \(batch", False
            ),
        ],
    ),
    OpInfo(
        "col2im",
        ref=col2im_ref,
        dtypes=FLOATS + (tp.int64,),
        sample_inputs=_col2im_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        differentiable=False,
        torch=lambda torch: torch._C._nn.col2im,
        torch_may_reject=True,  # nor an integer col2im
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(8), ((5, 5), 2, 1, 0, 1)),
                RuntimeError,
                r"Expected 2D or 3D \(batch mode\) tensor",
                False,
            ),
        ],
    ),
)
