"""Unary ops with exact (or nearly exact) results, kernels/unary.cpp and unary_complex.cpp: abs, neg, sign,
sgn, square, rounding, frac, nan_to_num, isnan/isinf/isfinite/signbit, and real/imag (views), conj, angle.
The float functions, layouts, in-place and out= are in test_unary.py."""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(1)

FLOATS = [tp.float32, tp.float64, tp.float16, tp.bfloat16]


def as_tp(a, dtype):
    return tp.tensor(np.asarray(a, np.float64), dtype=dtype)


def to_np(x):
    return (x.double() if x.dtype in (tp.float16, tp.bfloat16) else x).numpy()


def sample(lo, hi, shape):
    return rng.uniform(lo, hi, shape)


# ---- dtype-keeping ops -------------------------------------------------------------------------------------

INTS = [tp.int64, tp.int32, tp.int16, tp.int8, tp.uint8]


def int_values(dtype):
    return np.array([0, 1, 7, 100]) if dtype is tp.uint8 else np.array([-100, -7, -1, 0, 1, 7, 100])


def sign_ref(a):
    return np.where(np.isnan(a), 0, np.sign(a))  # PyTorch: sign(NaN) = 0, since (0 < x) - (x < 0)


KEEP_OPS = {
    "abs": np.abs,
    "neg": np.negative,
    "sign": sign_ref,
    "sgn": sign_ref,
    "square": np.square,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.round,
}


@pytest.mark.parametrize("name", list(KEEP_OPS))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_dtype_keeping_ops_on_floats(name, dtype):
    a = np.concatenate(
        [sample(-10, 10, (30,)), [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, np.nan, np.inf, -np.inf]]
    )
    x = as_tp(a, dtype)
    src = x.double().numpy()
    got = getattr(tp, name)(x)
    assert got.dtype is dtype
    with np.errstate(all="ignore"):  # computed in the op's math type: float64, else float32
        want = KEEP_OPS[name](src if dtype is tp.float64 else src.astype(np.float32)).astype(np.float64)
    if dtype in (tp.float16, tp.bfloat16):  # the result is rounded to dtype once
        want = as_tp(want, dtype).double().numpy()
    np.testing.assert_array_equal(to_np(got), want)


@pytest.mark.parametrize("name", list(KEEP_OPS))
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_dtype_keeping_ops_on_integers(name, dtype):
    a = int_values(dtype)
    x = tp.tensor(a, dtype=dtype)
    got = getattr(tp, name)(x)
    assert got.dtype is dtype
    np_dtype = x.numpy().dtype
    want = KEEP_OPS[name](a).astype(np_dtype) if name != "neg" else (-a).astype(np_dtype)  # uint8 wraps
    np.testing.assert_array_equal(got.numpy(), want)


def test_bool_inputs_follow_pytorch():
    b = tp.tensor([True, False])
    assert tp.sign(b).dtype is tp.bool and tp.sign(b).tolist() == [True, False]
    assert tp.sgn(b).tolist() == [True, False]
    assert tp.square(b).dtype is tp.int64 and tp.square(b).tolist() == [1, 0]  # pow(b, 2) promotes
    assert tp.nan_to_num(b).tolist() == [True, False]
    for name in ["abs", "floor", "ceil", "round", "trunc", "frac"]:
        with pytest.raises(NotImplementedError, match=f'"{name}" not implemented for \'Bool\''):
            getattr(tp, name)(b)
    with pytest.raises(RuntimeError, match="Negation"):
        tp.neg(b)
    with pytest.raises(RuntimeError, match="result type int64 can't be cast to the desired output type bool"):
        b.square_()


def test_round_half_to_even_and_decimals():
    assert tp.round(tp.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 3.5])).tolist() == [0, 2, 2, -0.0, -2, 4]
    a = sample(-1000, 1000, (200,))
    for d in [-3, -2, -1, 1, 2, 3]:
        for dtype, npd in [(tp.float64, np.float64), (tp.float32, np.float32)]:
            got = tp.round(tp.tensor(a, dtype=dtype), decimals=d).numpy()
            np.testing.assert_array_equal(got, np.round(a.astype(npd), d), err_msg=f"{dtype} decimals={d}")
        # 16-bit floats scale and round in float32, then store
        h = tp.tensor(a, dtype=tp.float16)
        want = np.round(h.float().numpy(), d).astype(np.float16)
        np.testing.assert_array_equal(tp.round(h, decimals=d).numpy(), want)
    assert tp.round(tp.tensor([2.675, 1.005], dtype=tp.float64), decimals=2).tolist() == [
        2.68,
        1.0,
    ]  # as NumPy
    assert tp.round(tp.tensor([125.0, 135.0, 150.0]), decimals=-1).tolist() == [120, 140, 150]  # half to even
    assert tp.round(tp.tensor([1, -2]), decimals=0).tolist() == [1, -2]
    with pytest.raises(NotImplementedError, match="\"round\" not implemented for 'Long'"):
        tp.round(tp.tensor([1, 2]), decimals=1)
    x = tp.tensor([1.25, 3.14159])
    assert x.round_(decimals=1) is x and x.tolist() == pytest.approx([1.2, 3.1])


