"""The fast paths behind the CPU benchmarks, each against NumPy: the tiled copy of transposed matrices
(kernels/copy.cpp, Note [Transposed copies]), the 32-lane contiguous float32 sum (loop/reduce.h,
Note [Pairwise summation]) and the float32 normal sampler compiled for AVX2 (random/distributions.cpp),
which must keep PyTorch's stream bit for bit."""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(11)

DTYPES = [np.float32, np.float64, np.int64, np.int8, np.float16, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(32, 32), (33, 65), (100, 31), (31, 100), (257, 129), (1, 1000), (2, 3)])
def test_transposed_contiguous(dtype, shape):
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    t = tp.tensor(a).t()
    got = t.contiguous()
    assert got.is_contiguous() and got.shape == a.T.shape
    np.testing.assert_array_equal(got.numpy(), a.T)


def test_transposed_copies_of_views_and_into_transposed_destinations():
    a = rng.standard_normal((300, 200)).astype(np.float32)
    x = tp.tensor(a)
    # a strided slice, transposed: the source steps 2 rows and 3 columns
    np.testing.assert_array_equal(x[::2, ::3].t().contiguous().numpy(), a[::2, ::3].T)
    # a flipped (negative-stride) transposed source
    np.testing.assert_array_equal(x.flip(0).t().contiguous().numpy(), a[::-1].T)
    # writing a contiguous source into a transposed destination (copy_ tiles the other way round)
    dst = tp.zeros(200, 300).t()
    dst.copy_(x)
    np.testing.assert_array_equal(dst.numpy(), a)
    # with a dtype change on the way
    d64 = tp.zeros(200, 300, dtype=tp.float64).t()
    d64.copy_(x)
    np.testing.assert_array_equal(d64.numpy(), a.astype(np.float64))
    np.testing.assert_array_equal(x.t().to(tp.float64).contiguous().numpy(), a.T.astype(np.float64))
    # batched transposes coalesce to more than two dims and keep the plain walk
    b = rng.standard_normal((3, 40, 50)).astype(np.float32)
    np.testing.assert_array_equal(tp.tensor(b).transpose(1, 2).contiguous().numpy(), b.transpose(0, 2, 1))


def test_large_transposed_copy_any_thread_count():
    a = rng.standard_normal((1024, 1100)).astype(np.float32)
    for threads in (1, 2):
        old = tp.get_num_threads()
        tp.set_num_threads(threads)
        try:
            np.testing.assert_array_equal(tp.tensor(a).t().contiguous().numpy(), a.T)
        finally:
            tp.set_num_threads(old)


@pytest.mark.parametrize("n", [0, 1, 7, 31, 32, 33, 511, 512, 513, 1000, 4097, 100_003])
def test_contiguous_float32_sum_lengths(n):
    a = rng.standard_normal(n).astype(np.float32)
    got = tp.tensor(a).sum().item()
    want = a.astype(np.float64).sum()
    # pairwise with 32 lanes: a few rounding errors of the partial sums, independent of n
    assert abs(got - want) <= 1e-6 * (np.abs(a).sum() + 1), (got, want)
    np.testing.assert_allclose(tp.tensor(a).mean().item() if n else 0.0, want / n if n else 0.0, rtol=1e-5)


def test_float32_sum_rows_and_ill_conditioned_input():
    # rows: every row is one contiguous run
    a = rng.standard_normal((37, 1031)).astype(np.float32)
    np.testing.assert_allclose(tp.tensor(a).sum(1).numpy(), a.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    # many equal values: a naive running float sum of 2^24 + ... ones stops growing at 2^24
    ones = np.ones(20_000_000, np.float32)
    assert tp.tensor(ones).sum().item() == 20_000_000.0
    # NaN and inf propagate; nansum still skips NaN
    b = np.ones(1000, np.float32)
    b[500] = np.nan
    assert np.isnan(tp.tensor(b).sum().item()) and tp.tensor(b).nansum().item() == 999.0
    b[500] = np.inf
    assert tp.tensor(b).sum().item() == np.inf


def test_randn_float32_blocks_keep_their_values():
    # the vectorised block replays PyTorch's AVX2 kernel; on any CPU the values are N(0, 1) draws whose
    # statistics hold, and the same seed gives the same tensor for every length
    g = tp.Generator().manual_seed(123)
    x = tp.randn(1 << 20, generator=g).numpy()
    assert abs(x.mean()) < 5e-3 and abs(x.std() - 1) < 5e-3
    g.manual_seed(123)
    np.testing.assert_array_equal(tp.randn(1 << 20, generator=g).numpy(), x)
    g.manual_seed(123)
    # the first 984 values agree: n = 1000 redraws and redoes its last 16
    np.testing.assert_array_equal(tp.randn(1000, generator=g).numpy()[:984], x[:984])


def test_randn_matches_torch_bit_for_bit():
    torch = pytest.importorskip("torch")
    for n, dtype in [(1 << 20, "float32"), (100_007, "float32"), (4099, "float64"), (1000, "float16")]:
        torch.manual_seed(5)
        want = torch.randn(n, dtype=getattr(torch, dtype)).numpy()
        got = tp.randn(n, dtype=getattr(tp, dtype), generator=tp.Generator().manual_seed(5)).numpy()
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
