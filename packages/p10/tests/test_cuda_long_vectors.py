"""Reductions and scans of long vectors on the GPU, the paths the bandwidth benchmarks time
(benchmarks/cuda_reduce.py), against the CPU op and a float64 NumPy reference.

Covered: amax/amin, argmax/argmin (max.dim values too), var/std/var_mean and sum of a whole vector, long
enough to be split over one wave of blocks (ops_reduce_plan.cpp; lengths around the split threshold of 32768,
not multiples of the 4-vector batch, misaligned starts); argmax's ordered steps (Note [Steps in index order]
in reduce_common.cuh): ties everywhere, every element the lowest value (-inf, the smallest integer, all
False) where the answer is index 0, NaN first and NaN ties; and cumsum/cumprod/cummax of one long row across
full and partial chunks (Note [Scan chunk phases] in scan.cu), misaligned, in float32, float64 and int32.
TP_CUDA_TEST_DEVICE=cpu runs the same checks with the CPU op alone (to check the tests, not the kernels).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, f64, needs_device  # noqa: E402

pytestmark = needs_device

# Around the split threshold (32768), a few batches of 4 16-byte vectors per thread, odd lengths.
LENGTHS = [32767, 32768, 32768 + 13, 1 << 20, 3_000_001]


def vec(n, dtype=tp.float32, seed=0, lo=-3, hi=3):
    """n small integers in [lo, hi] as `dtype`: few distinct values (ties), and sums exact in any order."""
    return tp.from_numpy(np.random.default_rng(seed).integers(lo, hi + 1, n).astype(np.float64)).to(dtype)


# ---- max / min and their indices ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.int32, tp.int8, tp.float64], ids=str)
def test_argmax_of_a_long_vector_with_ties(n, dtype):
    x = vec(n, dtype, seed=n)  # 7 distinct values: the extreme appears thousands of times
    a = f64(x)
    for t, ref in ((x.to(DEV), a), (x.to(DEV)[1:], a[1:]), (x.to(DEV)[3:-2], a[3:-2])):  # misaligned starts
        assert f64(t.argmax())[()] == np.argmax(ref)
        assert f64(t.argmin())[()] == np.argmin(ref)
        assert f64(t.amax())[()] == ref.max() and f64(t.amin())[()] == ref.min()
        v, i = t.max(0)
        assert f64(i)[()] == np.argmax(ref) and f64(v)[()] == ref.max()


@pytest.mark.parametrize("n", [5, 40000, 1 << 20])
def test_argmax_when_every_element_is_the_lowest_value(n):
    # The identity's index survives every ordered step; finish() answers 0 (Note [NaN and first index on the
    # device] in reduce_order.cu).
    cases = [
        (tp.full((n,), float("-inf")), "argmax"),
        (tp.full((n,), float("inf")), "argmin"),
        (tp.full((n,), -128, dtype=tp.int8), "argmax"),
        (tp.full((n,), 127, dtype=tp.int8), "argmin"),
        (tp.full((n,), -(2**63), dtype=tp.int64), "argmax"),
        (tp.zeros(n, dtype=tp.bool), "argmax"),
        (tp.ones(n, dtype=tp.bool), "argmin"),
    ]
    for x, name in cases:
        got, cpu = getattr(x.to(DEV), name)(), getattr(x, name)()
        assert f64(got)[()] == f64(cpu)[()] == 0, (x.dtype, name)
        v, i = x.to(DEV).max(0) if name == "argmax" else x.to(DEV).min(0)
        assert f64(i)[()] == 0 and f64(v)[()] == f64(x)[0]
    # the lowest value first, a larger one later: that one
    x = tp.full((n,), float("-inf"))
    x[n - 1] = -1e30
    assert f64(x.to(DEV).argmax())[()] == n - 1
    rows = tp.full((3, n), float("-inf"))  # and per row, with columns (dim 0) too
    assert f64(rows.to(DEV).argmax(1)).tolist() == [0, 0, 0]
    assert (f64(rows.to(DEV).argmax(0)) == 0).all()


@pytest.mark.parametrize("n", [40000, 3_000_001])
def test_nan_first_and_nan_ties_in_long_vectors(n):
    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    a[[n // 3, n // 2, n - 1]] = np.nan
    x = tp.from_numpy(a).to(DEV)
    for name in ("argmax", "argmin"):
        assert f64(getattr(x, name)())[()] == n // 3
    assert np.isnan(f64(x.amax())[()]) and np.isnan(f64(x.amin())[()])
    v, i = x.max(0)
    assert f64(i)[()] == n // 3 and np.isnan(f64(v)[()])
    a[: n // 3 + 1] = 1.0  # the first NaN gone: the next one
    assert f64(tp.from_numpy(a).to(DEV).argmax())[()] == n // 2


# ---- var / std / sum ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.float16], ids=str)
def test_var_std_sum_of_a_long_vector(n, dtype):
    rng = np.random.default_rng(n)
    a = (100.0 + rng.standard_normal(n)).astype(np.float64)  # an offset: Welford keeps the digits
    x = tp.from_numpy(a).to(dtype)
    a = f64(x)
    tol = {tp.float32: 2e-5, tp.float64: 1e-12, tp.float16: 2e-3}[dtype]
    for t, ref in ((x.to(DEV), a), (x.to(DEV)[1:], a[1:])):
        np.testing.assert_allclose(f64(t.var()), ref.var(ddof=1), rtol=tol)
        np.testing.assert_allclose(f64(tp.var(t, correction=0)), ref.var(), rtol=tol)
        np.testing.assert_allclose(f64(t.std()), ref.std(ddof=1), rtol=tol)
        v, m = tp.var_mean(t)
        np.testing.assert_allclose(f64(v), ref.var(ddof=1), rtol=tol)
        np.testing.assert_allclose(f64(m), ref.mean(), rtol=tol)
        np.testing.assert_allclose(f64(t.to(tp.float32).sum()), ref.sum(), rtol=1e-5)


# ---- scans of one long row ---------------------------------------------------------------------------------
# Chunks of 4096 elements (2048 for cummax/cummin): exact multiples, one element more or less, a partial last
# chunk, many chunks.
SCAN_LENGTHS = [4095, 4096, 4097, 3 * 4096, 100_003, 1 << 21]


@pytest.mark.parametrize("n", SCAN_LENGTHS)
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.float16, tp.int32, tp.int64], ids=str)
def test_cumsum_of_one_long_row(n, dtype):
    # Small integers: every running sum is exact. float16 (integers exact up to 2048): each odd element
    # cancels the one before it, so the running sums stay in [-5, 5].
    x = vec(n, dtype, seed=n, lo=-5, hi=5)
    if dtype is tp.float16:
        a = f64(x)
        a[1::2] = -a[0 : n - n % 2 : 2]
        x = tp.from_numpy(a).to(dtype)
    a = f64(x)
    for t, ref in ((x.to(DEV), a), (x.to(DEV)[1:], a[1:]), (x.to(DEV)[5:-3], a[5:-3])):  # misaligned starts
        got = tp.cumsum(t, 0)
        assert got.dtype is (tp.int64 if dtype is tp.int32 else dtype)
        np.testing.assert_array_equal(f64(got), np.cumsum(ref))


@pytest.mark.parametrize("n", [2047, 2048, 2049, 100_003])
def test_cumprod_cummax_of_one_long_row(n):
    rng = np.random.default_rng(n)
    p = tp.from_numpy(rng.uniform(0.999, 1.001, n))
    np.testing.assert_allclose(f64(tp.cumprod(p.to(DEV), 0)), np.cumprod(f64(p)), rtol=1e-10)
    x = tp.from_numpy(rng.integers(-50, 50, n).astype(np.float32))
    v, i = tp.cummax(x.to(DEV), 0)
    cv, ci = tp.cummax(x, 0)
    np.testing.assert_array_equal(f64(v), f64(cv))
    np.testing.assert_array_equal(f64(i), f64(ci))
