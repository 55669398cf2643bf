"""Unary ops (kernels/unary*.cpp) against NumPy and float64 references: the float and special functions for
every dtype, promotion, complex inputs, special values; and for all unary ops layouts, size-0 and 0-d
tensors, meta, in-place on views, out= and PyTorch itself. Sign, rounding, nan_to_num, classification and
the complex parts are in test_unary_exact.py."""

import math
from fractions import Fraction

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)

FLOATS = [tp.float32, tp.float64, tp.float16, tp.bfloat16]
# Relative tolerance per result dtype: a few ulp of the dtype (16-bit floats are computed in float32 and
# rounded once, so their error is the rounding of the output).
RTOL = {tp.float32: 1e-5, tp.float64: 1e-12, tp.float16: 2e-3, tp.bfloat16: 1.6e-2}


def erf_ref(x):
    return np.vectorize(math.erf, otypes=[float])(x)


def erfc_ref(x):
    return np.vectorize(math.erfc, otypes=[float])(x)


def lgamma_ref(x):
    def one(v):
        try:
            return math.lgamma(v)
        except ValueError:  # math raises at the poles; the function's value there is +inf
            return math.inf

    return np.vectorize(one, otypes=[float])(x)


# B_2k / (2k) for k = 1..10, from exact Bernoulli numbers (Akiyama–Tanigawa), for the digamma series.
def _bernoulli_over_2k(n):
    out, a = [], []
    for m in range(2 * n + 1):
        a.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        if m >= 2 and m % 2 == 0:
            out.append(a[0] / m)
    return [float(v) for v in out]


_B2K = _bernoulli_over_2k(10)


def _digamma_one(x):
    """digamma in float64: reflection below 0, recurrence up to 20, asymptotic series (10 terms) above."""
    if x == 0:
        return math.copysign(math.inf, -x)
    if math.isnan(x) or x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    if x == math.inf:
        return math.inf
    if x < 0:
        return _digamma_one(1 - x) - math.pi / math.tan(math.pi * (x - math.trunc(x)))
    acc = 0.0
    while x < 20:
        acc -= 1 / x
        x += 1
    z = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - sum(b * z ** (k + 1) for k, b in enumerate(_B2K))


def digamma_ref(x):
    return np.vectorize(_digamma_one, otypes=[float])(x)


def erfinv_ref(x):
    """Bisection on math.erf in float64: slow but plainly correct (used for a handful of values only)."""

    def one(y):
        if math.isnan(y) or abs(y) > 1:
            return math.nan
        if abs(y) == 1:
            return math.copysign(math.inf, y)
        lo, hi = -6.0, 6.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
        return (lo + hi) / 2

    return np.vectorize(one, otypes=[float])(x)


def sigmoid_ref(x):
    return 1 / (1 + np.exp(-x))


def logit_ref(x):
    return np.log(x / (1 - x))


# name -> (float64 reference, sampling range (lo, hi), accepts complex)
FLOAT_OPS = {
    "exp": (np.exp, (-5, 5), True),
    "exp2": (np.exp2, (-5, 5), True),
    "expm1": (np.expm1, (-3, 3), True),
    "log": (np.log, (0.01, 10), True),
    "log2": (np.log2, (0.01, 10), True),
    "log10": (np.log10, (0.01, 10), True),
    "log1p": (np.log1p, (-0.9, 10), True),
    "sqrt": (np.sqrt, (0, 10), True),
    "rsqrt": (lambda v: 1 / np.sqrt(v), (0.01, 10), True),
    "reciprocal": (lambda v: 1 / v, (0.1, 10), True),
    "sin": (np.sin, (-4, 4), True),
    "cos": (np.cos, (-4, 4), True),
    "tan": (np.tan, (-1.2, 1.2), True),
    "asin": (np.arcsin, (-0.99, 0.99), True),
    "acos": (np.arccos, (-0.99, 0.99), True),
    "atan": (np.arctan, (-5, 5), True),
    "sinh": (np.sinh, (-4, 4), True),
    "cosh": (np.cosh, (-4, 4), True),
    "tanh": (np.tanh, (-4, 4), True),
    "asinh": (np.arcsinh, (-5, 5), True),
    "acosh": (np.arccosh, (1, 10), True),
    "atanh": (np.arctanh, (-0.95, 0.95), True),
    "sigmoid": (sigmoid_ref, (-8, 8), True),
    "logit": (logit_ref, (0.02, 0.98), False),
    "erf": (erf_ref, (-3, 3), False),
    "erfc": (erfc_ref, (-3, 3), False),
    "erfinv": (erfinv_ref, (-0.99, 0.99), False),
    "lgamma": (
        lgamma_ref,
        (2.5, 8),
        False,
    ),  # away from the roots at 1 and 2, where relative error is unbounded
    "digamma": (digamma_ref, (2, 8), False),
    "deg2rad": (np.deg2rad, (-360, 360), False),
    "rad2deg": (np.rad2deg, (-7, 7), False),
}


