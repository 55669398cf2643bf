"""Binary elementwise ops beyond + - * /: floor_divide, remainder, fmod, pow, float_power, atan2, hypot,
logaddexp(2), maximum/minimum, fmax/fmin, copysign, nextafter, xlogy — and the ternary ones: lerp, addcmul,
addcdiv, clamp/clip, where. Every value is checked against NumPy (or a float64 formula)."""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)

NP = {
    tp.uint8: np.uint8,
    tp.int8: np.int8,
    tp.int16: np.int16,
    tp.int32: np.int32,
    tp.int64: np.int64,
    tp.float16: np.float16,
    tp.float32: np.float32,
    tp.float64: np.float64,
    tp.bool: np.bool_,
}
INTS = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64]
FLOATS = [tp.float16, tp.bfloat16, tp.float32, tp.float64]


def values(dtype, shape, lo=-6, hi=6, nonzero=False):
    """Random values of `dtype` as a float64 array (exactly representable in `dtype`)."""
    if dtype is tp.bool:
        return rng.integers(0, 2, shape).astype(np.float64)
    if dtype in INTS:
        lo = 0 if dtype is tp.uint8 else lo
        a = rng.integers(lo, hi, shape).astype(np.float64)
    else:
        a = np.round(rng.uniform(lo, hi, shape), 2)
    if nonzero:
        a[a == 0] = 1
    return tp.tensor(a).to(dtype).double().numpy()  # round to the dtype (bfloat16 included)


def as_tp(a, dtype):
    return tp.tensor(a, dtype=tp.float64).to(dtype)


def xlogy_ref(x, y):
    with np.errstate(all="ignore"):
        r = x * np.log(y)
    r = np.where((x == 0) & ~np.isnan(y), 0.0, r)
    return np.where(np.isnan(y), np.nan, r)


def remainder_ref(a, b):
    return np.remainder(a, b)


# name, NumPy reference on float64 values, dtypes, int inputs promote to float32?, positive base (pow)
OPS = [
    ("floor_divide", np.floor_divide, INTS + FLOATS, False),
    ("remainder", np.remainder, INTS + FLOATS, False),
    ("fmod", np.fmod, INTS + FLOATS, False),
    ("true_divide", np.true_divide, INTS + FLOATS, True),
    ("atan2", np.arctan2, INTS + FLOATS, True),
    ("hypot", np.hypot, FLOATS, False),
    ("logaddexp", np.logaddexp, FLOATS, False),
    ("logaddexp2", np.logaddexp2, FLOATS, False),
    ("maximum", np.maximum, [tp.bool] + INTS + FLOATS, False),
    ("minimum", np.minimum, [tp.bool] + INTS + FLOATS, False),
    ("fmax", np.fmax, [tp.bool] + INTS + FLOATS, False),
    ("fmin", np.fmin, [tp.bool] + INTS + FLOATS, False),
    ("copysign", np.copysign, INTS + FLOATS, True),
    ("xlogy", xlogy_ref, INTS + FLOATS, True),
]
CASES = [(name, ref, dt, itf) for name, ref, dts, itf in OPS for dt in dts]


def expected(ref, a, b, dtype, out_dtype):
    """The float64 reference, computed at the precision the op computes in (float32 for 16-bit floats)."""
    if out_dtype in (tp.float16, tp.bfloat16):
        a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        r = ref(a, b)
    if dtype in INTS and out_dtype in INTS:
        r = r.astype(NP[dtype])
    return np.asarray(r, dtype=np.float64)


