"""median, nanmedian, mode, quantile and nanquantile on the GPU (csrc/cuda/ops_order_stats.cpp,
cuda_kernels/order_stats.cu on top of sort.cu's row sort).

Each op is compared exactly with the CPU op (values and indices) and with a NumPy reference (np.lexsort for
the lower median and its index, np.unique counts for mode, np.quantile / np.nanquantile with a float
tolerance). GPU only: elsewhere these skip with "needs a CUDA device".
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, equal, needs_cuda, np_of  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


NUMERIC = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64]


def data(shape, dtype, seed=0, nan=0.0) -> tp.Tensor:
    """Values with ties; floats get a fraction `nan` of NaNs and a few -0.0."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(rng.random(shape) < 0.5)
    if dtype is tp.uint8:
        return tp.from_numpy(rng.integers(0, 10, size=shape).astype(np.uint8))
    if dtype in (tp.int8, tp.int16, tp.int32, tp.int64):
        return tp.from_numpy(rng.integers(-5, 5, size=shape)).to(dtype)
    a = rng.integers(-8, 8, size=shape).astype(np.float64) / 2
    a[rng.random(shape) < 0.05] = -0.0
    a[rng.random(shape) < nan] = np.nan
    return tp.from_numpy(a).to(dtype)


def ref_median(a: np.ndarray, ignore_nan: bool):
    """Lower median along the last axis with its index (the CPU's choice among ties: the lowest index)."""
    a = a.astype(np.float64)
    vals, idxs = [], []
    for r in a.reshape(-1, a.shape[-1]):
        nan = np.isnan(r)
        order = np.lexsort((np.where(nan, 0.0, r) + 0.0, nan))
        m = int((~nan).sum())
        if nan.any() and (not ignore_nan or m == 0):
            pos = m  # the first NaN in index order
        else:
            pos = (m - 1) // 2
        vals.append(r[order[pos]])
        idxs.append(order[pos])
    return np.array(vals).reshape(a.shape[:-1]), np.array(idxs).reshape(a.shape[:-1])


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_dim(dtype, op):
    f = getattr(tp, op)
    for shape, dim, keepdim in [
        ((5, 9), 1, False),
        ((4, 6, 5), 0, True),
        ((3, 5001), -1, False),
        ((7, 1), 1, False),
    ]:
        x = data(shape, dtype, nan=0.1)
        v, i = f(x.to(DEV), dim, keepdim)
        cv, ci = f(x, dim, keepdim)
        equal(v, cv)
        equal(i, ci)
        rv, ri = ref_median(np.moveaxis(np_of(x), dim, -1), op == "nanmedian")
        if keepdim:
            rv, ri = np.expand_dims(rv, dim), np.expand_dims(ri, dim)
        np.testing.assert_array_equal(np_of(i), ri)
        np.testing.assert_array_equal(np_of(v), rv.astype(np_of(v).dtype))


@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_all_and_all_nan_rows(op):
    f = getattr(tp, op)
    for x in [
        data((6, 7), tp.float32),
        data((6, 7), tp.float32, nan=0.2),
        data((5000,), tp.int32),
        tp.tensor([float("nan"), float("nan")]),
        tp.tensor(2.0),
        tp.tensor([], dtype=tp.float32),
    ]:
        equal(f(x.to(DEV)), f(x))
    x = tp.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), float("nan")]])
    equal(f(x.to(DEV), 1)[0], f(x, 1)[0])
    equal(f(x.to(DEV), 1)[1], f(x, 1)[1])
    with pytest.raises(RuntimeError):
        f(tp.tensor([True, False]).to(DEV))
    with pytest.raises((RuntimeError, IndexError)):
        f(tp.zeros(0, 3).to(DEV), 0)  # an empty reduction has no median


@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int64, tp.float16, tp.float32], ids=str)
def test_mode(dtype):
    for shape, dim, keepdim in [((6, 30), 1, False), ((20, 4), 0, True), ((2, 6000), -1, False)]:
        x = data(shape, dtype, seed=3)
        v, i = tp.mode(x.to(DEV), dim, keepdim)
        cv, ci = tp.mode(x, dim, keepdim)
        equal(v, cv)
        equal(i, ci)
        a = np.moveaxis(np_of(x), dim, -1).astype(np.float64)
        for r, vv, ii in zip(
            a.reshape(-1, a.shape[-1]), np_of(v).reshape(-1), np_of(i).reshape(-1), strict=True
        ):
            u, c = np.unique(r, return_counts=True)
            best = u[np.argmax(c)]  # the smallest of the most frequent
            assert vv == best and ii == np.nonzero(r == best)[0][-1]  # its last occurrence


INTERP = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64], ids=str)
@pytest.mark.parametrize("interpolation", INTERP)
def test_quantile(dtype, interpolation):
    x = data((5, 37), dtype, seed=4)
    xn = data((5, 37), dtype, seed=5, nan=0.15)
    q = tp.tensor([0.0, 0.1, 0.25, 0.5, 0.77, 1.0], dtype=dtype)
    rtol = 1e-6 if dtype is tp.float32 else 1e-12
    cases = [(x, None, False), (x, 1, False), (x, 0, True), (x, None, True), (xn, 1, False)]
    for t, dim, keepdim in cases:
        for op, npf in [("quantile", np.quantile), ("nanquantile", np.nanquantile)]:
            f = getattr(tp, op)
            r = f(t.to(DEV), q.to(DEV), dim, keepdim, interpolation=interpolation)
            equal(r, f(t, q, dim, keepdim, interpolation=interpolation))
            ref = npf(
                np_of(t).astype(np.float64),
                np_of(q).astype(np.float64),
                axis=dim,
                keepdims=keepdim,
                method=interpolation,
            )
            np.testing.assert_allclose(np_of(r), ref, rtol=rtol, atol=1e-12)
            s = f(t.to(DEV), 0.3, dim, keepdim, interpolation=interpolation)  # quantile.scalar
            equal(s, f(t, 0.3, dim, keepdim, interpolation=interpolation))


def test_quantile_long_rows_and_errors():
    x = data((3, 9000), tp.float32, seed=6)
    q = tp.tensor([0.2, 0.9])
    equal(tp.quantile(x.to(DEV), q.to(DEV), 1), tp.quantile(x, q, 1))
    equal(tp.quantile(tp.tensor(4.0).to(DEV), 0.5), tp.quantile(tp.tensor(4.0), 0.5))
    xc = x.to(DEV)
    with pytest.raises(RuntimeError, match="range"):
        tp.quantile(xc, 1.5)
    with pytest.raises(RuntimeError, match="range"):
        tp.quantile(xc, tp.tensor([0.5, -0.1]).to(DEV))
    with pytest.raises(RuntimeError, match="float or double"):
        tp.quantile(xc.to(tp.int32), 0.5)
    with pytest.raises(RuntimeError, match="same dtype"):
        tp.quantile(xc, tp.tensor([0.5], dtype=tp.float64).to(DEV))
    with pytest.raises(ValueError, match="interpolation"):
        tp.quantile(xc, 0.5, interpolation="cubic")