def as_tp(a, dtype):
    return tp.tensor(np.asarray(a, np.float64), dtype=dtype)


def to_np(x):
    return (x.double() if x.dtype in (tp.float16, tp.bfloat16) else x).numpy()


def sample(lo, hi, shape=(4, 5)):
    return rng.uniform(lo, hi, shape)


# ---- float functions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FLOAT_OPS))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_functions_against_float64(name, dtype):
    ref, (lo, hi), _ = FLOAT_OPS[name]
    x = as_tp(sample(lo, hi), dtype)
    src = x.double().numpy()  # the values the kernel really saw, after rounding to dtype
    got = getattr(tp, name)(x)
    assert got.dtype is dtype and got.shape == x.shape
    rtol = RTOL[dtype]
    np.testing.assert_allclose(to_np(got), ref(src), rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize("name", list(FLOAT_OPS))
@pytest.mark.parametrize("dtype", [tp.int64, tp.int32, tp.uint8, tp.bool], ids=str)
def test_float_functions_promote_integers_to_the_default_dtype(name, dtype):
    ref, (lo, hi), _ = FLOAT_OPS[name]
    vals = np.array([0, 1, 2, 5]) if dtype is not tp.bool else np.array([0, 1])
    x = tp.tensor(vals, dtype=dtype)
    got = getattr(tp, name)(x)
    assert got.dtype is tp.float32
    with np.errstate(all="ignore"):
        want = ref(vals.astype(np.float64))
    np.testing.assert_allclose(got.double().numpy(), want.astype(np.float32), rtol=1e-5, equal_nan=True)
    prev = tp.get_default_dtype()
    tp.set_default_dtype(tp.float64)
    try:
        assert getattr(tp, name)(x).dtype is tp.float64
    finally:
        tp.set_default_dtype(prev)


COMPLEX_OPS = [n for n, (_, _, c) in FLOAT_OPS.items() if c]


@pytest.mark.parametrize("name", COMPLEX_OPS)
@pytest.mark.parametrize("dtype", [tp.complex64, tp.complex128], ids=str)
def test_float_functions_on_complex(name, dtype):
    ref = FLOAT_OPS[name][0]
    z = rng.uniform(-2, 2, 12) + 1j * rng.uniform(0.1, 2, 12) * rng.choice([-1, 1], 12)  # off the branch cuts
    x = tp.tensor(z, dtype=dtype)
    src = x.numpy().astype(np.complex128)
    got = getattr(tp, name)(x)
    assert got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), ref(src), rtol=1e-5 if dtype is tp.complex64 else 1e-12)


def test_expm1_and_log1p_stay_accurate_near_zero_for_complex():
    z = np.array([1e-10 + 1e-10j, -3e-9 + 2e-12j])
    # first-order Taylor terms dominate: expm1(z) ≈ z + z²/2, log1p(z) ≈ z - z²/2
    np.testing.assert_allclose(tp.expm1(tp.tensor(z)).numpy(), z + z * z / 2, rtol=1e-12)
    np.testing.assert_allclose(tp.log1p(tp.tensor(z)).numpy(), z - z * z / 2, rtol=1e-12)


