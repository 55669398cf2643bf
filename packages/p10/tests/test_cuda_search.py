"""unique, unique_consecutive, searchsorted (and bucketize over it), histc and bincount on the GPU
(csrc/cuda/ops_search.cpp, cuda_kernels/search.cu).

Each op is compared with the CPU op and with NumPy (np.unique, np.searchsorted, np.histogram, np.bincount),
including the error paths (the same exception types as the CPU op). GPU only: elsewhere these skip with "needs
a CUDA device".
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, REAL, needs_cuda, np_of  # noqa: E402
from cuda_testing import equal as same

pytestmark = [pytest.mark.cuda, needs_cuda]


def data(shape, dtype, seed=0) -> tp.Tensor:
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(np.asarray(rng.random(shape) < 0.5))
    if dtype is tp.uint8:
        return tp.from_numpy(np.asarray(rng.integers(0, 10, size=shape), dtype=np.uint8))
    if dtype in (tp.int8, tp.int16, tp.int32, tp.int64):
        return tp.from_numpy(np.asarray(rng.integers(-5, 5, size=shape))).to(dtype)
    return tp.from_numpy(np.asarray(rng.integers(-8, 8, size=shape) / 2, dtype=np.float64)).to(dtype)


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_unique_matches_cpu_and_numpy(dtype):
    for shape in [(7, 9), (20000,), (1,), ()]:
        x = data(shape, dtype)
        got = tp.unique(x.to(DEV), return_inverse=True, return_counts=True)
        for g, c in zip(got, tp.unique(x, return_inverse=True, return_counts=True), strict=True):
            same(g, c)
        u, inv, cnt = np.unique(np_of(x), return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(np_of(got[0]), u)
        np.testing.assert_array_equal(np_of(got[1]).reshape(-1), inv.reshape(-1))
        np.testing.assert_array_equal(np_of(got[2]), cnt)
        same(tp.unique(x.to(DEV)), tp.unique(x))


def test_unique_nan_zero_sign_and_layouts():
    x = tp.tensor([[2.0, float("nan"), -0.0], [0.0, float("nan"), 2.0]])
    for xx in (x, x.t(), x[:, ::2]):
        for g, c in zip(
            tp.unique(xx.to(DEV), return_inverse=True, return_counts=True),
            tp.unique(xx, return_inverse=True, return_counts=True),
            strict=True,
        ):
            same(g, c)  # every NaN its own value; -0.0 and 0.0 one value
    e = tp.tensor([], dtype=tp.int64)
    for g, c in zip(
        tp.unique(e.to(DEV), return_inverse=True, return_counts=True),
        tp.unique(e, return_inverse=True, return_counts=True),
        strict=True,
    ):
        same(g, c)


@pytest.mark.parametrize("dtype", [tp.bool, tp.int32, tp.float16, tp.float32], ids=str)
def test_unique_consecutive(dtype):
    x = data((3000,), dtype, seed=1)
    x = tp.from_numpy(np.repeat(np_of(x)[:1000], 3)).to(dtype)  # runs of 3 and longer
    for g, c in zip(
        tp.unique_consecutive(x.to(DEV), return_inverse=True, return_counts=True),
        tp.unique_consecutive(x, return_inverse=True, return_counts=True),
        strict=True,
    ):
        same(g, c)


@pytest.mark.parametrize("dtype", [tp.int64, tp.float16, tp.float32, tp.float64], ids=str)
def test_searchsorted(dtype):
    rng = np.random.default_rng(2)
    seq = tp.from_numpy(np.sort(rng.integers(-20, 20, 50)).astype(np.float64)).to(dtype)
    vals = tp.from_numpy(rng.integers(-25, 25, (4, 7)).astype(np.float64)).to(dtype)
    for right in (False, True):
        got = tp.searchsorted(seq.to(DEV), vals.to(DEV), right=right)
        same(got, tp.searchsorted(seq, vals, right=right))
        ref = np.searchsorted(np_of(seq), np_of(vals), side="right" if right else "left")
        np.testing.assert_array_equal(np_of(got), ref)
        side = "right" if right else "left"
        same(tp.searchsorted(seq.to(DEV), vals.to(DEV), side=side), tp.searchsorted(seq, vals, side=side))
        same(tp.searchsorted(seq.to(DEV), 3, right=right), tp.searchsorted(seq, 3, right=right))  # .Scalar
        same(tp.bucketize(vals.to(DEV), seq.to(DEV), right=right), tp.bucketize(vals, seq, right=right))
    # N-D sequences (rows matched with the values' leading dims), int32 output, a mixed dtype
    seq2 = tp.from_numpy(np.sort(rng.standard_normal((4, 30)), 1)).to(dtype)
    same(
        tp.searchsorted(seq2.to(DEV), vals.to(DEV), out_int32=True),
        tp.searchsorted(seq2, vals, out_int32=True),
    )
    same(tp.searchsorted(seq2.to(DEV), vals.to(DEV).int()), tp.searchsorted(seq2, vals.int()))


def test_searchsorted_sorter_nan_and_errors():
    seq = tp.tensor([3.0, float("nan"), 1.0, 2.0, 2.0])
    sorter = tp.argsort(seq)
    vals = tp.tensor([0.0, 2.0, 2.5, float("nan"), 9.0])
    for right in (False, True):
        same(
            tp.searchsorted(seq.to(DEV), vals.to(DEV), right=right, sorter=sorter.to(DEV)),
            tp.searchsorted(seq, vals, right=right, sorter=sorter),
        )
    s, v = seq.to(DEV), vals.to(DEV)
    with pytest.raises(RuntimeError, match="side"):
        tp.searchsorted(s, v, right=True, side="left")
    with pytest.raises(RuntimeError, match="side"):
        tp.searchsorted(s, v, side="middle")
    with pytest.raises(IndexError, match="out of bounds"):
        tp.searchsorted(s, v, sorter=tp.tensor([0, 1, 2, 3, 7]).to(DEV))
    with pytest.raises(RuntimeError, match="int64"):
        tp.searchsorted(s, v, sorter=sorter.int().to(DEV))
    with pytest.raises(RuntimeError, match="boundaries"):
        tp.searchsorted(tp.zeros(2, 3).to(DEV), tp.zeros(3, 3).to(DEV))
    same(tp.searchsorted(s, tp.zeros(0).to(DEV)), tp.searchsorted(seq, tp.zeros(0)))


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_histc(dtype):
    x = tp.from_numpy(np.random.default_rng(3).standard_normal(10000)).to(dtype)
    for bins, lo, hi in [(10, -2.0, 2.0), (7, 0, 0), (1, -1.0, 1.0), (100, 0.5, 3.0)]:
        got = tp.histc(x.to(DEV), bins, lo, hi)
        same(got, tp.histc(x, bins, lo, hi))
        a = np_of(x).astype(np.float64)
        rng_ = (a.min(), a.max()) if lo == hi else (lo, hi)
        ref, _ = np.histogram(a, bins, rng_)
        # NumPy's bin edges round differently at the borders; 16-bit counts are rounded to the dtype
        np.testing.assert_allclose(
            np_of(got), ref, rtol=1e-2 if dtype in (tp.float16, tp.bfloat16) else 0, atol=1
        )
    same(tp.histc(x.to(DEV)[:0], 5), tp.histc(x[:0], 5))


def test_histc_nan_constant_and_errors():
    for x in [tp.tensor([1.0, float("nan"), 3.0, 2.0]), tp.tensor([5.0, 5.0]), tp.tensor([1.0, 9.0])]:
        same(tp.histc(x.to(DEV), 4), tp.histc(x, 4))
    for bad in [tp.tensor([float("nan"), 1.0])]:
        with pytest.raises(RuntimeError, match="max must be larger than min"):
            tp.histc(bad.to(DEV), 4)
    with pytest.raises(RuntimeError):
        tp.histc(tp.tensor([1, 2]).to(DEV), 4)
    with pytest.raises(RuntimeError, match="bins"):
        tp.histc(tp.tensor([1.0]).to(DEV), 0)
    with pytest.raises(RuntimeError, match="not finite"):
        tp.histc(tp.tensor([1.0]).to(DEV), 3, 0, float("inf"))


def test_bincount():
    rng = np.random.default_rng(4)
    x = tp.from_numpy(rng.integers(0, 40, 5000))
    w32 = tp.from_numpy(rng.random(5000).astype(np.float32))
    for dtype in (tp.uint8, tp.int32, tp.int64):
        xx = x.to(dtype)
        same(tp.bincount(xx.to(DEV)), tp.bincount(xx))
        same(tp.bincount(xx.to(DEV), minlength=100), tp.bincount(xx, minlength=100))
    np.testing.assert_array_equal(np_of(tp.bincount(x.to(DEV))), np.bincount(np_of(x)))
    got = tp.bincount(x.to(DEV), w32.to(DEV))
    assert got.dtype is tp.float32
    np.testing.assert_allclose(np_of(got), np_of(tp.bincount(x, w32)), rtol=1e-6)  # atomics: any order
    np.testing.assert_allclose(np_of(got), np.bincount(np_of(x), np_of(w32).astype(np.float64)), rtol=1e-6)
    wi = tp.from_numpy(rng.integers(0, 5, 5000))
    same(tp.bincount(x.to(DEV), wi.to(DEV)), tp.bincount(x, wi))  # integer weights: float64 sums, exact
    same(tp.bincount(tp.tensor([], dtype=tp.int64).to(DEV)), tp.bincount(tp.tensor([], dtype=tp.int64)))
    with pytest.raises(RuntimeError, match="non-negative"):
        tp.bincount(tp.tensor([1, -3, 2, -1]).to(DEV))
    with pytest.raises(RuntimeError, match="1-d"):
        tp.bincount(tp.zeros(2, 2, dtype=tp.int64).to(DEV))
    with pytest.raises(RuntimeError, match="1-d"):
        tp.bincount(tp.tensor([1.0]).to(DEV))
    with pytest.raises(RuntimeError, match="minlength"):
        tp.bincount(x.to(DEV), minlength=-1)
    with pytest.raises(RuntimeError, match="weights"):
        tp.bincount(x.to(DEV), w32[:10].to(DEV))
