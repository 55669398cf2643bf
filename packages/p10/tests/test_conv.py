"""Convolutions (kernels/conv.cpp) and im2col / col2im (kernels/im2col.cpp) against float64 NumPy references.

The references below are direct convolutions: a loop over kernel offsets (and groups) adding shifted, strided
slices of the padded input times one weight tap, and for transposed convolutions the adjoint scatter. They
share nothing with the im2col + GEMM kernels they check. Covered: 1-3 spatial dims, stride, padding (numbers,
'same' with odd and even kernels, 'valid'), dilation, groups, bias, transposed output_padding, batch 0,
unbatched inputs, one channel, non-contiguous and channels-last-ish inputs and weights, the 16-bit floats
(computing in float32), complex, the BLAS and reference GEMM paths, the threaded path, meta tensors, and the
error messages. Where PyTorch is installed, random configurations are also compared with it directly.
"""

import itertools

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def ntuple(v, d):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """float64 direct convolution: x [N, C, *in], w [O, C / groups, *k] -> [N, O, *out]."""
    d = w.ndim - 2
    s, p, dl = ntuple(stride, d), ntuple(padding, d), ntuple(dilation, d)
    dt = np.complex128 if np.iscomplexobj(x) else np.float64
    x, w = x.astype(dt), w.astype(dt)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    k = w.shape[2:]
    out_sz = [(xp.shape[2 + i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    n, o = x.shape[0], w.shape[0]
    cg, og = x.shape[1] // groups, o // groups
    out = np.zeros((n, o, *out_sz), dt)
    for tap in np.ndindex(*k):
        win = tuple(
            slice(tap[i] * dl[i], tap[i] * dl[i] + s[i] * (out_sz[i] - 1) + 1, s[i]) for i in range(d)
        )
        patch = xp[(slice(None), slice(None)) + win]
        for g in range(groups):
            wg = w[(slice(g * og, (g + 1) * og), slice(None)) + tap]
            out[:, g * og : (g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * cg : (g + 1) * cg], wg)
    if b is not None:
        out += b.astype(dt).reshape((1, o) + (1,) * d)
    return out


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """float64 transposed convolution: x [N, C, *in], w [C, O / groups, *k] -> [N, O, *out], by scattering."""
    d = w.ndim - 2
    s, p, op, dl = ntuple(stride, d), ntuple(padding, d), ntuple(output_padding, d), ntuple(dilation, d)
    x, w = x.astype(np.float64), w.astype(np.float64)
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
        out = out + b.astype(np.float64).reshape((1, -1) + (1,) * d)
    return out


def ref_unfold(x, k, dl, p, s):
    """F.unfold: [N, C, H, W] -> [N, C * kh * kw, L]."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (h + 2 * p[0] - dl[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - dl[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c, k[0], k[1], oh, ow))
    for i, j in np.ndindex(*k):
        out[:, :, i, j] = xp[:, :, i * dl[0] : i * dl[0] + s[0] * (oh - 1) + 1 : s[0], j * dl[1] :: s[1]][
            ..., :ow
        ]
    return out.reshape(n, c * k[0] * k[1], oh * ow)


def ref_fold(col, size, k, dl, p, s):
    """F.fold: [N, C * kh * kw, L] -> [N, C, *size], summing overlaps (the adjoint of ref_unfold)."""
    n = col.shape[0]
    c = col.shape[1] // (k[0] * k[1])
    h, w = size
    oh = (h + 2 * p[0] - dl[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - dl[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = col.astype(np.float64).reshape(n, c, k[0], k[1], oh, ow)
    acc = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]))
    for i, j in np.ndindex(*k):
        acc[
            :,
            :,
            i * dl[0] : i * dl[0] + s[0] * (oh - 1) + 1 : s[0],
            j * dl[1] : j * dl[1] + s[1] * (ow - 1) + 1 : s[1],
        ] += cols[:, :, i, j]
    return acc[:, :, p[0] : p[0] + h, p[1] : p[1] + w]


def T(a, dtype=None):
    t = tp.tensor(np.ascontiguousarray(a))
    return t if dtype is None else t.to(getattr(tp, dtype))


def check(got, want, tol):
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.to(tp.float64).numpy(), want, rtol=tol, atol=tol)


CONV = {1: tp.conv1d, 2: tp.conv2d, 3: tp.conv3d}
CONV_T = {1: tp.conv_transpose1d, 2: tp.conv_transpose2d, 3: tp.conv_transpose3d}
SPATIAL = {1: (11,), 2: (9, 8), 3: (6, 5, 7)}
KERNEL = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}
TOL = {"float32": 2e-5, "float64": 1e-12}


# ---- conv1d / conv2d / conv3d ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize(
    "stride, padding, dilation, groups, bias",
    [
        (1, 0, 1, 1, False),
        (1, 1, 1, 1, True),
        (2, 0, 1, 1, True),
        (2, 2, 1, 2, False),
        (1, 1, 2, 1, True),
        (3, 1, 2, 3, True),
        (1, 0, 1, 6, True),  # depthwise
    ],
)
def test_conv_against_direct_reference(d, stride, padding, dilation, groups, bias, dtype):
    x = rng.standard_normal((2, 6, *SPATIAL[d]))
    w = rng.standard_normal((6, 6 // groups, *KERNEL[d]))
    b = rng.standard_normal(6) if bias else None
    got = CONV[d](
        T(x, dtype),
        T(w, dtype),
        T(b, dtype) if bias else None,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
    )
    assert got.dtype == getattr(tp, dtype)
    check(got, ref_conv(x, w, b, stride, padding, dilation, groups), TOL[dtype])


@pytest.mark.parametrize("d", [2, 3])
def test_per_dim_stride_padding_dilation(d):
    x = rng.standard_normal((2, 4, *SPATIAL[d]))
    w = rng.standard_normal((6, 2, *KERNEL[d]))
    s, p, dl = (1, 2, 3)[:d], (2, 0, 1)[:d], (2, 1, 1)[:d]
    got = CONV[d](T(x), T(w), None, s, p, dl, 2)
    check(got, ref_conv(x, w, None, s, p, dl, 2), 2e-5)
    # the generic op takes the same numbers, batched only
    got = tp.convolution(T(x), T(w), None, list(s), list(p), list(dl), False, [0] * d, 2)
    check(got, ref_conv(x, w, None, s, p, dl, 2), 2e-5)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("kernel", [1, 2, 3, 4])
@pytest.mark.parametrize("dilation", [1, 2])
def test_padding_same_keeps_the_size(d, kernel, dilation):
    # even kernels need one more padding element after the input than before it (PyTorch's split)
    x = rng.standard_normal((2, 3, *SPATIAL[d]))
    w = rng.standard_normal((4, 3, *(kernel,) * d))
    got = CONV[d](T(x), T(w), None, padding="same", dilation=dilation)
    total = dilation * (kernel - 1)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(total // 2, total - total // 2)] * d)
    want = ref_conv(xp, w, None, 1, 0, dilation)
    assert want.shape[2:] == x.shape[2:]
    check(got, want, 2e-5)


def test_padding_valid_and_unbatched_same():
    x, w = rng.standard_normal((3, 10, 9)), rng.standard_normal((2, 3, 4, 3))
    check(tp.conv2d(T(x), T(w), padding="valid"), ref_conv(x[None], w)[0], 2e-5)
    check(
        tp.conv2d(T(x), T(w), padding="same"), ref_conv(np.pad(x, [(0, 0), (1, 2), (1, 1)])[None], w)[0], 2e-5
    )


@pytest.mark.parametrize("d", [1, 2, 3])
def test_unbatched_input(d):
    x = rng.standard_normal((3, *SPATIAL[d]))
    w, b = rng.standard_normal((4, 3, *KERNEL[d])), rng.standard_normal(4)
    got = CONV[d](T(x), T(w), T(b), padding=1)
    check(got, ref_conv(x[None], w, b, 1, 1)[0], 2e-5)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_batch_zero(d):
    x = np.zeros((0, 3, *SPATIAL[d]))
    w = rng.standard_normal((4, 3, *KERNEL[d]))
    got = CONV[d](T(x), T(w), padding=1)
    assert tuple(got.shape) == ref_conv(x, w, None, 1, 1).shape
    got = CONV_T[d](T(x), T(w.swapaxes(0, 1)), stride=2)
    assert tuple(got.shape) == ref_conv_transpose(x, w.swapaxes(0, 1), None, 2).shape


def test_one_channel_size_one_dims_and_one_by_one_kernels():
    x = rng.standard_normal((3, 1, 1, 7))
    w = rng.standard_normal((2, 1, 1, 3))
    check(tp.conv2d(T(x), T(w)), ref_conv(x, w), 2e-5)
    # a 1x1 kernel with stride 1 and no padding is a plain GEMM (no im2col): checked with and without bias
    x, w, b = rng.standard_normal((2, 5, 6, 7)), rng.standard_normal((3, 5, 1, 1)), rng.standard_normal(3)
    check(tp.conv2d(T(x), T(w)), ref_conv(x, w), 2e-5)
    check(tp.conv2d(T(x), T(w), T(b)), ref_conv(x, w, b), 2e-5)
    check(tp.conv2d(T(x), T(w), T(b), stride=2), ref_conv(x, w, b, 2), 2e-5)
    # the kernel as large as the input: one output position
    x, w = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 4, 5))
    check(tp.conv2d(T(x), T(w)), ref_conv(x, w), 2e-5)


def layouts(a):
    """The same values as contiguous, channels-last (permuted), fully transposed and strided-slice tensors."""
    yield tp.tensor(a)
    perm = (0,) + tuple(range(2, a.ndim)) + (1,)
    inv = tuple(np.argsort(perm))
    yield tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(inv)  # channels last
    rev = tuple(reversed(range(a.ndim)))
    yield tp.tensor(np.ascontiguousarray(a.transpose(rev))).permute(rev)  # fully transposed
    big = np.zeros((a.shape[0] * 2, a.shape[1], *(s * 2 for s in a.shape[2:])), a.dtype)
    big[(slice(None, None, 2), slice(None)) + (slice(None, None, 2),) * (a.ndim - 2)] = a
    yield tp.tensor(big)[(slice(None, None, 2), slice(None)) + (slice(None, None, 2),) * (a.ndim - 2)]


@pytest.mark.parametrize("d", [1, 2, 3])
def test_non_contiguous_inputs_and_weights(d):
    x = rng.standard_normal((2, 4, *SPATIAL[d])).astype(np.float32)
    w = rng.standard_normal((6, 2, *KERNEL[d])).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    want = ref_conv(x, w, b, 2, 1, 1, 2)
    for xt, wt in itertools.product(list(layouts(x)), list(layouts(w))):
        check(CONV[d](xt, wt, T(b), 2, 1, 1, 2), want, 2e-5)
    wt = ref_conv_transpose(x, w[:4], b[:4], 2, 1, 1, 2)
    for xt, wl in itertools.product(list(layouts(x)), list(layouts(w[:4]))):
        check(CONV_T[d](xt, wl, T(b[:4]), 2, 1, 1, 2), wt, 2e-5)
    bias_slice = tp.tensor(np.repeat(b, 2))[::2]
    check(CONV[d](T(x), T(w), bias_slice, 2, 1, 1, 2), want, 2e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("transposed", [False, True])
def test_half_and_bfloat16_compute_in_float32(dtype, transposed):
    x = T(rng.standard_normal((2, 4, 7, 6)), dtype)
    w = T(rng.standard_normal((4, 2, 3, 3)), dtype)
    b = T(rng.standard_normal(4), dtype)
    xs, ws, bs = (t.to(tp.float64).numpy() for t in (x, w, b))  # the values after rounding to `dtype`
    if transposed:
        got, want = tp.conv_transpose2d(x, w, b, 2, 1, 1, 2), ref_conv_transpose(xs, ws, bs, 2, 1, 1, 2)
    else:
        got, want = tp.conv2d(x, w, b, 1, 1, 1, 2), ref_conv(xs, ws, bs, 1, 1, 1, 2)
    assert got.dtype == getattr(tp, dtype)
    # float32 sums, one rounding to the 16-bit type at the end: half an ulp of the result
    eps = 2.0**-11 if dtype == "float16" else 2.0**-8
    np.testing.assert_allclose(got.to(tp.float64).numpy(), want, rtol=eps, atol=eps * np.abs(want).max())


def test_complex():
    x = rng.standard_normal((2, 2, 6, 5)) + 1j * rng.standard_normal((2, 2, 6, 5))
    w = rng.standard_normal((3, 2, 2, 2)) + 1j * rng.standard_normal((3, 2, 2, 2))
    got = tp.conv2d(tp.tensor(x), tp.tensor(w), None, 1, 1)
    assert got.dtype == tp.complex128
    np.testing.assert_allclose(got.numpy(), ref_conv(x, w, None, 1, 1), rtol=1e-12, atol=1e-12)


def test_reference_gemm_path_matches_blas():
    x, w = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 2, 3, 3))
    old = tp.ops.call("_set_gemm_blas", False)
    try:
        slow = tp.conv2d(T(x), T(w), None, 2, 1, 1, 2)
        slow_t = tp.conv_transpose2d(T(x), T(w[:4]), None, 2, 1, 1, 2)
    finally:
        tp.ops.call("_set_gemm_blas", old)
    check(slow, ref_conv(x, w, None, 2, 1, 1, 2), 1e-12)
    check(slow_t, ref_conv_transpose(x, w[:4], None, 2, 1, 1, 2), 1e-12)


@pytest.mark.parametrize("batch", [1, 2])
def test_large_input_threaded(batch):
    # > 1M input elements. Note [Convolution threads]: with 2 threads, batch 2 splits the samples over them;
    # batch 1 splits im2col / col2im by rows / channels and each GEMM by output columns. One thread: serial.
    x = rng.standard_normal((batch, 32 // batch, 200, 170)).astype(np.float32)
    w = rng.standard_normal((8, 32 // batch, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    want = ref_conv(x, w, b, 1, 1)
    xt = x[:, :, :100, :100]
    want_t = ref_conv_transpose(xt, w.swapaxes(0, 1), None, 2)
    old = tp.get_num_threads()
    try:
        for threads in (2, 1):
            tp.set_num_threads(threads)
            check(tp.conv2d(T(x), T(w), T(b), padding=1), want, 1e-4)
            check(tp.conv_transpose2d(T(xt), T(w.swapaxes(0, 1)), None, 2), want_t, 1e-4)
    finally:
        tp.set_num_threads(old)


# ---- conv_transpose1d / 2d / 3d ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize(
    "stride, padding, output_padding, groups, dilation, bias",
    [
        (1, 0, 0, 1, 1, False),
        (1, 1, 0, 1, 1, True),
        (2, 0, 1, 1, 1, True),
        (2, 1, 1, 2, 1, False),
        (3, 2, 2, 3, 1, True),
        (1, 0, 1, 1, 2, True),  # output_padding < dilation
        (2, 1, 0, 6, 2, True),
    ],
)
def test_conv_transpose_against_scatter_reference(
    d, stride, padding, output_padding, groups, dilation, bias, dtype
):
    x = rng.standard_normal((2, 6, *SPATIAL[d]))
    w = rng.standard_normal((6, 12 // groups, *KERNEL[d]))
    b = rng.standard_normal(12) if bias else None
    got = CONV_T[d](
        T(x, dtype),
        T(w, dtype),
        T(b, dtype) if bias else None,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
    assert got.dtype == getattr(tp, dtype)
    check(got, ref_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation), TOL[dtype])


def test_conv_transpose_unbatched_one_by_one_and_generic_op():
    x, w, b = rng.standard_normal((4, 5, 6)), rng.standard_normal((4, 3, 1, 1)), rng.standard_normal(3)
    check(tp.conv_transpose2d(T(x), T(w), T(b)), ref_conv_transpose(x[None], w, b)[0], 2e-5)
    x = rng.standard_normal((2, 4, 5, 6))
    got = tp.convolution(T(x), T(w), T(b), [2, 1], [0, 0], [1, 1], True, [1, 0], 1)
    check(got, ref_conv_transpose(x, w, b, (2, 1), 0, (1, 0)), 2e-5)


def test_conv_transpose_is_the_adjoint_of_conv():
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for the same stride/padding/dilation/groups
    x, w = rng.standard_normal((2, 4, 9, 10)), rng.standard_normal((6, 2, 3, 2))
    y = tp.conv2d(T(x), T(w), None, 2, 1, 2, 2)
    r = rng.standard_normal(tuple(y.shape))
    back = tp.conv_transpose2d(T(r), T(w), None, 2, 1, (0, 1), 2, 2)
    assert tuple(back.shape) == x.shape
    np.testing.assert_allclose(np.sum(y.numpy() * r), np.sum(x * back.numpy()), rtol=1e-10)


# ---- meta --------------------------------------------------------------------------------------------------


def test_meta_shapes():
    x, w = tp.empty((2, 4, 9, 8), device="meta"), tp.empty((6, 2, 3, 3), device="meta")
    got = tp.conv2d(x, w, None, 2, 1, 1, 2)
    assert got.device.type == "meta" and got.shape == (2, 6, 5, 4)
    assert tp.conv2d(x, w, None, 1, "same", 1, 2).shape == (2, 6, 9, 8)
    even = tp.empty((3, 4, 2, 4), device="meta")  # 'same' with even kernels pads the unbatched input first
    assert tp.conv2d(tp.empty((4, 9, 8), device="meta"), even, padding="same").shape == (3, 9, 8)
    assert tp.conv_transpose2d(x, tp.empty((4, 3, 3, 3), device="meta"), None, 2, 1, 1).shape == (
        2,
        3,
        18,
        16,
    )
    assert tp.conv3d(
        tp.empty((5, 2, 4, 4), device="meta"), tp.empty((3, 5, 2, 2, 2), device="meta")
    ).shape == (3, 1, 3, 3)
    assert tp.im2col(x, 3, 1, 1, 2).shape == (2, 36, 20)
    assert tp.col2im(tp.empty((2, 36, 20), device="meta"), (9, 8), 3, 1, 1, 2).shape == (2, 4, 9, 8)
    with pytest.raises(RuntimeError, match="expected input\\[2, 4, 9, 8\\] to have 3 channels"):
        tp.conv2d(x, tp.empty((6, 3, 3, 3), device="meta"))


# ---- errors ------------------------------------------------------------------------------------------------


def test_errors():
    x, w = tp.ones(2, 4, 5, 5), tp.ones(6, 2, 3, 3)
    cases = [
        (
            lambda: tp.conv2d(x, w),
            "Given groups=1, weight of size \\[6, 2, 3, 3\\], expected input\\[2, 4, 5, 5\\] "
            "to have 2 channels, but got 4 channels instead",
        ),
        (
            lambda: tp.conv2d(x, tp.ones(6, 1, 3, 3), groups=3),
            "expected input\\[2, 4, 5, 5\\] to have 3 channels",
        ),
        (
            lambda: tp.conv2d(x, tp.ones(5, 2, 3, 3), groups=2),
            "Given groups=2, expected weight to be divisible by 2 "
            "at dimension 0, but got weight of size \\[5, 2, 3, 3\\] instead",
        ),
        (
            lambda: tp.conv2d(x, tp.ones(1, 4, 3, 3), groups=2),
            "expected weight to be at least 2 at dimension 0",
        ),
        (lambda: tp.conv2d(x, w, groups=0), "non-positive groups is not supported"),
        (
            lambda: tp.conv2d(x, tp.ones(6, 4, 7, 3)),
            "Calculated padded input size per channel: \\(5 x 5\\). "
            "Kernel size: \\(7 x 3\\). Kernel size can't be greater than actual input size",
        ),
        (lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), dilation=3), "Kernel size: \\(7 x 7\\)"),
        (lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), padding=-1), "negative padding is not supported"),
        (lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), stride=0), "non-positive stride is not supported"),
        (lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), dilation=0), "non-positive dilation is not supported"),
        (
            lambda: tp.conv2d(tp.ones(5, 5), w),
            "Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d, but "
            "got input of size: \\[5, 5\\]",
        ),
        (lambda: tp.conv1d(x, w), "Expected 2D \\(unbatched\\) or 3D \\(batched\\) input to conv1d"),
        (
            lambda: tp.conv2d(x, tp.ones(6, 4, 3)),
            "Expected 3-dimensional input for 3-dimensional weight \\[6, 4, 3\\], "
            "but got 4-dimensional input of size \\[2, 4, 5, 5\\] instead",
        ),
        (
            lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), tp.ones(5)),
            "expected bias to be 1-dimensional with 6 elements, but got bias of size \\[5\\] instead",
        ),
        (
            lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3, dtype=tp.float64)),
            "Input type \\(float32\\) and weight type \\(float64\\) should be the same",
        ),
        (lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), tp.ones(6, dtype=tp.float64)), "and bias type"),
        (
            lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), stride=2, padding="same"),
            "padding='same' is not supported for strided convolutions",
        ),
        (lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), padding="full"), "Invalid padding string: 'full'"),
        (
            lambda: tp.conv2d(x, tp.ones(6, 4, 3, 3), stride=(1, 1, 1)),
            "expected stride to be a single integer value or a list of 2 values",
        ),
        (
            lambda: tp.conv_transpose2d(x, w),
            "Given transposed=1, weight of size \\[6, 2, 3, 3\\], expected "
            "input\\[2, 4, 5, 5\\] to have 6 channels, but got 4 channels instead",
        ),
        (
            lambda: tp.conv_transpose2d(x, tp.ones(4, 2, 3, 3), output_padding=1),
            "output padding must be smaller than either stride or dilation",
        ),
        (lambda: tp.conv_transpose2d(x, tp.ones(4, 2, 3, 3), output_padding=-1), "negative output_padding"),
        (
            lambda: tp.conv_transpose2d(x, tp.ones(4, 2, 3, 3), padding=4),
            "Given input size per channel: \\(5 x 5\\). Calculated output size per channel: \\(-1 x -1\\). "
            "Output size is too small",
        ),
        (
            lambda: tp.conv_transpose1d(tp.ones(1, 4, 5), tp.ones(4, 2, 3), output_padding=1),
            "but got output_padding_height: 0 output_padding_width: 1 stride_height: 1 stride_width: 1 "
            "dilation_height: 1 dilation_width: 1",
        ),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()
    with pytest.raises(NotImplementedError, match="\"convolution\" not implemented for 'Bool'"):
        tp.conv2d(tp.ones(1, 1, 3, 3, dtype=tp.bool), tp.ones(1, 1, 2, 2, dtype=tp.bool))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_integer_convolutions(dtype):
    # PyTorch's CPU convolution takes integer dtypes too: exact sums in int64, wrapping to narrow types
    x = rng.integers(0, 100, (2, 4, 6, 5))
    w = rng.integers(-3, 4, (4, 2, 3, 2))
    b = rng.integers(-5, 5, 4)
    np_dtype = np.dtype(dtype)
    got = tp.conv2d(T(x, dtype), T(w, dtype), T(b, dtype), 1, 1, 1, 2)
    assert got.dtype == getattr(tp, dtype)
    want = ref_conv(x.astype(np_dtype), w.astype(np_dtype), b.astype(np_dtype), 1, 1, 1, 2)
    np.testing.assert_array_equal(got.numpy(), np.round(want).astype(np.int64).astype(np_dtype))
    got = tp.conv_transpose2d(T(x, dtype), T(w, dtype), None, 2, 1, 1, 2)
    want = ref_conv_transpose(x.astype(np_dtype), w.astype(np_dtype), None, 2, 1, 1, 2)
    np.testing.assert_array_equal(got.numpy(), np.round(want).astype(np.int64).astype(np_dtype))


# ---- im2col / col2im (F.unfold / F.fold) -------------------------------------------------------------------

WINDOWS = [
    ((2, 2), (1, 1), (0, 0), (1, 1)),
    ((3, 2), (1, 2), (1, 0), (2, 1)),
    ((3, 3), (2, 1), (2, 1), (3, 2)),
]


@pytest.mark.parametrize("k, dl, p, s", WINDOWS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_im2col_and_col2im(k, dl, p, s, dtype):
    x = rng.integers(-8, 8, (2, 3, 9, 8)).astype(np.float64)
    want = ref_unfold(x, k, dl, p, s)
    got = tp.im2col(T(x, dtype), k, dl, p, s)
    assert got.dtype == getattr(tp, dtype)
    check(got, want, 0)
    check(tp.im2col(T(x[0], dtype), k, dl, p, s), want[0], 0)  # unbatched
    for xt in layouts(x):
        check(tp.im2col(xt, k, dl, p, s), want, 0)
    col = rng.integers(-8, 8, want.shape).astype(np.float64)
    wf = ref_fold(col, (9, 8), k, dl, p, s)
    check(tp.col2im(T(col, dtype), (9, 8), k, dl, p, s), wf, 0)
    check(tp.col2im(T(col[1], dtype), (9, 8), k, dl, p, s), wf[1], 0)
    check(
        tp.col2im(
            tp.tensor(col).transpose(1, 2).contiguous().transpose(1, 2).to(getattr(tp, dtype)),
            (9, 8),
            k,
            dl,
            p,
            s,
        ),
        wf,
        0,
    )


def test_bool_fold_is_a_logical_or():
    x = rng.integers(0, 2, (2, 3, 6, 5)).astype(bool)
    cols = tp.im2col(tp.tensor(x), (2, 3), 1, 1, 1)
    assert cols.dtype == tp.bool
    np.testing.assert_array_equal(cols.numpy(), ref_unfold(x, (2, 3), (1, 1), (1, 1), (1, 1)) != 0)
    folded = tp.col2im(cols, (6, 5), (2, 3), 1, 1, 1)
    want = ref_fold(cols.numpy().astype(np.float64), (6, 5), (2, 3), (1, 1), (1, 1), (1, 1)) != 0
    np.testing.assert_array_equal(folded.numpy(), want)


def test_im2col_ints_and_fold_counts():
    x = tp.tensor(rng.standard_normal((1, 2, 5, 5)))
    # an int for an int[2] argument means both dims (F.unfold's int-or-tuple)
    assert tp.im2col(x, 2, 1, 0, 1).tolist() == tp.im2col(x, (2, 2), (1, 1), (0, 0), (1, 1)).tolist()
    # fold(unfold(ones)) counts how many blocks cover each element
    counts = tp.col2im(tp.im2col(tp.ones(1, 1, 4, 4), 3, 1, 1, 1), (4, 4), 3, 1, 1, 1)
    want = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]], float)
    assert counts[0, 0].numpy().tolist() == want.tolist()
    assert tp.im2col(tp.zeros(0, 2, 5, 5), 2, 1, 0, 1).shape == (0, 8, 16)
    assert tp.col2im(tp.zeros(0, 8, 16), (5, 5), 2, 1, 0, 1).shape == (0, 2, 5, 5)
    # Tensor.unfold (the view op) is another operation and keeps working
    assert tp.arange(6.0).unfold(0, 2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_im2col_col2im_errors():
    x = tp.ones(1, 2, 5, 5)
    cases = [
        (
            lambda: tp.im2col(x, 0, 1, 0, 1),
            "kernel size should be greater than zero, but got kernel_height: 0",
        ),
        (lambda: tp.im2col(x, 2, 0, 0, 1), "dilation should be greater than zero"),
        (lambda: tp.im2col(x, 2, 1, -1, 1), "padding should be non-negative, but got pad_height: -1"),
        (lambda: tp.im2col(x, 2, 1, 0, 0), "stride should be greater than zero"),
        (lambda: tp.im2col(tp.ones(5, 5), 2, 1, 0, 1), "Expected 3D or 4D \\(batch mode\\) tensor input"),
        (
            lambda: tp.im2col(x, 6, 1, 0, 1),
            "calculated shape of the array of sliding blocks as \\(0, 0\\), but its "
            "components must be at least one",
        ),
        (lambda: tp.im2col(x, (1, 2, 3), 1, 0, 1), "expected kernel_size to have 1 or 2 elements"),
        (
            lambda: tp.col2im(tp.ones(1, 7, 16), (5, 5), 2, 1, 0, 1),
            "Expected size of input's dimension 1 to be "
            "divisible by the product of kernel_size, but got input.size\\(1\\)=7 and kernel_size=\\(2, 2\\)",
        ),
        (
            lambda: tp.col2im(tp.ones(1, 8, 15), (5, 5), 2, 1, 0, 1),
            "expected size of input's dimension 2 to match "
            "the calculated number of sliding blocks 4 \\* 4 = 16, but got input.size\\(2\\)=15",
        ),
        (
            lambda: tp.col2im(tp.ones(1, 8, 16), (1, 1), 2, 1, 0, 1),
            "calculated number of sliding blocks 0 \\* 0 = 0, but got input.size\\(2\\)=16",
        ),
        (
            lambda: tp.col2im(tp.ones(1, 8, 16), (0, 5), 2, 1, 0, 1),
            "Expected output spatial size to be positive",
        ),
        (lambda: tp.col2im(tp.ones(8), (5, 5), 2, 1, 0, 1), "Expected 2D or 3D \\(batch mode\\) tensor"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


# ---- PyTorch -----------------------------------------------------------------------------------------------


def test_random_configurations_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    r = np.random.default_rng(7)
    for trial in range(40):
        d = int(r.integers(1, 4))
        groups = int(r.choice([1, 2, 3]))
        cin, cout = groups * int(r.integers(1, 4)), groups * int(r.integers(1, 4))
        k = tuple(int(v) for v in r.integers(1, 4, d))
        s = tuple(int(v) for v in r.integers(1, 4, d))
        dl = tuple(int(v) for v in r.integers(1, 3, d))
        p = tuple(int(v) for v in r.integers(0, 3, d))
        size = tuple(dl[i] * (k[i] - 1) + 1 + int(r.integers(0, 6)) for i in range(d))
        x = r.standard_normal((int(r.integers(1, 3)), cin, *size)).astype(np.float32)
        b = r.standard_normal(cout).astype(np.float32) if trial % 2 else None
        tb = torch.tensor(b) if b is not None else None
        w = r.standard_normal((cout, cin // groups, *k)).astype(np.float32)
        conv = getattr(F, f"conv{d}d")
        want = conv(torch.tensor(x), torch.tensor(w), tb, s, p, dl, groups).numpy()
        got = CONV[d](T(x), T(w), T(b) if b is not None else None, s, p, dl, groups)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
        if trial % 3 == 0:
            want = conv(torch.tensor(x), torch.tensor(w), tb, 1, "same", dl, groups).numpy()
            got = CONV[d](T(x), T(w), T(b) if b is not None else None, 1, "same", dl, groups)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
        wt = r.standard_normal((cin, cout // groups, *k)).astype(np.float32)
        op = tuple(int(r.integers(0, max(s[i], dl[i]))) for i in range(d))
        # padding small enough that every output size is at least 1
        pt = tuple(min(p[i], ((size[i] - 1) * s[i] + dl[i] * (k[i] - 1) + op[i]) // 2) for i in range(d))
        want = getattr(F, f"conv_transpose{d}d")(torch.tensor(x), torch.tensor(wt), tb, s, pt, op, groups, dl)
        got = CONV_T[d](T(x), T(wt), T(b) if b is not None else None, s, pt, op, groups, dl)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_unfold_fold_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    for k, dl, p, s in WINDOWS:
        want = F.unfold(torch.tensor(x), k, dl, p, s)
        np.testing.assert_array_equal(tp.im2col(T(x), k, dl, p, s).numpy(), want.numpy())
        np.testing.assert_allclose(
            tp.col2im(T(want.numpy()), (9, 8), k, dl, p, s).numpy(),
            F.fold(want, (9, 8), k, dl, p, s).numpy(),
            rtol=1e-6,
            atol=1e-6,
        )