def test_frac():
    a = np.array([1.5, -1.5, 2.0, -0.25, np.inf, -np.inf, np.nan])
    for dtype in FLOATS:
        got = to_np(tp.frac(as_tp(a, dtype)))
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got, a - np.trunc(a))  # frac(±inf) is NaN
    with pytest.raises(NotImplementedError, match="\"frac\" not implemented for 'Long'"):
        tp.frac(tp.tensor([1]))


def test_sgn_of_complex_and_sign_refusal():
    z = np.array([3 + 4j, 0j, -2j, -1 - 1j])
    got = tp.sgn(tp.tensor(z)).numpy()
    np.testing.assert_allclose(got, np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z))), rtol=1e-7)
    with pytest.raises(RuntimeError, match="Unlike NumPy, torch.sign is not intended to support complex"):
        tp.sign(tp.tensor(z))


def test_abs_square_neg_of_complex():
    z = rng.standard_normal(8) + 1j * rng.standard_normal(8)
    for dtype, real in [(tp.complex64, tp.float32), (tp.complex128, tp.float64)]:
        x = tp.tensor(z, dtype=dtype)
        src = x.numpy()
        r = tp.abs(x)
        assert r.dtype is real  # |z| is real
        np.testing.assert_allclose(r.numpy(), np.abs(src), rtol=1e-6)
        np.testing.assert_allclose(tp.square(x).numpy(), src * src, rtol=1e-6)
        np.testing.assert_array_equal(tp.neg(x).numpy(), -src)
        np.testing.assert_allclose(tp.reciprocal(x).numpy(), 1 / src, rtol=1e-6)
        c = tp.empty(8, dtype=dtype)
        assert tp.abs(x, out=c) is c and np.allclose(c.numpy(), np.abs(src))  # complex out= is allowed
        with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
            x.abs_()


# ---- nan_to_num and classification -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_to_num(dtype):
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
    x = as_tp(a, dtype)
    big = tp.finfo(dtype).max
    assert to_np(tp.nan_to_num(x)).tolist() == [0.0, big, -big, 1.5, -0.0]
    assert to_np(tp.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0)).tolist() == [1.0, 2.0, -3.0, 1.5, -0.0]
    if dtype is tp.float16:  # replacements are cast to the dtype: 1e10 overflows float16
        assert math.isinf(tp.nan_to_num(x, nan=1e10)[0].item())
    if dtype is tp.float64:
        np.testing.assert_array_equal(tp.nan_to_num(x).numpy(), np.nan_to_num(a))
    y = x.clone()
    assert y.nan_to_num_(nan=7.0) is y and to_np(y)[0] == 7.0


def test_nan_to_num_integers_and_complex():
    i = tp.tensor([1, -2, 3])
    assert tp.nan_to_num(i, nan=5.0).tolist() == [1, -2, 3] and tp.nan_to_num(i).dtype is tp.int64
    z = tp.tensor([complex(math.nan, math.inf), complex(-math.inf, 2)], dtype=tp.complex64)
    big = tp.finfo(tp.float32).max
    assert tp.nan_to_num(z).tolist() == [complex(0, big), complex(-big, 2)]


@pytest.mark.parametrize("dtype", FLOATS + [tp.int64, tp.uint8, tp.bool], ids=str)
def test_classification_returns_bool(dtype):
    if dtype in FLOATS:
        a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.5, 2.0])
        x = as_tp(a, dtype)
    else:
        a = np.array([0, 1, 5]) if dtype is not tp.int64 else np.array([-3, 0, 5])
        x = tp.tensor(a, dtype=dtype)
    for name, ref in [
        ("isnan", np.isnan),
        ("isinf", np.isinf),
        ("isfinite", np.isfinite),
        ("signbit", np.signbit),
    ]:
        got = getattr(tp, name)(x)
        assert got.dtype is tp.bool
        np.testing.assert_array_equal(got.numpy(), ref(a.astype(np.float64)), err_msg=name)


