"""softmax and log_softmax on the GPU (softmax.cu) against a float64 NumPy formula and the CPU op.

Covered: every dim of 1-D..4-D inputs (the dim moved last by the host), non-contiguous inputs, each dtype
(float16/bfloat16 accumulate in float32), dtype=, integer inputs refused as on the CPU, every form of Note
[Softmax one read]: rows in registers on a warp (<= 256 and <= 1024 elements) or a block (<= 8192), with
16-byte packs or single elements (odd lengths, rows that start off 16-byte alignment), and longer rows on
softmax_long (cached in shared memory up to 46 KiB of float32/float64, re-read beyond), more rows than the
grid, 0-d, size-0 and size-1 dims, rows with -inf (masked attention) and large values (no overflow), and the
backward (a composite of mul, sub and sum in tpx's formula) against the CPU's gradients. They need a GPU and
skip elsewhere ("needs a CUDA device").
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_cuda, normal, np_of  # noqa: E402

pytestmark = needs_cuda


def sample(shape, dtype=tp.float32, seed=0, scale=3.0) -> tp.Tensor:
    return normal(shape, dtype, seed, scale)


TOL = {tp.float16: 2e-3, tp.bfloat16: 1.6e-2, tp.float32: 2e-6, tp.float64: 1e-12}


def ref_softmax(a: np.ndarray, dim: int, log: bool) -> np.ndarray:
    a = a.astype(np.float64)
    z = a - np.max(a, axis=dim, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
    return z - lse if log else np.exp(z - lse)


def op(log: bool):
    return tp.log_softmax if log else tp.softmax


def check(x: tp.Tensor, dim: int, log: bool, tol: float, dtype=None):
    got, cpu = op(log)(x.to(DEV), dim, dtype=dtype), op(log)(x, dim, dtype=dtype)
    assert got.device.type == DEV and got.dtype is cpu.dtype and got.shape == cpu.shape
    assert got.stride() == cpu.stride()
    want = ref_softmax(np_of(x.to(dtype) if dtype else x), dim, log)
    g = np_of(got).astype(np.float64)
    np.testing.assert_allclose(g, np_of(cpu).astype(np.float64), rtol=tol, atol=tol)
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol)
    return g


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 5)])
def test_every_dim_and_layout(shape, log):
    x = sample(shape, seed=len(shape))
    for dim in range(-len(shape), len(shape)):
        check(x, dim, log, 2e-6)
        if len(shape) >= 2:
            check(x.transpose(0, -1), dim, log, 2e-6)  # non-contiguous
        check(sample((shape[0] * 2,) + shape[1:], seed=9)[::2], dim, log, 2e-6)  # strided rows


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
@pytest.mark.parametrize("cols", [1, 31, 256, 257, 1024, 1025, 4096, 8192, 8193, 11776, 11777, 20000])
def test_row_lengths_and_dtypes(cols, dtype, log):
    # registers: warp8 <= 256, warp32 <= 1024, block16 <= 8192; then softmax_long, cached while <= 46 KiB
    x = sample((3, cols), dtype, seed=cols)
    g = check(x, -1, log, 2 * TOL[dtype])
    if not log:
        np.testing.assert_allclose(g.sum(-1), np.ones(3), rtol=4 * TOL[dtype] * max(1, cols / 1024))


def test_many_rows_and_columns_dim():
    check(sample((4096, 64), seed=1), 1, False, 2e-6)  # grid-stride over rows (more rows than the grid)
    check(sample((300, 2000), seed=2), 0, True, 2e-6)  # a long column: moved last, copied back
    check(sample((8, 3000, 5), tp.float16, seed=3), 1, False, 4e-3)


def test_dtype_argument_and_integer_inputs():
    h = sample((4, 50), tp.float16, seed=4)
    check(h, 1, False, 2e-6, dtype=tp.float32)  # computed and returned in float32
    assert tp.softmax(h.to(DEV), 1, dtype=tp.float32).dtype is tp.float32
    i = tp.arange(12, dtype=tp.int64).reshape(3, 4)
    with pytest.raises(RuntimeError, match="softmax: expected a floating point input, got int64"):
        tp.softmax(i.to(DEV), 1)
    check(i, 1, True, 2e-6, dtype=tp.float64)
    with pytest.raises(IndexError):
        tp.softmax(h.to(DEV), 2)


def test_sizes_zero_one_and_0d():
    for shape, dim in [((0, 5), 1), ((5, 0), 1), ((0, 5), 0), ((1, 1), 0), ((3, 1), 1), ((1, 7), 1)]:
        x = sample(shape, seed=5)
        got = op(False)(x.to(DEV), dim)
        assert got.shape == shape
        if x.numel():
            np.testing.assert_allclose(np_of(got), ref_softmax(np_of(x), dim, False), rtol=2e-6)
    s = tp.tensor(2.5)
    assert tp.softmax(s.to(DEV), 0).item() == 1.0 and tp.log_softmax(s.to(DEV), -1).item() == 0.0


def test_infinities_and_large_values():
    x = sample((6, 2000), seed=6)
    x[:, 7:1500] = float("-inf")  # masked positions give exactly 0 (log: -inf)
    for log in (False, True):
        g = check(x, 1, log, 2e-6)
        assert (g[:, 7:1500] == (-np.inf if log else 0)).all()
    short = sample((6, 20), seed=7)
    short[:, ::2] = float("-inf")
    check(short, 1, False, 2e-6)
    big = sample((4, 3000), seed=8, scale=1e4)  # e^x would overflow without subtracting the max
    check(big, 1, False, 2e-6)
    check(big, 1, True, 2e-6 * 1e4)
    allneg = tp.full((2, 5), float("-inf"))  # a fully masked row: NaN, as on the CPU (and in PyTorch)
    np.testing.assert_array_equal(np_of(tp.softmax(allneg.to(DEV), 1)), np_of(tp.softmax(allneg, 1)))
    assert np.isnan(np_of(tp.softmax(allneg.to(DEV), 1))).all()


@pytest.mark.parametrize("log", [False, True])
def test_alignment_and_many_rows(log):
    check(sample((5, 65), seed=10)[:, 1:], 1, log, 2e-6)  # rows start 4 bytes past 16-byte alignment
    check(sample((5, 1031), seed=11), 1, log, 2e-6)  # odd length on block16: single elements
    check(sample((40000, 8), tp.float16, seed=12), 1, log, 4e-3)  # more rows than the warp grid
    check(sample((34000, 300), seed=13), 1, log, 2e-6)  # warp32, grid-strided
    check(sample((140000, 40), tp.bfloat16, seed=14), 1, log, 3.2e-2)


def test_backward_matches_cpu():
    pytest.importorskip("tensorplay_tpx")
    from tensorplay_tpx.autograd import grad

    x, dy = sample((6, 300), seed=15), sample((6, 300), seed=16)
    for log in (False, True):
        grads = {}
        for dev in ("cpu", DEV):
            a = x.to(dev).requires_grad_(True)
            (grads[dev],) = grad((op(log)(a, 1) * dy.to(dev)).sum(), [a])
        assert grads[DEV].device.type == DEV
        np.testing.assert_allclose(np_of(grads[DEV]), np_of(grads["cpu"]), rtol=1e-5, atol=1e-5)
