"""Comparisons: eq/ne/lt/le/gt/ge and their operators, isclose, allclose, equal — against NumPy."""

import operator

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(1)

OPS = [
    ("eq", operator.eq, np.equal),
    ("ne", operator.ne, np.not_equal),
    ("lt", operator.lt, np.less),
    ("le", operator.le, np.less_equal),
    ("gt", operator.gt, np.greater),
    ("ge", operator.ge, np.greater_equal),
]
DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64]


def sample(dtype, shape):
    a = rng.integers(-3, 4, shape).astype(np.float64) / (2 if dtype.is_floating_point else 1)
    if dtype is tp.uint8:
        a = np.abs(a)
    if dtype is tp.bool:
        a = a > 0
    return tp.tensor(a).to(dtype)


@pytest.mark.parametrize("name,pyop,ref", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("dtype", DTYPES)
def test_against_numpy(name, pyop, ref, dtype):
    x, y = sample(dtype, (3, 4)), sample(dtype, (3, 4))
    xa, ya = x.double().numpy(), y.double().numpy()
    for got in (getattr(tp, name)(x, y), pyop(x, y), getattr(x, name)(y)):
        assert got.dtype is tp.bool
        np.testing.assert_array_equal(got.numpy(), ref(xa, ya))
    # transposed, strided and broadcast operands; a number on either side
    np.testing.assert_array_equal(pyop(x.t(), y[:, ::2].t()[:1]).numpy(), ref(xa.T, ya[:, ::2].T[:1]))
    np.testing.assert_array_equal(pyop(x, y[0]).numpy(), ref(xa, ya[0]))
    np.testing.assert_array_equal(pyop(x, 1).numpy(), ref(xa, 1))
    np.testing.assert_array_equal(pyop(1, x).numpy(), ref(1, xa))  # Python reflects to the mirrored op
    # in place writes 0/1 in self's dtype; out= takes any dtype the bool result casts to
    if dtype is not tp.bool:
        z = x.clone()
        assert getattr(z, name + "_")(y) is z and z.dtype is dtype
        np.testing.assert_array_equal(z.double().numpy(), ref(xa, ya).astype(np.float64))
    out = tp.empty(0, dtype=tp.bool)
    assert getattr(tp, name)(x, y, out=out) is out
    np.testing.assert_array_equal(out.numpy(), ref(xa, ya))


def test_mixed_dtypes_compare_in_the_common_dtype():
    i = tp.tensor([1, 2, 3])
    assert (i < 2.5).tolist() == [True, True, False]  # not 2
    assert (i == 2.0).tolist() == [False, True, False]
    assert (tp.tensor([255], dtype=tp.uint8) > tp.tensor([-1], dtype=tp.int8)).tolist() == [True]
    assert (tp.tensor([0.1], dtype=tp.float32) == tp.tensor([0.1], dtype=tp.float64)).tolist() == [False]
    assert (tp.tensor([True, False]) == 1).tolist() == [True, False]
    assert (tp.tensor([1 + 1j]) == (1 + 1j)).tolist() == [True]
    assert (tp.tensor([1 + 1j]) != tp.tensor([1 + 2j])).tolist() == [True]
    with pytest.raises(NotImplementedError, match="\"lt\" not implemented for 'ComplexFloat'"):
        tp.lt(tp.tensor([1j]), tp.tensor([2j]))


def test_nan_size0_0d_meta():
    x = tp.tensor([np.nan, 1.0])
    assert (x == x).tolist() == [False, True] and (x != x).tolist() == [True, False]
    assert (x < np.nan).tolist() == [False, False]
    assert (tp.ones(0, 3) == tp.ones(3)).shape == (0, 3)
    r = tp.tensor(2.0) > tp.tensor(1.0)
    assert r.shape == () and r.item() is True
    m = tp.eq(tp.empty(2, 1, device="meta"), tp.empty(3, device="meta"))
    assert m.device.type == "meta" and m.shape == (2, 3) and m.dtype is tp.bool


def test_operators_with_other_objects_and_hash():
    x = tp.tensor([1.0, 2.0])
    assert (x == None) is False and (x != None) is True  # noqa: E711 - the operator itself is under test
    assert (x == "a") is False
    with pytest.raises(TypeError):
        x < "a"  # noqa: B015
    d = {x: "x"}
    assert d[x] == "x" and hash(x) == hash(x) and hash(x) != hash(x.clone())
    assert x in {x} and x.clone() not in {x}
    assert len({tp.ones(1), tp.ones(1)}) == 2


@pytest.mark.parametrize("dtype", [tp.float16, tp.float32, tp.float64])
def test_isclose_against_numpy(dtype):
    npd = {tp.float16: np.float16, tp.float32: np.float32, tp.float64: np.float64}[dtype]
    a = rng.standard_normal((5, 6)).astype(npd)
    b = (a * (1 + rng.choice([0, 1e-6, 1e-5, 2e-5, 1e-3], (5, 6)))).astype(npd)
    a[0, :4] = [np.nan, np.inf, -np.inf, np.inf]
    b[0, :4] = [np.nan, np.inf, np.inf, 1.0]
    for kw in ({}, {"rtol": 1e-3}, {"atol": 1e-2, "rtol": 0}, {"equal_nan": True}):
        want = np.isclose(a, b, **kw)
        np.testing.assert_array_equal(tp.isclose(tp.tensor(a), tp.tensor(b), **kw).numpy(), want, err_msg=kw)
        assert tp.allclose(tp.tensor(a[1:]), tp.tensor(b[1:]), **kw) is bool(want[1:].all())
    np.testing.assert_array_equal(
        tp.isclose(tp.tensor(a).t(), tp.tensor(b[:, 0])).numpy(), np.isclose(a.T, b[:, 0])
    )


def test_isclose_rules():
    i = tp.tensor([1, 2, 100000000])
    j = tp.tensor([1, 3, 100000001])
    assert tp.isclose(i, j).tolist() == [True, False, True]  # ints compare in float32, like PyTorch
    assert tp.isclose(tp.tensor([1 + 1j]), tp.tensor([1 + 1.000001j])).tolist() == [True]
    nan_re, nan_im = complex(np.nan, 1), complex(1, np.nan)
    c, d = tp.tensor([nan_re, 1 + 1j]), tp.tensor([nan_im, 1 + 1j])
    assert tp.isclose(c, d).tolist() == [False, True]
    assert tp.isclose(c, d, equal_nan=True).tolist() == [True, True]  # a NaN in either part counts as NaN
    with pytest.raises(RuntimeError, match="expected self and other to have the same dtype"):
        tp.isclose(tp.ones(2), tp.ones(2, dtype=tp.float64))
    with pytest.raises(ValueError, match="rtol must be greater than or equal to zero, but got -1"):
        tp.isclose(tp.ones(2), tp.ones(2), rtol=-1)
    with pytest.raises(ValueError, match="atol must be greater than or equal to zero"):
        tp.allclose(tp.ones(2), tp.ones(2), atol=-1)
    assert tp.allclose(tp.ones(2, 3), tp.ones(3)) is True  # broadcasts
    assert tp.allclose(tp.ones(0), tp.ones(0)) is True
    assert tp.ones(2).allclose(tp.ones(2) + 1e-6) is True and tp.ones(2).allclose(tp.ones(2) * 2) is False
    with pytest.raises(RuntimeError, match="meta tensors have no data"):
        tp.allclose(tp.empty(2, device="meta"), tp.empty(2, device="meta"))
    assert tp.isclose(tp.empty(2, device="meta"), tp.empty(2, device="meta")).device.type == "meta"


def test_equal():
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert tp.equal(x, x.clone()) is True and x.equal(x.t().contiguous().t()) is True
    assert tp.equal(x, x.t()) is False
    assert tp.equal(x, tp.tensor([1.0, 2.0])) is False  # shapes differ: False, no broadcasting
    assert tp.equal(tp.tensor([1, 2]), tp.tensor([1.0, 2.0])) is True  # values compared after promotion
    assert tp.equal(tp.tensor([np.nan]), tp.tensor([np.nan])) is False
    assert tp.equal(tp.ones(0), tp.ones(0)) is True
    with pytest.raises(RuntimeError, match="meta tensors have no data"):
        tp.equal(tp.empty(2, device="meta"), tp.empty(2, device="meta"))


def test_large_tensor_comparison():
    n = 1 << 20
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal((tp.tensor(a) <= tp.tensor(b)).numpy(), a <= b)
    np.testing.assert_array_equal(
        tp.isclose(tp.tensor(a), tp.tensor(a + 1e-7)).numpy(), np.isclose(a, a + 1e-7)
    )
    assert tp.allclose(tp.tensor(a), tp.tensor(a)) is True and tp.equal(tp.tensor(a), tp.tensor(a)) is True


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = (a + rng.choice([0, 1e-6, 1e-3], (4, 5))).astype(np.float32)
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "isclose"):
        want = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_array_equal(
            getattr(tp, name)(tp.tensor(a), tp.tensor(b)).numpy(), want, err_msg=name
        )
    assert tp.allclose(tp.tensor(a), tp.tensor(b)) == torch.allclose(torch.tensor(a), torch.tensor(b))
