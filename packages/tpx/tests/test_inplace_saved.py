"""In-place writes after a save that backward never reads: PyTorch accepts them, and so do we, because a
formula saves an argument only when the gradient that reads it is wanted (Note [Save what backward reads] in
csrc/record.cpp). The version check still fires where a saved value is really needed. References: float64
by hand, and PyTorch when installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)


def _slice_assign(lib, x):
    y = x.clone()
    y[:, 0] = y[:, 1] * 2
    (y * y).sum().backward()


def _chain_of_writes(lib, x):
    y = x.clone()
    y[:, 0].mul_(3)
    y[1] = 0.0
    v = y.view(-1)
    v[-1] = v[0] * 2
    (y * y).sum().backward()


def _expected_slice_assign(a: np.ndarray) -> np.ndarray:
    g = 2 * a
    g[:, 0] = 0.0  # overwritten
    g[:, 1] = 2 * a[:, 1] + 2 * (2 * a[:, 1]) * 2  # y[:, 1] and y[:, 0] = 2 y[:, 1]
    return g


def _expected_chain(a: np.ndarray) -> np.ndarray:
    g = 2 * a
    g[:, 0] = 2 * (3 * a[:, 0]) * 3
    g[1] = 0.0
    g[-1, -1] = 0.0
    g[0, 0] += 2 * (6 * a[0, 0]) * 6  # v[-1] = 2 v[0] = 6 x[0, 0]
    return g


@pytest.mark.parametrize(
    ("program", "expected"), [(_slice_assign, _expected_slice_assign), (_chain_of_writes, _expected_chain)]
)
def test_write_after_unneeded_save(program, expected) -> None:
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = tp.tensor(a).requires_grad_(True)
    program(tp, x)
    np.testing.assert_allclose(x.grad.numpy(), expected(a), rtol=1e-12)


@pytest.mark.parametrize("program", [_slice_assign, _chain_of_writes])
def test_matches_pytorch(program) -> None:
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((3, 4))
    x = tp.tensor(a).requires_grad_(True)
    xt = torch.tensor(a, requires_grad=True)
    program(tp, x)
    program(torch, xt)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_mul_by_number_saves_nothing_of_self() -> None:
    x = tp.randn(5, 6, requires_grad=True)
    saved = (x * 2).grad_fn._saved_tensors()
    assert all(t is None or tuple(t.shape) != (5, 6) for t in saved)
    w = tp.randn(5, 6)
    saved = (x * w).grad_fn._saved_tensors()  # only w (x's gradient reads it)
    assert [t is w for t in saved if t is not None] == [True]


def test_matmul_family_saves_only_the_needed_operand() -> None:
    a = tp.randn(3, 4, requires_grad=True)
    b = tp.randn(4, 2)  # no gradient: a is not needed
    saved = [t for t in a.mm(b).grad_fn._saved_tensors() if t is not None]
    assert len(saved) == 1 and saved[0] is b


def test_a_save_that_backward_reads_is_still_checked() -> None:
    x = tp.randn(3, requires_grad=True)
    w = tp.randn(3, requires_grad=True)
    a = x * 1.0
    out = a * w  # w's gradient reads a
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_in_place_mul_by_number_keeps_no_copy() -> None:
    # y.mul_(3) needs no old value of y (d/dy = 3): no clone is recorded, and the gradient is right.
    a = np.array([1.0, -2.0, 3.0])
    x = tp.tensor(a).requires_grad_(True)
    y = x * 1.0
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward"  # straight to x * 1.0, no CloneBackward
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 18 * a)
