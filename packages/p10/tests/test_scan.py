"""Scans (kernels/scan.cpp): cumsum, cumprod, cummax, cummin, logcumsumexp vs NumPy and float64 references."""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(1)


def layouts(a):
    """The same values as contiguous, transposed-in-memory and strided-slice tensors."""
    yield "contiguous", tp.tensor(a)
    perm = tuple(reversed(range(a.ndim)))
    yield "transposed", tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(perm)
    big = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
    big[::2] = a
    yield "strided", tp.tensor(big)[::2]


def running_best(a, axis, is_max):
    """PyTorch's cummax/cummin rule: NaN or >= (<=) the best replaces it, so ties move to the latest index."""
    a = np.moveaxis(a, axis, -1)
    vals, idx = np.empty_like(a), np.empty(a.shape, np.int64)
    for pos in np.ndindex(a.shape[:-1]):
        best, bi = None, -1
        for k, v in enumerate(a[pos]):
            if bi < 0 or math.isnan(v) or (not math.isnan(best) and (v >= best if is_max else v <= best)):
                best, bi = v, k
            vals[pos + (k,)], idx[pos + (k,)] = best, bi
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("op,ref", [("cumsum", np.cumsum), ("cumprod", np.cumprod)])
def test_cumsum_cumprod_dims_and_layouts(op, ref, dim):
    a = rng.uniform(0.5, 1.5, (3, 4, 5))
    for name, x in layouts(a):
        got = getattr(x, op)(dim)
        assert got.shape == a.shape and got.dtype is tp.float64
        np.testing.assert_allclose(got.numpy(), ref(a, axis=dim), rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(getattr(tp, op)(x, dim=dim).numpy(), ref(a, axis=dim), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.bool_])
def test_integer_scans_are_int64(dtype):
    a = rng.integers(0, 3, (4, 6)).astype(dtype)
    x = tp.tensor(a)
    assert x.cumsum(1).dtype is tp.int64 and x.cumprod(0).dtype is tp.int64
    np.testing.assert_array_equal(x.cumsum(1).numpy(), np.cumsum(a.astype(np.int64), 1))
    np.testing.assert_array_equal(x.cumprod(0).numpy(), np.cumprod(a.astype(np.int64), 0))
    assert x.cumsum(0, dtype=tp.float32).dtype is tp.float32
    assert tp.tensor(np.array([100, 100], np.int8)).cumsum(0, dtype=tp.int8).tolist() == [100, -56]


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.complex64])
def test_other_dtypes(dtype):
    a = rng.uniform(0.5, 1.5, (3, 50))
    x = tp.tensor(a).to(dtype=dtype)
    ref = x.to(dtype=tp.complex128 if dtype is tp.complex64 else tp.float64).numpy()
    got = x.cumsum(1)
    assert got.dtype is dtype
    tol = 1e-5 if dtype is tp.complex64 else 1e-2
    out = got.to(dtype=tp.complex128 if dtype is tp.complex64 else tp.float64).numpy()
    np.testing.assert_allclose(out, np.cumsum(ref, 1), rtol=tol)


def test_size0_size1_0d():
    assert tp.zeros(0, 3).cumsum(0).shape == (0, 3) and tp.zeros(3, 0).cumprod(1).shape == (3, 0)
    assert tp.tensor([[2.0, 3.0]]).cumsum(0).tolist() == [[2.0, 3.0]]
    s = tp.tensor(4.0)
    assert s.cumsum(0).shape == () and s.cumsum(-1).item() == 4.0 and s.cumprod(0).item() == 4.0
    v, i = s.cummax(0)
    assert v.item() == 4.0 and i.item() == 0
    v, i = tp.zeros(0).cummin(0)
    assert v.shape == i.shape == (0,)
    with pytest.raises(IndexError, match=r"cumsum: Dimension out of range"):
        tp.zeros(2, 3).cumsum(2)


def test_large_float32_cumsum_accumulates_in_double():
    a = rng.random(3_000_000, dtype=np.float32)
    got = tp.tensor(a).cumsum(0).numpy()
    want = np.cumsum(a.astype(np.float64))
    assert np.max(np.abs(got - want) / want) < 1e-6  # a float32 running sum drifts by ~1e-4 here
    b = rng.standard_normal((600, 2000)).astype(np.float32)  # threaded over outer blocks and inner tiles
    np.testing.assert_allclose(
        tp.tensor(b).cumsum(0).numpy(), np.cumsum(b.astype(np.float64), 0), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        tp.tensor(b).cumsum(1).numpy(), np.cumsum(b.astype(np.float64), 1), rtol=1e-4, atol=1e-4
    )


