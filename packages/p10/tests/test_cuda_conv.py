"""Convolutions and im2col / col2im on the GPU (csrc/cuda/ops_conv.cpp, ops_im2col.cpp, im2col.cu + cuBLAS)
against float64 NumPy references written from the definitions and against the CPU op.

Covered: conv1d/2d/3d and conv_transpose1d/2d/3d over stride / padding / dilation / groups / bias /
output_padding, the 1x1 no-window path, batches split into chunks (Note [CUDA convolution as batched GEMM]),
padding='same', unbatched inputs, layouts (transposed, strided slices), dtypes (float16/bfloat16 with looser
tolerances), size-0 batches, errors (the CPU's types and messages; integer convolutions raise
NotImplementedError on CUDA, as in PyTorch), and F.unfold / F.fold (im2col / col2im) for floats, integers and
bool. Backward on CUDA is in tpx/tests/test_cuda_conv_grad.py. They need a GPU and skip elsewhere.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_cuda, np_of64  # noqa: E402

pytestmark = needs_cuda

rng = np.random.default_rng(0)


# ---- references (float64) ----------------------------------------------------------------------------------
def ntuple(v, d):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct convolution: x [N, C, *in], w [O, C / groups, *k] -> [N, O, *out]."""
    d = w.ndim - 2
    s, p, dl = ntuple(stride, d), ntuple(padding, d), ntuple(dilation, d)
    x, w = x.astype(np.float64), w.astype(np.float64)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    k = w.shape[2:]
    out_sz = [(xp.shape[2 + i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    o, cg = w.shape[0], x.shape[1] // groups
    og = o // groups
    out = np.zeros((x.shape[0], o, *out_sz))
    for tap in np.ndindex(*k):
        win = tuple(
            slice(tap[i] * dl[i], tap[i] * dl[i] + s[i] * (out_sz[i] - 1) + 1, s[i]) for i in range(d)
        )
        patch = xp[(slice(None), slice(None)) + win]
        for g in range(groups):
            wg = w[(slice(g * og, (g + 1) * og), slice(None)) + tap]
            out[:, g * og : (g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * cg : (g + 1) * cg], wg)
    return out if b is None else out + b.astype(np.float64).reshape((1, o) + (1,) * d)


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed convolution by scattering: x [N, C, *in], w [C, O / groups, *k] -> [N, O, *out]."""
    d = w.ndim - 2
    s, p, op, dl = ntuple(stride, d), ntuple(padding, d), ntuple(output_padding, d), ntuple(dilation, d)
    x, w = x.astype(np.float64), w.astype(np.float64)
    cg, og = x.shape[1] // groups, w.shape[1]
    k, ins = w.shape[2:], x.shape[2:]
    full = [(ins[i] - 1) * s[i] + dl[i] * (k[i] - 1) + 1 + op[i] for i in range(d)]
    acc = np.zeros((x.shape[0], og * groups, *full))
    for tap in np.ndindex(*k):
        win = tuple(slice(tap[i] * dl[i], tap[i] * dl[i] + s[i] * (ins[i] - 1) + 1, s[i]) for i in range(d))
        for g in range(groups):
            wg = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap]
            acc[(slice(None), slice(g * og, (g + 1) * og)) + win] += np.einsum(
                "nc...,co->no...", x[:, g * cg : (g + 1) * cg], wg
            )
    out_sz = [(ins[i] - 1) * s[i] - 2 * p[i] + dl[i] * (k[i] - 1) + op[i] + 1 for i in range(d)]
    out = acc[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + out_sz[i]) for i in range(d))]
    return out if b is None else out + b.astype(np.float64).reshape((1, -1) + (1,) * d)


def ref_unfold(x, k, dl, p, s):
    """F.unfold: [N, C, H, W] -> [N, C * kh * kw, L]."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (h + 2 * p[0] - dl[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - dl[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c, k[0], k[1], oh, ow))
    for i, j in np.ndindex(*k):
        out[:, :, i, j] = xp[:, :, i * dl[0] :: s[0], j * dl[1] :: s[1]][:, :, :oh, :ow]
    return out.reshape(n, c * k[0] * k[1], oh * ow)


def ref_fold(col, size, k, dl, p, s):
    """F.fold: [N, C * kh * kw, L] -> [N, C, *size], summing overlaps (the adjoint of ref_unfold)."""
    n, c = col.shape[0], col.shape[1] // (k[0] * k[1])
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
        ] += cols[:, :, i, j]  # noqa: E501
    return acc[:, :, p[0] : p[0] + h, p[1] : p[1] + w]


def cuda(a, dtype=tp.float32):
    return tp.tensor(np.ascontiguousarray(a)).to(dtype).to(DEV)


def check(got, want, cpu, tol):
    assert got.device.type == DEV and tuple(got.shape) == want.shape == tuple(cpu.shape)
    np.testing.assert_allclose(np_of64(got), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(np_of64(got), np_of64(cpu), rtol=tol, atol=tol)


CONV = {1: tp.conv1d, 2: tp.conv2d, 3: tp.conv3d}
CONV_T = {1: tp.conv_transpose1d, 2: tp.conv_transpose2d, 3: tp.conv_transpose3d}
SPATIAL = {1: (11,), 2: (9, 8), 3: (6, 5, 7)}
KERNEL = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}
TOL = {tp.float32: 2e-5, tp.float64: 1e-12, tp.float16: 1e-2, tp.bfloat16: 6e-2}


# ---- convolution -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize(
    "stride, padding, dilation, groups, bias",
    [(1, 0, 1, 1, False), (2, 1, 1, 1, True), (2, 2, 1, 2, False), (3, 1, 2, 3, True), (1, 0, 1, 6, True)],
)
def test_conv_against_reference(d, stride, padding, dilation, groups, bias):
    for batch, dtype in ((3, tp.float32), (1, tp.float64)):  # a chunk of samples, and a single sample
        x = rng.standard_normal((batch, 6, *SPATIAL[d]))
        w = rng.standard_normal((12, 6 // groups, *KERNEL[d]))
        b = rng.standard_normal(12) if bias else None
        args = (stride, padding, dilation, groups)
        got = CONV[d](cuda(x, dtype), cuda(w, dtype), None if b is None else cuda(b, dtype), *args)
        cpu = CONV[d](
            tp.tensor(x).to(dtype),
            tp.tensor(w).to(dtype),
            None if b is None else tp.tensor(b).to(dtype),
            *args,
        )
        assert got.dtype == dtype
        check(got, ref_conv(x, w, b, *args), cpu, 1e-4 if dtype == tp.float32 else 1e-10)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize(
    "stride, padding, output_padding, groups, dilation, bias",
    [(1, 0, 0, 1, 1, False), (2, 1, 1, 1, 1, True), (2, 0, 0, 2, 2, True), (3, 2, 2, 3, 1, False)],
)
def test_conv_transpose_against_reference(d, stride, padding, output_padding, groups, dilation, bias):
    for batch in (3, 1):
        x = rng.standard_normal((batch, 6, *SPATIAL[d]))
        w = rng.standard_normal((6, 4, *KERNEL[d]))
        b = rng.standard_normal(4 * groups) if bias else None
        args = (stride, padding, output_padding, groups, dilation)
        got = CONV_T[d](cuda(x), cuda(w), None if b is None else cuda(b), *args)
        cpu = CONV_T[d](
            tp.tensor(x).float(), tp.tensor(w).float(), None if b is None else tp.tensor(b).float(), *args
        )
        check(got, ref_conv_transpose(x, w, b, *args), cpu, 1e-4)


@pytest.mark.parametrize("transposed", [False, True])
def test_one_by_one_kernels_skip_the_window(transposed):
    x, b = rng.standard_normal((4, 6, 5, 7)), rng.standard_normal(6)
    w = rng.standard_normal((6, 3, 1, 1))  # groups=2: [O, C/2] plain, [C, O/2] transposed
    fn, ref = (tp.conv_transpose2d, ref_conv_transpose) if transposed else (tp.conv2d, ref_conv)
    got = fn(cuda(x), cuda(w), cuda(b), groups=2)
    cpu = fn(tp.tensor(x).float(), tp.tensor(w).float(), tp.tensor(b).float(), groups=2)
    check(got, ref(x, w, b, groups=2), cpu, 1e-4)


@pytest.mark.parametrize("transposed", [False, True])
def test_batches_split_into_chunks(transposed):
    # One sample's columns take ~113 MB: a chunk holds 2 samples, so 3 samples run as chunks of 2 and 1.
    if transposed:
        x, w = rng.standard_normal((3, 8, 256, 256)), rng.standard_normal((8, 48, 3, 3)) * 0.1
        got, cpu = (
            tp.conv_transpose2d(a, b, padding=1)
            for a, b in ((cuda(x), cuda(w)), (tp.tensor(x).float(), tp.tensor(w).float()))
        )
    else:
        x, w = rng.standard_normal((3, 48, 256, 256)), rng.standard_normal((8, 48, 3, 3)) * 0.1
        got, cpu = (
            tp.conv2d(a, b, padding=1)
            for a, b in ((cuda(x), cuda(w)), (tp.tensor(x).float(), tp.tensor(w).float()))
        )
    np.testing.assert_allclose(np_of64(got), np_of64(cpu), rtol=1e-4, atol=1e-4)


# Note [Stride-1 transposed convolution as a plain one] (ops_conv.cpp): padding above d * (k - 1) makes the
# plain padding negative; output_padding below the dilation grows the output on the right only.
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize(
    "padding, output_padding, groups, dilation, bias",
    [(1, 0, 1, 1, True), (3, 0, 2, 1, False), (2, 1, 3, 2, True), (0, 1, 1, 2, False), (5, 0, 1, 2, True)],
)
def test_stride_one_transposed_runs_as_a_plain_convolution(
    d, padding, output_padding, groups, dilation, bias
):
    x = rng.standard_normal((3, 6, *(s + 4 for s in SPATIAL[d])))
    w = rng.standard_normal((6, 4, *KERNEL[d]))
    b = rng.standard_normal(4 * groups) if bias else None
    args = (1, padding, output_padding, groups, dilation)
    got = CONV_T[d](cuda(x), cuda(w), None if b is None else cuda(b), *args)
    cpu = CONV_T[d](
        tp.tensor(x).float(), tp.tensor(w).float(), None if b is None else tp.tensor(b).float(), *args
    )
    check(got, ref_conv_transpose(x, w, b, *args), cpu, 1e-4)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_stride_one_transposed_in_16_bits(dtype):
    x, w, b = (
        rng.standard_normal((2, 4, 7, 6)),
        rng.standard_normal((4, 3, 3, 3)) * 0.3,
        rng.standard_normal(3),
    )
    x, w, b = (np_of64(tp.tensor(a).to(dtype)) for a in (x, w, b))
    got = tp.conv_transpose2d(cuda(x, dtype), cuda(w, dtype), cuda(b, dtype), padding=1)
    cpu = tp.conv_transpose2d(*(tp.tensor(a).to(dtype) for a in (x, w, b)), padding=1)
    assert got.dtype == dtype
    check(got, ref_conv_transpose(x, w, b, 1, 1), cpu, TOL[dtype])


def test_transposed_with_stride_splits_into_chunks():
    # The GEMM + col2im path: one sample's columns take ~151 MB, so 3 samples run as chunks of 1.
    x, w = rng.standard_normal((3, 8, 128, 128)), rng.standard_normal((8, 64, 3, 3)) * 0.1
    got, cpu = (
        tp.conv_transpose2d(a, b, stride=2, padding=1, output_padding=1)
        for a, b in ((cuda(x), cuda(w)), (tp.tensor(x).float(), tp.tensor(w).float()))
    )
    assert got.shape == (3, 64, 256, 256)
    np.testing.assert_allclose(np_of64(got), np_of64(cpu), rtol=1e-4, atol=1e-4)


# Note [Per-sample GEMMs straight into NCHW] (ops_conv.cpp): one group, cg * K <= L_out / 4 and L_out 16-byte
# aligned. With 2 channels and a 3x3 window cg * K = 18: 8x9 = 72 outputs is the threshold (taken), 1x71
# falls back; a 1x1 window (cg = 2: the 1x1 stride-1 path, one GEMM for the batch) takes it but for 1x71.
@pytest.mark.parametrize("size", [(16, 15), (8, 9), (1, 71)])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16])
def test_one_group_products_write_nchw(size, k, transposed, dtype):
    x, b = rng.standard_normal((4, 2, *size)), rng.standard_normal(5)
    w = rng.standard_normal((2, 5, k, k) if transposed else (5, 2, k, k)) * 0.3
    x, w, b = (np_of64(tp.tensor(a).to(dtype)) for a in (x, w, b))
    fn, ref = (tp.conv_transpose2d, ref_conv_transpose) if transposed else (tp.conv2d, ref_conv)
    got = fn(cuda(x, dtype), cuda(w, dtype), cuda(b, dtype), padding=k // 2)
    cpu = fn(*(tp.tensor(a).to(dtype) for a in (x, w, b)), padding=k // 2)
    assert got.dtype == dtype and got.shape == (4, 5, *size)
    check(got, ref(x, w, b, 1, k // 2), cpu, TOL[dtype])


@pytest.mark.parametrize("k", [(5, 6), (6, 6), (7, 7)])  # taps per kernel row group: 30 (<= 32), then 36, 49
def test_large_windows_and_the_weight_gradient_form(k):
    # im2col_rows writes whole windows per thread up to 32 taps, one kernel row per thread above; the weight
    # gradient's form (channels as the batch, the output gradient as the kernel) has a whole image as window.
    x, w = rng.standard_normal((3, 4, 12, 11)), rng.standard_normal((5, 4, *k))
    got = tp.conv2d(cuda(x), cuda(w), None, 1, 2)
    check(
        got,
        ref_conv(x, w, None, 1, 2),
        tp.conv2d(tp.tensor(x).float(), tp.tensor(w).float(), None, 1, 2),
        1e-4,
    )
    x = rng.standard_normal((2, 4, 9, 10))
    xt = cuda(x).transpose(0, 1)  # [C, N, H, W], non-contiguous, as the TPX formula passes it
    got = tp.conv2d(xt, xt, None, 1, 1)
    want = ref_conv(x.transpose(1, 0, 2, 3), x.transpose(1, 0, 2, 3), None, 1, 1)
    assert got.shape == (4, 4, 3, 3)
    np.testing.assert_allclose(np_of64(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_dtypes(dtype, transposed):
    x, w, b = (
        rng.standard_normal((2, 4, 7, 6)),
        rng.standard_normal((4, 4, 3, 3)) * 0.3,
        rng.standard_normal(4),
    )
    x, w, b = (np_of64(tp.tensor(a).to(dtype)) for a in (x, w, b))  # the values the 16-bit tensors hold
    fn, ref = (tp.conv_transpose2d, ref_conv_transpose) if transposed else (tp.conv2d, ref_conv)
    got = fn(cuda(x, dtype), cuda(w, dtype), cuda(b, dtype), stride=2, padding=1)
    cpu = fn(*(tp.tensor(a).to(dtype) for a in (x, w, b)), stride=2, padding=1)
    assert got.dtype == dtype
    check(got, ref(x, w, b, 2, 1), cpu, TOL[dtype])


def test_layouts_padding_same_unbatched_and_empty():
    x, w = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 4, 3, 2))
    xt = tp.tensor(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).to(DEV).transpose(2, 3)  # non-contiguous
    big = np.zeros((12, 4, 3, 2))
    big[::2] = w
    ws = tp.tensor(big).float().to(DEV)[::2]  # a strided slice
    assert not xt.is_contiguous() and not ws.is_contiguous()
    got = tp.conv2d(xt.float(), ws, padding=1)
    np.testing.assert_allclose(np_of64(got), ref_conv(x, w, padding=1), rtol=1e-4, atol=1e-4)
    same = tp.conv2d(cuda(x), cuda(w), padding="same")  # an even kernel: the extra pad goes after (tp.pad)
    assert same.shape == (2, 6, 9, 8)
    np.testing.assert_allclose(
        np_of64(same),
        np_of64(tp.conv2d(tp.tensor(x).float(), tp.tensor(w).float(), padding="same")),
        rtol=1e-4,
        atol=1e-4,
    )
    unb = tp.conv2d(cuda(x[0]), cuda(w))
    np.testing.assert_allclose(np_of64(unb), ref_conv(x[:1], w)[0], rtol=1e-4, atol=1e-4)
    assert tp.conv2d(tp.zeros(0, 4, 9, 8).to(DEV), cuda(w)).shape == (0, 6, 7, 7)
    assert tp.conv_transpose2d(
        tp.zeros(0, 6, 3, 3).to(DEV), cuda(rng.standard_normal((6, 2, 2, 2)))
    ).shape == (0, 2, 4, 4)
    one = tp.conv2d(cuda(x[:1, :, :1, :2]), cuda(w[:, :, :1, :2]))  # size-1 output
    np.testing.assert_allclose(
        np_of64(one), ref_conv(x[:1, :, :1, :2], w[:, :, :1, :2]), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda x, w: tp.conv2d(x, w[:, :3]), RuntimeError, "expected input.* to have 3 channels"),
        (lambda x, w: tp.conv2d(x, w, stride=0), RuntimeError, "non-positive stride is not supported"),
        (lambda x, w: tp.conv2d(x, w, padding=-1), RuntimeError, "negative padding is not supported"),
        (lambda x, w: tp.conv2d(x[..., :1, :1], w), RuntimeError, "Kernel size can't be greater"),
        (
            lambda x, w: tp.conv2d(x, w.to(tp.float64)),
            RuntimeError,
            r"Input type \(float32\) and weight type",
        ),
        (
            lambda x, w: tp.conv_transpose2d(x, w, stride=2, output_padding=2),
            RuntimeError,
            "output padding must be",
        ),
    ],
)
def test_errors_match_the_cpu(call, exc, match):
    x, w = tp.zeros(1, 4, 5, 5), tp.zeros(4, 4, 3, 3)
    with pytest.raises(exc, match=match):
        call(x, w)
    with pytest.raises(exc, match=match):
        call(x.to(DEV), w.to(DEV))


def test_cuda_only_errors():
    x, w = tp.zeros(1, 4, 5, 5), tp.zeros(4, 4, 3, 3)
    with pytest.raises(NotImplementedError, match="convolution.*int64"):
        tp.conv2d(x.to(tp.int64).to(DEV), w.to(tp.int64).to(DEV))
    with pytest.raises(RuntimeError, match="same device"):
        tp.conv2d(x.to(DEV), w)


# ---- im2col / col2im (F.unfold / F.fold) -----------------------------------------------------------------
@pytest.mark.parametrize("k, dl, p, s", [((2, 2), (1, 1), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 2), (2, 3))])
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.int64, tp.float16])
def test_im2col_and_col2im(k, dl, p, s, dtype):
    x = rng.integers(-8, 8, (2, 3, 7, 9)).astype(np.float64)
    got = tp.im2col(cuda(x, dtype), k, dl, p, s)
    want = ref_unfold(x, k, dl, p, s)
    check(got, want, tp.im2col(tp.tensor(x).to(dtype), k, dl, p, s), 0)
    col = np.round(want * 0.5)  # small integers: the sums are exact in every dtype
    back = tp.col2im(cuda(col, dtype), [7, 9], k, dl, p, s)
    check(
        back, ref_fold(col, (7, 9), k, dl, p, s), tp.col2im(tp.tensor(col).to(dtype), [7, 9], k, dl, p, s), 0
    )
    unb = tp.im2col(cuda(x[0], dtype), k, dl, p, s)  # unbatched
    np.testing.assert_array_equal(np_of64(unb), want[0])


