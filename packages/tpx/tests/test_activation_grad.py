"""Derivatives of the activation ops (formulas/activation.py): gradcheck and gradgradcheck for every op with
its parameters, so the backward ops' own formulas (double backward) are checked too; the node names; in-place
forms; and rrelu's training gradient (the drawn slopes).

References are central differences of the forward ops (gradcheck), not values from the formulas.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx.autograd import grad, gradcheck, gradgradcheck


def _x(*shape, seed=0, away_from=()):
    """float64 inputs in [-4, 4], moved off the kinks in ``away_from`` (finite differences straddle them)."""
    a = np.random.default_rng(seed).uniform(-4, 4, shape)
    for k in away_from:
        a[np.abs(a - k) < 0.05] += 0.1
    return tp.tensor(a).requires_grad_(True)


# name -> (function of one tensor, kinks to avoid, smooth: second derivatives are checked)
CASES = {
    "relu": (tp.relu, (0,), False),
    "relu6": (tp.relu6, (0, 6), False),
    "leaky_relu": (lambda x: tp.leaky_relu(x, 0.2), (0,), False),
    "leaky_relu_neg": (lambda x: tp.leaky_relu(x, -1.5), (0,), False),
    "elu": (tp.elu, (0,), True),
    "elu_params": (lambda x: tp.elu(x, 0.5, 2.0, 1.5), (0,), True),
    "selu": (tp.selu, (0,), True),
    "celu": (lambda x: tp.celu(x, 0.7), (0,), True),
    "gelu": (tp.gelu, (), True),
    "gelu_tanh": (lambda x: tp.gelu(x, approximate="tanh"), (), True),
    "silu": (tp.silu, (), True),
    "mish": (tp.mish, (), True),
    "softplus": (tp.softplus, (), True),
    "softplus_params": (lambda x: tp.softplus(x, 2.0, 3.0), (1.5,), True),
    "softshrink": (lambda x: tp.softshrink(x, 1.0), (-1, 1), False),
    "hardshrink": (lambda x: tp.hardshrink(x, 1.0), (-1, 1), False),
    "tanhshrink": (tp.tanhshrink, (), True),
    "softsign": (tp.softsign, (0,), False),
    "threshold": (lambda x: tp.threshold(x, 0.5, -2.0), (0.5,), False),
    "hardtanh": (lambda x: tp.hardtanh(x, -2.0, 3.0), (-2, 3), False),
    "hardsigmoid": (tp.hardsigmoid, (-3, 3), False),
    "hardswish": (tp.hardswish, (-3, 3), False),
    "log_sigmoid": (tp.log_sigmoid, (), True),
    "glu": (lambda x: tp.glu(x, 0), (), True),
    "rrelu_eval": (lambda x: tp.rrelu(x, 0.1, 0.3), (0,), False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, kinks, _ = CASES[name]
    assert gradcheck(fn, (_x(4, 3, away_from=kinks),))
    transposed = _x(3, 4, away_from=kinks).detach().t().requires_grad_(True)
    assert gradcheck(fn, (transposed,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    """Second derivatives: through the backward ops' formulas (gelu_backward, silu_backward, ...)."""
    fn, kinks, _ = CASES[name]
    assert gradgradcheck(fn, (_x(2, 4, seed=1, away_from=kinks),))


# glu is left out: its third derivative goes through narrow's gradient twice, and that path trips the engine's
# saved-tensor version check (CopySlices); a narrow/autograd matter, not an activation formula.
@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2] and n != "glu"])
def test_third_derivative_of_smooth_activations(name):
    """The double-backward formulas are made of differentiable ops, so a third derivative exists too."""
    fn, _, _ = CASES[name]
    x = _x(6, seed=2)

    def second(x):
        (g,) = grad(fn(x).sum(), x, create_graph=True)
        return g

    assert gradgradcheck(second, (x,))


def test_prelu_gradients_reach_input_and_weight():
    x = _x(2, 3, 4, away_from=(0,))
    w = tp.tensor([0.1, -0.2, 0.3], dtype=tp.float64).requires_grad_(True)
    assert gradcheck(tp.prelu, (x, w))
    assert gradgradcheck(tp.prelu, (x, w))
    w1 = tp.tensor([0.25], dtype=tp.float64).requires_grad_(True)
    assert gradcheck(tp.prelu, (x, w1))


