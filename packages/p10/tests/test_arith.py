"""Elementwise arithmetic through the loop helper: broadcasting, promotion, in-place, out=, layouts."""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def layouts(shape):
    """The same values as contiguous, transposed, strided-slice and flipped-by-view tensors."""
    a = rng.standard_normal(shape).astype(np.float32)
    yield "contiguous", tp.tensor(a), a
    t = tp.tensor(np.ascontiguousarray(a.T)).t()
    yield "transposed", t, a
    big = np.zeros((shape[0] * 2,) + shape[1:], np.float32)
    big[::2] = a
    yield "strided", tp.tensor(big)[::2], a


@pytest.mark.parametrize(
    "op,ref",
    [
        (lambda x, y: x + y, np.add),
        (lambda x, y: x - y, np.subtract),
        (lambda x, y: x * y, np.multiply),
        (lambda x, y: x / y, np.divide),
    ],
)
def test_binary_layouts_and_broadcasting(op, ref):
    for name, x, a in layouts((3, 4)):
        b = rng.standard_normal((4,)).astype(np.float32) + 3
        np.testing.assert_allclose(op(x, tp.tensor(b)).numpy(), ref(a, b), rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(op(x, 2.5).numpy(), ref(a, np.float32(2.5)), rtol=1e-6, err_msg=name)
        col = rng.standard_normal((3, 1)).astype(np.float32) + 3
        np.testing.assert_allclose(op(x, tp.tensor(col)).numpy(), ref(a, col), rtol=1e-6, err_msg=name)


def test_broadcast_shapes():
    assert tp.broadcast_shapes((2, 1, 4), (3, 1), ()) == (2, 3, 4)
    assert repr(tp.broadcast_shapes((0,), (1,))) == "tensorplay.Size([0])"
    with pytest.raises(RuntimeError, match="must match the size"):
        tp.broadcast_shapes((2,), (3,))


def test_size0_size1_and_scalars():
    assert (tp.zeros(0, 3) + tp.ones(3)).shape == (0, 3)
    assert (tp.zeros(1, 3) * tp.ones(2, 1)).shape == (2, 3)
    assert (tp.tensor(2.0) * tp.tensor(3.0)).item() == 6.0
    with pytest.raises(RuntimeError, match="must match the size"):
        tp.ones(2, 3) + tp.ones(4)


def test_promotion_like_pytorch():
    i = tp.tensor([1, 2, 3])
    assert (i + 1).dtype is tp.int64
    assert (i * 1.5).dtype is tp.float32 and (i * 1.5).tolist() == [1.5, 3.0, 4.5]
    assert (i / 2).dtype is tp.float32 and (i / 2).tolist() == [0.5, 1.0, 1.5]
    assert (tp.ones(2, dtype=tp.float16) + 1.0).dtype is tp.float16
    assert (tp.ones(2, dtype=tp.float16) + tp.ones(2, dtype=tp.bfloat16)).dtype is tp.float32
    assert (tp.ones(2, dtype=tp.uint8) + tp.ones(2, dtype=tp.int8)).dtype is tp.int16
    assert (tp.ones(2, dtype=tp.int32) + tp.tensor(1, dtype=tp.int64)).dtype is tp.int32
    assert (tp.tensor([True]) + tp.tensor([True])).tolist() == [True]
    assert (tp.ones(1, dtype=tp.complex64) * 2j).tolist() == [2j]


def test_mixed_dtype_values_match_numpy():
    a = np.array([1, -7, 300], np.int16)
    b = np.array([0.5, 2.0, -1.5], np.float64)
    np.testing.assert_allclose((tp.tensor(a) * tp.tensor(b)).numpy(), a * b)
    h = np.array([1.5, 2.25, -3.0], np.float16)
    np.testing.assert_array_equal((tp.tensor(h) + tp.tensor(h)).numpy(), h + h)


def test_rounding_modes():
    a, b = np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])
    assert tp.div(tp.tensor(a), tp.tensor(b), rounding_mode="floor").tolist() == list(np.floor_divide(a, b))
    assert tp.div(tp.tensor(a), tp.tensor(b), rounding_mode="trunc").tolist() == list((a / b).astype(int))
    f = tp.tensor([7.5, -7.5])
    assert (f // 2).tolist() == [3.0, -4.0]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tp.div(tp.tensor([1]), tp.tensor([0]), rounding_mode="floor")
    with pytest.raises(ValueError, match="rounding_mode"):
        tp.div(f, 2, rounding_mode="round")


def test_inplace_and_out():
    x = tp.ones(2, 3)
    v = x._version
    y = x.add_(tp.arange(3.0), alpha=2)
    assert y is x and x.tolist() == [[1, 3, 5], [1, 3, 5]] and x._version > v
    x *= 2
    x -= 1
    x /= 4
    np.testing.assert_allclose(x.numpy(), (np.array([[1, 3, 5]] * 2) * 2 - 1) / 4)
    with pytest.raises(RuntimeError, match="can't be cast"):
        tp.ones(2, dtype=tp.int64).add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        tp.ones(3).add_(tp.ones(2, 3))
    out = tp.empty(3)
    r = tp.add(tp.ones(3), 1, out=out)
    assert r is out and out.tolist() == [2.0, 2.0, 2.0]
    out64 = tp.empty(3, dtype=tp.float64)
    tp.mul(tp.ones(3), 3, out=out64)
    assert out64.tolist() == [3.0, 3.0, 3.0]
    h = tp.ones(3, dtype=tp.float16)
    h += tp.ones(3)  # float32 computation written back into float16
    assert h.dtype is tp.float16 and h.tolist() == [2.0, 2.0, 2.0]


def test_inplace_through_transposed_view():
    x = tp.arange(6.0).reshape(2, 3)
    x.t().mul_(10)
    assert x.tolist() == [[0, 10, 20], [30, 40, 50]]


def test_operator_errors_name_the_op():
    with pytest.raises(RuntimeError, match="bool tensors is not supported"):
        tp.tensor([True]) - tp.tensor([False])
    with pytest.raises(RuntimeError, match="Negation"):
        -tp.tensor([True])
    with pytest.raises(TypeError, match="add\\(\\) received an invalid combination"):
        tp.ones(2) + "a"


def test_reflected_ops():
    x = tp.tensor([1.0, 2.0, 4.0])
    assert (1 - x).tolist() == [0.0, -1.0, -3.0]
    assert (2 * x).tolist() == [2.0, 4.0, 8.0]
    assert (4 / x).tolist() == [4.0, 2.0, 1.0]
    assert (1 + x).tolist() == [2.0, 3.0, 5.0]
    i = tp.tensor([1, 2, 4], dtype=tp.int32)
    # the number is a wrapped number on the left too: it lifts the category but never widens the dtype
    assert (2.5 / i).dtype is tp.float32 and (2.5 / i).tolist() == [2.5, 1.25, 0.625]
    assert (10 - i).dtype is tp.int32 and (10 - i).tolist() == [9, 8, 6]
    assert (1.5 - tp.ones(2, dtype=tp.float16)).dtype is tp.float16
    with pytest.raises(RuntimeError, match="bool tensors is not supported"):
        True - tp.tensor([True])


def test_large_tensor_parallel_path():
    n = 1 << 20
    a = np.arange(n, dtype=np.float32)
    x = tp.from_numpy(a)
    np.testing.assert_array_equal((x * 2 + 1).numpy(), a * 2 + 1)
    y = tp.from_numpy(np.ascontiguousarray(a.reshape(1024, 1024).T))
    np.testing.assert_array_equal((y.t() + 0).numpy(), a.reshape(1024, 1024))
