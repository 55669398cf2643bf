"""Elementwise ops on the GPU: the unary functions and activations (unary.cu), comparisons, maximum, minimum,
pow, where and clamp (compare.cu, unary.cu), and three activation backward ops.

Every GPU result is compared with a float64 NumPy formula computed from the same input values, and with the
CPU op on the same input (the CPU ops are themselves NumPy-checked in test_unary.py, test_activation.py, …):
values, dtype, and for integers bit-exactness. Inputs cover every dtype the CPU op takes, non-contiguous
views, broadcasting, size-0/size-1 shapes, Python numbers and a large input that runs the float4 path with
a tail, and unaligned. They need a GPU and skip elsewhere ("needs a CUDA device"); the first test needs
only NVRTC: every kernel name the C++ ops request is an entry point of the compiled PTX.
"""

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_p10.cuda import _compiler, _loader

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, FLOATS, INTS, needs_cuda, np_of  # noqa: E402
from cuda_testing import sample as shared_sample


def sample(shape, dtype, seed=0, scale=2.0) -> tp.Tensor:
    return shared_sample(shape, dtype, seed, scale, lo=-50, hi=50, ulo=0)


TOL = {tp.float16: 2e-3, tp.bfloat16: 1.6e-2, tp.float32: 2e-6, tp.float64: 1e-12}


# ---- kernel names (NVRTC only, no GPU) ---------------------------------------------------------------------
def test_kernel_names_the_ops_request_exist():
    try:
        _compiler.nvrtc()
    except RuntimeError as e:
        pytest.skip(f"NVRTC is not installed: {e}")
    names = {p.name for p in _loader.kernel_sources()}
    assert {"unary.cu", "compare.cu", "softmax.cu"} <= names

    def entries(src):
        return set(re.findall(r"\.entry\s+(\w+)\(", _compiler.compile_ptx(src, arch=80).decode()))

    fl, it = ["float16", "bfloat16", "float32", "float64"], ["uint8", "int8", "int16", "int32", "int64"]
    unary = entries("unary.cu")
    float_fns = "erf floor ceil trunc round"
    float_fns += " round_decimals leaky_relu elu gelu gelu_tanh silu softplus"
    both = "abs neg sign relu clamp clamp_min clamp_max"
    for fn, dtypes in [(f, fl) for f in float_fns.split()] + [(f, fl + it) for f in both.split()]:
        for t in dtypes:
            assert {f"{fn}_contig_{t}", f"{fn}_strided_{t}"} <= unary, (fn, t)
    for fn in ("threshold_backward", "silu_backward", "gelu_backward", "gelu_tanh_backward"):
        assert {f"{fn}_{form}_{t}" for form in ("contig", "strided") for t in fl} <= unary
    compare = entries("compare.cu")
    for fn in ("eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "pow"):
        for t in ["bool"] + it + fl:
            assert {f"{fn}_{form}_{t}" for form in ("contig", "scalar", "strided")} <= compare, (fn, t)
    assert {f"where_{form}_{t}" for form in ("contig", "strided") for t in ["bool"] + it + fl} <= compare
    soft = entries("softmax.cu")
    assert {f"{p}softmax_{k}_{t}" for p in ("", "log_") for k in ("warp8_vec", "long") for t in fl} <= soft


# ---- helpers -----------------------------------------------------------------------------------------------


def check(got: tp.Tensor, cpu: tp.Tensor, want: np.ndarray, tol: float, nan_ok=False):
    """The GPU result against the CPU op (dtype, shape, values) and against the float64 formula."""
    assert got.device.type == DEV and got.dtype is cpu.dtype and got.shape == cpu.shape
    g = np_of(got).astype(np.float64)
    if tol == 0:
        np.testing.assert_array_equal(g, np_of(cpu).astype(np.float64))
    else:
        np.testing.assert_allclose(g, np_of(cpu).astype(np.float64), rtol=tol, atol=tol, equal_nan=nan_ok)
    np.testing.assert_allclose(g, want, rtol=max(tol, 1e-12), atol=max(tol, 1e-12), equal_nan=nan_ok)


_erf = np.vectorize(math.erf, otypes=[np.float64])
_sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
_k = math.sqrt(2 / math.pi)

# name -> (tensorplay call, float64 formula, input transform that keeps it in the domain)
UNARY = {
    "exp": (tp.exp, np.exp, None),
    "log": (tp.log, np.log, "pos"),
    "log1p": (tp.log1p, np.log1p, "pos"),
    "expm1": (tp.expm1, np.expm1, None),
    "sqrt": (tp.sqrt, np.sqrt, "pos"),
    "rsqrt": (tp.rsqrt, lambda x: 1 / np.sqrt(x), "pos"),
    "sin": (tp.sin, np.sin, None),
    "cos": (tp.cos, np.cos, None),
    "tanh": (tp.tanh, np.tanh, None),
    "sigmoid": (tp.sigmoid, _sig, None),
    "erf": (tp.erf, _erf, None),
    "reciprocal": (tp.reciprocal, lambda x: 1 / x, "pos"),
    "abs": (tp.abs, np.abs, None),
    "neg": (tp.neg, np.negative, None),
    "sign": (tp.sign, np.sign, None),
    "floor": (tp.floor, np.floor, None),
    "ceil": (tp.ceil, np.ceil, None),
    "trunc": (tp.trunc, np.trunc, None),
    "round": (tp.round, np.round, None),
    "relu": (tp.relu, lambda x: np.maximum(x, 0), None),
    "gelu": (tp.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), None),
    "gelu_tanh": (
        lambda x: tp.gelu(x, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(_k * (x + 0.044715 * x**3))),
        None,
    ),
    "silu": (tp.silu, lambda x: x * _sig(x), None),
    "softplus": (tp.softplus, lambda x: np.where(x > 20, x, np.log1p(np.exp(x))), None),
    "softplus_beta": (
        lambda x: tp.softplus(x, beta=2.0, threshold=3.0),
        lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2),
        None,
    ),
    "leaky_relu": (lambda x: tp.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x), None),
    "elu": (
        lambda x: tp.elu(x, alpha=1.5, scale=0.5, input_scale=2.0),
        lambda x: np.where(x > 0, 0.5 * x, 1.5 * 0.5 * np.expm1(2 * x)),
        None,
    ),
}
INT_OK = {"abs", "neg", "sign", "floor", "ceil", "trunc", "round", "relu"}  # keep integer dtypes
INT_TO_FLOAT = {"exp", "log", "sqrt", "sin", "tanh", "sigmoid", "erf", "reciprocal"}  # ints become float32


