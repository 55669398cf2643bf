"""Float functions, classification and activations of one tensor on the GPU (unary_math.cu, activation.cu):
exp2 … digamma, sgn, square, frac, nan_to_num, isnan/isinf/isfinite, signbit, mish … log_sigmoid, and the
backward ops leaky_relu/elu/mish/softplus/hardtanh_backward.

Every GPU result is compared with the CPU op on the same input (dtype, shape, values) and with a float64 NumPy
formula (never the code under test): each float dtype (float16/bfloat16 with looser tolerances), integers
where the op takes them, views, size-0/1 and 0-d shapes, in-place and out= forms, and error paths. They need
a GPU and skip elsewhere; test_cuda_elementwise_names.py checks the kernel names without one.
"""

import math
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
    return shared_sample(shape, dtype, seed, scale, lo=-50, hi=50, ulo=0)


TOL = {tp.float16: 4e-3, tp.bfloat16: 3.2e-2, tp.float32: 1e-5, tp.float64: 1e-12}


_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _erfinv(y):
    lo, hi = np.full_like(y, -6.0), np.full_like(y, 6.0)
    for _ in range(80):  # bisection on math.erf: independent of any erfinv implementation
        mid = (lo + hi) / 2
        below = _erf(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def _digamma(x):
    h = 1e-5  # the derivative of math.lgamma, central difference
    return (_lgamma(x + h) - _lgamma(x - h)) / (2 * h)


def _sp(x):
    return np.log1p(np.exp(x))


# name -> (call, float64 formula, input domain)
FNS = {
    "exp2": (tp.exp2, np.exp2, None),
    "log2": (tp.log2, np.log2, "pos"),
    "log10": (tp.log10, np.log10, "pos"),
    "tan": (tp.tan, np.tan, "small"),
    "asin": (tp.asin, np.arcsin, "unit"),
    "acos": (tp.acos, np.arccos, "unit"),
    "atan": (tp.atan, np.arctan, None),
    "sinh": (tp.sinh, np.sinh, None),
    "cosh": (tp.cosh, np.cosh, None),
    "asinh": (tp.asinh, np.arcsinh, None),
    "acosh": (tp.acosh, np.arccosh, "ge1"),
    "atanh": (tp.atanh, np.arctanh, "unit"),
    "deg2rad": (tp.deg2rad, np.deg2rad, None),
    "rad2deg": (tp.rad2deg, np.rad2deg, None),
    "logit": (tp.logit, lambda x: np.log(x / (1 - x)), "prob"),
    "logit_eps": (
        lambda x: tp.logit(x, 0.2),
        lambda x: (lambda c: np.log(c / (1 - c)))(np.clip(x, 0.2, 0.8)),
        "prob",
    ),
    "erfc": (tp.erfc, _erfc, None),
    "erfinv": (tp.erfinv, _erfinv, "unit"),
    "lgamma": (tp.lgamma, _lgamma, "pos"),
    "digamma": (tp.digamma, _digamma, "pos"),
    "frac": (tp.frac, lambda x: x - np.trunc(x), None),
    "square": (tp.square, np.square, None),
    "sgn": (tp.sgn, np.sign, None),
    "mish": (tp.mish, lambda x: x * np.tanh(_sp(x)), None),
    "threshold": (lambda x: tp.threshold(x, 0.5, -3.0), lambda x: np.where(x <= 0.5, -3.0, x), None),
    "hardtanh": (lambda x: tp.hardtanh(x, -1.0, 2.0), lambda x: np.clip(x, -1, 2), None),
    "hardsigmoid": (tp.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, None),
    "hardswish": (tp.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, None),
    "softshrink": (
        lambda x: tp.softshrink(x, 0.5),
        lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
        None,
    ),
    "hardshrink": (lambda x: tp.hardshrink(x, 0.5), lambda x: np.where(np.abs(x) <= 0.5, 0, x), None),
    "log_sigmoid": (tp.log_sigmoid, lambda x: -np.log1p(np.exp(-x)), None),
}
EXACT = {"frac", "square", "sgn", "threshold", "hardtanh", "hardshrink", "deg2rad", "rad2deg"}


def domain(x: tp.Tensor, kind) -> tp.Tensor:
    if kind == "pos":
        return x.abs() + 0.25
    if kind == "small":
        return x * 0.5
    if kind == "unit":
        return tp.tanh(x) * 0.95
    if kind == "ge1":
        return x.abs() + 1.0
    if kind == "prob":
        return tp.sigmoid(x) * 0.98 + 0.01
    return x


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", FNS)
def test_floats(name, dtype):
    f, ref, kind = FNS[name]
    x = domain(sample((19, 67), dtype, 1), kind)
    want = ref(np_of64(x))
    tol = 0 if (name in EXACT and dtype is tp.float64) else 2 * TOL[dtype]
    if name in ("deg2rad", "rad2deg", "square") and dtype is not tp.float64:
        tol = TOL[dtype]  # one rounding of the product
    if name in ("lgamma", "digamma") and dtype in (tp.float32, tp.float64):
        tol = 1e-5  # the references: math.lgamma and its central difference
    check(f(x.to(DEV)), f(x), want, tol)


@pytest.mark.parametrize("dtype", [tp.uint8, tp.int16, tp.int64], ids=str)
@pytest.mark.parametrize("name", ["exp2", "atan", "square", "sgn", "threshold", "hardtanh", "lgamma"])
def test_integers(name, dtype):
    f, ref, _ = FNS[name]
    x = sample((5, 33), dtype, 2) % 7 if name in ("exp2", "square") else sample((5, 33), dtype, 2)
    if name == "lgamma":
        x = x.abs() + 1
    got, cpu = f(x.to(DEV)), f(x)
    want = ref(np_of64(x))
    if name in ("square", "sgn", "threshold", "hardtanh"):
        assert got.dtype is dtype
        check(got, cpu, np_of64(tp.from_numpy(want).to(dtype)), 0)  # the float64 formula cast to the dtype
    else:
        assert got.dtype is tp.float32
        check(got, cpu, want, 2e-5)


def test_bool_inputs():
    b = sample((4, 9), tp.bool, 3)
    for f in (tp.square, tp.sgn, tp.exp2, tp.isnan, tp.signbit, tp.logical_not):
        check(f(b.to(DEV)), f(b), np_of64(f(b)), 0)  # the CPU op's own dtype rule (square: int64)
    with pytest.raises(RuntimeError):
        tp.threshold(b.to(DEV), 0, 1)
    with pytest.raises(RuntimeError):
        tp.threshold(b, 0, 1)


SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, -np.nan, 1e30, -7.0], dtype=np.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_to_num_and_classification(dtype):
    x = tp.from_numpy(SPECIAL).to(dtype)
    d = x.to(DEV)
    v = np_of64(x)
    big = {
        tp.float16: 65504.0,
        tp.bfloat16: float(np_of64(tp.tensor(3.3895e38).to(tp.bfloat16))),
        tp.float32: float(np.finfo(np.float32).max),
        tp.float64: float(np.finfo(np.float64).max),
    }[dtype]
    want = np.where(np.isnan(v), 0.0, np.where(v == np.inf, big, np.where(v == -np.inf, -big, v)))
    check(tp.nan_to_num(d), tp.nan_to_num(x), want, 0)
    want2 = np.where(np.isnan(v), 1.0, np.where(v == np.inf, 2.0, np.where(v == -np.inf, -3.0, v)))
    got = tp.nan_to_num(d, nan=1.0, posinf=2.0, neginf=-3.0)
    check(got, tp.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0), np_of64(tp.from_numpy(want2).to(dtype)), 0)
    for f, ref in [
        (tp.isnan, np.isnan),
        (tp.isinf, np.isinf),
        (tp.isfinite, np.isfinite),
        (tp.signbit, np.signbit),
    ]:
        got = f(d)
        assert got.dtype is tp.bool
        check(got, f(x), ref(SPECIAL.astype(np.float64) if f is tp.signbit else v).astype(np.float64), 0)
    d2 = d.clone()
    tp.nan_to_num_(d2)
    check(d2, tp.nan_to_num(x), want, 0)


