"""split / chunk / unbind under autograd: one node for all the pieces (Note [One op for all the pieces] in
P10's kernels/view.cpp), views written through in place, higher derivatives. References are NumPy float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx import autograd


def leaf(values: np.ndarray) -> tp.Tensor:
    return tp.tensor(values).requires_grad_(True)


@pytest.mark.parametrize(
    ("make", "node"),
    [
        (lambda x: x.split(2), "SplitWithSizesBackward"),
        (lambda x: x.split([1, 4, 1]), "SplitWithSizesBackward"),
        (lambda x: x.chunk(3), "SplitWithSizesBackward"),
        (lambda x: x.unbind(0), "UnbindBackward"),
    ],
)
def test_pieces_share_one_node(make, node: str) -> None:
    x = leaf(np.arange(12.0).reshape(6, 2))
    pieces = make(x)
    assert isinstance(pieces, tuple)
    assert all(p.grad_fn is pieces[0].grad_fn for p in pieces)
    assert pieces[0].grad_fn.name() == node
    with autograd.no_grad():  # views: a write into x shows in every piece
        x.add_(100)
        np.testing.assert_allclose(tp.cat([p.reshape(-1) for p in pieces]).numpy(), np.arange(12.0) + 100)


def test_gradient_weights_each_piece() -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((7, 3))
    x = leaf(x_np)
    pieces = x.split([2, 0, 5], dim=0)
    assert [tuple(p.shape) for p in pieces] == [(2, 3), (0, 3), (5, 3)]
    (pieces[0].sum() * 2 + (pieces[2] ** 2).sum()).backward()
    expected = np.concatenate([np.full((2, 3), 2.0), 2 * x_np[2:]])
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_unused_pieces_get_zero_gradient_and_negative_dim() -> None:
    x = leaf(np.ones((2, 6)))
    a, b, c = x.chunk(3, dim=-1)
    (b * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([[0, 0, 3, 3, 0, 0]] * 2, dtype=float))


_MULTI_VIEW = (
    r"Output {nr} of {node} is a view and {what} modified inplace\. This view is the output of a function "
    r"that returns multiple views\. Such functions do not allow the output views to be modified inplace\. "
    r"You should replace the inplace operation by an out-of-place one\."
)


@pytest.mark.parametrize(
    ("make", "nr", "node"),
    [
        (lambda y: y.unbind(0)[0], 0, "UnbindBackward"),
        (lambda y: y.split(2)[1], 1, "SplitWithSizesBackward"),
        (lambda y: y.chunk(3)[2], 2, "SplitWithSizesBackward"),
        (lambda y: y.split([1, 2])[1], 1, "SplitWithSizesBackward"),
        (
            lambda y: y.split(3)[0],
            0,
            "SplitWithSizesBackward",
        ),  # a single piece is still refused, as in PyTorch
    ],
)
@pytest.mark.parametrize("write", [lambda t: t.mul_(2.0), lambda t: t.zero_(), lambda t: t.copy_(t * 3)])
def test_in_place_on_a_piece_is_refused(make, nr: int, node: str, write) -> None:
    # Note [Multi-output views]: PyTorch's rule and message.
    x = tp.randn(3, 4, requires_grad=True)
    piece = make(x * 1.0)
    with pytest.raises(RuntimeError, match=_MULTI_VIEW.format(nr=nr, node=node, what="is being")):
        write(piece)


def test_in_place_on_a_piece_of_a_leaf_or_a_slice_of_a_piece_is_refused() -> None:
    x = tp.randn(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match=_MULTI_VIEW.format(nr=0, node="UnbindBackward", what="is being")):
        x.unbind(0)[0].mul_(2.0)
    row = (x * 1.0).unbind(0)[1]
    with pytest.raises(
        RuntimeError, match=r"This view is the output of a function that returns multiple views"
    ):
        row[1] = 5.0


def test_a_piece_used_after_its_base_was_written_is_refused() -> None:
    x = tp.randn(3, 4, requires_grad=True)
    y = x * 1.0
    pieces = y.unbind(0)
    y.mul_(2)
    with pytest.raises(
        RuntimeError,
        match=_MULTI_VIEW.format(
            nr=0, node="UnbindBackward", what="its base or another view of its base has been"
        ),
    ):
        pieces[0].sum()


def test_in_place_on_a_piece_without_a_graph_is_allowed() -> None:
    x = tp.tensor(np.arange(12.0).reshape(3, 4))
    x.unbind(0)[0].mul_(2.0)  # nothing requires grad
    y = tp.randn(3, 4, requires_grad=True)
    with autograd.no_grad():
        (y * 1.0).unbind(0)[0].mul_(2.0)
        first = y.split(2)[0]
        first.zero_()  # a leaf's piece, in no_grad: allowed, and written through
    np.testing.assert_array_equal(x.numpy()[0], [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(y.detach().numpy()[:2], 0.0)


def test_in_place_on_a_piece_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    xt = torch.randn(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError) as theirs:
        (xt * 1.0).unbind(0)[0].mul_(2.0)
    with pytest.raises(RuntimeError) as ours:
        (tp.randn(3, 4, requires_grad=True) * 1.0).unbind(0)[0].mul_(2.0)
    tail = "is a view and is being modified inplace."
    assert str(theirs.value).split(tail)[1] == str(ours.value).split(tail)[1]


def test_unbind_then_stack_second_derivative() -> None:
    x_np = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = leaf(x_np)
    rows = x.unbind(0)
    out = sum((r**3).sum() for r in rows)
    (g,) = autograd.grad(out, [x], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x_np**2)
    (gg,) = autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), 6 * x_np)


def test_gradcheck_and_gradgradcheck() -> None:
    rng = np.random.default_rng(1)
    x = leaf(rng.standard_normal((5, 4)))

    def f(t: tp.Tensor) -> tp.Tensor:
        a, b = t.split([3, 2])
        u = t.unbind(1)
        return (a * a).sum(0) + b.prod(0) + u[0][:4] * u[3][1:]

    assert autograd.gradcheck(f, (x,))
    assert autograd.gradgradcheck(f, (x,))


def test_errors_name_the_op() -> None:
    x = tp.ones(5)
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly to 5"):
        x.split([2, 2])
    with pytest.raises(RuntimeError, match=r"split expects split_size be non-negative"):
        x.split(-1)
    with pytest.raises(RuntimeError, match=r"non-negative entries"):
        x.split([6, -1])
    with pytest.raises(RuntimeError, match=r"chunk expects `chunks` to be greater than 0"):
        x.chunk(0)
    with pytest.raises(IndexError, match=r"Dimension specified as 0 but tensor has no dimensions"):
        tp.tensor(1.0).unbind(0)
