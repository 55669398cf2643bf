"""Tensor.data and set_: a tensor's values outside autograd, and rebinding a tensor to another's memory."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp

tensorplay_tpx = pytest.importorskip("tensorplay_tpx")  # .grad and is_leaf need the engine


def test_data_shares_memory_and_is_outside_autograd() -> None:
    w = tp.tensor([1.0, 2.0, 3.0]).requires_grad_(True)
    d = w.data
    assert not d.requires_grad
    d.mul_(2)  # writes into w's memory
    np.testing.assert_allclose(w.detach().numpy(), [2.0, 4.0, 6.0])
    assert w.requires_grad and w.is_leaf


def test_assigning_data_rebinds_memory_shape_and_keeps_the_leaf() -> None:
    w = tp.zeros(2, 2).requires_grad_(True)
    src = tp.arange(6.0).reshape(3, 2).t()  # non-contiguous source
    before = w._version
    w.data = src
    assert tuple(w.shape) == (2, 3) and w.stride() == src.stride()
    np.testing.assert_allclose(w.detach().numpy(), np.arange(6.0).reshape(3, 2).T)
    assert w.requires_grad and w.is_leaf and w._version > before
    src.add_(1)  # shared memory: w sees it
    np.testing.assert_allclose(w.detach().numpy(), np.arange(6.0).reshape(3, 2).T + 1)
    (w * 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 3), 2.0))


def test_set_errors_name_the_op() -> None:
    w = tp.zeros(2)
    with pytest.raises(
        RuntimeError, match=r"set_: could not set a tensor of dtype float32 to a tensor of dtype int64"
    ):
        w.data = tp.zeros(2, dtype=tp.int64)
    with pytest.raises(TypeError, match=r"Tensor.data must be set to a Tensor, not list"):
        w.data = [1.0, 2.0]