@pytest.mark.parametrize("dtype", INTS + [tp.bool], ids=str)
def test_classification_of_integers(dtype):
    x = sample((3, 5), dtype, 4)
    for f in (tp.isnan, tp.isinf, tp.isfinite, tp.signbit, tp.nan_to_num):
        got, cpu = f(x.to(DEV)), f(x)
        check(got, cpu, np_of64(cpu), 0)
    if dtype in (tp.int8, tp.int64):
        np.testing.assert_array_equal(np_of64(tp.signbit(x.to(DEV))), np_of64(x) < 0)


@pytest.mark.parametrize("name", ["exp2", "digamma", "square", "hardswish", "threshold"])
def test_layouts_sizes_and_forms(name):
    f, ref, kind = FNS[name]
    base = domain(sample((6, 40, 9), tp.float32, 5), kind)
    big = domain(sample((1 << 18) + 3, tp.float32, 6), kind)
    # (tensor on the CPU or the GPU) -> view: taken on each device, so the GPU sees real strides and offsets
    views = [
        (base, lambda t: t.transpose(0, 2)),
        (base, lambda t: t[:, ::3, 1:]),
        (base, lambda t: tp.flip(t, [1])),
        (big, lambda t: t),  # packs plus a 3-element tail
        (big, lambda t: t[1:]),  # unaligned: the plain loop
        (domain(sample((0, 5), tp.float32), kind), lambda t: t),
        (domain(sample((1, 1), tp.float32), kind), lambda t: t),
        (domain(tp.tensor(0.7), kind), lambda t: t),
    ]
    tol = 1e-5 if name == "digamma" else 4e-6
    for src, view in views:
        v = view(src)
        got, cpu = f(view(src.to(DEV))), f(v)
        check(got, cpu, ref(np_of64(v)), tol)
        assert got.stride() == cpu.stride()  # the CPU's layout

    x = domain(sample((7, 8), tp.float32, 7), kind)
    want = ref(np_of64(x))
    d = x.clone().to(DEV)
    version = d._version
    inplace = {"exp2": tp.exp2_, "digamma": tp.digamma_, "square": tp.square_, "hardswish": tp.hardswish_}
    inplace["threshold"] = lambda t: tp.threshold_(t, 0.5, -3.0)
    inplace[name](d.t())  # through a transposed view: the strided form writes in place
    assert d._version > version
    check(d, f(x), want, tol)
    out = tp.empty((7, 8), dtype=tp.float64, device=DEV)
    r = tp.threshold(x.to(DEV), 0.5, -3.0, out=out) if name == "threshold" else f(x.to(DEV), out=out)
    assert r.data_ptr() == out.data_ptr()
    check(out, f(x).double(), want, tol)


