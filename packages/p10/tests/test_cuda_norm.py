"""layer_norm, rms_norm and their fused backward ops on the GPU (norm.cu) vs float64 NumPy and the CPU op.

Covered: every kernel form (a warp with 8 or 32 elements a lane, a block of 64..512 threads, long rows past
8192 elements), 16-byte packs and single elements (odd row lengths, a row start that is not 16-byte
aligned), each dtype (float16/bfloat16 accumulate in float32), weight and bias present or not, a 2-D
normalized_shape, non-contiguous inputs, more rows than the grid, size-0 and size-1 shapes, errors as on the
CPU, grad_weight/grad_bias as column sums over many rows (fused into the row kernels, or two kernels), the
float16/bfloat16 block32 form, and autograd through layer_norm / rms_norm /
group_norm on CUDA against the CPU gradients. They need a GPU and skip elsewhere ("needs a CUDA device").
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, f64, needs_cuda  # noqa: E402

pytestmark = needs_cuda


TOL = {tp.float16: 5e-3, tp.bfloat16: 4e-2, tp.float32: 3e-5, tp.float64: 1e-10}
rng = np.random.default_rng(0)


def sample(shape, dtype=tp.float32, scale=2.0, shift=0.5) -> tp.Tensor:
    a = shift + scale * rng.standard_normal(shape)
    return tp.from_numpy(np.asarray(a, dtype=np.float64)).to(dtype)


def close(got, want, tol):
    want = np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(
        f64(got) if isinstance(got, tp.Tensor) else got, want, rtol=tol, atol=tol * scale
    )


def ref_norm(x, k, w, b, centered, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True) if centered else 0.0
    y = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    return y if b is None else y + b


def ref_backward(dy, x, k, w, centered, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    n = int(np.prod([x.shape[a] for a in axes]))
    mean = x.mean(axis=axes, keepdims=True) if centered else 0.0
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    g = dy if w is None else dy * w
    dx = g - xhat * (g * xhat).sum(axis=axes, keepdims=True) / n
    if centered:
        dx = dx - g.sum(axis=axes, keepdims=True) / n
    batch = tuple(range(x.ndim - k))
    return rstd * dx, (dy * xhat).sum(axis=batch), dy.sum(axis=batch)


def forward(centered, x, ns, w, b, eps):
    return tp.layer_norm(x, ns, w, b, eps) if centered else tp.rms_norm(x, ns, w, eps)


def check_forward(centered, x, ns, w=None, b=None, eps=1e-5, tol=None):
    tol = tol or TOL[x.dtype]
    cuda = lambda t: None if t is None else t.to(DEV)  # noqa: E731
    got = forward(centered, cuda(x), ns, cuda(w), cuda(b), eps)
    cpu = forward(centered, x, ns, w, b, eps)
    assert got.device.type == DEV and got.dtype is cpu.dtype and got.shape == cpu.shape
    want = ref_norm(
        f64(x), len(ns), None if w is None else f64(w), None if b is None else f64(b), centered, eps
    )
    close(got, f64(cpu), tol)
    close(got, want, tol)


@pytest.mark.parametrize("centered", [True, False], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize("cols", [1, 33, 64, 300, 1024, 1100, 4096, 8192, 8200, 20000])
def test_forms_and_affine(cols, centered):
    # warp8 (<= 256), warp32 (<= 1024), block16 (<= 8192), long; odd lengths load single elements
    x = sample((3, cols))
    w, b = sample((cols,)), sample((cols,))
    check_forward(centered, x, [cols], w, b if centered else None)
    check_forward(centered, x, [cols])


@pytest.mark.parametrize("centered", [True, False], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
@pytest.mark.parametrize("cols", [40, 256, 520, 4096])
def test_dtypes(dtype, cols, centered):
    x, w, b = sample((5, cols), dtype), sample((cols,), dtype), sample((cols,), dtype)
    check_forward(centered, x, [cols], w, b if centered else None)


@pytest.mark.parametrize("centered", [True, False], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16], ids=str)
@pytest.mark.parametrize("cols", [1024, 1032, 2048, 2056, 4096, 4104])
def test_block32_16bit(dtype, cols, centered):
    # float16/bfloat16 rows of 1025..4096 in 16-byte packs: 32 elements a thread, 64 threads up to 2048, then
    # 128 (Note [Row kernel registers] in norm.cu); 1024 is warp32 and 4104 block16, on either side
    x, w, b = sample((7, cols), dtype), sample((cols,), dtype), sample((cols,), dtype)
    check_forward(centered, x, [cols], w, b if centered else None)
    check_forward(centered, x, [cols])
    check_forward(centered, sample((7, cols + 8), dtype)[:, 8:], [cols], w)  # a view, made dense first
    # the row is held as its 16-bit packs (Note [Packed register rows]); the packs past the row's end hold
    # zeros, far from a mean of 20: they must stay out of the variance
    check_forward(centered, sample((3, cols), dtype, scale=1.0, shift=20.0), [cols], w)


def test_layouts_alignment_and_many_rows():
    x = sample((6, 4, 8))
    check_forward(True, x, [4, 8], sample((4, 8)), sample((4, 8)))  # a 2-D normalized_shape
    check_forward(True, x.transpose(0, 1), [8], sample((8,)))  # non-contiguous input
    check_forward(False, sample((4, 65))[:, 1:], [64])  # rows start 4 bytes past 16-byte alignment
    check_forward(
        True, sample((34000, 260)), [260], sample((260,)), sample((260,))
    )  # more rows than the grid
    check_forward(True, sample((40000, 8), tp.float16), [8])
    check_forward(True, sample((4, 1)), [1])  # x - mean = 0
    assert tp.layer_norm(tp.zeros((0, 4), device=DEV), [4]).shape == (0, 4)
    assert tp.rms_norm(tp.zeros((2, 0, 3), device=DEV), [3]).shape == (2, 0, 3)
    check_forward(True, sample((3, 256), scale=1.0, shift=1e3), [256], tol=2e-3)  # a large offset


def test_errors_match_the_cpu():
    x = tp.zeros((4, 3), device=DEV)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        tp.layer_norm(x, [5])
    with pytest.raises(RuntimeError, match="weight"):
        tp.layer_norm(x, [3], tp.ones(4, device=DEV))
    with pytest.raises(RuntimeError, match="floating point"):
        tp.rms_norm(tp.zeros((2, 3), dtype=tp.int64, device=DEV), [3])
    with pytest.raises(RuntimeError, match="device"):
        tp.layer_norm(x, [3], tp.ones(3))


def call_backward(centered, dy, x, ns, w, eps, *flags):
    if centered:
        return tp.layer_norm_backward(dy, x, ns, w, eps, *flags)
    return tp.rms_norm_backward(dy, x, ns, w, eps, *flags[:2])


def check_backward(centered, x, ns, w, dy, eps=1e-5, tol=None, flags=(True, True, True)):
    tol = tol or 4 * TOL[x.dtype]
    cuda = lambda t: None if t is None else t.to(DEV)  # noqa: E731
    got = call_backward(centered, cuda(dy), cuda(x), ns, cuda(w), eps, *flags)
    cpu = call_backward(centered, dy, x, ns, w, eps, *flags)
    want = ref_backward(f64(dy), f64(x), len(ns), None if w is None else f64(w), centered, eps)
    for g, c, r in zip(got, cpu, want, strict=False):  # rms_norm: 2 results, 3 references
        assert (g is None) == (c is None)
        if g is None:
            continue
        assert g.device.type == DEV and g.dtype is c.dtype and g.shape == c.shape
        close(g, f64(c), tol)
        close(g, r, tol)


@pytest.mark.parametrize("centered", [True, False], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize("cols", [7, 64, 300, 1100, 4096, 8192, 20000])
def test_backward_forms(cols, centered):
    x, w, dy = sample((5, cols)), sample((cols,)), sample((5, cols))
    check_backward(centered, x, [cols], w, dy)
    check_backward(centered, x, [cols], None, dy)


@pytest.mark.parametrize("centered", [True, False], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_backward_dtypes_flags_and_column_sums(dtype, centered):
    x, w, dy = sample((700, 96), dtype), sample((96,), dtype), sample((700, 96), dtype)
    check_backward(centered, x, [96], w, dy, tol=max(4 * TOL[dtype], 1e-4))  # 700 rows: several row chunks
    check_backward(centered, x, [96], w, dy, flags=(False, True, True), tol=max(4 * TOL[dtype], 1e-4))
    check_backward(centered, x, [96], w, dy, flags=(True, False, False))


@pytest.mark.parametrize("centered", [True, False], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize(
    "rows,cols,dtype",
    [
        (5000, 40, tp.float32),  # warp8, more rows than the one-wave grid's warps: several rows a warp
        (5000, 40, tp.bfloat16),
        (2500, 300, tp.float32),  # block16 of 64 threads, a few rows a block
        (2500, 320, tp.float16),
        (600, 4096, tp.float32),  # block16 of 256 threads (the benchmark's row length)
        (600, 4096, tp.bfloat16),
        (3, 8192, tp.float32),  # fewer rows than blocks
        (1, 256, tp.float32),
    ],
    ids=str,
)
def test_backward_fused_column_sums(rows, cols, dtype, centered):
    # Note [Fused column sums]: the 16-byte-pack register forms add grad_weight / grad_bias as they go
    x, w, dy = sample((rows, cols), dtype), sample((cols,), dtype), sample((rows, cols), dtype)
    tol = max(4 * TOL[dtype], 1e-4)
    check_backward(centered, x, [cols], w, dy, tol=tol)
    check_backward(centered, x, [cols], w, dy, tol=tol, flags=(False, True, False))  # grad_weight only
    check_backward(centered, x, [cols], None, dy, tol=tol, flags=(True, False, True))
    dy_t = sample((cols, rows), dtype).transpose(0, 1)  # non-contiguous grad_out: made dense first
    check_backward(centered, x, [cols], w, dy_t, tol=tol)


def test_backward_layouts_and_edges():
    x, dy = sample((3, 4, 8)), sample((4, 3, 8))
    check_backward(True, x, [4, 8], sample((4, 8)), dy.transpose(0, 1))  # non-contiguous grad_out
    check_backward(False, sample((9000, 40)), [40], sample((40,)), sample((9000, 40)), tol=1e-4)
    check_backward(True, x, [8], sample((8,), tp.float64), dy.transpose(0, 1))  # float64 weight: cast after
    gx, gw, gb = tp.layer_norm_backward(
        tp.zeros((0, 4), device=DEV), tp.zeros((0, 4), device=DEV), [4], tp.ones(4, device=DEV), 1e-5
    )
    assert gx.shape == (0, 4) and f64(gw).tolist() == [0.0] * 4 and f64(gb).tolist() == [0.0] * 4
    with pytest.raises(RuntimeError, match="grad_out"):
        tp.layer_norm_backward(tp.zeros((2, 4), device=DEV), tp.zeros((3, 4), device=DEV), [4], None, 1e-5)


def test_autograd_matches_cpu():
    pytest.importorskip("tensorplay_tpx")
    from tensorplay_tpx.autograd import grad

    x, dy = sample((6, 48)), sample((6, 48))
    cases = [
        (lambda x, w, b: tp.layer_norm(x, [48], w, b), (sample((48,)), sample((48,)))),
        (lambda x, w, b: tp.rms_norm(x, [48], w) + b, (sample((48,)), sample((48,)))),
        (
            lambda x, w, b: tp.group_norm(x.reshape(6, 4, 12), 2, w, b).reshape(6, 48),
            (sample((4,)), sample((4,))),
        ),
    ]
    for fn, (w, b) in cases:
        grads = {}
        for dev in ("cpu", DEV):
            args = [t.to(dev).requires_grad_(True) for t in (x, w, b)]
            grads[dev] = grad((fn(*args) * dy.to(dev)).sum(), args)
        for g_gpu, g_cpu in zip(grads[DEV], grads["cpu"], strict=True):
            assert g_gpu.device.type == DEV
            close(g_gpu, f64(g_cpu), 1e-4)
