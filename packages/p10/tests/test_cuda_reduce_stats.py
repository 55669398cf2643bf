"""Statistics on the GPU (csrc/cuda/ops_reduce_stats.cpp): var, std, var_mean, std_mean in their three forms,
logsumexp, norm and norm.str — against the CPU op and a float64 NumPy reference.

Covers the layouts (rows, columns, split rows and columns, transposed), a large mean offset (Welford must not
lose the variance), corrections, infinities and NaN, empty reductions, errors, and one backward on the GPU.
Needs a GPU.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import FLOATS, f64, needs_cuda
from cuda_testing import close_to_cpu as check  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


TOL = {tp.float16: 4e-3, tp.bfloat16: 3e-2, tp.float32: 2e-5, tp.float64: 1e-11}
DIMS = [(None, False), (0, False), (1, True), (-1, False), ((0, 2), True)]


def make(shape, dtype=tp.float32, seed=0, offset=0.0) -> tp.Tensor:
    return tp.from_numpy(offset + np.random.default_rng(seed).standard_normal(shape)).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim,keepdim", DIMS)
def test_var_std_and_means(dtype, dim, keepdim):
    x = make((5, 33, 7), dtype, 1)
    a = f64(x)
    kw = {} if dim is None else {"dim": dim}
    for corr in (0, 1, 2):
        v = a.var(axis=dim, ddof=corr, keepdims=keepdim)
        m = a.mean(axis=dim, keepdims=keepdim)
        check(
            tp.var(x.cuda(), **kw, correction=corr, keepdim=keepdim),
            tp.var(x, **kw, correction=corr, keepdim=keepdim),
            v,
            TOL[dtype],
        )
        check(
            tp.std(x.cuda(), **kw, correction=corr, keepdim=keepdim),
            tp.std(x, **kw, correction=corr, keepdim=keepdim),
            np.sqrt(v),
            TOL[dtype],
        )
        gv, gm = tp.var_mean(x.cuda(), **kw, correction=corr, keepdim=keepdim)
        cv, cm = tp.var_mean(x, **kw, correction=corr, keepdim=keepdim)
        check(gv, cv, v, TOL[dtype])
        check(gm, cm, m, TOL[dtype])
        gs, gm = tp.std_mean(x.cuda(), **kw, correction=corr, keepdim=keepdim)
        cs, cm = tp.std_mean(x, **kw, correction=corr, keepdim=keepdim)
        check(gs, cs, np.sqrt(v), TOL[dtype])
        check(gm, cm, m, TOL[dtype])


def test_var_forms_unbiased_and_plain():
    x = make((6, 40), tp.float64, 2)
    a = f64(x)
    for unbiased in (True, False):
        d = int(unbiased)
        check(x.cuda().var(unbiased), x.var(unbiased), a.var(ddof=d), 1e-12)
        check(
            x.cuda().std(1, unbiased, True), x.std(1, unbiased, True), a.std(1, ddof=d, keepdims=True), 1e-12
        )
        gv, gm = tp.var_mean(x.cuda(), unbiased)
        check(gv, tp.var_mean(x, unbiased)[0], a.var(ddof=d), 1e-12)
        check(gm, tp.var_mean(x, unbiased)[1], a.mean(), 1e-12)
        gs, _ = tp.std_mean(x.cuda(), [0], unbiased)
        check(gs, tp.std_mean(x, [0], unbiased)[0], a.std(0, ddof=d), 1e-12)


def test_var_is_stable_with_a_large_offset_and_long_rows():
    # 1e4 + N(0, 1) in float32: sum(x^2) - sum(x)^2 would lose every digit; Welford keeps them.
    a = (1e4 + np.random.default_rng(3).standard_normal(1_000_003)).astype(np.float32)
    ref = a.astype(np.float64)
    x = tp.from_numpy(a).cuda()
    np.testing.assert_allclose(f64(x.var()), ref.var(ddof=1), rtol=1e-3)  # one long row, split over blocks
    np.testing.assert_allclose(f64(tp.var_mean(x.reshape(1, -1), 1)[1]), [ref.mean()], rtol=1e-6)
    c = a[:1_000_000].reshape(-1, 4)  # columns, split over blocks
    np.testing.assert_allclose(
        f64(tp.from_numpy(c.copy()).cuda().var(0)), c.astype(np.float64).var(0, ddof=1), rtol=1e-3
    )
    r = a[:600_000].reshape(200, 3000)
    t = tp.from_numpy(r.copy()).cuda().t()  # transposed: reduced along memory, rows again
    np.testing.assert_allclose(f64(t.std(1)), r.astype(np.float64).std(0, ddof=1), rtol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(255, 24), (1001, 24), (1001, 13), (70, 1030)], ids=str)
def test_var_in_batches_columns_and_rows(dtype, shape):
    # Note [Welford in batches]: 16-byte vectors of a row and 4-row groups of columns (< 4 rows left over),
    # columns below/above the split threshold, inner not a multiple of the vector (one column per thread),
    # and a large offset, which a batch's own mean must not lose.
    x = make(shape, dtype, 5, offset=50.0)
    a = f64(x)
    tol = {tp.float16: 2e-2, tp.bfloat16: 6e-2, tp.float32: 2e-4, tp.float64: 1e-9}[dtype]
    for d in (0, 1):
        check(x.cuda().var(d), x.var(d), a.var(d, ddof=1), tol)
        gv, gm = tp.var_mean(x.cuda(), d, correction=0)
        check(gv, tp.var_mean(x, d, correction=0)[0], a.var(d), tol)
        check(gm, tp.var_mean(x, d, correction=0)[1], a.mean(d), tol)
    inf = x.clone()
    inf[3, 2] = float("inf")  # an infinity makes its column's and row's variance NaN, as on the CPU
    for d in (0, 1):
        np.testing.assert_array_equal(np.isnan(f64(inf.cuda().var(d))), np.isnan(f64(inf.var(d))))


def test_var_of_too_few_elements_and_empty():
    x = tp.ones(3, 1).cuda()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = tp.ones(3, 1).var(1)
    got = x.var(1)
    np.testing.assert_array_equal(np.isnan(f64(got)), np.isnan(f64(cpu)))
    e = tp.zeros(2, 0).cuda()
    assert np.isnan(f64(e.var(1))).all() and np.isnan(f64(tp.var_mean(e, 1)[1])).all()
    assert tuple(tp.zeros(0, 4).cuda().std(1).shape) == (0,)
    assert f64(tp.tensor(2.0).cuda().var(correction=0)) == 0.0


def test_var_errors_match_the_cpu():
    with pytest.raises(RuntimeError, match="floating point"):
        tp.arange(4).cuda().var()
    with pytest.raises(IndexError):
        tp.ones(2, 3).cuda().var(3)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(
    "dim,keepdim", [(0, False), (1, True), (-1, False), ((0, 2), True), ((0, 1, 2), False)]
)
def test_logsumexp(dtype, dim, keepdim):
    x = make((5, 33, 7), dtype, 4) * 10
    a = f64(x)
    m = a.max(axis=dim, keepdims=True)
    want = np.log(np.exp(a - m).sum(axis=dim, keepdims=True)) + m
    want = want if keepdim else want.squeeze(axis=dim)
    check(tp.logsumexp(x.cuda(), dim, keepdim), tp.logsumexp(x, dim, keepdim), want, 2 * TOL[dtype])


def test_logsumexp_infinities_nan_integers_long_rows():
    inf, nan = float("inf"), float("nan")
    x = tp.tensor([[-inf, -inf], [inf, 1.0], [inf, inf], [nan, 1.0], [-inf, 0.0]])
    got, cpu = tp.logsumexp(x.cuda(), 1), tp.logsumexp(x, 1)
    np.testing.assert_array_equal(f64(got), f64(cpu))
    assert f64(got)[:3].tolist() == [-inf, inf, inf] and np.isnan(f64(got)[3]) and f64(got)[4] == 0.0
    i = tp.arange(6).reshape(2, 3)
    check(tp.logsumexp(i.cuda(), [1]), tp.logsumexp(i, [1]), np.log(np.exp(f64(i)).sum(1)), 1e-6)
    # read back through f64 (a float64 NumPy copy on the host)
    assert f64(tp.logsumexp(tp.zeros(2, 0).cuda(), 1)).tolist() == [-inf, -inf]
    a = np.random.default_rng(5).standard_normal(2_000_000).astype(np.float32) * 20
    want = np.log(np.exp(a.astype(np.float64) - a.max()).sum()) + a.max()
    np.testing.assert_allclose(f64(tp.logsumexp(tp.from_numpy(a).cuda(), [0])), want, rtol=1e-5)
    c = a.reshape(-1, 2)
    np.testing.assert_allclose(
        f64(tp.logsumexp(tp.from_numpy(c.copy()).cuda(), [0])),
        np.log(np.exp(c.astype(np.float64) - c.max(0)).sum(0)) + c.max(0),
        rtol=1e-5,
    )


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("p", [2, 1, float("inf"), float("-inf"), 0, 3, 1.5])
def test_norm(dtype, p):
    x = make((6, 17, 4), dtype, 6)
    x = x * (make((6, 17, 4), tp.float32, 7) > -1.0).to(dtype)  # some zeros, for p = 0
    a = f64(x)
    for dim, keepdim in ((None, False), (1, True), ((0, 2), False)):
        kw = {} if dim is None else {"dim": dim}
        want = (
            np.linalg.norm(
                a.reshape(-1) if dim is None else a,
                ord=p,
                axis=dim if dim is not None else None,
                keepdims=keepdim,
            )
            if dim is None or isinstance(dim, int)
            else None
        )
        if want is None:  # several dims: norm of the flattened rows
            moved = np.moveaxis(a, (0, 2), (-2, -1)).reshape(a.shape[1], -1)
            want = np.linalg.norm(moved, ord=p, axis=1)
        check(
            tp.norm(x.cuda(), p, **kw, keepdim=keepdim),
            tp.norm(x, p, **kw, keepdim=keepdim),
            want,
            4 * TOL[dtype],
        )


def test_norm_str_dtype_nan_and_errors():
    x = make((5, 8), tp.float32, 8)
    a = f64(x)
    check(tp.norm(x.cuda(), "fro"), tp.norm(x, "fro"), np.sqrt((a * a).sum()), 1e-5)
    check(tp.norm(x.cuda(), "fro", dim=(0, 1)), tp.norm(x, "fro", dim=(0, 1)), np.sqrt((a * a).sum()), 1e-5)
    check(
        tp.norm(x.cuda(), 2, dtype=tp.float64), tp.norm(x, 2, dtype=tp.float64), np.sqrt((a * a).sum()), 1e-12
    )
    n = tp.tensor([[1.0, float("nan")], [3.0, -4.0]]).cuda()
    for p in (float("inf"), float("-inf"), 2):
        assert np.isnan(f64(tp.norm(n, p, dim=1))[0]) and not np.isnan(f64(tp.norm(n, p, dim=1))[1])
    for bad in (
        lambda t: tp.norm(t, "nuc"),
        lambda t: tp.norm(t, "abc"),
        lambda t: tp.norm(t.to(tp.int32), 2),
        lambda t: tp.norm(tp.zeros(0, 2).to(t.device), float("inf")),
    ):
        with pytest.raises((RuntimeError, NotImplementedError)) as cpu_err:
            bad(x)
        with pytest.raises(cpu_err.type):
            bad(x.cuda())


def test_backward_on_the_gpu_matches_the_cpu():
    import tensorplay as tpl

    a = np.random.default_rng(9).standard_normal((4, 6)).astype(np.float32)
    grads = []
    for dev in ("cpu", "cuda"):
        x = tpl.tensor(a, device=dev, requires_grad=True)
        (tpl.var(x, 1).sum() + tpl.logsumexp(x, [0]).sum() + tpl.norm(x, 2)).backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