def domain(x: tp.Tensor, kind) -> tp.Tensor:
    return x.abs() + 0.25 if kind == "pos" else x


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_floats(name, dtype):
    f, ref, kind = UNARY[name]
    x = domain(sample((37, 129), dtype, 1), kind)
    want = ref(np_of(x).astype(np.float64))
    exact = name in ("abs", "neg", "sign", "floor", "ceil", "trunc", "round", "relu")
    check(f(x.to(DEV)), f(x), want, 0 if exact else 2 * TOL[dtype])


@needs_cuda
@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("name", sorted(INT_OK | INT_TO_FLOAT))
def test_unary_integers(name, dtype):
    f, ref, kind = UNARY[name]
    x = sample((5, 33), dtype, 2)
    if kind == "pos" or dtype is tp.uint8:
        x = x.abs() + 1
    got, cpu = f(x.to(DEV)), f(x)
    want = ref(np_of(x).astype(np.float64))
    if name in INT_OK:
        assert got.dtype is dtype
        if name == "neg" and dtype is tp.uint8:  # wraps modulo 256, as on the CPU
            want = (256 - np_of(x).astype(np.float64)) % 256
        check(got, cpu, want, 0)
    else:
        assert got.dtype is tp.float32
        check(got, cpu, want, 2 * TOL[tp.float32])


