"""Tensor creation: tp.tensor, Tensor(...), zeros/ones/full/empty, arange/linspace/logspace/eye, out=."""

import numpy as np
import pytest

import tensorplay_p10 as tp


def test_tensor_infers_dtype_like_pytorch():
    assert tp.tensor([1, 2]).dtype is tp.int64
    assert tp.tensor([1, 2.5]).dtype is tp.float32
    assert tp.tensor([True, False]).dtype is tp.bool
    assert tp.tensor([1, 1j]).dtype is tp.complex64
    assert tp.tensor(3.5).dim() == 0
    assert tp.tensor([]).shape == (0,) and tp.tensor([]).dtype is tp.float32
    assert tp.tensor(np.arange(3, dtype=np.float64)).dtype is tp.float64
    assert tp.tensor([[1, 2], [3, 4]], dtype=tp.float16).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tp.tensor([1.5, -2.25], dtype=tp.bfloat16).tolist() == [1.5, -2.25]


def test_tensor_copies_data():
    a = np.ones(3, dtype=np.float32)
    t = tp.tensor(a)
    a[0] = 5
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_tensor_errors():
    with pytest.raises(ValueError):
        tp.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        tp.tensor([object()])


def test_Tensor_constructor():
    x = tp.Tensor([[1, 2], [3, 4]])
    assert x.dtype is tp.float32 and x.shape == (2, 2)
    assert tp.Tensor(2, 3).shape == (2, 3)
    assert tp.Tensor().shape == (0,)
    assert tp.Tensor([1.0], requires_grad=True).requires_grad


@pytest.mark.parametrize("size", [(), (0,), (1,), (2, 3), (2, 0, 4)])
def test_zeros_ones_full(size):
    assert np.array_equal(tp.zeros(size).numpy(), np.zeros(size, np.float32))
    assert np.array_equal(tp.ones(*size, dtype=tp.int32).numpy(), np.ones(size, np.int32))
    assert np.array_equal(tp.full(size, 7).numpy(), np.full(size, 7, np.int64))
    assert tp.full(size, 7).dtype is tp.int64
    assert tp.full(size, True).dtype is tp.bool
    assert tp.full(size, 2.5).dtype is tp.float32
    assert tp.empty(size).shape == size


def test_negative_size_raises():
    with pytest.raises(RuntimeError, match="negative dimension"):
        tp.zeros(2, -1)


@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 1, 0.25), (10, 0, -3), (0, 0), (-2.5, 2.5, 0.5)])
def test_arange_matches_numpy(args):
    ref = np.arange(*args)
    got = tp.arange(*args)
    assert got.dtype is (tp.int64 if ref.dtype.kind == "i" else tp.float32)
    np.testing.assert_allclose(got.numpy(), ref.astype(got.numpy().dtype), rtol=1e-6)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tp.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        tp.arange(5, 0, 1)


@pytest.mark.parametrize("steps", [0, 1, 2, 5, 100])
def test_linspace_logspace(steps):
    np.testing.assert_allclose(
        tp.linspace(-1, 3, steps).numpy(), np.linspace(-1, 3, steps), rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(
        tp.logspace(0, 2, steps, dtype=tp.float64).numpy(), np.logspace(0, 2, steps), rtol=1e-12
    )
    if steps > 1:  # both endpoints are exact
        t = tp.linspace(0.1, 0.7, steps, dtype=tp.float64).numpy()
        assert t[0] == 0.1 and t[-1] == 0.7


def test_eye():
    assert np.array_equal(tp.eye(3).numpy(), np.eye(3, dtype=np.float32))
    assert np.array_equal(tp.eye(2, 4, dtype=tp.int64).numpy(), np.eye(2, 4, dtype=np.int64))
    assert tp.eye(0).shape == (0, 0)


def test_like_and_out():
    x = tp.ones(2, 3, dtype=tp.float64)
    assert tp.zeros_like(x).dtype is tp.float64 and tp.zeros_like(x).shape == (2, 3)
    assert tp.full_like(x, 4).tolist() == [[4.0] * 3] * 2
    assert tp.ones_like(x, dtype=tp.int8).dtype is tp.int8
    assert tp.empty_like(x).shape == x.shape
    out = tp.empty(4)
    r = tp.arange(4.0, out=out)
    assert r is out and out.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_empty_strided():
    t = tp.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and t.shape == (2, 3)
