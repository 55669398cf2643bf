"""lerp, addcmul, addcdiv, isclose, allclose and equal on the GPU (ternary.cu, close.cu), and the 16-byte
pack paths of the comparisons, maximum and where (compare.cu) at their edges: tails, unaligned views, every
dtype's pack width.

Every GPU result is compared with the CPU op on the same inputs and with a float64 NumPy formula: each dtype
the CPU op takes, broadcasting (the third operand is materialised for the strided form), views, size-0 and
0-d shapes, in-place and out= forms, and the error paths. They need a GPU and skip elsewhere.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, FLOATS, INTS, check, needs_cuda, np_of64  # noqa: E402
from cuda_testing import sample as shared_sample

pytestmark = needs_cuda


def sample(shape, dtype, seed=0, scale=2.0) -> tp.Tensor:
    return shared_sample(shape, dtype, seed, scale, lo=-9, hi=9, ulo=0)


TOL = {tp.float16: 4e-3, tp.bfloat16: 3.2e-2, tp.float32: 1e-5, tp.float64: 1e-12}


def lerp_ref(a, b, w):
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_lerp(dtype):
    a, b = sample((6, 10), dtype, 1), sample((6, 10), dtype, 2)
    w = tp.sigmoid(sample((10,), dtype, 3))  # broadcast weight, both sides of 0.5
    tol = 2 * TOL[dtype]
    for weight in (0.25, 0.75, 1.0):
        check(
            tp.lerp(a.to(DEV), b.to(DEV), weight),
            tp.lerp(a, b, weight),
            lerp_ref(np_of64(a), np_of64(b), weight),
            tol,
        )
    check(
        tp.lerp(a.to(DEV), b.to(DEV), w.to(DEV)),
        tp.lerp(a, b, w),
        lerp_ref(np_of64(a), np_of64(b), np_of64(w)),
        tol,
    )
    # lerp(a, b, 1) is exactly b
    np.testing.assert_array_equal(np_of64(tp.lerp(a.to(DEV), b.to(DEV), 1.0)), np_of64(b))
    # in place and out=
    d = a.to(DEV).clone()
    tp.lerp_(d, b.to(DEV), w.to(DEV))
    check(d, tp.lerp(a, b, w), lerp_ref(np_of64(a), np_of64(b), np_of64(w)), tol)
    d = a.to(DEV).clone()
    tp.lerp_(d, b.to(DEV), 0.3)
    check(d, tp.lerp(a, b, 0.3), lerp_ref(np_of64(a), np_of64(b), 0.3), tol)
    out = tp.empty((6, 10), dtype=dtype, device=DEV)
    tp.lerp(a.to(DEV), b.to(DEV), w.to(DEV), out=out)
    check(out, tp.lerp(a, b, w), lerp_ref(np_of64(a), np_of64(b), np_of64(w)), tol)


def test_lerp_errors_match_the_cpu():
    a, b = sample((3,), tp.float32, 4), sample((3,), tp.float64, 5)
    for call in (lambda x, y: tp.lerp(x, y, 0.5), lambda x, y: tp.lerp(x, x, y)):
        with pytest.raises(RuntimeError):
            call(a, b)
        with pytest.raises(RuntimeError):
            call(a.to(DEV), b.to(DEV))
    i = sample((3,), tp.int32, 6)
    with pytest.raises(Exception) as cpu_err:
        tp.lerp(i, i, 0.5)
    with pytest.raises(cpu_err.type):
        tp.lerp(i.to(DEV), i.to(DEV), 0.5)


@pytest.mark.parametrize("dtype", FLOATS + [tp.int32, tp.int64, tp.uint8], ids=str)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addc(name, dtype):
    if name == "addcdiv" and dtype in INTS:
        i = sample((3,), dtype, 7)
        with pytest.raises(RuntimeError, match="Integer division"):
            tp.addcdiv(i.to(DEV), i.to(DEV), i.to(DEV))
        return
    f = getattr(tp, name)
    s, t1 = sample((5, 12), dtype, 8), sample((5, 12), dtype, 9)
    t2 = sample((12,), dtype, 10)
    if name == "addcdiv":
        t2 = t2.abs() + 0.5
    value = 2 if dtype in INTS else 0.5

    def ref(x, y, z):
        return x + value * y * z if name == "addcmul" else x + value * y / z

    tol = 0 if dtype in INTS else 3 * TOL[dtype]
    want = ref(np_of64(s), np_of64(t1), np_of64(t2))
    if dtype is tp.uint8:
        want = want % 256
    check(f(s.to(DEV), t1.to(DEV), t2.to(DEV), value=value), f(s, t1, t2, value=value), want, tol)
    # the third operand as a transposed view (materialised for the strided form), in place, out=
    t2base = sample((12, 5), dtype, 11)
    if name == "addcdiv":
        t2base = t2base.abs() + 0.5
    t2m, t2m_d = t2base.t(), t2base.to(DEV).t()  # transposed on each device
    want = ref(np_of64(s), np_of64(t1), np_of64(t2m))
    if dtype is tp.uint8:
        want = want % 256
    d = s.to(DEV).clone()
    getattr(tp, name + "_")(d, t1.to(DEV), t2m_d, value=value)
    check(d, f(s, t1, t2m, value=value), want, tol)
    out = tp.empty((5, 12), dtype=dtype, device=DEV)
    f(s.to(DEV), t1.to(DEV), t2m_d, value=value, out=out)
    check(out, f(s, t1, t2m, value=value), want, tol)


def test_addcmul_large_packs_and_tails():
    n = (1 << 18) + 7
    s, a, b = (sample((n,), tp.float32, k) for k in (12, 13, 14))
    sd, ad, bd = s.to(DEV), a.to(DEV), b.to(DEV)
    for sl in (slice(None), slice(1, None)):  # 16-byte packs with a tail, and unaligned (the plain loop)
        x, y, z = s[sl], a[sl], b[sl]
        got = tp.addcmul(sd[sl], ad[sl], bd[sl], value=0.5)
        check(got, tp.addcmul(x, y, z, value=0.5), np_of64(x) + 0.5 * np_of64(y) * np_of64(z), 1e-5)


# ---- isclose, allclose, equal ----------------------------------------------------------------------------
def isclose_ref(a, b, rtol, atol, equal_nan):
    with np.errstate(invalid="ignore"):
        r = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return r.astype(np.float64)


@pytest.mark.parametrize("dtype", FLOATS + [tp.int32, tp.bool], ids=str)
def test_isclose_allclose(dtype):
    a = sample((7, 9), dtype, 15)
    b = a.clone() if dtype in (tp.bool, tp.int32) else a + sample((7, 9), dtype, 16, scale=1e-3)
    if dtype in FLOATS:
        a[0, 0], b[0, 0], a[1, 1], b[1, 1], a[2, 2], b[2, 2] = (
            float("nan"),
            float("nan"),
            1.0,
            float("inf"),
            float("inf"),
            float("inf"),
        )
    for rtol, atol, en in [(1e-5, 1e-8, False), (1e-2, 1e-3, True)]:
        got, cpu = tp.isclose(a.to(DEV), b.to(DEV), rtol, atol, en), tp.isclose(a, b, rtol, atol, en)
        assert got.dtype is tp.bool
        np.testing.assert_array_equal(np_of64(got), np_of64(cpu))
        if dtype in (tp.float32, tp.float64):
            np.testing.assert_array_equal(np_of64(got), isclose_ref(np_of64(a), np_of64(b), rtol, atol, en))
        assert tp.allclose(a.to(DEV), b.to(DEV), rtol, atol, en) == tp.allclose(a, b, rtol, atol, en)
    assert tp.allclose(a.to(DEV), a.to(DEV), equal_nan=True)


def test_allclose_and_equal_answers():
    n = (1 << 16) + 5  # any_false: 16-byte packs and a tail
    x = sample((n,), tp.float32, 17)
    d = x.to(DEV)
    assert tp.equal(d, d.clone()) and tp.allclose(d, d.clone())
    for pos in (0, n // 2, n - 1):  # one differing element: first, middle, in the tail
        y = x.clone()
        y[pos] = y[pos] + 1
        assert not tp.equal(d, y.to(DEV))
        assert not tp.allclose(d, y.to(DEV))
    assert not tp.equal(d, d[:-1])  # another shape
    assert tp.equal(d[1:], x[1:].to(DEV))  # unaligned
    assert tp.equal(d[:0], d[:0]) and tp.allclose(d[:0], d[:0])
    assert tp.equal(tp.tensor(2.0).to(DEV), tp.tensor(2).to(DEV))  # compared in the common dtype
    nan = tp.tensor([float("nan")]).to(DEV)
    assert not tp.equal(nan, nan)
    with pytest.raises(RuntimeError, match="same device"):
        tp.equal(d, x)


def test_isclose_errors_match_the_cpu():
    a, b = sample((3,), tp.float32, 18), sample((3,), tp.float64, 19)
    with pytest.raises(RuntimeError, match="same dtype"):
        tp.isclose(a.to(DEV), b.to(DEV))
    with pytest.raises(ValueError):
        tp.isclose(a, a, rtol=-1.0)
    with pytest.raises(ValueError):
        tp.isclose(a.to(DEV), a.to(DEV), rtol=-1.0)


# ---- the 16-byte pack paths of compare.cu ------------------------------------------------------------------
ALL = [tp.bool, *INTS, *FLOATS]


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_compare_where_maximum_packs(dtype):
    n = 4096 + 13  # a tail for every pack width (2 to 16 elements)
    a, b = sample((n,), dtype, 20), sample((n,), dtype, 21)
    c = sample((n,), tp.bool, 22)
    ad, bd, cd = a.to(DEV), b.to(DEV), c.to(DEV)
    for sl in (slice(None), slice(1, None), slice(3, None)):  # aligned, and off by one and three elements
        x, y, m = a[sl], b[sl], c[sl]
        xd, yd, md = ad[sl], bd[sl], cd[sl]  # sliced on the device: really unaligned there
        xn, yn = np_of64(x), np_of64(y)
        check(xd > yd, x > y, (xn > yn).astype(np.float64), 0)
        check(xd == 1, x == 1, (xn == 1).astype(np.float64), 0)  # the scalar form
        check(tp.where(md, xd, yd), tp.where(m, x, y), np.where(np_of64(m) > 0, xn, yn), 0)
        if dtype is not tp.bool:
            check(tp.maximum(xd, yd), tp.maximum(x, y), np.maximum(xn, yn), 0)
