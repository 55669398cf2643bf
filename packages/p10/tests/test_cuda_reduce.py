"""Reductions on the GPU (csrc/cuda/ops_reduce_{sums,order}.cpp): nansum, nanmean, prod, all, any,
count_nonzero, the out= forms of sum/mean/prod, and max/min/amax/amin/aminmax/argmax/argmin.

Every op is compared with the CPU op and with a float64 NumPy reference, over the layouts the plan takes
(contiguous rows, columns, transposed, a copy, rows and columns long enough to be split over blocks), the
dtypes the CPU op takes, size-0/size-1 dims and 0-d tensors, and the errors. Needs a GPU.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import FLOATS, INTS, close_to_cpu, f64, needs_cuda, same  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


TOL = {tp.float16: 2e-3, tp.bfloat16: 1.6e-2, tp.float32: 1e-5, tp.float64: 1e-12}
DIMS = [(None, False), (0, False), (1, True), (-1, False), ((0, 2), True)]


def make(shape, dtype, seed=0, nan=False) -> tp.Tensor:
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(rng.integers(0, 2, shape).astype(np.bool_))
    if dtype in INTS:
        a = rng.integers(0, 5, shape) if dtype is tp.uint8 else rng.integers(-4, 5, shape)
        return tp.from_numpy(a.astype(np.int64)).to(dtype)
    a = rng.standard_normal(shape)
    if nan:
        a[rng.random(shape) < 0.2] = np.nan
    return tp.from_numpy(a).to(dtype)


def np_axis(dim):
    return None if dim is None else dim


# ---- sums --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim,keepdim", DIMS)
def test_nansum_nanmean(dtype, dim, keepdim):
    x = make((5, 33, 7), dtype, 1, nan=True)
    a = f64(x)
    kw = {} if dim is None else {"dim": dim}
    for name, ref in (("nansum", np.nansum), ("nanmean", np.nanmean)):
        got = getattr(x.cuda(), name)(**kw, keepdim=keepdim)
        with warnings.catch_warnings():  # np.nanmean warns on all-NaN slices
            warnings.simplefilter("ignore")
            want = ref(a, axis=np_axis(dim), keepdims=keepdim)
        close_to_cpu(got, getattr(x, name)(**kw, keepdim=keepdim), want, 4 * TOL[dtype])


def test_nansum_of_integers_is_the_sum_and_nanmean_of_all_nan_is_nan():
    i = make((4, 6), tp.int32, 2)
    assert tp.nansum(i.cuda(), 1).dtype is tp.int64
    np.testing.assert_array_equal(f64(tp.nansum(i.cuda(), 1)), f64(i).sum(1))
    x = tp.full((3, 4), float("nan")).cuda()
    assert np.isnan(f64(tp.nanmean(x, 1))).all() and (f64(tp.nansum(x, 1)) == 0).all()


@pytest.mark.parametrize("dtype", FLOATS + INTS + [tp.bool], ids=str)
def test_prod(dtype):
    rng = np.random.default_rng(3)
    if dtype in FLOATS:
        x = tp.from_numpy(rng.uniform(0.5, 1.5, (4, 9, 5))).to(dtype)
    else:
        x = make((4, 9, 5), dtype, 3)
    for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": -1, "dtype": tp.float64}):
        got, cpu = x.cuda().prod(**kw), x.prod(**kw)
        axis = kw.get("dim")
        want = f64(x).prod(axis=axis, keepdims=kw.get("keepdim", False))
        tol = 8 * TOL.get(cpu.dtype, 0.0) if cpu.dtype in FLOATS else 0.0
        close_to_cpu(got, cpu, want, tol)


def test_prod_out_and_sum_mean_out():
    x = make((6, 5), tp.float32, 4)
    out = tp.empty(6).cuda()
    r = tp.prod(x.cuda(), 1, out=out)
    assert r is out or r.data_ptr() == out.data_ptr()
    np.testing.assert_allclose(f64(out), f64(x).prod(1), rtol=1e-5)
    o64 = tp.empty(5, dtype=tp.float64).cuda()
    tp.sum(x.cuda(), 0, out=o64)  # the out dtype is the dtype the sum is taken in (as on the CPU)
    np.testing.assert_allclose(f64(o64), f64(x.to(tp.float64).sum(0)), rtol=1e-12)
    om = tp.empty(0).cuda()  # resized, as on the CPU
    tp.mean(x.cuda(), 1, out=om)
    assert tuple(om.shape) == (6,)
    np.testing.assert_allclose(f64(om), f64(x).mean(1), rtol=1e-5)
    oi = tp.empty(5, dtype=tp.int32).cuda()  # the sum is taken in int32, as on the CPU
    np.testing.assert_array_equal(
        f64(tp.sum(x.cuda(), 0, out=oi)), f64(tp.sum(x, 0, out=tp.empty(5, dtype=tp.int32)))
    )
    if x.cuda().device.type == "cuda":
        with pytest.raises(RuntimeError):
            tp.sum(x.cuda(), 0, out=tp.empty(5))  # out on the CPU


@pytest.mark.parametrize("dtype", FLOATS + INTS + [tp.bool], ids=str)
def test_all_any_count_nonzero(dtype):
    x = make((6, 7, 3), dtype, 5)
    if dtype in FLOATS:
        x = x * (make((6, 7, 3), tp.bool, 6).to(dtype))  # zeros in it
    a = f64(x) != 0
    for kw in ({}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}):
        for name, ref in (("all", np.all), ("any", np.any)):
            got, cpu = getattr(x.cuda(), name)(**kw), getattr(x, name)(**kw)
            assert got.dtype is (tp.uint8 if dtype is tp.uint8 else tp.bool)
            close_to_cpu(got, cpu, ref(a, axis=kw.get("dim"), keepdims=kw.get("keepdim", False)))
    for dim in (None, 1, (0, 2)):
        kw = {} if dim is None else {"dim": dim}
        close_to_cpu(tp.count_nonzero(x.cuda(), **kw), tp.count_nonzero(x, **kw), a.sum(axis=dim))


def test_all_any_nan_is_true_and_empty_rows():
    x = tp.tensor([[float("nan"), 0.0], [1.0, 2.0]]).cuda()
    assert f64(x.all(1)).tolist() == [0.0, 1.0] and f64(x.any(1)).tolist() == [1.0, 1.0]
    e = tp.zeros(3, 0).cuda()
    assert f64(e.all(1)).tolist() == [1.0] * 3 and f64(e.any(1)).tolist() == [0.0] * 3
    assert f64(e.prod(1)).tolist() == [1.0] * 3 and f64(tp.count_nonzero(e, 1)).tolist() == [0.0] * 3


# ---- max / min ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + INTS + [tp.bool], ids=str)
@pytest.mark.parametrize("dim,keepdim", DIMS)
def test_amax_amin(dtype, dim, keepdim):
    x = make((5, 33, 7), dtype, 7)
    kw = {} if dim is None else {"dim": dim}
    for name, ref in (("amax", np.max), ("amin", np.min)):
        got, cpu = getattr(x.cuda(), name)(**kw, keepdim=keepdim), getattr(x, name)(**kw, keepdim=keepdim)
        close_to_cpu(got, cpu, ref(f64(x), axis=np_axis(dim), keepdims=keepdim))
    lo, hi = tp.aminmax(x.cuda()) if dim is None else tp.aminmax(x.cuda(), dim=-1, keepdim=keepdim)
    clo, chi = tp.aminmax(x) if dim is None else tp.aminmax(x, dim=-1, keepdim=keepdim)
    close_to_cpu(lo, clo, f64(clo))
    close_to_cpu(hi, chi, f64(chi))


@pytest.mark.parametrize("dtype", FLOATS + INTS + [tp.bool], ids=str)
def test_max_dim_argmax_first_index(dtype):
    # Few distinct values: many ties, so "the FIRST index" is tested in rows, columns and split layouts.
    # rows; columns (and 16-byte vectors of columns: 96 = a multiple of 4 and 2); split rows and columns
    shapes = (((7, 40), 1), ((40, 7), 0), ((64, 96), 0), ((3, 70000), 1), ((5000, 3), 0), ((2, 3, 4), 1))
    for shape, dim in shapes:
        x = make(shape, dtype, 8)
        a = f64(x)
        for name, ref in (("max", np.argmax), ("min", np.argmin)):
            v, i = getattr(x.cuda(), name)(dim)
            cv, ci = getattr(x, name)(dim)
            close_to_cpu(i, ci, ref(a, axis=dim))
            close_to_cpu(
                v, cv, np.take_along_axis(a, np.expand_dims(ref(a, axis=dim), dim), dim).squeeze(dim)
            )
            close_to_cpu(
                getattr(x.cuda(), "arg" + name)(dim), getattr(x, "arg" + name)(dim), ref(a, axis=dim)
            )
        close_to_cpu(x.cuda().argmax(), x.argmax(), np.argmax(a))
        close_to_cpu(
            x.cuda().argmin(dim, keepdim=True), x.argmin(dim, keepdim=True), np.argmin(a, axis=dim)[None]
        )


def test_nan_propagates_with_its_first_index():
    a = np.random.default_rng(9).standard_normal((4, 300000))
    a[1, [5, 200000]] = np.nan
    a[2, 250000] = np.nan
    a[3, :] = np.nan
    x = tp.from_numpy(a).to(tp.float32)
    for name in ("max", "min"):
        v, i = getattr(x.cuda(), name)(1)
        cv, ci = getattr(x, name)(1)
        assert f64(i).tolist() == f64(ci).tolist() and f64(i)[1:].tolist() == [5, 250000, 0]
        np.testing.assert_array_equal(f64(v), f64(cv))
        assert np.isnan(f64(getattr(x.cuda(), name)()))
        assert np.isnan(f64(x.cuda().amax(1))[1:]).all() and not np.isnan(f64(x.cuda().amin(1))[0])
        assert f64(x.cuda().argmax())[()] == 300000 + 5
    c = tp.from_numpy(np.ascontiguousarray(a.T)).to(tp.float32).cuda()  # columns, split over blocks
    assert f64(c.argmax(0)).tolist() == f64(x.argmax(1)).tolist()


def test_layouts_transposed_sliced_long():
    a = np.random.default_rng(10).standard_normal((64, 48))
    x = tp.from_numpy(a).to(tp.float32).cuda()
    # (TensorPlay has no negative strides: flip copies, so a flipped input is a contiguous one.)
    for t, ref in (
        (x.t(), a.T),
        (x[:, ::3], a[:, ::3]),
        (x[1:, 2:].t(), a[1:, 2:].T),
        (x[1:, 2:], a[1:, 2:]),
    ):
        for d in (0, 1):
            np.testing.assert_array_equal(f64(t.amax(d)), ref.astype(np.float32).max(d))
            np.testing.assert_array_equal(f64(t.argmin(d)), ref.astype(np.float32).argmin(d))
        np.testing.assert_array_equal(f64(t.argmax()), ref.astype(np.float32).argmax())
    big = np.random.default_rng(11).standard_normal(3_000_001).astype(np.float32)
    xb = tp.from_numpy(big).cuda()
    assert f64(xb.amax())[()] == big.max() and f64(xb.argmin())[()] == big.argmin()
    assert f64(xb.reshape(1, -1).amin(1))[0] == big.min()
    col = tp.from_numpy(big[:3_000_000].reshape(-1, 4).copy()).cuda()
    np.testing.assert_array_equal(f64(col.amax(0)), big[:3_000_000].reshape(-1, 4).max(0))
    flat = tp.from_numpy(a.reshape(-1)).to(tp.float32).cuda()
    off = flat[1 : 1 + 47 * 48].reshape(47, 48)  # one element past an aligned start: no vector loads
    ref = a.reshape(-1)[1 : 1 + 47 * 48].reshape(47, 48).astype(np.float32)
    np.testing.assert_array_equal(f64(off.amax(0)), ref.max(0))
    np.testing.assert_array_equal(f64(off.argmax(1)), ref.argmax(1))
    three = tp.from_numpy(a.reshape(4, 16, 48)).cuda()  # reduced dims (0, 2) not adjacent: a copy
    np.testing.assert_array_equal(f64(three.amax((0, 2))), a.reshape(4, 16, 48).max((0, 2)))


# ---- sum through the plan (Note [Reduce layout], Note [One wave of blocks]) ------------------------------
# Column shapes around the paths: inner a multiple of the 16-byte vector (8 halves, 4 floats, 2 doubles) or
# not, a reduced range below/above the split threshold (256 rows), an unaligned start, a middle dim.
SUM_COLS = [(255, 24), (256, 24), (1000, 24), (1000, 13), (3000, 130), (40, 1030)]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SUM_COLS, ids=str)
def test_sum_of_columns_float(dtype, shape):
    x = make(shape, dtype, 12)
    a = f64(x)
    tol = 1e-12 if dtype is tp.float64 else {tp.float16: 2e-2, tp.bfloat16: 0.1}.get(dtype, 3e-4)
    tol *= np.sqrt(shape[0])  # 16-bit results are rounded to the type; float32 sums drift with the length
    close_to_cpu(x.cuda().sum(0), x.sum(0), a.sum(0), tol)
    close_to_cpu(x.cuda().sum(0, keepdim=True), x.sum(0, keepdim=True), a.sum(0, keepdims=True), tol)
    three = x.reshape(1, shape[0], shape[1]).expand(2, shape[0], shape[1]).contiguous()
    close_to_cpu(three.cuda().sum(1), three.sum(1), np.stack([a.sum(0)] * 2), tol)


@pytest.mark.parametrize("dtype", INTS + [tp.bool], ids=str)
def test_sum_of_columns_and_rows_integers_is_int64(dtype):
    x = make((1000, 24), dtype, 13)
    a = f64(x).astype(np.int64)
    for kw in ({"dim": 0}, {"dim": 1}, {}):
        got = x.cuda().sum(**kw)
        assert got.dtype is tp.int64
        same(got, x.sum(**kw), a.sum(axis=kw.get("dim")))
    assert x.cuda().sum(0, dtype=tp.int32).dtype is tp.int32


def test_sum_unaligned_long_and_empty():
    a = np.random.default_rng(14).standard_normal(3_000_001).astype(np.float32)
    flat = tp.from_numpy(a).cuda()
    off = flat[1 : 1 + 2999 * 1000].reshape(2999, 1000)  # one float past an aligned start: scalar columns
    ref = a.astype(np.float64)[1 : 1 + 2999 * 1000].reshape(2999, 1000)
    np.testing.assert_allclose(f64(off.sum(0)), ref.sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(f64(off.sum(1)), ref.sum(1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(f64(flat.sum()), a.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)  # split row
    col = tp.from_numpy(a[:3_000_000].reshape(-1, 4).copy()).cuda()  # one tile, split over a wave of blocks
    np.testing.assert_allclose(
        f64(col.sum(0)), a[:3_000_000].reshape(-1, 4).astype(np.float64).sum(0), rtol=1e-5
    )
    h = tp.from_numpy(a[:3_000_000].reshape(-1, 8).copy()).to(tp.float16).cuda()  # float32 accumulation
    want = f64(h).sum(0)
    np.testing.assert_allclose(f64(h.sum(0)), want, rtol=2e-3, atol=0.5)
    assert f64(tp.zeros(0, 24).cuda().sum(0)).tolist() == [0.0] * 24
    assert f64(tp.zeros(0, 24, dtype=tp.float16).cuda().sum(0)).tolist() == [0.0] * 24
    assert tuple(tp.zeros(3, 0).cuda().sum(0).shape) == (0,)
    assert f64(tp.tensor(2.5).cuda().sum()) == 2.5 and f64(tp.ones(1, 1).cuda().sum(0)).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="multiple times"):
        tp.ones(2, 3).cuda().sum((0, 0))


def test_amax_argmax_of_half_columns_vectorised():
    a = np.random.default_rng(15).standard_normal((700, 40))
    a[333, 5] = a[100, 5] = 9.0  # a tie: the first index wins
    a[50, 17] = np.nan
    for dt in (tp.float16, tp.bfloat16):
        x = tp.from_numpy(a).to(dt)
        same(x.cuda().amax(0), x.amax(0))
        same(x.cuda().argmax(0), x.argmax(0))
        same(x.cuda().argmin(0), x.argmin(0))
    assert f64(tp.from_numpy(a).to(tp.float16).cuda().argmax(0))[5] == 100


def test_zero_d_size_one_and_empty():
    s = tp.tensor(3.5).cuda()
    assert f64(s.amax()) == 3.5 and f64(s.argmax()) == 0 and f64(s.max(0)[1]) == 0
    assert f64(s.prod()) == 3.5 and bool(s.all()) and f64(tp.count_nonzero(s)) == 1
    one = tp.ones(1, 5).cuda()
    assert tuple(one.amax(0).shape) == (5,) and f64(one.argmax(0)).tolist() == [0] * 5
    assert tuple(tp.zeros(0, 3).cuda().amax(1).shape) == (0,)
    assert tuple(tp.zeros(0, 3).cuda().argmax(1).shape) == (0,)


def test_errors_match_the_cpu():
    e = tp.zeros(2, 0)
    for fn in (lambda t: t.amax(1), lambda t: t.max(1), lambda t: t.argmax(1), lambda t: t.max()):
        with pytest.raises((IndexError, RuntimeError)) as cpu_err:
            fn(e)
        with pytest.raises(cpu_err.type):
            fn(e.cuda())
    with pytest.raises(IndexError):
        tp.ones(2, 3).cuda().amax(2)
    with pytest.raises(RuntimeError):
        tp.ones(2, 3).cuda().amax((0, 0))
    with pytest.raises(RuntimeError, match="nanmean"):
        tp.arange(4).cuda().nanmean()


def test_backward_on_the_gpu_matches_the_cpu():
    import tensorplay as tpl

    a = np.round(np.random.default_rng(12).standard_normal((4, 6)), 1).astype(np.float32)
    a[1, 2] = a[1, 4] = a[1].max() + 1  # a tie: amax shares the gradient evenly
    grads = []
    for dev in ("cpu", "cuda"):
        x = tpl.tensor(a, device=dev, requires_grad=True)
        (x.amax(1).sum() + x.amin(0).sum() * 2).backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
