"""Scans on the GPU (csrc/cuda/ops_scan.cpp): cumsum, cumsum.out, cumprod, cummax, cummin, logcumsumexp along
any dim — against the CPU op and a float64 NumPy reference.

Covers the layouts (rows; short rows, a warp each; many columns, one thread per line; few long columns,
transposed), long rows scanned in chunks, dtypes and dtype=, ties and NaN in cummax/cummin, infinities in
logcumsumexp, size-0/size-1 dims, 0-d tensors, errors, and one backward on the GPU. Needs a GPU.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import FLOATS, INTS, f64, needs_cuda  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


TOL = {tp.float16: 4e-3, tp.bfloat16: 3e-2, tp.float32: 2e-5, tp.float64: 1e-12}
# (shape, dim): rows (one chunk, and several chunks per row), short rows (one warp per row: up to 256, two
# segments with a tail, and one past the threshold), many short rows, many columns (>= 16384 lines), few long
# columns (transposed), a middle dim, 1-d; the segmented column scan (inner >= 32, 1024..16383 lines: 6
# segments of 17 with a 15 tail, a middle dim in 2 segments) and just below its thresholds (1023 lines, inner
# 31: transposed).
LAYOUTS = [
    ((6, 50), 1),
    ((3, 33), 1),
    ((5, 256), 1),
    ((5, 257), 1),
    ((40, 5000), 1),
    ((20000, 5), 1),
    ((3, 20000), 0),
    ((300, 3), 0),
    ((4, 30, 5), 1),
    ((7,), 0),
    ((100, 1024), 0),
    ((3, 37, 400), 1),
    ((64, 1023), 0),
    ((50, 40, 31), 1),
]


def make(shape, dtype, seed=0) -> tp.Tensor:
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(rng.integers(0, 2, shape).astype(np.bool_))
    if dtype in INTS:
        return tp.from_numpy(rng.integers(0, 3, shape).astype(np.int64)).to(dtype)
    return tp.from_numpy(rng.standard_normal(shape)).to(dtype)


def check(got: tp.Tensor, cpu: tp.Tensor, want, tol: float = 0.0, atol: float | None = None):
    atol = tol if atol is None else atol
    assert got.device.type == "cuda" and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    np.testing.assert_allclose(f64(got), f64(cpu), rtol=tol, atol=atol)
    np.testing.assert_allclose(f64(got), np.asarray(want, dtype=np.float64), rtol=tol, atol=atol)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [tp.bool], ids=str)
@pytest.mark.parametrize("shape,dim", LAYOUTS)
def test_cumsum_cumprod(dtype, shape, dim):
    x = make(shape, dtype, 1)
    a = f64(x)
    n = shape[dim]
    rt = TOL.get(dtype, 0.0)  # float sums drift like a random walk: the absolute error grows with sqrt(n)
    check(x.cuda().cumsum(dim), x.cumsum(dim), np.cumsum(a, axis=dim), 4 * rt, 4 * rt * np.sqrt(n))
    if n > 300:
        return  # long products leave the range of 16-bit floats
    if dtype in FLOATS:
        x = tp.from_numpy(np.random.default_rng(2).uniform(0.8, 1.25, shape)).to(dtype)
        a = f64(x)
    got, cpu = x.cuda().cumprod(dim), x.cumprod(dim)
    if dtype in FLOATS:
        check(got, cpu, np.cumprod(a, axis=dim), 4 * rt * np.sqrt(n))
    else:
        np.testing.assert_array_equal(f64(got), f64(cpu))  # int64 products wrap alike


def test_dtype_argument_bool_rules_and_out():
    x = make((5, 9), tp.int32, 3)
    check(x.cuda().cumsum(1, dtype=tp.float64), x.cumsum(1, dtype=tp.float64), np.cumsum(f64(x), 1))
    b = make((5, 9), tp.bool, 4)
    for d in (tp.bool, None):
        kw = {} if d is None else {"dtype": d}
        np.testing.assert_array_equal(f64(b.cuda().cumsum(1, **kw)), f64(b.cumsum(1, **kw)))
        np.testing.assert_array_equal(f64(b.cuda().cumprod(1, **kw)), f64(b.cumprod(1, **kw)))
    y = make((4, 6), tp.float32, 5)
    out = tp.empty(4, 6, dtype=tp.float64).cuda()
    r = tp.cumsum(y.cuda(), 0, out=out)
    assert r.data_ptr() == out.data_ptr() and out.dtype is tp.float64
    np.testing.assert_allclose(f64(out), np.cumsum(f64(y), 0), rtol=1e-6)
    o2 = tp.empty(0).cuda()
    tp.cumsum(y.cuda(), 1, out=o2)  # resized, as on the CPU
    assert tuple(o2.shape) == (4, 6)


def test_long_rows_in_chunks():
    a = np.random.default_rng(6).standard_normal((2, 1_000_003)).astype(np.float32)
    x = tp.from_numpy(a).cuda()
    want = np.cumsum(a.astype(np.float64), 1)
    np.testing.assert_allclose(f64(x.cumsum(1)), want, rtol=1e-4, atol=2e-3)
    i = tp.from_numpy((a > 0).astype(np.int64)).cuda()
    np.testing.assert_array_equal(f64(i.cumsum(1)), np.cumsum(a > 0, 1))  # exact: integers
    v, k = x.cummax(1)
    np.testing.assert_array_equal(f64(v), np.maximum.accumulate(a, 1))
    np.testing.assert_array_equal(f64(k), f64(tp.from_numpy(a).cummax(1)[1]))
    lse = np.logaddexp.accumulate(a.astype(np.float64), 1)
    np.testing.assert_allclose(f64(tp.logcumsumexp(x, 1)), lse, rtol=1e-4)


def test_one_long_row_through_the_look_back():
    # One 1-d row of 733 chunks (1465 for cummax): more blocks than run at once, so chunks look back over many
    # predecessors; float32 and float16 take packed status words (Note [Packed status words]), int64 and
    # cummax's (value, index) the flag-and-fence protocol.
    a = np.random.default_rng(8).standard_normal(3_000_017).astype(np.float32)
    x = tp.from_numpy(a).cuda()
    np.testing.assert_allclose(f64(x.cumsum(0)), np.cumsum(a.astype(np.float64)), rtol=1e-4, atol=2e-2)
    h = x.to(tp.float16)
    np.testing.assert_allclose(f64(h.cumsum(0)), np.cumsum(f64(h)), rtol=2e-3, atol=4.0)
    i = tp.from_numpy((a > 0.5).astype(np.int64)).cuda()
    np.testing.assert_array_equal(f64(i.cumsum(0)), np.cumsum(a > 0.5))
    v, k = x.cummax(0)
    np.testing.assert_array_equal(f64(v), np.maximum.accumulate(a))
    np.testing.assert_array_equal(f64(k), f64(tp.from_numpy(a).cummax(0)[1]))


@pytest.mark.parametrize("dtype", FLOATS + INTS + [tp.bool], ids=str)
@pytest.mark.parametrize("shape,dim", LAYOUTS)
def test_cummax_cummin(dtype, shape, dim):
    x = make(shape, dtype, 7)  # few distinct values: ties move the index to the latest, as on the CPU
    a = f64(x)
    for name, acc in (("cummax", np.maximum), ("cummin", np.minimum)):
        v, i = getattr(x.cuda(), name)(dim)
        cv, ci = getattr(x, name)(dim)
        check(v, cv, acc.accumulate(a, axis=dim))
        check(i, ci, f64(ci))
        np.testing.assert_array_equal(np.take_along_axis(a, f64(i).astype(np.int64), dim), f64(v))


def test_segmented_column_scan_many_segments():
    # 1100 lines of 2000: 63 segments of 32 (the cap of 64 segments, a shorter last one), each thread folding
    # up to 62 segment totals before its own; NaN in cummax crosses segments.
    x = make((2000, 1100), tp.float32, 3)
    check(x.cuda().cumsum(0), x.cumsum(0), np.cumsum(f64(x), axis=0), 8e-5, 8e-5 * np.sqrt(2000))
    a = f64(x)
    a[700, 5] = np.nan
    y = tp.from_numpy(a.astype(np.float32))
    v, i = y.cuda().cummax(0)
    cv, ci = y.cummax(0)
    np.testing.assert_array_equal(f64(v), f64(cv))
    np.testing.assert_array_equal(f64(i), f64(ci))
    n = make((2000, 1100), tp.int32, 4)
    np.testing.assert_array_equal(f64(n.cuda().cumsum(0)), np.cumsum(f64(n), axis=0))


def test_cummax_nan_rule():
    nan = float("nan")
    x = tp.tensor([1.0, nan, 3.0, nan, 2.0, 5.0])
    for name in ("cummax", "cummin"):
        v, i = getattr(x.cuda(), name)(0)
        cv, ci = getattr(x, name)(0)
        assert f64(i).tolist() == f64(ci).tolist() == [0, 1, 1, 3, 3, 3]
        np.testing.assert_array_equal(f64(v), f64(cv))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", LAYOUTS)
def test_logcumsumexp(dtype, shape, dim):
    x = make(shape, dtype, 8) * 5
    a = f64(x)
    tol = 4 * TOL[dtype] * np.sqrt(shape[dim])
    check(tp.logcumsumexp(x.cuda(), dim), tp.logcumsumexp(x, dim), np.logaddexp.accumulate(a, axis=dim), tol)


def test_logcumsumexp_infinities_and_nan():
    inf, nan = float("inf"), float("nan")
    x = tp.tensor([[-inf, -inf, 0.0, inf, inf, 1.0], [0.0, nan, 1.0, -inf, 2.0, 3.0]])
    np.testing.assert_array_equal(f64(tp.logcumsumexp(x.cuda(), 1)), f64(tp.logcumsumexp(x, 1)))


def test_zero_d_size_one_empty_noncontiguous_and_errors():
    s = tp.tensor(2.5).cuda()
    assert f64(s.cumsum(0)) == 2.5 and f64(s.cummax(0)[1]) == 0 and f64(tp.logcumsumexp(s, -1)) == 2.5
    e = tp.zeros(3, 0).cuda()
    assert tuple(e.cumsum(1).shape) == (3, 0) and tuple(e.cummin(0)[1].shape) == (3, 0)
    a = np.random.default_rng(9).standard_normal((40, 30))
    x = tp.from_numpy(a).cuda()
    for t, ref in ((x.t(), a.T), (x[:, ::2], a[:, ::2]), (x[3:, 1:].t(), a[3:, 1:].T)):
        for d in (0, 1):
            np.testing.assert_allclose(f64(t.cumsum(d)), np.cumsum(ref, d), rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(f64(t.cummin(d)[0]), np.minimum.accumulate(ref, d))
    with pytest.raises(IndexError):
        x.cumsum(2)
    with pytest.raises(NotImplementedError):
        tp.logcumsumexp(tp.arange(3).cuda(), 0)


def test_backward_on_the_gpu_matches_the_cpu():
    import tensorplay as tpl

    try:  # cumsum's backward reverses with flip, a kernel of the indexing family
        tpl.ones(2, device="cuda").flip(0)
    except NotImplementedError as e:
        pytest.skip(f"flip has no CUDA kernel yet: {e}")
    a = np.random.default_rng(10).uniform(0.5, 1.5, (3, 5)).astype(np.float32)
    grads = []
    for dev in ("cpu", "cuda"):
        x = tpl.tensor(a, device=dev, requires_grad=True)
        (x.cumsum(1) * tpl.tensor(a, device=dev)).sum().backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)