def assert_close(got, want, dtype, name=""):
    tol = {tp.float16: 1e-3, tp.bfloat16: 8e-3, tp.float32: 1e-6}.get(dtype, 1e-12)
    np.testing.assert_allclose(got.double().numpy(), want, rtol=tol, atol=tol, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name,ref,dtype,int_to_float", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_against_numpy(name, ref, dtype, int_to_float):
    nz = name in ("floor_divide", "remainder", "fmod") and dtype in INTS
    a, b = values(dtype, (3, 5)), values(dtype, (3, 5), nonzero=nz)
    if name == "xlogy":
        a[0, :2] = 0  # 0 * log(0) == 0 and 0 * log(y) == 0
        b[0, 0] = 0
    out_dtype = tp.float32 if int_to_float and dtype in INTS + [tp.bool] else dtype
    op = getattr(tp, name)
    got = op(as_tp(a, dtype), as_tp(b, dtype))
    assert got.dtype is out_dtype
    want = expected(ref, a, b, dtype, out_dtype)
    assert_close(got, want, out_dtype, name)
    # the same through a transposed, a strided and a broadcast operand
    ta = as_tp(np.ascontiguousarray(a.T), dtype).t()
    big = np.zeros((3, 10))
    big[:, ::2] = b
    sb = as_tp(big, dtype)[:, ::2]
    assert_close(op(ta, sb), want, out_dtype, name + " layouts")
    row = b[1:2]
    assert_close(
        op(as_tp(a, dtype), as_tp(row[0], dtype)), expected(ref, a, row, dtype, out_dtype), out_dtype
    )
    # in place and out=
    if out_dtype is dtype:
        x = as_tp(a, dtype)
        assert getattr(x, name + "_")(as_tp(b, dtype)) is x
        assert_close(x, want, dtype, name + "_")
    out = tp.empty(0, dtype=out_dtype)
    assert op(as_tp(a, dtype), as_tp(b, dtype), out=out) is out and out.shape == (3, 5)
    assert_close(out, want, out_dtype, name + ".out")


@pytest.mark.parametrize("name", [o[0] for o in OPS])
def test_size0_0d_and_meta(name):
    op = getattr(tp, name)
    x = tp.ones(0, 3) * 2
    assert op(x, tp.ones(3)).shape == (0, 3)
    r = op(tp.tensor(2.0), tp.tensor(3.0))
    assert r.shape == () and math.isfinite(r.item())
    m = op(tp.empty(2, 3, device="meta"), tp.empty(3, device="meta"))
    assert m.device.type == "meta" and m.shape == (2, 3)


def test_integer_division_by_zero_raises():
    for name in ("floor_divide", "remainder", "fmod"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            getattr(tp, name)(tp.tensor([1, 2]), tp.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tp.tensor([5]) % 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tp.tensor([5]) // 0
    # floats follow IEEE: inf, nan
    f = tp.tensor([1.0, -1.0, 0.0])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((f // 0).numpy(), np.floor_divide(f.numpy(), 0))
    np.testing.assert_array_equal(tp.remainder(f, 0).numpy(), [np.nan] * 3)
    np.testing.assert_array_equal(tp.fmod(f, 0).numpy(), [np.nan] * 3)


def test_remainder_is_python_style_fmod_is_c_style():
    a = np.array([7, -7, 7, -7, 0])
    b = np.array([3, 3, -3, -3, 5])
    assert tp.remainder(tp.tensor(a), tp.tensor(b)).tolist() == [x % y for x, y in zip(a, b, strict=True)]
    assert tp.fmod(tp.tensor(a), tp.tensor(b)).tolist() == [
        math.fmod(x, y) for x, y in zip(a, b, strict=True)
    ]
    f = [5.5, -5.5, 5.5, -5.5]
    g = [2.0, 2.0, -2.0, -2.0]
    assert tp.remainder(tp.tensor(f), tp.tensor(g)).tolist() == [x % y for x, y in zip(f, g, strict=True)]
    assert (tp.tensor(f) % 2).tolist() == [x % 2 for x in f]
    assert (7 % tp.tensor([3, -3])).tolist() == [1, -2]
    assert (7.5 % tp.tensor([2, -2])).dtype is tp.float32
    # min // -1 and min % -1 wrap / give 0 instead of trapping
    m = tp.tensor([-(2**63)])
    assert (m // -1).tolist() == [-(2**63)] and (m % -1).tolist() == [0]


def test_floor_divide_matches_python_on_floats():
    a = [1.0, -1.0, 7.0, -7.5, 0.0, -0.0]
    b = [0.1, 0.1, 2.0, 2.0, 3.0, 3.0]
    got = (tp.tensor(a, dtype=tp.float64) // tp.tensor(b, dtype=tp.float64)).tolist()
    assert got == [x // y for x, y in zip(a, b, strict=True)]  # 1.0 // 0.1 == 9.0, not 10.0
    assert math.copysign(1, got[5]) == -1  # -0.0 // 3 is -0.0
    assert (7 // tp.tensor([2, -2])).tolist() == [3, -4]
    assert (7.0 // tp.tensor([2, -2])).dtype is tp.float32
    x = tp.tensor([7, -7])
    x //= 2
    assert x.tolist() == [3, -4]
    x = tp.tensor([7.5, -7.5])
    x %= 2
    assert x.tolist() == [1.5, 0.5]


# ---- pow ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_pow_against_numpy(dtype):
    base = values(dtype, (4, 5), lo=0 if dtype in INTS else 0.1, hi=5)
    exp = values(dtype, (4, 5), lo=0, hi=4)
    got = tp.pow(as_tp(base, dtype), as_tp(exp, dtype))
    assert got.dtype is dtype
    want = expected(np.power, base, exp, dtype, dtype)
    assert_close(got, want, dtype)
    for e in (2, 3, 0.5, 0):
        r = as_tp(base, dtype) ** e
        assert r.dtype is (tp.float32 if isinstance(e, float) and dtype in INTS else dtype)
        assert_close(r, expected(np.power, base, np.float64(e), dtype, r.dtype), r.dtype, f"** {e}")
    r = 2 ** as_tp(exp, dtype)
    assert r.dtype is dtype
    assert_close(r, expected(np.power, np.float64(2), exp, dtype, dtype), dtype, "2 **")


def test_pow_integer_rules():
    i = tp.tensor([2, 3, -2, 1, -1])
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        i**-1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        i.pow(-2)
    # a tensor exponent follows PyTorch's powi: 1 for base 1, ±1 for base -1, else 0
    assert tp.pow(i, tp.tensor([-1, -1, -1, -3, -3])).tolist() == [0, 0, 0, 1, -1]
    assert (2 ** tp.tensor([-1, 0, 3])).tolist() == [0, 1, 8]
    assert (i**2).dtype is tp.int64 and (i**2).tolist() == [4, 9, 4, 1, 1]
    assert (i**2.0).dtype is tp.float32
    assert (tp.tensor([2], dtype=tp.int8) ** 7).tolist() == [-128]  # wraps like PyTorch
    assert (tp.tensor([3]) ** 40).tolist() == [np.int64(3) ** np.int64(40)]
    assert (2.5 ** tp.tensor([1, 2])).dtype is tp.float32
    assert (2 ** tp.tensor([0.5], dtype=tp.float64)).dtype is tp.float64
    assert tp.pow(2, tp.tensor([3])).tolist() == [8]
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        tp.tensor([True]) ** tp.tensor([True])
    b = tp.tensor([True, False])
    assert (b**True).tolist() == [True, False] and (b**False).tolist() == [True, True]  # as in PyTorch
    x = tp.tensor([1.0, 2.0, 3.0])
    x **= 2
    assert x.tolist() == [1.0, 4.0, 9.0]
    c = tp.tensor([1 + 1j], dtype=tp.complex128)
    assert np.allclose((c**2).numpy(), [(1 + 1j) ** 2])


def test_pow_nan_inf_and_scalar_fast_paths():
    a = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan], np.float32)
    for e in (2.0, 3.0, -1.0, 0.0):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal((tp.tensor(a) ** e).numpy(), np.power(a, np.float32(e)), err_msg=e)
    pos = np.array([0.0, 2.25, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal((tp.tensor(pos) ** 0.5).numpy(), np.sqrt(pos))


def test_float_power():
    a = np.array([[1, 2, 3]], np.int32)
    b = np.array([[2.0], [-0.5]], np.float32)
    got = tp.float_power(tp.tensor(a), tp.tensor(b))
    assert got.dtype is tp.float64 and got.shape == (2, 3)
    np.testing.assert_allclose(got.numpy(), np.float_power(a, b), rtol=1e-15)
    assert tp.float_power(tp.tensor([2.0]), 2).dtype is tp.float64
    assert tp.float_power(2, tp.tensor([3])).tolist() == [8.0]
    assert tp.tensor([4], dtype=tp.int16).float_power(0.5).tolist() == [2.0]
    assert tp.float_power(tp.tensor([1.0]), 1j).dtype is tp.complex128
    with pytest.raises(RuntimeError, match="float_power_ has dtype float32 but .* requires dtype float64"):
        tp.ones(2).float_power_(2)
    x = tp.tensor([3.0], dtype=tp.float64)
    assert x.float_power_(2) is x and x.tolist() == [9.0]


# ---- special functions -------------------------------------------------------------------------------------
def test_float_only_ops_reject_integers():
    for name in ("hypot", "logaddexp", "logaddexp2", "nextafter"):
        with pytest.raises(NotImplementedError, match=f"\"{name}\" not implemented for 'Long'"):
            getattr(tp, name)(tp.tensor([1]), tp.tensor([2]))


def test_logaddexp_extremes():
    a = np.array([1000.0, -1000.0, np.inf, -np.inf, np.inf, np.nan, -np.inf])
    b = np.array([1000.0, -1000.0, np.inf, -np.inf, -np.inf, 1.0, 3.0])
    for name, ref in (("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2)):
        got = getattr(tp, name)(tp.tensor(a), tp.tensor(b)).numpy()
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(got, ref(a, b), rtol=1e-15, err_msg=name)


@pytest.mark.parametrize("dtype", [tp.complex64, tp.complex128])
def test_logaddexp_complex(dtype):
    # small imaginary parts, so both formulas stay on the principal branch of log
    a = rng.standard_normal(12) + 0.5j * rng.standard_normal(12)
    b = rng.standard_normal(12) * 3 + 0.5j * rng.standard_normal(12)
    got = tp.logaddexp(tp.tensor(a).to(dtype), tp.tensor(b).to(dtype))
    assert got.dtype is dtype
    want = np.log(np.exp(a) + np.exp(b))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype is tp.complex64 else 1e-12)
    big = tp.logaddexp(tp.tensor([1000 + 1j]).to(dtype), tp.tensor([-1000 + 0j]).to(dtype))
    np.testing.assert_allclose(big.numpy(), [1000 + 1j])  # no overflow
    ninf = complex(-np.inf, 0)
    assert tp.logaddexp(tp.tensor([ninf]).to(dtype), tp.tensor([ninf]).to(dtype)).tolist() == [ninf]
    assert np.isnan(tp.logaddexp(tp.tensor([complex(np.nan, 0)]), tp.tensor([1 + 0j])).numpy()).all()


def test_maximum_propagates_nan_fmax_ignores_it():
    a = tp.tensor([1.0, np.nan, np.nan, 4.0])
    b = tp.tensor([np.nan, 2.0, np.nan, 3.0])
    for name, ref in (("maximum", np.maximum), ("minimum", np.minimum), ("fmax", np.fmax), ("fmin", np.fmin)):
        np.testing.assert_array_equal(
            getattr(tp, name)(a, b).numpy(), ref(a.numpy(), b.numpy()), err_msg=name
        )
    z = tp.maximum(tp.tensor([0.0, -0.0]), tp.tensor([-0.0, 0.0])).tolist()
    assert [math.copysign(1, v) for v in z] == [-1, 1]  # a tie returns the second argument, as in PyTorch
    assert tp.maximum(tp.tensor([1, 5]), 2.5).tolist() == [2.5, 5.0]  # a number lifts int to float
    assert tp.maximum(tp.tensor([True, False]), tp.tensor([False, False])).tolist() == [True, False]
    assert tp.minimum(tp.tensor([1], dtype=tp.uint8), tp.tensor([-1], dtype=tp.int8)).dtype is tp.int16
    with pytest.raises(RuntimeError, match="maximum not implemented for complex tensors"):
        tp.maximum(tp.tensor([1j]), tp.tensor([1j]))


def test_copysign_nextafter_xlogy():
    a = np.array([1.0, -2.0, 0.0, 3.0], np.float32)
    b = np.array([-0.0, 1.0, -1.0, np.nan], np.float32)
    np.testing.assert_array_equal(tp.copysign(tp.tensor(a), tp.tensor(b)).numpy(), np.copysign(a, b))
    assert tp.copysign(tp.tensor([1, 2]), -1).tolist() == [-1.0, -2.0]
    for dt in (np.float16, np.float32, np.float64):
        x = np.array([1.0, 1.0, 0.0, -1.0, 0.0, -2.0, np.nan, 3.0], dt)
        y = np.array([2.0, 0.0, 1.0, -np.inf, -1.0, -2.0, 1.0, np.inf], dt)
        np.testing.assert_array_equal(tp.nextafter(tp.tensor(x), tp.tensor(y)).numpy(), np.nextafter(x, y))
    # bfloat16 has 8 significand bits: the neighbours of 1 are 1 + 2**-7 and 1 - 2**-8
    bf = tp.nextafter(
        tp.tensor([1.0, 1.0, 0.0], dtype=tp.bfloat16), tp.tensor([2.0, 0.0, -1.0], dtype=tp.bfloat16)
    )
    assert bf.dtype is tp.bfloat16
    assert bf.float().tolist()[:2] == [1 + 2**-7, 1 - 2**-8] and -1e-38 < bf.float().tolist()[2] < 0
    x = np.array([0.0, 0.0, 2.0, 3.0, 0.0])
    y = np.array([0.0, np.nan, 0.0, 4.0, np.inf])
    np.testing.assert_array_equal(tp.xlogy(tp.tensor(x), tp.tensor(y)).numpy(), xlogy_ref(x, y))
    assert tp.xlogy(2, tp.tensor([1.0, math.e])).tolist() == pytest.approx([0.0, 2.0])
    assert tp.tensor([3.0]).xlogy(1).tolist() == [0.0]


def test_int_to_float_ops_inplace_on_int_raise():
    with pytest.raises(
        RuntimeError, match="result type float32 can't be cast to the desired output type int64"
    ):
        tp.tensor([1, 2]).atan2_(tp.tensor([1, 1]))


# ---- lerp, addcmul, addcdiv --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.float16])
def test_lerp(dtype):
    s, e, w = values(dtype, (3, 4)), values(dtype, (4,)), values(dtype, (3, 1), lo=-1, hi=2)

    def ref(s, e, w):
        return np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))

    got = tp.lerp(as_tp(s, dtype), as_tp(e, dtype), as_tp(w, dtype))
    assert got.dtype is dtype and got.shape == (3, 4)
    assert_close(got, ref(s, e, w), dtype)
    assert_close(as_tp(s, dtype).lerp(as_tp(e, dtype), 0.25), ref(s, e, 0.25), dtype)
    assert tp.lerp(tp.tensor([1.0]), tp.tensor([3.0]), 1.0).tolist() == [3.0]  # exact at weight 1
    x = as_tp(s, dtype)
    assert x.lerp_(as_tp(e, dtype), 0.75) is x
    assert_close(x, ref(s, e, 0.75), dtype)
    out = tp.empty(0, dtype=dtype)
    tp.lerp(as_tp(s, dtype), as_tp(e, dtype), as_tp(w, dtype), out=out)
    assert_close(out, ref(s, e, w), dtype)


def test_lerp_errors():
    with pytest.raises(RuntimeError, match="expected dtype float32 for `end` but got dtype float64"):
        tp.lerp(tp.ones(2), tp.ones(2, dtype=tp.float64), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float32 for `weight` but got dtype float64"):
        tp.lerp(tp.ones(2), tp.ones(2), tp.ones(2, dtype=tp.float64))
    with pytest.raises(NotImplementedError, match="\"lerp\" not implemented for 'Long'"):
        tp.lerp(tp.tensor([1]), tp.tensor([2]), 0.5)


@pytest.mark.parametrize("dtype", [tp.int32, tp.float32, tp.float64])
def test_addcmul_addcdiv(dtype):
    s, a = values(dtype, (2, 3)), values(dtype, (3,))
    b = values(dtype, (2, 1), nonzero=True)
    val = 2 if dtype in INTS else 0.5
    got = tp.addcmul(as_tp(s, dtype), as_tp(a, dtype), as_tp(b, dtype), value=val)
    assert got.dtype is dtype
    assert_close(got, s + val * a * b, dtype)
    if dtype not in INTS:
        got = tp.addcdiv(as_tp(s, dtype), as_tp(a, dtype), as_tp(b, dtype), value=val)
        assert_close(got, s + val * a / b, dtype)
        x = as_tp(s, dtype).t().contiguous().t()
        assert x.addcdiv_(as_tp(a, dtype), as_tp(b, dtype)) is x
        assert_close(x, s + a / b, dtype)
    else:
        with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
            tp.addcdiv(as_tp(s, dtype), as_tp(a, dtype), as_tp(a, dtype))
        # like PyTorch, a float value is converted to the integer dtype (truncated)
        got = tp.addcmul(as_tp(s, dtype), as_tp(a, dtype), as_tp(a, dtype), value=1.7)
        assert_close(got, s + 1 * a * a, dtype)
    # mixed: an int self with float factors promotes
    r = tp.addcmul(tp.tensor([1, 2]), tp.tensor([0.5, 0.5]), tp.tensor([2.0, 4.0]))
    assert r.dtype is tp.float32 and r.tolist() == [2.0, 4.0]


# ---- clamp / clip ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tp.int8, tp.int64, tp.float16, tp.float32, tp.float64])
def test_clamp_against_numpy(dtype):
    a = values(dtype, (4, 5), lo=-20, hi=20)
    lo, hi = values(dtype, (5,), lo=-10, hi=0), values(dtype, (4, 1), lo=0, hi=10)
    x = as_tp(a, dtype)
    for fn in (tp.clamp, tp.clip):
        assert_close(fn(x, -3, 4), np.minimum(np.maximum(a, -3), 4), dtype)
        assert_close(fn(x, min=-3), np.maximum(a, -3), dtype)
        assert_close(fn(x, max=4), np.minimum(a, 4), dtype)
        assert_close(fn(x, as_tp(lo, dtype), as_tp(hi, dtype)), np.minimum(np.maximum(a, lo), hi), dtype)
        assert_close(fn(x, max=as_tp(hi, dtype)), np.minimum(a, hi), dtype)
    assert_close(x.t().clamp(-3, 4), np.minimum(np.maximum(a.T, -3), 4), dtype)
    y = as_tp(a, dtype)
    assert y.clamp_(min=0) is y
    assert_close(y, np.maximum(a, 0), dtype)
    out = tp.empty(0, dtype=dtype)
    assert tp.clamp(x, max=1, out=out) is out
    assert_close(out, np.minimum(a, 1), dtype)


def test_clamp_rules():
    x = tp.tensor([-2.0, 0.5, 3.0, np.nan])
    assert np.array_equal(x.clamp(2, 1).numpy(), [1, 1, 1, np.nan], equal_nan=True)  # min > max: max
    assert np.array_equal(x.clamp(0, math.nan).numpy(), [np.nan] * 4, equal_nan=True)
    i = tp.tensor([1, 2, 3])
    assert i.clamp(1.5).dtype is tp.float32 and i.clamp(1.5).tolist() == [1.5, 2.0, 3.0]
    assert i.clamp(0, 2).dtype is tp.int64
    assert tp.clamp(i, tp.tensor([2, 2, 2]), 2.5).dtype is tp.float32
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        i.clamp()
    with pytest.raises(RuntimeError, match="clamp is not supported for complex types"):
        tp.tensor([1j]).clamp(0)
    with pytest.raises(RuntimeError, match="can't be cast"):
        tp.tensor([1, 2]).clamp_(0.5)
    assert tp.clamp(tp.empty(2, 3, device="meta"), 0, 1).shape == (2, 3)


# ---- where -------------------------------------------------------------------------------------------------
def test_where():
    c = rng.integers(0, 2, (3, 4)).astype(bool)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    got = tp.where(tp.tensor(c), tp.tensor(a, dtype=tp.float32), tp.tensor(b))
    assert got.dtype is tp.float64
    np.testing.assert_array_equal(got.numpy(), np.where(c, a.astype(np.float32), b))
    got = tp.where(tp.tensor(c).t(), 1.0, 0)
    assert got.dtype is tp.float32 and got.tolist() == c.T.astype(float).tolist()
    assert tp.where(tp.tensor(c), 1, 0).dtype is tp.int64
    assert tp.where(tp.tensor([True, False]), tp.ones(2, dtype=tp.float16), 2.5).tolist() == [1.0, 2.5]
    assert tp.where(tp.tensor([True, False]), tp.ones(2, dtype=tp.float16), 2.5).dtype is tp.float16
    out = tp.empty(0, dtype=tp.float64)
    assert tp.where(tp.tensor(c), tp.tensor(a), 0.0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.where(c, a, 0.0))
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        tp.where(tp.ones(2), tp.ones(2), tp.ones(2))
    # a uint8 condition is still accepted (PyTorch deprecates it): nonzero selects self
    assert tp.where(tp.tensor([0, 1, 7], dtype=tp.uint8), 1.0, 0.0).tolist() == [0.0, 1.0, 1.0]
    assert tp.where(tp.tensor([], dtype=tp.bool), 1.0, 0.0).shape == (0,)
    assert tp.where(tp.empty(2, 1, dtype=tp.bool, device="meta"), tp.empty(3, device="meta"), 0.0).shape == (
        2,
        3,
    )


def test_large_tensors_use_the_threaded_path():
    n = 1 << 20
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    x, y = tp.tensor(a), tp.tensor(b)
    np.testing.assert_allclose(tp.atan2(x, y).numpy(), np.arctan2(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((x % y).numpy(), np.remainder(a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(tp.maximum(x, y).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(x.clamp(-0.5, 0.5).numpy(), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(tp.where(x > y, x, y).numpy(), np.where(a > b, a, b))
    # the dense fast path of the three-operand loop, and the branch-free scalar lerp
    np.testing.assert_allclose(tp.addcmul(x, x, y, value=0.5).numpy(), a + 0.5 * a * b, rtol=1e-6, atol=1e-6)
    w = np.abs(a) % 1
    np.testing.assert_allclose(
        tp.lerp(x, y, tp.tensor(w)).numpy(),
        np.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w)),
        atol=1e-6,
    )
    np.testing.assert_allclose(tp.lerp(x, y, 0.75).numpy(), b - (b - a) * 0.25, atol=1e-6)
    d = np.ones(n, np.int64)
    d[-1] = 0  # one zero divisor at the very end, found by the check before the threaded loop
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tp.tensor(rng.integers(1, 100, n)) // tp.tensor(d)


def test_special_values_against_torch():
    torch = pytest.importorskip("torch")
    sp = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, math.inf, -math.inf, math.nan, 1e-30, 3.0, 0.1]
    a = np.repeat(sp, len(sp))
    b = np.tile(sp, len(sp))
    names = [o[0] for o in OPS if o[0] != "logaddexp2"] + ["pow", "float_power", "nextafter"]
    for dt in ("float32", "float64"):
        for name in names:
            want = getattr(torch, name)(
                torch.tensor(a).to(getattr(torch, dt)), torch.tensor(b).to(getattr(torch, dt))
            )
            got = getattr(tp, name)(tp.tensor(a).to(getattr(tp, dt)), tp.tensor(b).to(getattr(tp, dt)))
            assert str(got.dtype) == str(want.dtype).replace("torch", "tensorplay"), name
            w, g = want.double().numpy(), got.double().numpy()
            np.testing.assert_allclose(g, w, rtol=1e-6, equal_nan=True, err_msg=f"{name} {dt}")
            ok = np.isnan(w) | (np.signbit(w) == np.signbit(g))
            assert ok.all(), (name, dt, a[~ok], b[~ok])


@pytest.mark.parametrize(
    "call",
    [
        lambda: 1 - tp.tensor([True]),
        lambda: tp.randn(3) - tp.tensor([True, False, True]),
        lambda: tp.tensor([True, False]) - 1,
        lambda: tp.tensor([True, False]) - tp.ones(2),
        lambda: tp.sub(tp.ones(2), tp.tensor([True, False]), alpha=2),
        lambda: tp.ones(2).sub_(tp.tensor([True, False])),
        lambda: tp.tensor([True, False]).__rsub__(2.5),
        lambda: tp.sub(tp.ones(2), tp.tensor([True, False]), out=tp.empty(2)),
    ],
)
def test_sub_with_one_bool_operand_is_refused(call):
    # PyTorch's sub_check: a mask in a subtraction is almost always a mistaken `~mask`.
    with pytest.raises(
        RuntimeError,
        match=r"with a bool tensor is not supported\. If you are trying to invert a mask, use the `~` or "
        r"`logical_not\(\)` operator instead\.",
    ):
        call()


def test_sub_with_two_bool_operands_points_to_xor():
    for a, b in ((tp.tensor([True]), tp.tensor([False])), (tp.tensor([True]), True)):
        with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
            a - b
    with pytest.raises(RuntimeError, match="with two bool tensors"):
        tp.tensor([True]).sub_(tp.tensor([False]))


def test_sub_bool_errors_match_torch():
    torch = pytest.importorskip("torch")
    for mod in (torch, tp):
        for a, b in (
            (1, mod.tensor([True])),
            (mod.tensor([1.0, 2.0]), mod.tensor([True, False])),
            (mod.tensor([True]), mod.tensor([False])),
        ):
            with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with"):
                a - b