def test_errors_match_the_cpu():
    i = sample((3, 4), tp.int32, 8)
    for call in (lambda t: tp.exp2_(t), lambda t: tp.frac(t), lambda t: tp.softshrink(t.float(), -1.0)):
        with pytest.raises(Exception) as cpu_err:
            call(i)
        with pytest.raises(cpu_err.type):
            call(i.to(DEV))
    x = sample((3, 4), tp.float32, 9).to(DEV)
    with pytest.raises(RuntimeError):
        tp.exp2(x, out=tp.empty((3, 4)))  # out on the CPU
    with pytest.raises(RuntimeError):
        tp.exp2(x, out=tp.empty((4, 4), device=DEV))  # out of another shape
    with pytest.raises(RuntimeError, match="signbit"):
        tp.signbit(x, out=tp.empty((3, 4), device=DEV))  # a non-bool out


# ---- backward ops: grad * f'(x) --------------------------------------------------------------------------
def _sig(x):
    return 1 / (1 + np.exp(-x))


BACKWARD = {
    "leaky_relu": (
        lambda g, x: tp.leaky_relu_backward(g, x, 0.2, False),
        lambda g, x: np.where(x > 0, g, 0.2 * g),
    ),
    "elu": (
        lambda g, x: tp.elu_backward(g, 1.5, 0.5, 2.0, False, x),
        lambda g, x: np.where(x > 0, 0.5 * g, g * 2.0 * 0.75 * np.exp(2.0 * x)),
    ),
    "elu_result": (
        lambda g, y: tp.elu_backward(g, 1.5, 0.5, 2.0, True, y),
        lambda g, y: np.where(y > 0, 0.5 * g, g * 2.0 * (y + 0.75)),
    ),
    "mish": (
        tp.mish_backward,
        lambda g, x: g * (np.tanh(_sp(x)) + x * _sig(x) * (1 - np.tanh(_sp(x)) ** 2)),
    ),
    "softplus": (
        lambda g, x: tp.softplus_backward(g, x, 2.0, 3.0),
        lambda g, x: np.where(2 * x > 3, g, g * _sig(2 * x)),
    ),
    "hardtanh": (
        lambda g, x: tp.hardtanh_backward(g, x, -1.0, 1.0),
        lambda g, x: np.where((x <= -1) | (x >= 1), 0.0, g),
    ),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", BACKWARD)
def test_backward_ops(name, dtype):
    f, ref = BACKWARD[name]
    g, x = sample((9, 31), dtype, 10), sample((9, 31), dtype, 11)
    check(f(g.to(DEV), x.to(DEV)), f(g, x), ref(np_of64(g), np_of64(x)), 2 * TOL[dtype])
    # a 0-d gradient broadcast over a transposed input (the strided form)
    g0, xt = tp.tensor(1.5).to(dtype), x.t()
    check(f(g0.to(DEV), x.to(DEV).t()), f(g0, xt), ref(np_of64(g0), np_of64(xt)), 2 * TOL[dtype])


def test_leaky_relu_backward_refuses_a_negative_slope_on_the_result():
    g = sample((3,), tp.float32, 12)
    with pytest.raises(RuntimeError, match="negative slope"):
        tp.leaky_relu_backward(g.to(DEV), g.to(DEV), -0.1, True)