@pytest.mark.parametrize(
    "name", ["logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "deg2rad", "rad2deg"]
)
def test_real_only_functions_refuse_complex(name):
    x = tp.tensor([1 + 1j])
    err = RuntimeError if name in ("deg2rad", "rad2deg") else NotImplementedError
    with pytest.raises(err, match=name):
        getattr(tp, name)(x)


@pytest.mark.parametrize("name", list(FLOAT_OPS))
def test_float_special_values_match_numpy(name):
    ref = FLOAT_OPS[name][0]
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, 0.5])
    with np.errstate(all="ignore"):
        want = ref(special)
    if name == "erfinv":  # erfinv(±0) keeps the sign; ±1 map to ±inf
        want = np.array([np.nan, np.nan, np.nan, 0.0, -0.0, np.inf, -np.inf, np.nan, erfinv_ref(0.5)])
    if name == "lgamma":
        want[2] = np.inf  # lgamma(-inf) = +inf (PyTorch, C99); math.lgamma raises
    got = getattr(tp, name)(tp.tensor(special, dtype=tp.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(np.signbit(got[3:5]), np.signbit(want[3:5]))  # signed zeros


def test_logit_eps_clamps_and_keeps_nan():
    x = tp.tensor([0.0, 0.25, 1.0, math.nan, 2.0])
    np.testing.assert_allclose(
        tp.logit(x).numpy(), [-np.inf, math.log(1 / 3), np.inf, np.nan, np.nan], rtol=1e-6
    )
    c = np.clip([0.0, 0.25, 1.0, 2.0], 0.1, 0.9)
    got = tp.logit(x, eps=0.1).numpy()
    np.testing.assert_allclose(got[[0, 1, 2, 4]], np.log(c / (1 - c)), rtol=1e-6)
    assert math.isnan(got[3])
    np.testing.assert_array_equal(
        tp.logit(x, eps=-1.0).numpy(), tp.logit(x).numpy()
    )  # negative eps: no clamp
    assert tp.ones(2).logit_(0.25).tolist() == pytest.approx([math.log(3)] * 2)


# ---- special functions: independent checks -----------------------------------------------------------------


def test_erfinv_inverts_erf_to_full_precision():
    y = np.concatenate([rng.uniform(-1, 1, 200), [1 - 1e-12, -(1 - 1e-15), 1e-300, 0.9999999]])
    t = tp.erfinv(tp.tensor(y)).numpy()
    np.testing.assert_allclose(erf_ref(t), y, rtol=2e-16, atol=2e-16)
    tail = y > 0.5  # the tail through erfc, relative to 1 - y, which erf(t) - y could not resolve
    np.testing.assert_allclose(erfc_ref(t[tail]), 1 - y[tail], rtol=1e-12)
    # Values printed by torch 2.13.0: torch.erfinv(torch.tensor([0.5, 0.9, -0.3, 0.999, 1 - 1e-12],
    # dtype=torch.float64)).tolist()
    torch_values = [
        0.4769362762044699,
        1.1630871536766743,
        -0.2724627147267543,
        2.3267537655135246,
        5.042031898572696,
    ]
    got = tp.erfinv(tp.tensor([0.5, 0.9, -0.3, 0.999, 1 - 1e-12], dtype=tp.float64)).tolist()
    np.testing.assert_allclose(got, torch_values, rtol=1e-14)


def test_digamma_identities_and_derivative_of_lgamma():
    euler = 0.5772156649015329
    x = tp.tensor([1.0, 0.5, 5.0, 0.0, -0.0, -3.0], dtype=tp.float64)
    got = tp.digamma(x).tolist()
    harmonic4 = 1 + 1 / 2 + 1 / 3 + 1 / 4
    np.testing.assert_allclose(got[:3], [-euler, -euler - 2 * math.log(2), harmonic4 - euler], rtol=1e-14)
    assert got[3] == -math.inf and got[4] == math.inf and math.isnan(got[5])  # PyTorch's pole conventions
    v = np.concatenate([rng.uniform(0.05, 30, 100), rng.uniform(-5, -0.05, 50)])
    np.testing.assert_allclose(tp.digamma(tp.tensor(v)).numpy(), digamma_ref(v), rtol=1e-12, atol=1e-12)
    h = 1e-5  # central difference of lgamma, error O(h²)
    d = (lgamma_ref(v[:100] + h) - lgamma_ref(v[:100] - h)) / (2 * h)
    np.testing.assert_allclose(tp.digamma(tp.tensor(v[:100])).numpy(), d, rtol=1e-6, atol=1e-6)


def test_lgamma_poles_and_negative_values():
    x = tp.tensor([0.0, -1.0, -2.0, -0.5, -2.5, 1.0, 2.0], dtype=tp.float64)
    got = tp.lgamma(x).tolist()
    assert got[:3] == [math.inf] * 3 and got[5] == 0.0 and got[6] == 0.0
    np.testing.assert_allclose(got[3:5], [math.lgamma(-0.5), math.lgamma(-2.5)], rtol=1e-14)


# ---- layouts, shapes, in-place, out= -------------------------------------------------------------------

SAMPLED = [
    "exp",
    "sqrt",
    "sigmoid",
    "digamma",
    "abs",
    "floor",
    "sign",
    "nan_to_num",
    "isnan",
    "signbit",
    "angle",
]


@pytest.mark.parametrize("name", SAMPLED)
def test_layouts_match_contiguous(name):
    a = rng.uniform(0.1, 4, (6, 8)).astype(np.float32)
    base = tp.tensor(a)
    want = getattr(tp, name)(base).numpy()
    t = tp.tensor(np.ascontiguousarray(a.T)).t()  # transposed storage, same values
    r = getattr(tp, name)(t)
    np.testing.assert_array_equal(r.numpy(), want)
    assert r.stride() == (1, 6)  # the output follows the input's layout, as in PyTorch
    big = np.zeros((12, 16), np.float32)
    big[::2, ::2] = a
    np.testing.assert_array_equal(getattr(tp, name)(tp.tensor(big)[::2, ::2]).numpy(), want)
    e = getattr(tp, name)(tp.empty(0, 3))
    assert e.shape == (0, 3)
    s = getattr(tp, name)(tp.tensor(2.0))
    assert s.dim() == 0 and s.item() == getattr(tp, name)(tp.tensor([2.0]))[0].item()
    m = getattr(tp, name)(tp.empty(2, 3, device="meta"))
    assert m.device.type == "meta" and m.shape == (2, 3) and m.dtype is getattr(tp, name)(tp.ones(1)).dtype


@pytest.mark.parametrize(
    "name",
    [n for n in FLOAT_OPS]
    + ["abs", "neg", "sign", "sgn", "square", "floor", "ceil", "trunc", "round", "frac", "nan_to_num"],
)
def test_inplace_on_a_view_bumps_the_base_version(name):
    a = rng.uniform(0.1, 0.9, (3, 4))
    base = tp.tensor(a)
    want = getattr(tp, name)(tp.tensor(a)).numpy().T
    v = base._version
    view = base.t()
    r = getattr(view, name + "_")()
    assert r is view and base._version > v
    np.testing.assert_array_equal(view.numpy(), want)


UNARY_FLOAT_FAMILY = (
    "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin acos atan sinh cosh tanh"
    " asinh acosh atanh sigmoid deg2rad rad2deg logit"
).split()


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name", UNARY_FLOAT_FAMILY)
def test_float_family_meta_rule_gives_the_cpu_result_and_errors(name):
    # ops/unary_float.h: the Meta kernel is the family's meta rule alone, the one the CPU loop is built from.
    f = getattr(tp, name)
    for dtype in (tp.int32, tp.bool, tp.float16, tp.float64):
        cpu = tp.ones(4, 3, dtype=dtype).t()  # a transposed layout: the result follows it
        meta = tp.empty_strided((3, 4), (1, 3), dtype=dtype, device="meta")
        want, got = f(cpu), f(meta)
        assert got.device.type == "meta" and got.dtype is want.dtype
        assert got.shape == want.shape and got.stride() == want.stride()
    out = tp.empty(0, device="meta")
    assert f(tp.empty(2, 5, device="meta"), out=out) is out and out.shape == (2, 5)
    # in place on an integer tensor, and a complex input: the same exception and message as on the CPU
    assert _error(lambda: getattr(tp.ones(2, dtype=tp.int64, device="meta"), name + "_")()) == _error(
        lambda: getattr(tp.ones(2, dtype=tp.int64), name + "_")()
    )
    assert _error(lambda: f(tp.empty(2, dtype=tp.complex64, device="meta"))) == _error(
        lambda: f(tp.ones(2, dtype=tp.complex64))
    )


def test_inplace_dtype_rules():
    i = tp.tensor([1, 4])
    with pytest.raises(
        RuntimeError, match="exp_: result type float32 can't be cast to the desired output type int64"
    ):
        i.exp_()
    assert i.abs_().tolist() == [1, 4] and i.floor_().tolist() == [1, 4]
    h = tp.tensor([1.0, 4.0], dtype=tp.float16)
    assert h.sqrt_() is h and h.dtype is tp.float16 and h.tolist() == [1.0, 2.0]


def test_out_forms():
    x = tp.tensor([[0.5, 1.0], [2.0, 4.0]])
    o = tp.empty(2, 2)
    assert tp.exp(x, out=o) is o
    np.testing.assert_allclose(o.numpy(), np.exp(x.numpy()), rtol=1e-6)
    o64 = tp.empty(2, 2, dtype=tp.float64)  # float functions: any dtype the result can be cast to
    tp.log(x, out=o64)
    np.testing.assert_allclose(o64.numpy(), np.log(x.numpy().astype(np.float64)), rtol=1e-6)
    oc = tp.empty(2, 2, dtype=tp.complex64)
    tp.sqrt(x, out=oc)
    np.testing.assert_allclose(oc.numpy().real, np.sqrt(x.numpy()), rtol=1e-6)
    with pytest.raises(
        RuntimeError, match="exp.out: result type float32 can't be cast to the desired output type"
    ):
        tp.exp(x, out=tp.empty(2, 2, dtype=tp.int64))
    # dtype-keeping ops: out= must have the result dtype exactly (PyTorch's rule)
    for name in ["neg", "abs", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "nan_to_num"]:
        with pytest.raises(RuntimeError, match=f"{name}.out: Found dtype float64 but expected float32"):
            getattr(tp, name)(x, out=tp.empty(2, 2, dtype=tp.float64))
    r = tp.empty(0)  # a wrong-shaped out= is resized
    tp.floor(x, out=r)
    assert r.shape == (2, 2) and r.tolist() == [[0, 1], [2, 4]]
    ri = tp.empty(3, dtype=tp.int64)
    assert tp.square(tp.tensor([1, 2, 3]), out=ri).tolist() == [1, 4, 9]
    ov = tp.zeros(2, 4)[:, ::2]  # out= a non-contiguous view of the right shape
    tp.sqrt(x, out=ov)
    np.testing.assert_allclose(ov.numpy(), np.sqrt(x.numpy()), rtol=1e-6)
    v = o._version
    tp.round(x, decimals=1, out=o)
    assert o._version > v


def test_methods_and_functions_come_from_the_op_registry():
    x = tp.tensor([0.25, 0.5])
    for name in [
        "exp",
        "erfinv",
        "digamma",
        "nan_to_num",
        "isnan",
        "angle",
        "conj",
        "logit",
        "round",
    ]:
        np.testing.assert_array_equal(getattr(x, name)().numpy(), getattr(tp, name)(x).numpy())
    assert x.real.tolist() == tp.real(x).tolist()  # real / imag are properties, as in PyTorch
    assert (-x).tolist() == [-0.25, -0.5] and abs(-x).tolist() == [0.25, 0.5]


def test_large_tensor_parallel_path():
    n = 1 << 20
    a = rng.uniform(-3, 3, n).astype(np.float32)
    a[::1000] = np.nan
    x = tp.from_numpy(a)
    np.testing.assert_allclose(tp.exp(x).numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(tp.isnan(x).numpy(), np.isnan(a))
    np.testing.assert_array_equal(tp.floor(x).numpy(), np.floor(a))
    t = tp.from_numpy(np.ascontiguousarray(a.reshape(1024, 1024).T)).t()
    np.testing.assert_array_equal(tp.nan_to_num(t).numpy(), np.nan_to_num(a.reshape(1024, 1024)))


# ---- PyTorch itself, where installed -----------------------------------------------------------------------

KEEP = ["abs", "neg", "sign", "sgn", "square", "floor", "ceil", "trunc", "round", "frac", "nan_to_num"]
ALL_OPS = list(FLOAT_OPS) + KEEP + ["isnan", "isinf", "isfinite", "signbit", "angle"]


@pytest.mark.parametrize("name", ALL_OPS)
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    vals = [math.nan, -0.0, 0.0, -2.5, 1.5, 0.5, -0.5, 0.3, -0.9, 0.999, 2.0, 10.0, -7.3, math.inf, -math.inf]
    for tdt, dt in [(torch.float32, tp.float32), (torch.float64, tp.float64), (torch.float16, tp.float16)]:
        want = getattr(torch, name)(torch.tensor(vals, dtype=tdt))
        got = getattr(tp, name)(tp.tensor(vals, dtype=dt))
        assert str(got.dtype) == str(want.dtype).replace("torch.", "tensorplay.")
        w = want.double().numpy() if want.is_floating_point() else want.numpy()
        rtol = {tp.float16: 1e-3, tp.float32: 1e-6}.get(dt, 1e-13)
        # atol: PyTorch computes digamma and lgamma of float32 in float32 (we use double), so near their
        # roots the two differ by float32 rounding in absolute terms; it also covers subnormals (erfc(10))
        np.testing.assert_allclose(to_np(got), w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=str(dt))
    ints = [-5, -1, 0, 1, 3]
    if name not in ("frac",):
        want = getattr(torch, name)(torch.tensor(ints))
        got = getattr(tp, name)(tp.tensor(ints))
        assert str(got.dtype) == str(want.dtype).replace("torch.", "tensorplay.")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, equal_nan=True)
