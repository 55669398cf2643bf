"""Activation modules (nn/modules/activation.py): defaults and extra_repr text as PyTorch prints them, each
module's forward equal to its NumPy formula, PReLU's parameter and initialisation, RReLU's train/eval
behaviour, Softmax2d's checks, and the same reprs as live PyTorch where installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import T, check

import tensorplay as tp
from tensorplay import nn

rng = np.random.default_rng(7)
X = np.concatenate([rng.normal(size=12) * 3, [-1.0, 0.0, 1.0, 7.0]])


REPRS = [
    (lambda m: m.ReLU(), "ReLU()"),
    (lambda m: m.ReLU(inplace=True), "ReLU(inplace=True)"),
    (lambda m: m.ReLU6(), "ReLU6()"),
    (lambda m: m.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"),
    (lambda m: m.Threshold(0.1, 20.0, True), "Threshold(threshold=0.1, value=20.0, inplace=True)"),
    (lambda m: m.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)"),
    (lambda m: m.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    (lambda m: m.ELU(), "ELU(alpha=1.0)"),
    (lambda m: m.CELU(0.5, inplace=True), "CELU(alpha=0.5, inplace=True)"),
    (lambda m: m.SELU(), "SELU()"),
    (lambda m: m.GLU(), "GLU(dim=-1)"),
    (lambda m: m.GELU(), "GELU(approximate='none')"),
    (lambda m: m.GELU("tanh"), "GELU(approximate='tanh')"),
    (lambda m: m.Hardshrink(), "Hardshrink(0.5)"),
    (lambda m: m.Softshrink(), "Softshrink(0.5)"),
    (lambda m: m.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda m: m.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda m: m.PReLU(), "PReLU(num_parameters=1)"),
    (lambda m: m.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda m: m.Softmin(), "Softmin(dim=None)"),
    (lambda m: m.LogSoftmax(-1), "LogSoftmax(dim=-1)"),
    (lambda m: m.Softmax2d(), "Softmax2d()"),
    (lambda m: m.SiLU(), "SiLU()"),
    (lambda m: m.Mish(), "Mish()"),
    (lambda m: m.Hardswish(), "Hardswish()"),
    (lambda m: m.Hardsigmoid(), "Hardsigmoid()"),
    (lambda m: m.Sigmoid(), "Sigmoid()"),
    (lambda m: m.Tanh(), "Tanh()"),
    (lambda m: m.LogSigmoid(), "LogSigmoid()"),
    (lambda m: m.Softsign(), "Softsign()"),
    (lambda m: m.Tanhshrink(), "Tanhshrink()"),
]


@pytest.mark.parametrize(("make", "text"), REPRS)
def test_repr(make, text):
    assert repr(make(nn)) == text


def test_repr_matches_live_torch():
    torch = pytest.importorskip("torch")
    for make, _ in REPRS:
        assert repr(make(nn)) == repr(make(torch.nn))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


FORWARD = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.Threshold(0.5, -1.0), lambda x: np.where(x > 0.5, x, -1.0)),
    (nn.Hardtanh(-0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.CELU(2.0), lambda x: np.maximum(x, 0) + np.minimum(0, 2.0 * np.expm1(x / 2.0))),
    (nn.LeakyReLU(0.3), lambda x: np.where(x >= 0, x, 0.3 * x)),
    (nn.Sigmoid(), sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.SiLU(), lambda x: x * sigmoid(x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Hardshrink(1.0), lambda x: np.where(np.abs(x) > 1.0, x, 0)),
    (nn.Softshrink(1.0), lambda x: np.sign(x) * np.maximum(np.abs(x) - 1.0, 0)),
    (nn.LogSigmoid(), lambda x: -np.logaddexp(0, -x)),
    (nn.Softplus(2.0), lambda x: np.log1p(np.exp(2.0 * x)) / 2.0),
    (nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
]


@pytest.mark.parametrize(("module", "ref"), FORWARD, ids=[type(m).__name__ for m, _ in FORWARD])
def test_forward(module, ref):
    check(module(T(X)), ref(X), tol=1e-10)


def test_inplace_module_modifies_its_input():
    x = T(X)
    out = nn.ReLU(inplace=True)(x)
    check(x, np.maximum(X, 0))
    check(out, np.maximum(X, 0))


def test_prelu_parameter():
    m = nn.PReLU(3, init=0.1)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    check(m.weight, [0.1, 0.1, 0.1], tol=1e-7)  # float32
    x = rng.normal(size=(2, 3, 4))
    out = m(T(x).to(tp.float32))
    check(out, np.where(x >= 0, x, 0.1 * x), tol=1e-6)
    out.sum().backward()
    check(m.weight.grad, np.where(x < 0, x, 0).sum((0, 2)), tol=1e-5)
    check(nn.PReLU().weight, [0.25])


def test_rrelu_train_and_eval():
    m = nn.RReLU(0.1, 0.3)
    x = T(-np.ones(1000))
    y = np.asarray(m(x).tolist())
    assert (y <= -0.1).all() and (y >= -0.3).all() and y.std() > 0.03  # random slopes in training
    m.eval()
    check(m(x), -0.2 * np.ones(1000))


def test_softmax_modules():
    x = rng.normal(size=(2, 3, 4, 5))
    e = np.exp(x - x.max(1, keepdims=True))
    check(nn.Softmax2d()(T(x)), e / e.sum(1, keepdims=True))
    check(nn.Softmax2d()(T(x[0])), (e / e.sum(1, keepdims=True))[0])
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(T(x[0, 0]))
    e = np.exp(x - x.max(-1, keepdims=True))
    check(nn.LogSoftmax(-1)(T(x)), np.log(e / e.sum(-1, keepdims=True)))
    check(nn.Softmin(-1)(T(-x)), e / e.sum(-1, keepdims=True))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        nn.Softmax()(T(x))


def test_glu_and_hardtanh_checks():
    x = rng.normal(size=(2, 4))
    check(nn.GLU(1)(T(x)), x[:, :2] * sigmoid(x[:, 2:]))
    with pytest.raises(AssertionError, match=r"max_val \(-1.0\) must be greater than min_val \(1.0\)"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.warns(FutureWarning, match="`min_value` is deprecated"):
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0