def test_cumsum_out():
    a = rng.standard_normal((3, 4))
    out = tp.empty(0, dtype=tp.float64)
    r = tp.cumsum(tp.tensor(a), 1, out=out)
    assert r is out and out.shape == (3, 4)
    np.testing.assert_allclose(out.numpy(), np.cumsum(a, 1))


@pytest.mark.parametrize("op,is_max,npacc", [("cummax", True, np.maximum), ("cummin", False, np.minimum)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cummax_cummin(op, is_max, npacc, dim):
    a = rng.integers(-3, 3, (4, 5, 6)).astype(np.float32)  # ties: the index moves to the latest one
    for name, x in layouts(a):
        r = getattr(x, op)(dim)
        assert type(r).__name__ == op and repr(r).startswith(f"tensorplay.return_types.{op}(values=")
        np.testing.assert_array_equal(r.values.numpy(), npacc.accumulate(a, axis=dim), err_msg=name)
        np.testing.assert_array_equal(r.indices.numpy(), running_best(a, dim, is_max)[1], err_msg=name)


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.bool_, np.float64])
def test_cummax_dtypes(dtype):
    a = rng.integers(0, 4, (3, 7)).astype(dtype)
    v, i = tp.tensor(a).cummax(1)
    assert v.dtype is tp.tensor(a).dtype and i.dtype is tp.int64
    np.testing.assert_array_equal(v.numpy(), np.maximum.accumulate(a, 1))
    np.testing.assert_array_equal(i.numpy(), running_best(a.astype(np.float64), 1, True)[1])


def test_cummax_nan():
    a = np.array([1.0, 3.0, 3.0, np.nan, 2.0, np.nan, 5.0], np.float32)
    v, i = tp.tensor(a).cummax(0)
    assert v.tolist()[:3] == [1.0, 3.0, 3.0] and all(math.isnan(t) for t in v.tolist()[3:])
    assert i.tolist() == [0, 1, 2, 3, 3, 5, 5]  # PyTorch gives the same
    v, i = tp.tensor(a).cummin(0)
    assert i.tolist() == [0, 0, 0, 3, 3, 5, 5]


def ref_logcumsumexp(a, axis):
    return np.logaddexp.accumulate(a.astype(np.float64), axis=axis)


@pytest.mark.parametrize("dim", [0, -1])
def test_logcumsumexp(dim):
    a = (rng.standard_normal((4, 30)) * 40).astype(np.float32)
    for name, x in layouts(a):
        np.testing.assert_allclose(
            x.logcumsumexp(dim).numpy(), ref_logcumsumexp(a, dim), rtol=1e-6, err_msg=name
        )
    inf = math.inf
    x = tp.tensor([-inf, -inf, 1000.0, 1000.0, inf, 2.0])
    got = x.logcumsumexp(0).tolist()
    assert got[:2] == [-inf, -inf] and got[2] == 1000.0 and got[3] == pytest.approx(1000 + math.log(2))
    assert got[4:] == [inf, inf]
    assert math.isnan(tp.tensor([1.0, math.nan, 2.0]).logcumsumexp(0).tolist()[2])
    with pytest.raises(NotImplementedError, match="logcumsumexp"):
        tp.tensor([1, 2]).logcumsumexp(0)


def test_meta():
    m = tp.empty(2, 3, device="meta")
    assert m.cumsum(1).shape == (2, 3) and m.cumsum(1).device.type == "meta"
    assert tp.empty(2, dtype=tp.int32, device="meta").cumprod(0).dtype is tp.int64
    v, i = m.cummin(0)
    assert v.shape == i.shape == (2, 3) and i.dtype is tp.int64
    assert m.logcumsumexp(0).shape == (2, 3)


def test_against_torch_when_installed():
    torch = pytest.importorskip("torch")
    a = rng.integers(-2, 2, (5, 8)).astype(np.float32)
    a[1, 3] = np.nan
    for d in (0, 1):
        for op in ("cummax", "cummin"):
            v, i = getattr(tp.tensor(a), op)(d)
            tv, ti = getattr(torch.tensor(a), op)(d)
            np.testing.assert_array_equal(v.numpy(), tv.numpy())
            np.testing.assert_array_equal(i.numpy(), ti.numpy())
        np.testing.assert_allclose(
            tp.tensor(a).logcumsumexp(d).numpy(), torch.tensor(a).logcumsumexp(d).numpy()
        )
