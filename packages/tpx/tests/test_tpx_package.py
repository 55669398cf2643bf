"""Unit tests of the tensorplay_tpx package skeleton (packages/tpx): import order and layout."""

from __future__ import annotations

import sys

import tensorplay_tpx


def test_importing_tpx_imports_p10_first() -> None:
    assert "tensorplay_p10" in sys.modules
    assert tensorplay_tpx._C.__name__ == "tensorplay_tpx._C"


def test_autograd_package_exists_with_a_docstring() -> None:
    import tensorplay_tpx.autograd as autograd

    assert autograd.__doc__ and "autograd" in autograd.__doc__


def test_importing_tpx_fills_p10s_extension_point_with_grad_and_function() -> None:
    # P10 code that records its own backward (cuda/graphs.py's make_graphed_callables) reaches autograd only
    # through the registered engine: its Function and grad must be the public ones and work.
    import numpy as np

    import tensorplay_p10 as tp
    from tensorplay_p10 import _autograd_hooks

    engine = _autograd_hooks.engine()
    assert engine is not None
    assert engine.Function is tensorplay_tpx.autograd.Function
    assert engine.grad is tensorplay_tpx.autograd.grad

    class Cube(engine.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    values = np.array([-1.5, 0.5, 2.0])
    x = tp.tensor(values, requires_grad=True)
    (dx,) = engine.grad(Cube.apply(x).sum(), x)
    np.testing.assert_allclose(dx.numpy(), 3 * values**2)