@needs_cuda
@pytest.mark.parametrize("name", ["exp", "sigmoid", "gelu", "abs", "leaky_relu"])
def test_unary_layouts_sizes_and_forms(name):
    f, ref, kind = UNARY[name]
    base = sample((6, 40, 9), tp.float32, 3)
    views = [
        base.transpose(0, 2),
        base[:, ::3, 1:],
        base.permute(1, 2, 0)[2:5],
        sample((1 << 20) + 3, tp.float32, 4),  # float4 loop plus a 3-element tail
        sample((1 << 20) + 3, tp.float32, 4)[1:],  # unaligned: the plain loop
        sample((0, 5), tp.float32),
        sample((1, 1), tp.float32),
        tp.tensor(0.7),
    ]
    for v in views:
        got, cpu = f(v.to(DEV)), f(v)
        check(got, cpu, ref(np_of(v).astype(np.float64)), 4e-6)
        assert got.stride() == cpu.stride()  # the CPU's layout (a transposed input gives a transposed result)
    # in place (also through a transposed view) and out= of another dtype
    x = sample((7, 8), tp.float32, 5)
    want = ref(np_of(x).astype(np.float64))
    d = x.clone().to(DEV)
    v = d._version
    in_place = {"exp": tp.exp_, "sigmoid": tp.sigmoid_, "gelu": tp.gelu_, "abs": tp.abs_}
    in_place["leaky_relu"] = lambda t: tp.leaky_relu_(t, 0.2)
    in_place[name](d.t())
    assert d._version > v
    np.testing.assert_allclose(np_of(d), want, rtol=4e-6, atol=4e-6)
    if name in ("exp", "sigmoid"):  # abs.out takes only its own dtype
        out = tp.empty(7, 8, dtype=tp.float64, device=DEV)
        getattr(tp, name)(x.to(DEV), out=out)
        assert out.dtype is tp.float64
        np.testing.assert_allclose(np_of(out), want, rtol=4e-6, atol=4e-6)


@needs_cuda
def test_round_decimals_and_special_values():
    x = tp.tensor([2.675, -1.5, 0.5, 1.5, 1234.5678, -0.049])
    for d in (2, 1, -1, -2):
        np.testing.assert_array_equal(np_of(tp.round(x.to(DEV), decimals=d)), np_of(tp.round(x, decimals=d)))
    np.testing.assert_array_equal(np_of(tp.round(x.to(DEV))), np.round(np_of(x)))  # half to even
    s = tp.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0])
    for f in (tp.exp, tp.sign, tp.abs, tp.relu, tp.sigmoid, tp.tanh, tp.silu, tp.sqrt):
        np.testing.assert_array_equal(np_of(f(s.to(DEV))), np_of(f(s)), err_msg=str(f))
    assert np.signbit(np_of(tp.abs(tp.tensor([-0.0]).to(DEV)))).sum() == 0  # abs(-0) = +0


