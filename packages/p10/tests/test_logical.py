"""logical_and/or/xor/not, bitwise_and/or/xor/not, shifts and their operators (& | ^ ~ << >>), against
NumPy."""

import operator

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(2)

NP = {
    tp.bool: np.bool_,
    tp.uint8: np.uint8,
    tp.int8: np.int8,
    tp.int16: np.int16,
    tp.int32: np.int32,
    tp.int64: np.int64,
}
INTS = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64]


def sample(dtype, shape):
    if dtype is tp.bool:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in NP:
        info = np.iinfo(NP[dtype])
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(NP[dtype])
    return rng.choice([0.0, -1.5, 2.0, np.nan], shape).astype(
        np.float64 if dtype is tp.float64 else np.float32
    )


LOGICAL = [("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]


@pytest.mark.parametrize("name,ref", LOGICAL, ids=[o[0] for o in LOGICAL])
@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int32, tp.float32, tp.float64])
def test_logical_against_numpy(name, ref, dtype):
    a, b = sample(dtype, (3, 4)), sample(dtype, (3, 4))
    x, y = tp.tensor(a), tp.tensor(b)
    got = getattr(tp, name)(x, y)
    assert got.dtype is tp.bool
    np.testing.assert_array_equal(got.numpy(), ref(a, b))
    np.testing.assert_array_equal(getattr(x.t(), name)(y[0:1].t()).numpy(), ref(a.T, b[0:1].T))
    np.testing.assert_array_equal(getattr(tp, name)(x, 0).numpy(), ref(a, 0))
    # mixed dtypes: truth values only
    np.testing.assert_array_equal(getattr(tp, name)(x, tp.tensor(b.astype(np.float64))).numpy(), ref(a, b))
    z = x.clone()
    assert getattr(z, name + "_")(y) is z and z.dtype is dtype
    np.testing.assert_array_equal(z.numpy(), ref(a, b).astype(a.dtype))
    out = tp.empty(0, dtype=tp.bool)
    assert getattr(tp, name)(x, y, out=out) is out
    np.testing.assert_array_equal(out.numpy(), ref(a, b))


@pytest.mark.parametrize("dtype", [tp.bool, tp.int8, tp.float32, tp.complex64])
def test_logical_not(dtype):
    a = sample(dtype if dtype is not tp.complex64 else tp.float32, (2, 3))
    x = tp.tensor(a).to(dtype)
    assert tp.logical_not(x).dtype is tp.bool
    np.testing.assert_array_equal(tp.logical_not(x).numpy(), np.logical_not(a))
    np.testing.assert_array_equal(x.t().logical_not().numpy(), np.logical_not(a.T))
    if dtype is not tp.complex64:
        z = x.clone()
        assert z.logical_not_() is z and z.dtype is dtype
        np.testing.assert_array_equal(z.numpy(), np.logical_not(a).astype(a.dtype))
    assert tp.logical_not(tp.empty(0, 2)).shape == (0, 2)
    assert tp.logical_not(tp.empty(2, device="meta")).dtype is tp.bool


BITWISE = [
    ("bitwise_and", operator.and_, np.bitwise_and),
    ("bitwise_or", operator.or_, np.bitwise_or),
    ("bitwise_xor", operator.xor, np.bitwise_xor),
]


@pytest.mark.parametrize("name,pyop,ref", BITWISE, ids=[o[0] for o in BITWISE])
@pytest.mark.parametrize("dtype", [tp.bool] + INTS)
def test_bitwise_against_numpy(name, pyop, ref, dtype):
    a, b = sample(dtype, (3, 4)), sample(dtype, (3, 4))
    x, y = tp.tensor(a), tp.tensor(b)
    for got in (getattr(tp, name)(x, y), pyop(x, y), getattr(x, name)(y)):
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), ref(a, b))
    np.testing.assert_array_equal(pyop(x, y[1]).numpy(), ref(a, b[1]))
    np.testing.assert_array_equal(pyop(x.t(), y.t()).numpy(), ref(a.T, b.T))
    s = True if dtype is tp.bool else 5
    np.testing.assert_array_equal(pyop(x, s).numpy(), ref(a, NP[dtype](s)))
    np.testing.assert_array_equal(pyop(s, x).numpy(), ref(NP[dtype](s), a))  # __rand__ and friends
    z = x.clone()
    iop = {"bitwise_and": operator.iand, "bitwise_or": operator.ior, "bitwise_xor": operator.ixor}[name]
    z2 = iop(z, y)
    assert z2 is z
    np.testing.assert_array_equal(z.numpy(), ref(a, b))
    out = tp.empty(0, dtype=dtype)
    assert getattr(tp, name)(x, y, out=out) is out