@pytest.mark.parametrize(
    "fn,node",
    [
        (tp.relu, "ReluBackward"),
        (tp.gelu, "GeluBackward"),
        (tp.silu, "SiluBackward"),
        (tp.mish, "MishBackward"),
        (tp.elu, "EluBackward"),
        (tp.softplus, "SoftplusBackward"),
        (tp.hardtanh, "HardtanhBackward"),
        (tp.relu6, "HardtanhBackward"),  # a Composite: the node is that of the op it is made of
        (tp.selu, "EluBackward"),
    ],
)
def test_node_names(fn, node):
    assert fn(_x(3)).grad_fn.name() == node


@pytest.mark.parametrize(
    "inplace,outofplace",
    [
        (lambda x: x.relu_(), tp.relu),
        (lambda x: x.gelu_(approximate="tanh"), lambda x: tp.gelu(x, approximate="tanh")),
        (lambda x: x.silu_(), tp.silu),
        (lambda x: x.mish_(), tp.mish),
        (lambda x: x.elu_(-0.5), lambda x: tp.elu(x, -0.5)),  # a negative alpha: the input is what is saved
        (lambda x: x.leaky_relu_(-0.5), lambda x: tp.leaky_relu(x, -0.5)),
        (lambda x: x.hardtanh_(-2.0, 2.0), lambda x: tp.hardtanh(x, -2.0, 2.0)),
        (lambda x: x.hardswish_(), tp.hardswish),
        (lambda x: x.threshold_(0.5, 3.0), lambda x: tp.threshold(x, 0.5, 3.0)),
        (lambda x: tp.selu_(x), tp.selu),
        (lambda x: tp.celu_(x, 2.0), lambda x: tp.celu(x, 2.0)),
        (lambda x: tp.relu6_(x), tp.relu6),
    ],
)
def test_inplace_gradients_equal_out_of_place(inplace, outofplace):
    base = _x(10, away_from=(0, 0.5, -2, 2, -3, 3))
    (want,) = grad(outofplace(base).sum(), base)
    y = base * 1.0  # a non-leaf to modify in place
    inplace(y)
    (got,) = grad(y.sum(), base)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_rrelu_training_gradient_is_the_drawn_slope():
    x = _x(200, away_from=(0,))
    y = tp.rrelu(x, 0.1, 0.3, training=True, generator=tp.Generator().manual_seed(4))
    (g,) = grad(y.sum(), x)
    xn, yn, gn = x.detach().numpy(), y.detach().numpy(), g.numpy()
    np.testing.assert_array_equal(gn[xn > 0], 1.0)
    np.testing.assert_allclose(gn[xn < 0], yn[xn < 0] / xn[xn < 0], rtol=1e-12)
    assert np.all((gn[xn < 0] >= 0.1) & (gn[xn < 0] < 0.3))
    # in place, on a non-leaf: the same slopes under the same seed
    z = x * 1.0
    tp.rrelu_(z, 0.1, 0.3, training=True, generator=tp.Generator().manual_seed(4))
    (g2,) = grad(z.sum(), x)
    np.testing.assert_array_equal(g2.numpy(), gn)


def test_heaviside_has_no_derivative():
    x = _x(3)
    y = tp.heaviside(x, tp.zeros(3, dtype=tp.float64))
    with pytest.raises((NotImplementedError, RuntimeError), match="heaviside"):
        y.sum().backward()


def test_float32_backward_kernels_match_float64():
    """The vectorised float32 backward loops (threshold, gelu both forms, silu) against the float64 ones, on a
    stride-0 gradient (what sum().backward() sends) and a dense one."""
    x64 = tp.linspace(-12, 12, 4001, dtype=tp.float64)
    g64 = tp.randn(4001, dtype=tp.float64)
    for grad64 in (g64, tp.ones(1, dtype=tp.float64).expand(4001)):
        for op, kw in [
            (tp.threshold_backward, {"threshold": 0.0}),
            (tp.gelu_backward, {}),
            (tp.gelu_backward, {"approximate": "tanh"}),
            (tp.silu_backward, {}),
        ]:
            want = op(grad64, x64, **kw).numpy()
            got = op(grad64.float(), x64.float(), **kw).double().numpy()
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=f"{op} {kw}")
