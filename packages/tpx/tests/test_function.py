"""autograd.Function (tensorplay_tpx/autograd/function.py, csrc/function.cpp), checkpoint and the
functional API."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401
from tensorplay_tpx import autograd
from tensorplay_tpx.autograd import Function, once_differentiable
from tensorplay_tpx.autograd import functional as F
from tensorplay_tpx.utils.checkpoint import checkpoint


def leaf(values):
    return tp.tensor(values, dtype=tp.float64).requires_grad_(True)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2


def test_custom_function_forward_backward_and_name() -> None:
    x = leaf([1.0, 2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_custom_function_is_differentiable_twice() -> None:
    x = leaf([2.0])
    (g,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    assert gg.tolist() == [12.0]


def test_needs_input_grad_and_non_tensor_inputs() -> None:
    seen = {}

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor, y):
            seen["needs"] = ctx.needs_input_grad
            ctx.factor = factor
            return x * factor + y

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None, grad

    x, y = leaf([1.0]), tp.tensor([2.0], dtype=tp.float64)
    Scale.apply(x, 3.0, y).sum().backward()
    assert seen["needs"] == (True, False, False)
    assert x.grad.tolist() == [3.0]


def test_wrong_number_of_gradients_raises() -> None:
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad

    a, b = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        Bad.apply(a, b).sum().backward()


def test_mark_dirty_and_non_differentiable() -> None:
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    class SortValues(Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return tp.zeros_like(gv).scatter(0, i, gv)

    x = leaf([1.0, 2.0])
    y = x * 2
    z = AddOneInPlace.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneInPlaceBackward"
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]

    w = leaf([3.0, 1.0, 2.0])
    v, i = SortValues.apply(w)
    assert v.requires_grad and not i.requires_grad
    (v * tp.tensor([1.0, 10.0, 100.0], dtype=tp.float64)).sum().backward()
    assert w.grad.tolist() == [100.0, 1.0, 10.0]


def test_saved_tensor_version_check_in_function() -> None:
    x = leaf([1.0])
    y = x * 1
    z = Cube.apply(y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_set_materialize_grads_and_setup_context_style() -> None:
    class Two(Function):
        @staticmethod
        def forward(x):
            return x * 2, x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None
            return g1 * 2

    x = leaf([1.0])
    a, _ = Two.apply(x)
    a.sum().backward()
    assert x.grad.tolist() == [2.0]


def test_once_differentiable_refuses_double_backward() -> None:
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = leaf([3.0])
    v = tp.ones(1, dtype=tp.float64).requires_grad_(True)
    (g,) = autograd.grad(Sq.apply(x), x, grad_outputs=v, create_graph=True)
    assert g.tolist() == [6.0]
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        g.sum().backward()


def test_checkpoint_recomputes_and_reaches_closed_over_parameters() -> None:
    w = leaf([1.0, 2.0, 3.0])
    x = tp.tensor([0.5, -1.0, 2.0], dtype=tp.float64).requires_grad_(True)
    checkpoint(lambda t: (t * w).sin().sum(), x).backward()
    xn, wn = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(w.grad.numpy(), np.cos(xn * wn) * xn)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xn * wn) * wn)


def test_functional_jacobian_hessian_vjp_jvp_hvp() -> None:
    xn = np.array([1.0, 2.0, 0.5])
    x = tp.tensor(xn, dtype=tp.float64)
    jac = F.jacobian(lambda t: t**2 * t.sum(), x)
    expected = np.diag(2 * xn * xn.sum()) + (xn**2)[:, None]
    np.testing.assert_allclose(jac.numpy(), expected)
    hess = F.hessian(lambda t: (t**3).sum(), x)
    np.testing.assert_allclose(hess.numpy(), np.diag(6 * xn))
    v = tp.tensor([1.0, 0.0, 2.0], dtype=tp.float64)
    _, vj = F.vjp(lambda t: t.exp(), x, v)
    np.testing.assert_allclose(vj.numpy(), np.exp(xn) * v.numpy())
    _, jv = F.jvp(lambda t: t.sin(), x, v)
    np.testing.assert_allclose(jv.numpy(), np.cos(xn) * v.numpy())
    _, hv = F.hvp(lambda t: (t**3).sum(), x, v)
    np.testing.assert_allclose(hv.numpy(), 6 * xn * v.numpy())


def test_function_jvp_in_forward_mode() -> None:
    from tensorplay_tpx.autograd import forward_ad as fwAD

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return x * x

        @staticmethod
        def backward(ctx, grad):
            return 2 * ctx.x * grad

        @staticmethod
        def jvp(ctx, t):
            return 2 * ctx.x * t

    x = tp.tensor([1.0, 3.0], dtype=tp.float64)
    with fwAD.dual_level():
        y = Square.apply(fwAD.make_dual(x, tp.tensor([1.0, 1.0], dtype=tp.float64))).exp()
        tangent = fwAD.unpack_dual(y).tangent
    np.testing.assert_allclose(tangent.numpy(), np.exp(x.numpy() ** 2) * 2 * x.numpy())


def test_forward_ad_errors_and_level_exit() -> None:
    from tensorplay_tpx.autograd import forward_ad as fwAD

    with pytest.raises(RuntimeError, match="needs an open dual level"):
        fwAD.make_dual(tp.ones(2), tp.ones(2))
    with fwAD.dual_level():
        d = fwAD.make_dual(tp.ones(2), tp.ones(2))
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(tp.ones(2), tp.ones(3))
        # Every P10 op has a rule now, so use one defined here without a derivative.
        lib = tp.library.Library("fwad_test")
        lib.define("no_rule(Tensor x) -> Tensor")
        lib.impl("no_rule", lambda x: x * 2, "CPU")
        with pytest.raises(
            NotImplementedError, match="forward-mode AD for 'fwad_test::no_rule' is not implemented"
        ):
            tp.ops.fwad_test.no_rule(d)
        assert not (d > 0).requires_grad  # integer/bool results need no tangent
    assert fwAD.unpack_dual(d).tangent is None  # tangents live only inside the level
