"""Recording past the inline sizes of the recorder's lists (Note [Recording allocations] in csrc/record.cpp).

The recorder keeps a call's tensors (8), edges (3), stored arguments (4), outputs (4) and each output's shape
(6 dims) inline and moves to the heap past those sizes. These calls sit on both sides of each limit, so a
mistake in the growth path shows as a wrong gradient or a crash. References are NumPy float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx import autograd


@pytest.mark.parametrize("count", [1, 3, 4, 8, 9, 17])
def test_cat_of_many_inputs(count: int) -> None:
    rng = np.random.default_rng(count)
    values = [rng.standard_normal((2, k + 1)) for k in range(count)]
    leaves = [tp.tensor(v).requires_grad_(True) for v in values]
    weight = rng.standard_normal((2, sum(v.shape[1] for v in values)))
    (tp.cat(leaves, dim=1) * tp.tensor(weight)).sum().backward()
    start = 0
    for v, leaf in zip(values, leaves, strict=True):
        width = v.shape[1]
        np.testing.assert_allclose(leaf.grad.numpy(), weight[:, start : start + width])
        start += width


@pytest.mark.parametrize("ndim", [5, 6, 7, 9])
def test_broadcast_gradient_of_many_dims(ndim: int) -> None:
    rng = np.random.default_rng(ndim)
    shape_a = tuple(2 if d % 2 else 1 for d in range(ndim))
    shape_b = tuple(1 if d % 2 else 3 for d in range(ndim))
    a_np, b_np = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    a, b = tp.tensor(a_np).requires_grad_(True), tp.tensor(b_np).requires_grad_(True)
    out = a * b
    assert out.grad_fn is not None and tuple(out.shape) == np.broadcast_shapes(shape_a, shape_b)
    out.sum().backward()
    full = np.broadcast_shapes(shape_a, shape_b)
    grad_a = np.broadcast_to(b_np, full).sum(
        axis=tuple(d for d in range(ndim) if shape_a[d] == 1), keepdims=True
    )
    grad_b = np.broadcast_to(a_np, full).sum(
        axis=tuple(d for d in range(ndim) if shape_b[d] == 1), keepdims=True
    )
    np.testing.assert_allclose(a.grad.numpy(), grad_a)
    np.testing.assert_allclose(b.grad.numpy(), grad_b)


def test_many_stored_arguments_and_second_order() -> None:
    # addcmul stores self, tensor1, tensor2 and value (more than the inline four with its schema's extras);
    # create_graph exercises the stored list again when backward records.
    rng = np.random.default_rng(0)
    x_np, y_np, z_np = (rng.standard_normal((3, 4)) for _ in range(3))
    x, y, z = (tp.tensor(v).requires_grad_(True) for v in (x_np, y_np, z_np))
    out = tp.addcmul(x, y, z, value=0.5)
    (gy,) = autograd.grad(out.pow(2).sum(), [y], create_graph=True)
    np.testing.assert_allclose(gy.detach().numpy(), 2 * (x_np + 0.5 * y_np * z_np) * 0.5 * z_np)
    (gz,) = autograd.grad(gy.sum(), [z])
    # d/dz sum(2 (x + y z / 2) z / 2) = x + y z
    np.testing.assert_allclose(gz.numpy(), x_np + y_np * z_np)


@pytest.mark.parametrize("k", [2, 5])
def test_multi_output_op_gradients(k: int) -> None:
    rng = np.random.default_rng(k)
    x_np = rng.standard_normal((3, 7))
    x = tp.tensor(x_np).requires_grad_(True)
    values, indices = tp.topk(x, k, dim=1)
    weight = rng.standard_normal((3, k))
    (values * tp.tensor(weight)).sum().backward()
    expected = np.zeros_like(x_np)
    order = np.argsort(-x_np, axis=1)[:, :k]
    np.put_along_axis(expected, order, weight, axis=1)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert indices.grad_fn is None


@pytest.mark.parametrize("needs", [(False, True), (True, False, True), (False, False, True), (True, False)])
def test_cat_with_inputs_that_need_no_gradient(needs: tuple[bool, ...]) -> None:
    # The gradient slice of each input starts after every earlier input, needed or not.
    rng = np.random.default_rng(len(needs))
    values = [rng.standard_normal((2, k + 2)) for k in range(len(needs))]
    tensors = [tp.tensor(v).requires_grad_(n) for v, n in zip(values, needs, strict=True)]
    weight = rng.standard_normal((2, sum(v.shape[1] for v in values)))
    (tp.cat(tensors, dim=1) * tp.tensor(weight)).sum().backward()
    start = 0
    for v, t, n in zip(values, tensors, needs, strict=True):
        if n:
            np.testing.assert_allclose(t.grad.numpy(), weight[:, start : start + v.shape[1]])
        else:
            assert t.grad is None
        start += v.shape[1]