def test_bitwise_promotion_and_errors():
    r = tp.tensor([0x0F], dtype=tp.uint8) | tp.tensor([-128], dtype=tp.int8)
    assert r.dtype is tp.int16 and r.tolist() == [0x0F | -128]
    assert (tp.tensor([True, False]) & 1).dtype is tp.int64
    assert (tp.tensor([6], dtype=tp.int32) ^ 3).dtype is tp.int32
    for op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
            op(tp.ones(2), tp.ones(2))
    with pytest.raises(NotImplementedError, match="\"bitwise_and\" not implemented for 'Float'"):
        tp.tensor([1, 2]) & 1.5
    with pytest.raises(NotImplementedError, match="\"bitwise_not\" not implemented for 'Float'"):
        tp.bitwise_not(tp.ones(2))
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):  # PyTorch's type for `~`
        ~tp.ones(2)
    with pytest.raises(NotImplementedError, match="\"bitwise_left_shift\" not implemented for 'Bool'"):
        tp.tensor([True]) << tp.tensor([True])


@pytest.mark.parametrize("dtype", [tp.bool] + INTS)
def test_bitwise_not(dtype):
    a = sample(dtype, (2, 5))
    x = tp.tensor(a)
    np.testing.assert_array_equal((~x).numpy(), np.invert(a))
    np.testing.assert_array_equal(x.t().bitwise_not().numpy(), np.invert(a.T))
    z = x.clone()
    assert z.bitwise_not_() is z
    np.testing.assert_array_equal(z.numpy(), np.invert(a))


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_against_numpy(dtype):
    bits = np.iinfo(NP[dtype]).bits
    a = sample(dtype, (3, 6))
    b = rng.integers(0, bits, (3, 6)).astype(NP[dtype])
    x, y = tp.tensor(a), tp.tensor(b)
    for got in (x << y, tp.bitwise_left_shift(x, y), x.bitwise_left_shift(y)):
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), np.left_shift(a, b))
    for got in (x >> y, tp.bitwise_right_shift(x, y), x.bitwise_right_shift(y)):
        np.testing.assert_array_equal(got.numpy(), np.right_shift(a, b))
    np.testing.assert_array_equal((x.t() << 1).numpy(), np.left_shift(a.T, NP[dtype](1)))
    np.testing.assert_array_equal((x >> 2).numpy(), np.right_shift(a, NP[dtype](2)))
    z = x.clone()
    z <<= 1
    np.testing.assert_array_equal(z.numpy(), np.left_shift(a, NP[dtype](1)))
    z = x.clone()
    z >>= 1
    np.testing.assert_array_equal(z.numpy(), np.right_shift(a, NP[dtype](1)))


def test_shift_edge_cases_like_pytorch():
    x = tp.tensor([1, -8, 5])
    # amounts outside [0, 64): a left shift gives 0; a right shift shifts out every bit (sign fill)
    assert (x << tp.tensor([64, 64, -1])).tolist() == [0, 0, 0]
    assert (x >> tp.tensor([64, 70, -1])).tolist() == [0, -1, 0]
    assert (tp.tensor([1], dtype=tp.int8) << 7).tolist() == [-128]  # wraps
    assert (tp.tensor([200], dtype=tp.uint8) >> 9).tolist() == [0]
    assert (1 << tp.tensor([0, 3, 10])).tolist() == [1, 8, 1024]
    assert (1024 >> tp.tensor([0, 3, 10])).tolist() == [1024, 128, 1]
    assert tp.bitwise_left_shift(3, tp.tensor([2], dtype=tp.int16)).dtype is tp.int16
    assert (tp.empty(2, 3, device="meta", dtype=tp.int32) << 1).shape == (2, 3)


def test_large_tensor_logical():
    n = 1 << 20
    a = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64)
    b = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64)
    np.testing.assert_array_equal((tp.tensor(a) ^ tp.tensor(b)).numpy(), a ^ b)
    np.testing.assert_array_equal(
        tp.logical_and(tp.tensor(a > 0), tp.tensor(b > 0)).numpy(), (a > 0) & (b > 0)
    )


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = rng.integers(-100, 100, (3, 4), dtype=np.int32)
    b = rng.integers(-5, 40, (3, 4), dtype=np.int32)
    for name in (
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "logical_and",
        "logical_xor",
    ):
        want = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_array_equal(
            getattr(tp, name)(tp.tensor(a), tp.tensor(b)).numpy(), want, err_msg=name
        )
