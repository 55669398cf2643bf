"""nn.functional activations (nn/functional/activation.py) against float64 NumPy formulas written here.

Each activation forward (values at and around its kinks), its inplace flag and in-place spelling (the input
itself is modified and returned), softmax / log_softmax / softmin with dim, dtype and the implicit-dim
warning, gumbel_softmax (a distribution that sums to one; hard one-hot with the soft gradient), argument
errors, gradcheck on small float64 inputs and PyTorch where installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import T, check

import tensorplay as tp
import tensorplay.nn.functional as F
from tensorplay.autograd import gradcheck

rng = np.random.default_rng(5)
X = np.concatenate([rng.normal(size=20) * 3, [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 25.0, -25.0]])
ALPHA, SCALE = 1.6732632423543772, 1.0507009873554805


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


ERF = np.vectorize(math.erf)

# name -> (call, NumPy reference)
CASES = {
    "relu": (lambda t: F.relu(t), lambda x: np.maximum(x, 0)),
    "relu6": (lambda t: F.relu6(t), lambda x: np.clip(x, 0, 6)),
    "elu": (lambda t: F.elu(t, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    "selu": (lambda t: F.selu(t), lambda x: SCALE * np.where(x > 0, x, ALPHA * np.expm1(x))),
    "celu": (lambda t: F.celu(t, 1.5), lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * np.expm1(x / 1.5))),
    "gelu": (lambda t: F.gelu(t), lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2)))),
    "gelu_tanh": (
        lambda t: F.gelu(t, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "silu": (lambda t: F.silu(t), lambda x: x * sigmoid(x)),
    "mish": (lambda t: F.mish(t), lambda x: x * np.tanh(softplus(x))),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "hardtanh": (lambda t: F.hardtanh(t, -2.0, 1.5), lambda x: np.clip(x, -2.0, 1.5)),
    "softplus": (lambda t: F.softplus(t, 2.0, 10.0), lambda x: softplus(x, 2.0, 10.0)),
    "softshrink": (
        lambda t: F.softshrink(t, 0.5),
        lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
    ),
    "hardshrink": (lambda t: F.hardshrink(t, 0.5), lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    "tanhshrink": (lambda t: F.tanhshrink(t), lambda x: x - np.tanh(x)),
    "softsign": (lambda t: F.softsign(t), lambda x: x / (1 + np.abs(x))),
    "threshold": (lambda t: F.threshold(t, 0.5, -7.0), lambda x: np.where(x > 0.5, x, -7.0)),
    "hardsigmoid": (lambda t: F.hardsigmoid(t), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    "hardswish": (lambda t: F.hardswish(t), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "logsigmoid": (lambda t: F.logsigmoid(t), lambda x: -np.logaddexp(0, -x)),
    "sigmoid": (lambda t: F.sigmoid(t), sigmoid),
    "tanh": (lambda t: F.tanh(t), np.tanh),
    "rrelu_eval": (lambda t: F.rrelu(t, 0.1, 0.3), lambda x: np.where(x >= 0, x, 0.2 * x)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_activation_values(name):
    call, ref = CASES[name]
    check(call(T(X)), ref(X), tol=1e-10)
    x2 = rng.normal(size=(3, 4)) * 2
    check(call(T(x2).t()), ref(x2.T), tol=1e-10)  # a non-contiguous view
    check(call(T(np.zeros((0, 3)))), np.zeros((0, 3)))


SMOOTH = [
    "elu",
    "selu",
    "celu",
    "gelu",
    "gelu_tanh",
    "silu",
    "mish",
    "softplus",
    "tanhshrink",
    "softsign",
    "logsigmoid",
    "sigmoid",
    "tanh",
    "relu",
    "leaky_relu",
    "hardtanh",
    "hardswish",
]


@pytest.mark.parametrize("name", SMOOTH)
def test_activation_gradcheck(name):
    call, _ = CASES[name]
    x = rng.normal(size=(2, 3)) * 2
    x[np.abs(x) < 0.05] = 0.3  # keep away from the kinks, where the finite difference is not the derivative
    assert gradcheck(call, (T(x, True),))


@pytest.mark.parametrize(
    ("fn", "kwargs"),
    [
        (F.relu, {}),
        (F.elu, {"alpha": 0.5}),
        (F.selu, {}),
        (F.celu, {}),
        (F.leaky_relu, {"negative_slope": 0.3}),
        (F.hardtanh, {}),
        (F.relu6, {}),
        (F.silu, {}),
        (F.mish, {}),
        (F.hardsigmoid, {}),
        (F.hardswish, {}),
        (F.threshold, {"threshold": 0.1, "value": 2.0}),
        (F.rrelu, {}),
    ],
)
def test_inplace_flag_modifies_input(fn, kwargs):
    x = T(X)
    want = fn(T(X), **kwargs)
    out = fn(x, inplace=True, **kwargs)
    check(x, want.tolist())
    check(out, want.tolist())


def test_inplace_spellings():
    for fn, base in [
        (F.relu_, F.relu),
        (F.elu_, F.elu),
        (F.selu_, F.selu),
        (F.celu_, F.celu),
        (F.leaky_relu_, F.leaky_relu),
        (F.hardtanh_, F.hardtanh),
        (F.rrelu_, F.rrelu),
    ]:
        x = T(X)
        fn(x)
        check(x, base(T(X)).tolist())
    x = T(X)
    F.threshold_(x, 0.0, 1.0)
    check(x, np.where(X > 0, X, 1.0))


def test_rrelu_training_slopes_in_range():
    x = T(-np.ones(2000))
    y = np.asarray(F.rrelu(x, 0.1, 0.3, training=True).tolist())
    assert (y <= -0.1).all() and (y >= -0.3).all() and y.std() > 0.03


def test_glu_and_prelu():
    x = rng.normal(size=(3, 4, 6))
    a, b = x[..., :3], x[..., 3:]
    check(F.glu(T(x)), a * sigmoid(b))
    check(F.glu(T(x), 1), x[:, :2] * sigmoid(x[:, 2:]))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(T(1.0))
    w = rng.uniform(0.1, 0.5, size=4)
    check(F.prelu(T(x), T(w)), np.where(x >= 0, x, w[None, :, None] * x))
    check(F.prelu(T(x), T([0.25])), np.where(x >= 0, x, 0.25 * x))
    assert gradcheck(lambda u, v: F.prelu(u, v), (T(x[:, :, :2], True), T(w, True)))
    assert gradcheck(lambda u: F.glu(u, 1), (T(x[:, :, :2], True),))


def test_hardtanh_bad_range():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(T(X), 1.0, -1.0)


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def test_softmax_family():
    x = rng.normal(size=(2, 3, 4))
    for dim in (0, 1, 2, -1):
        check(F.softmax(T(x), dim), softmax_ref(x, dim))
        check(F.log_softmax(T(x), dim=dim), np.log(softmax_ref(x, dim)))
        check(F.softmin(T(x), dim=dim), softmax_ref(-x, dim))
    got = F.softmax(tp.tensor(x.tolist(), dtype=tp.float32), 1, dtype=tp.float64)
    assert got.dtype == tp.float64
    check(got, softmax_ref(x.astype(np.float32).astype(np.float64), 1))
    assert F.log_softmax(T(x), 0, dtype=tp.float32).dtype == tp.float32
    assert gradcheck(lambda t: F.log_softmax(t, 1), (T(x, True),))
    assert gradcheck(lambda t: F.softmin(t, -1), (T(x, True),))


@pytest.mark.parametrize(("ndim", "dim"), [(1, 0), (2, 1), (3, 0), (4, 1)])
def test_softmax_implicit_dim_warns(ndim, dim):
    x = rng.normal(size=(2,) * ndim)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        got = F.softmax(T(x))
    check(got, softmax_ref(x, dim))


def test_gumbel_softmax():
    logits = T(rng.normal(size=(5, 4)), True)
    tp.manual_seed(0)
    soft = F.gumbel_softmax(logits, tau=0.5)
    check(soft.sum(-1), np.ones(5))
    assert (np.asarray(soft.tolist()) > 0).all()
    tp.manual_seed(0)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = np.asarray(hard.tolist())
    np.testing.assert_array_equal(h.sum(-1), np.ones(5))
    np.testing.assert_array_equal(
        h.argmax(-1), np.asarray(soft.tolist()).argmax(-1)
    )  # same seed, same sample
    # straight-through: the hard sample's gradient is the soft sample's
    (hard * T(np.arange(4.0))).sum().backward()
    g_hard = np.asarray(logits.grad.tolist())
    logits.grad = None
    (soft * T(np.arange(4.0))).sum().backward()
    np.testing.assert_allclose(g_hard, np.asarray(logits.grad.tolist()), atol=1e-12)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-5)
    # Gumbel-max: with tau -> the argmax frequencies follow softmax(logits)
    tp.manual_seed(1)
    probs = softmax_ref(np.array([0.0, 1.0, 2.0]), 0)
    draws = F.gumbel_softmax(T(np.tile([0.0, 1.0, 2.0], (20000, 1))), hard=True)
    freq = np.asarray(draws.tolist()).mean(0)
    np.testing.assert_allclose(freq, probs, atol=0.02)


def test_activations_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = torch.tensor(X)
    pairs = [
        (F.gelu(T(X), approximate="tanh"), tf.gelu(x, approximate="tanh")),
        (F.mish(T(X)), tf.mish(x)),
        (F.selu(T(X)), tf.selu(x)),
        (F.celu(T(X), 0.3), tf.celu(x, 0.3)),
        (F.softplus(T(X), 0.5, 5.0), tf.softplus(x, 0.5, 5.0)),
        (F.logsigmoid(T(X)), tf.logsigmoid(x)),
        (F.hardswish(T(X)), tf.hardswish(x)),
        (F.softmin(T(X), 0), tf.softmin(x, 0)),
    ]
    for got, want in pairs:
        check(got, want.numpy(), tol=1e-10)
    torch.manual_seed(3)
    tp.manual_seed(3)
    logits = rng.normal(size=(4, 6))
    check(
        F.gumbel_softmax(T(logits), tau=0.7),
        tf.gumbel_softmax(torch.tensor(logits), tau=0.7).numpy(),
        tol=1e-9,
    )