@needs_cuda
def test_unary_bool_and_errors():
    b = tp.tensor([True, False, True]).to(DEV)
    np.testing.assert_array_equal(np_of(tp.sign(b)), [True, False, True])
    np.testing.assert_allclose(np_of(tp.exp(b)), np.exp([1.0, 0.0, 1.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        tp.relu(b)
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        tp.neg(b)
    i = tp.ones(3, dtype=tp.int64, device=DEV)
    with pytest.raises(
        RuntimeError, match="result type float32 can't be cast to the desired output type int64"
    ):
        i.exp_()
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        tp.gelu(tp.ones(2, device=DEV), approximate="bad")
    with pytest.raises(RuntimeError, match=r"exp.out: out has shape .*4.* but the result has shape .*3"):
        tp.exp(tp.ones(3, device=DEV), out=tp.empty(4, device=DEV))
    with pytest.raises(RuntimeError, match="same device"):
        tp.exp(tp.ones(3, device=DEV), out=tp.empty(3))


# ---- activation backward ops ------------------------------------------------------------------------------
BACKWARD = {
    "silu_backward": (tp.silu_backward, lambda g, x: g * _sig(x) * (1 + x * (1 - _sig(x)))),
    "gelu_backward": (
        tp.gelu_backward,
        lambda g, x: (
            g * (0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))
        ),
    ),
    "gelu_tanh_backward": (
        lambda g, x: tp.gelu_backward(g, x, approximate="tanh"),
        lambda g, x: (
            g
            * (
                0.5 * (1 + np.tanh(_k * (x + 0.044715 * x**3)))
                + 0.5 * x * (1 - np.tanh(_k * (x + 0.044715 * x**3)) ** 2) * _k * (1 + 3 * 0.044715 * x * x)
            )
        ),
    ),
    "threshold_backward": (
        lambda g, x: tp.threshold_backward(g, x, 0.3),
        lambda g, x: np.where(x <= 0.3, 0, g),
    ),
}


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", BACKWARD)
def test_activation_backward(name, dtype):
    f, ref = BACKWARD[name]
    g, x = sample((9, 65), dtype, 6), sample((9, 65), dtype, 7)
    gn, xn = np_of(g).astype(np.float64), np_of(x).astype(np.float64)
    check(f(g.to(DEV), x.to(DEV)), f(g, x), ref(gn, xn), 2 * TOL[dtype])
    # a non-contiguous input and a broadcast 0-d gradient
    gt, xt = g.to(DEV).t(), x.to(DEV).t()
    check(f(gt, xt), f(g.t(), x.t()), ref(gn.T, xn.T), 2 * TOL[dtype])
    one = tp.ones((), dtype=dtype)
    check(
        f(one.to(DEV).expand(9, 65), x.to(DEV)),
        f(one.expand(9, 65), x),
        ref(np.ones((9, 65)), xn),
        2 * TOL[dtype],
    )


# ---- comparisons, maximum, minimum, pow --------------------------------------------------------------------
PAIRS = {
    "eq": (lambda a, b: a == b, np.equal),
    "ne": (lambda a, b: a != b, np.not_equal),
    "lt": (lambda a, b: a < b, np.less),
    "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater),
    "ge": (lambda a, b: a >= b, np.greater_equal),
    "maximum": (tp.maximum, np.maximum),
    "minimum": (tp.minimum, np.minimum),
}


def pair_inputs(dtype, shape_a=(6, 70), shape_b=(6, 70), seed=8):
    a, b = sample(shape_a, dtype, seed), sample(shape_b, dtype, seed + 1)
    if dtype is not tp.bool and shape_a == shape_b:  # ties, so that eq/le/ge see equal elements
        b = tp.where(sample(shape_b, tp.bool, seed + 2), b, a)
    return a, b


@needs_cuda
@pytest.mark.parametrize("dtype", [tp.bool] + INTS + FLOATS, ids=str)
@pytest.mark.parametrize("name", PAIRS)
def test_pairs_every_dtype(name, dtype):
    f, ref = PAIRS[name]
    a, b = pair_inputs(dtype)
    want = ref(np_of(a).astype(np.float64), np_of(b).astype(np.float64))
    check(f(a.to(DEV), b.to(DEV)), f(a, b), want.astype(np.float64), 0)


@needs_cuda
@pytest.mark.parametrize("name", PAIRS)
def test_pairs_broadcast_numbers_layouts(name):
    f, ref = PAIRS[name]
    for sa, sb in [((4, 1, 5), (3, 1)), ((1,), (6, 2)), ((2, 3), ()), ((0, 3), (1, 3)), ((1, 1), (1,))]:
        a, b = pair_inputs(tp.float32, sa, sb, seed=9)
        want = ref(np_of(a).astype(np.float64), np_of(b).astype(np.float64))
        check(f(a.to(DEV), b.to(DEV)), f(a, b), want, 0)
    x = sample((33, 20), tp.int32, 10)
    xn = np_of(x).astype(np.float64)
    for number in (3, 2.5, -7):  # a Python number on either side; int < 2.5 compares as float
        check(f(x.to(DEV), number), f(x, number), ref(xn, number), 0)
        if name not in ("maximum", "minimum"):  # these take a tensor first
            check(f(number, x.to(DEV)), f(number, x), ref(number, xn), 0)
    t, u = sample((31, 31), tp.float16, 11), sample((31, 62), tp.float16, 12)
    check(f(t.to(DEV).t(), u.to(DEV)[:, ::2]), f(t.t(), u[:, ::2]), ref(np_of(t).T, np_of(u)[:, ::2]), 0)
    big = sample((1 << 20) + 1, tp.float32, 12)
    check(f(big.to(DEV), 0.5), f(big, 0.5), ref(np_of(big), np.float32(0.5)), 0)


@needs_cuda
def test_pairs_nan_mixed_dtypes_and_forms():
    nan = float("nan")
    a = tp.tensor([1.0, nan, 3.0, nan, -0.0])
    b = tp.tensor([nan, 2.0, 1.0, nan, 0.0])
    for name, (f, ref) in PAIRS.items():
        np.testing.assert_array_equal(np_of(f(a.to(DEV), b.to(DEV))), ref(np_of(a), np_of(b)), err_msg=name)
    i, h = tp.arange(6, dtype=tp.int32), tp.arange(6, dtype=tp.float16) * 0.5
    assert tp.maximum(i.to(DEV), h.to(DEV)).dtype is tp.float16  # promotion, as on the CPU
    assert (i.to(DEV) < h.to(DEV)).dtype is tp.bool
    np.testing.assert_array_equal(
        np_of(tp.maximum(i.to(DEV), h.to(DEV))), np.maximum(np.arange(6), np.arange(6) * 0.5)
    )
    d = sample((4, 5), tp.float32, 13).to(DEV)
    e = d.clone()
    d.lt_(0.0)  # in place: 0/1 in self's own dtype
    assert d.dtype is tp.float32
    np.testing.assert_array_equal(np_of(d), (np_of(e) < 0).astype(np.float32))
    out = tp.empty(4, 5, dtype=tp.int64, device=DEV)
    tp.gt(e, 0, out=out)
    np.testing.assert_array_equal(np_of(out), (np_of(e) > 0).astype(np.int64))
    m = e.clone()
    m.t().maximum_(tp.zeros(5, 1, device=DEV))
    np.testing.assert_array_equal(np_of(m), np.maximum(np_of(e), 0))
    with pytest.raises(RuntimeError, match="same device"):
        tp.maximum(e, tp.zeros(4, 5))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tp.ones(3, dtype=tp.int64, device=DEV).maximum_(tp.ones(3, device=DEV))


POW_CASES = [
    (tp.float32, 2),
    (tp.float32, 0.5),
    (tp.float32, 3.0),
    (tp.float32, -1.5),
    (tp.float64, 2.5),
    (tp.float16, 2),
    (tp.bfloat16, 3),
    (tp.int64, 3),
    (tp.int32, 0),
    (tp.int8, 5),
    (tp.uint8, 2),
]


@needs_cuda
@pytest.mark.parametrize("dtype,e", POW_CASES, ids=str)
def test_pow(dtype, e):
    x = sample((9, 40), dtype, 14)
    if dtype in FLOATS:
        x = x.abs() * 0.5 + 0.5  # x ** x stays finite in float16
    xn = np_of(x).astype(np.float64)
    tol = 0 if dtype in INTS else 2 * TOL[dtype]
    want = np_of(x**e).astype(np.float64) if dtype in (tp.int8, tp.uint8) else xn**e  # narrow ints wrap
    check(x.to(DEV) ** e, x**e, want, tol)
    check(tp.pow(x.to(DEV), x.to(DEV)[:1]), tp.pow(x, x[:1]), np_of(tp.pow(x, x[:1])).astype(np.float64), tol)
    if dtype in FLOATS:
        check(2 ** x.to(DEV), 2**x, 2.0**xn, tol)
        check(tp.pow(x.to(DEV), x.to(DEV)), tp.pow(x, x), xn**xn, tol)


@needs_cuda
def test_pow_integer_rules():
    base = tp.tensor([-3, -1, 0, 1, 2, 3], dtype=tp.int64)
    ex = tp.tensor([-2, -3, 2, -1, 62, 41], dtype=tp.int64)  # negative powers, and wrapping products
    np.testing.assert_array_equal(np_of(tp.pow(base.to(DEV), ex.to(DEV))), np_of(tp.pow(base, ex)))
    np.testing.assert_array_equal(np_of(tp.pow(base, ex))[:4], [0, -1, 0, 1])
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        base.to(DEV) ** -1
    assert (base.to(DEV) ** 2.0).dtype is tp.float32
    b = tp.tensor([True, False]).to(DEV)
    np.testing.assert_array_equal(np_of(b**0), [True, True])
    np.testing.assert_array_equal(np_of(b**1), [True, False])


# ---- where and clamp ---------------------------------------------------------------------------------------
@needs_cuda
@pytest.mark.parametrize(
    "dtype", [tp.bool, tp.uint8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str
)
def test_where(dtype):
    c, a, b = sample((5, 1, 7), tp.bool, 15), sample((3, 7), dtype, 16), sample((5, 3, 1), dtype, 17)
    want = np.where(np_of(c), np_of(a), np_of(b)).astype(np.float64)
    check(tp.where(c.to(DEV), a.to(DEV), b.to(DEV)), tp.where(c, a, b), want, 0)
    a2, b2 = sample((5, 3, 7), dtype, 18), sample((5, 3, 7), dtype, 19)
    c2 = sample((5, 3, 7), tp.bool, 20)
    want = np.where(np_of(c2), np_of(a2), np_of(b2)).astype(np.float64)
    check(tp.where(c2.to(DEV), a2.to(DEV), b2.to(DEV)), tp.where(c2, a2, b2), want, 0)


@needs_cuda
def test_where_numbers_promotion_out_and_errors():
    c = tp.tensor([[True, False, True]])
    x = tp.arange(6, dtype=tp.int32).reshape(2, 3)
    got = tp.where(c.to(DEV), x.to(DEV), 1.5)
    assert got.dtype is tp.float32 and got.shape == (2, 3)
    np.testing.assert_array_equal(np_of(got), np.where(np_of(c), np_of(x), 1.5))
    np.testing.assert_array_equal(np_of(tp.where(c.to(DEV), 2, -1)), np_of(tp.where(c, 2, -1)))
    out = tp.empty(2, 3, dtype=tp.float64, device=DEV)
    tp.where(c.to(DEV), x.to(DEV), x.to(DEV).t().t() * 0, out=out)
    np.testing.assert_array_equal(np_of(out), np.where(np_of(c), np_of(x), 0))
    assert tp.where(tp.zeros(0, 3, dtype=tp.bool, device=DEV), 1.0, 0.0).shape == (0, 3)
    with pytest.raises(RuntimeError, match="bool"):
        tp.where(x.to(DEV), x.to(DEV), x.to(DEV))


@needs_cuda
@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=str)
def test_clamp_numbers(dtype):
    x = sample((8, 50), dtype, 21)
    xn = np_of(x).astype(np.float64)
    for lo, hi in [(1, 3), (0, None), (None, 2), (5, 1)]:  # min > max gives max everywhere
        got, cpu = tp.clamp(x.to(DEV), lo, hi), tp.clamp(x, lo, hi)
        want = xn if lo is None else np.maximum(xn, lo)
        want = want if hi is None else np.minimum(want, hi)
        check(got, cpu, want, 0)
        check(tp.clip(x.to(DEV).t(), lo, hi), tp.clip(x.t(), lo, hi), want.T, 0)
    if dtype in INTS:
        assert tp.clamp(x.to(DEV), 0.5).dtype is tp.float32  # a float bound promotes, as on the CPU


@needs_cuda
def test_clamp_tensor_bounds_nan_and_forms():
    nan = float("nan")
    x = tp.tensor([[-2.0, nan, 0.5, 3.0], [1.0, 2.0, -1.0, 0.0]])
    lo, hi = tp.tensor([-1.0, 0.0, nan, 0.0]), tp.tensor([[1.0], [0.5]])
    for a, b in [(lo, hi), (lo, None), (None, hi)]:
        got = tp.clamp(x.to(DEV), a.to(DEV) if a is not None else None, b.to(DEV) if b is not None else None)
        np.testing.assert_array_equal(np_of(got), np_of(tp.clamp(x, a, b)))
    want = np.minimum(np.maximum(np_of(x), np_of(lo)), np_of(hi))  # NumPy's maximum/minimum propagate NaN too
    np.testing.assert_array_equal(np_of(tp.clamp(x.to(DEV), lo.to(DEV), hi.to(DEV))), want)
    d = x.clone().to(DEV)
    d.clamp_(-0.5, 0.5)
    np.testing.assert_array_equal(np_of(d), np.clip(np_of(x), -0.5, 0.5))
    out = tp.empty(2, 4, dtype=tp.float64, device=DEV)
    tp.clamp(x.to(DEV), max=0.0, out=out)
    np.testing.assert_array_equal(np_of(out), np.minimum(np_of(x), 0.0))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        tp.clamp(x.to(DEV))