def test_classification_of_complex_and_errors():
    z = tp.tensor([complex(math.nan, 0), complex(1, math.inf), complex(1, 2), complex(-math.inf, math.nan)])
    assert tp.isnan(z).tolist() == [True, False, False, True]
    assert tp.isinf(z).tolist() == [False, True, False, True]
    assert tp.isfinite(z).tolist() == [False, False, True, False]
    with pytest.raises(RuntimeError, match="signbit is not implemented for complex tensors"):
        tp.signbit(z)
    o = tp.empty(2, dtype=tp.bool)
    assert tp.signbit(tp.tensor([-1.0, 1.0]), out=o) is o and o.tolist() == [True, False]
    with pytest.raises(RuntimeError, match="signbit does not support non-boolean outputs"):
        tp.signbit(tp.tensor([-1.0]), out=tp.empty(1))
    with pytest.raises(TypeError):  # PyTorch has no out= form for isnan, isinf, isfinite
        tp.isnan(tp.ones(2), out=o)
    assert not hasattr(tp.ones(1), "isnan_")


# ---- complex parts -----------------------------------------------------------------------------------------


def test_real_and_imag_are_views():
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    x = tp.tensor(z, dtype=tp.complex64)
    re, im = tp.real(x), tp.imag(x)
    assert re.dtype is tp.float32 and im.dtype is tp.float32
    assert re.stride() == (8, 2) and im.storage_offset() == 1
    np.testing.assert_array_equal(re.numpy(), z.real.astype(np.float32))
    np.testing.assert_array_equal(im.numpy(), z.imag.astype(np.float32))
    assert re._shares_storage(x) and im._shares_storage(x)
    v = x._version
    im.fill_(0.0)  # a write through the view reaches x and bumps the shared version
    assert x._version > v and np.all(x.numpy().imag == 0)
    tp.real(x).mul_(2)
    np.testing.assert_allclose(x.numpy().real, 2 * z.real, rtol=1e-6)
    # views of views: a transposed slice keeps its geometry, doubled
    s = x.t()[1:]
    assert tp.imag(s).stride() == (2, 8) and tp.imag(s).storage_offset() == 2 * s.storage_offset() + 1
    np.testing.assert_array_equal(tp.imag(s).numpy(), x.numpy().T[1:].imag)
    assert tp.real(tp.empty(0, 2, dtype=tp.complex128)).shape == (0, 2)
    assert tp.imag(tp.tensor(1 + 2j)).item() == 2.0  # 0-d
    y = tp.tensor(z)  # properties, as in PyTorch: x.real / x.imag (and assignment through them)
    assert y.real._shares_storage(y) and y.imag.tolist() == tp.imag(y).tolist()
    y.imag = 0.0
    y.real = tp.ones(y.shape)
    assert np.all(y.numpy() == 1)


def test_real_conj_of_real_tensors_and_imag_error():
    f = tp.tensor([1.0, -2.0])
    assert tp.real(f) is f and tp.conj(f) is f and f.conj() is f
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        tp.imag(f)


def test_conj_is_a_copy():
    z = np.array([1 + 2j, -3j, 4.0])
    x = tp.tensor(z)
    c = tp.conj(x)  # PyTorch's lazy conjugate bit is out of scope: a new tensor with the values conjugated
    assert not c._shares_storage(x) and c.dtype is tp.complex128
    np.testing.assert_array_equal(c.numpy(), np.conj(z))


def test_angle():
    z = np.array([1 + 1j, -1 + 0j, -1 - 1e-300j, 0j, -2j])
    np.testing.assert_allclose(tp.angle(tp.tensor(z)).numpy(), np.angle(z), rtol=1e-15)
    assert tp.angle(tp.tensor(z, dtype=tp.complex64)).dtype is tp.float32
    r = tp.angle(
        tp.tensor([-2.0, 0.0, -0.0, 3.0, math.nan])
    )  # reals: pi for negatives, NaN kept, -0.0 gives 0
    assert r.tolist()[:4] == pytest.approx([math.pi, 0, 0, 0]) and math.isnan(r[4].item())
    assert tp.angle(tp.tensor([-1, 2])).dtype is tp.float32
    out = tp.empty(5)
    assert tp.angle(tp.tensor(z), out=out) is out and out.dtype is tp.float32