def test_im2col_past_int32_takes_the_64_bit_kernel():
    # 4 * 9 * 2^25 > 2^30 column entries: im2col_fits_int32 is false, so the general kernel runs. Checked on
    # the first two and the last three output rows of the first and the last channel, against NumPy.
    x = rng.integers(0, 255, (1, 4, 4096, 8192), dtype=np.uint8)
    got = tp.im2col(tp.tensor(x).to(DEV), [3, 3], [1, 1], [1, 1], [1, 1])
    assert got.shape == (1, 36, 4096 * 8192)
    for c in (0, 3):
        top = np.pad(x[:, c : c + 1, :3], [(0, 0), (0, 0), (1, 0), (0, 0)])  # output rows 0, 1
        bottom = np.pad(x[:, c : c + 1, -4:], [(0, 0), (0, 0), (0, 1), (0, 0)])  # output rows 4093..4095
        for part, cols in ((top, slice(0, 2 * 8192)), (bottom, slice(-3 * 8192, None))):
            want = ref_unfold(part, (3, 3), (1, 1), (0, 1), (1, 1))
            np.testing.assert_array_equal(np_of64(got[:, 9 * c : 9 * c + 9, cols]), want)


def test_bool_fold_is_a_logical_or_and_errors():
    col = tp.tensor(rng.random((1, 4, 9)) > 0.5)
    got = tp.col2im(col.to(DEV), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])
    np.testing.assert_array_equal(
        got.cpu().numpy(), tp.col2im(col, [4, 4], [2, 2], [1, 1], [0, 0], [1, 1]).numpy()
    )
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        tp.im2col(tp.zeros(1, 1, 4, 4).to(DEV), [0, 2], [1, 1], [0, 0], [1, 1])
    with pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match"):
        tp.col2im(tp.zeros(1, 4, 5).to(DEV), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])
