"""Activation ops (kernels/activation.cpp, activation_backward.cpp): what the op database does not cover.

The op database (opdb/activation.py) runs every activation forward against NumPy on all dtypes, layouts,
Meta, in-place and out=. This file checks the rest: the float32 vectorised kernels over a dense sweep of
their range (relative accuracy in the tails, where a naive formula cancels), exact values at thresholds and
special inputs, parameter rules and errors, and rrelu's random slopes (the stream they come from, their
statistics, reproducibility and in-place training semantics).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _f32(a) -> tp.Tensor:
    return tp.tensor(np.asarray(a, np.float32))


def _sweep(lo: float, hi: float, n: int = 200_001) -> np.ndarray:
    return np.linspace(lo, hi, n).astype(np.float32)


# Float64 references of the vectorised float32 kernels.
_REFS = {
    "relu": lambda x: np.maximum(x, 0),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.01 * x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "gelu": lambda x: 0.5 * x * _erfc(-x / math.sqrt(2)),
    "gelu_tanh": lambda x: x / (1 + np.exp(-2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "mish": lambda x: x * np.tanh(np.logaddexp(0, x)),
    "softplus": lambda x: np.where(x > 20, x, np.logaddexp(0, x)),
}


def _call(name: str, x: tp.Tensor) -> tp.Tensor:
    if name == "gelu_tanh":
        return tp.gelu(x, approximate="tanh")
    return getattr(tp, name)(x)


@pytest.mark.parametrize("name", sorted(_REFS))
def test_float32_kernels_are_accurate_over_their_range(name):
    """Relative error within a few ulp wherever the result is a normal float32 (|y| > 1e-37), including the
    negative tails of gelu, silu, mish and softplus, which a formula like 0.5 x (1 + erf) would lose."""
    x = _sweep(-60, 60)
    with np.errstate(over="ignore"):
        want = _REFS[name](x.astype(np.float64))
    got = _call(name, _f32(x)).numpy().astype(np.float64)
    normal = np.abs(want) > 1e-37
    rel = np.abs(got - want)[normal] / np.abs(want)[normal]
    # gelu's tail: erfc(-x / sqrt 2) = exp(-x^2 / 2 + ...) turns the float32 rounding of x / sqrt 2 and of its
    # square into a relative error that grows like x^2 2^-23 (2e-5 at x = -12.6, where gelu is 1e-35).
    xs = x[normal].astype(np.float64)
    bound = 2e-6 + (2e-7 * xs * xs if name.startswith("gelu") else 0)
    worst = np.argmax(rel / bound)
    assert np.all(rel <= bound), f"{name}: relative error {rel[worst]:.3g} at x={xs[worst]}"
    tiny = ~normal  # underflowed results stay tiny, with the sign of the reference
    assert np.all(np.abs(got[tiny]) <= 1e-37)


@pytest.mark.parametrize("name", ["gelu", "silu", "mish", "softplus", "elu"])
def test_float32_special_values(name):
    x = np.array([-np.inf, np.inf, np.nan, 0.0, -0.0], np.float32)
    got = _call(name, _f32(x)).numpy()
    with np.errstate(all="ignore"):
        want = _REFS[name](x.astype(np.float64))
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_relu_keeps_nan_and_integers():
    x = _f32([-np.inf, -1.0, -0.0, 0.0, 2.5, np.inf, np.nan])
    np.testing.assert_array_equal(tp.relu(x).numpy(), [0, 0, 0, 0, 2.5, np.inf, np.nan])
    ints = tp.tensor([-3, 0, 4], dtype=tp.int32)
    assert tp.relu(ints).dtype is tp.int32 and tp.relu(ints).tolist() == [0, 0, 4]
    assert tp.relu(tp.tensor([0, 200], dtype=tp.uint8)).tolist() == [0, 200]


def test_softplus_is_exactly_x_above_the_threshold():
    x = _f32([5.0, 10.0, 10.5, 30.0])
    y = tp.softplus(x, beta=2.0, threshold=20.0)  # beta x > 20 from x > 10
    assert y[2].item() == 10.5 and y[3].item() == 30.0
    assert y[1].item() == pytest.approx(math.log1p(math.exp(20.0)) / 2, rel=1e-6)
    # A very negative input keeps its tiny, positive value (log1p(e^x) ~ e^x), for float32 and float64.
    for dtype in (tp.float32, tp.float64):
        v = tp.softplus(tp.tensor([-80.0], dtype=dtype)).item()
        assert v == pytest.approx(math.exp(-80.0), rel=1e-5)


def test_threshold_and_hardtanh_rules():
    x = _f32([-2.0, 1.0, 1.5, 3.0])
    np.testing.assert_array_equal(tp.threshold(x, 1.0, -7.0).numpy(), [-7.0, -7.0, 1.5, 3.0])  # x <= th
    # Integers: threshold and value are truncated to the dtype first (PyTorch's cast), so -0.5 acts as 0.
    ints = tp.tensor([-1, 0, 1, 2])
    assert tp.threshold(ints, -0.5, 9.9).tolist() == [9, 9, 1, 2]
    # min_val > max_val: every element becomes max_val, as clamp does.
    np.testing.assert_array_equal(tp.hardtanh(x, 2.0, 1.0).numpy(), [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(tp.hardtanh(_f32([np.nan])).numpy(), [np.nan])
    assert tp.hardtanh(tp.tensor([0, 3, 250], dtype=tp.uint8), 1, 6).tolist() == [1, 3, 6]
    np.testing.assert_array_equal(tp.relu6(_f32([-1.0, 3.0, 7.0])).numpy(), [0.0, 3.0, 6.0])


def test_hard_and_shrink_functions_at_their_kinks():
    x = _f32([-3.0, -0.5, 0.5, 3.0])
    np.testing.assert_array_equal(tp.hardsigmoid(x).numpy(), np.float32([0.0, 2.5 / 6, 3.5 / 6, 1.0]))
    np.testing.assert_allclose(tp.hardswish(x).numpy(), [0.0, -0.5 * 2.5 / 6, 0.5 * 3.5 / 6, 3.0], rtol=1e-6)
    np.testing.assert_array_equal(tp.softshrink(x).numpy(), [-2.5, 0.0, 0.0, 2.5])  # |x| = lambd -> 0
    np.testing.assert_array_equal(tp.hardshrink(x).numpy(), [-3.0, 0.0, 0.0, 3.0])  # inclusive band
    np.testing.assert_array_equal(tp.softshrink(_f32([np.nan])).numpy(), [np.nan])


def test_selu_and_celu_are_elu_with_their_constants():
    x = tp.linspace(-4, 4, 41, dtype=tp.float64)
    a, s = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    xn = x.numpy()
    np.testing.assert_allclose(tp.selu(x).numpy(), s * np.where(xn > 0, xn, a * np.expm1(xn)), rtol=1e-14)
    np.testing.assert_allclose(
        tp.celu(x, 0.5).numpy(), np.where(xn > 0, xn, 0.5 * np.expm1(xn / 0.5)), rtol=1e-14
    )
    np.testing.assert_allclose(
        tp.elu(x, 2.0, 3.0, 0.5).numpy(), np.where(xn > 0, 3 * xn, 2 * 3 * np.expm1(0.5 * xn)), rtol=1e-14
    )


def test_log_sigmoid_is_finite_everywhere():
    x = tp.tensor([-1000.0, -30.0, 0.0, 30.0, 1000.0], dtype=tp.float64)
    y = tp.log_sigmoid(x).numpy()
    np.testing.assert_allclose(
        y, [-1000.0, -30.0 - math.log1p(math.exp(-30)), -math.log(2), -math.exp(-30), 0.0]
    )


def test_glu_and_prelu():
    x = tp.arange(12, dtype=tp.float64).reshape(2, 6) - 6
    a, b = x.numpy()[:, :3], x.numpy()[:, 3:]
    np.testing.assert_allclose(tp.glu(x).numpy(), a / (1 + np.exp(-b)), rtol=1e-14)
    np.testing.assert_allclose(tp.glu(x, 0).numpy(), x.numpy()[:1] / (1 + np.exp(-x.numpy()[1:])), rtol=1e-14)
    w = tp.tensor([0.1, 0.2, 0.3], dtype=tp.float64)
    x3 = tp.tensor([[[-1.0, 2.0]] * 3], dtype=tp.float64)  # (1, 3, 2): channels along dim 1
    np.testing.assert_allclose(tp.prelu(x3, w).numpy()[0, :, 0], [-0.1, -0.2, -0.3])
    np.testing.assert_allclose(tp.prelu(x3, w).numpy()[0, :, 1], [2.0, 2.0, 2.0])


def test_heaviside_values_at_zero_and_nan():
    x = _f32([-1.0, 0.0, -0.0, 2.0, np.nan])
    v = _f32([9.0, 0.5, 0.25, 9.0, 9.0])
    np.testing.assert_array_equal(tp.heaviside(x, v).numpy(), [0.0, 0.5, 0.25, 1.0, 0.0])
    with pytest.raises(RuntimeError, match="heaviside.*different dtypes"):
        tp.heaviside(x, v.double())


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: tp.gelu(tp.ones(2), approximate="exact"), RuntimeError, "gelu: approximate argument"),
        (lambda: tp.gelu_backward(tp.ones(2), tp.ones(2), approximate="x"), RuntimeError, "gelu_backward"),
        (lambda: tp.silu(tp.ones(2, dtype=tp.int64)), NotImplementedError, "silu.*Long"),
        (lambda: tp.relu(tp.ones(2, dtype=tp.bool)), RuntimeError, "relu.*Boolean"),
        (lambda: tp.hardtanh(tp.ones(2, dtype=tp.bool)), RuntimeError, "hardtanh.*Bool"),
        (lambda: tp.softshrink(tp.ones(2), -1.0), RuntimeError, "softshrink.*lambda must be greater"),
        (lambda: tp.celu(tp.ones(2), 0.0), RuntimeError, "celu.*alpha cannot be 0"),
        (lambda: tp.glu(tp.ones(2, 5), 1), RuntimeError, "glu.*dimension 1 is size 5"),
        (lambda: tp.prelu(tp.ones(2, 3), tp.ones(2)), RuntimeError, "prelu.*parameter numbers = 2.*size = 3"),
        (lambda: tp.rrelu(tp.ones(2), 0.5, 0.1), RuntimeError, "rrelu.*Lower bound.*lower=0.5"),
        (
            lambda: tp.leaky_relu_backward(tp.ones(2), tp.ones(2), -0.5, True),
            RuntimeError,
            "leaky_relu_backward.*negative slope",
        ),
        (lambda: tp.gelu(tp.ones(2), out=tp.empty(2, dtype=tp.int64)), RuntimeError, "can't be cast"),
    ],
)
def test_bad_arguments_raise(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---- rrelu ------------------------------------------------------------------------------------------------
def test_rrelu_eval_is_leaky_relu_with_the_mean_slope():
    x = tp.randn(100)
    np.testing.assert_array_equal(tp.rrelu(x, 0.1, 0.3).numpy(), tp.leaky_relu(x, 0.2).numpy())
    np.testing.assert_array_equal(tp.rrelu(x).numpy(), tp.leaky_relu(x, (1 / 8 + 1 / 3) / 2).numpy())


def test_rrelu_training_slopes_come_from_the_generator_stream():
    """One uniform double per element x <= 0, in memory order, from the generator: the slopes equal
    lower + (upper - lower) u for the draws u of tp.rand (the same 53-bit construction) under one seed."""
    x = tp.tensor([-1.0, 2.0, -3.0, 0.0, 5.0, -0.5], dtype=tp.float64)
    y = tp.rrelu(x, 0.1, 0.4, training=True, generator=tp.Generator().manual_seed(7))
    u = tp.rand(4, dtype=tp.float64, generator=tp.Generator().manual_seed(7)).numpy()
    slopes = 0.1 + 0.3 * u
    xn = x.numpy()
    neg = xn <= 0
    np.testing.assert_allclose(y.numpy()[neg], xn[neg] * slopes, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(y.numpy()[~neg], xn[~neg])


def test_rrelu_training_statistics():
    """Slopes of 200k negative inputs: uniform on [lower, upper) — mean, variance and range within a few
    standard errors."""
    lower, upper = 0.2, 0.6
    x = -tp.ones(200_000, dtype=tp.float64)
    slopes = -tp.rrelu(x, lower, upper, training=True, generator=tp.Generator().manual_seed(3)).numpy()
    assert slopes.min() >= lower and slopes.max() < upper
    n, width = slopes.size, upper - lower
    assert abs(slopes.mean() - (lower + upper) / 2) < 5 * width / math.sqrt(12 * n)
    assert abs(slopes.var() - width**2 / 12) < 5 * width**2 / (math.sqrt(180) * math.sqrt(n))
    # a histogram in ten bins is flat (chi-square, 9 degrees of freedom, far below its 0.1% point 27.9)
    counts, _ = np.histogram(slopes, bins=10, range=(lower, upper))
    chi2 = ((counts - n / 10) ** 2 / (n / 10)).sum()
    assert chi2 < 27.9


def test_rrelu_training_is_reproducible_and_in_place_matches():
    x = tp.randn(3, 50)
    tp.manual_seed(11)
    a = tp.rrelu(x, training=True)
    tp.manual_seed(11)
    b = tp.rrelu(x, training=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # rrelu_ draws the same slopes and writes them into self, which it returns.
    y = x.clone()
    tp.manual_seed(11)
    r = tp.rrelu_(y, training=True)
    assert r is y
    np.testing.assert_array_equal(y.numpy(), a.numpy())
    # A transposed input draws in its logical order (PyTorch reads a contiguous copy of it).
    tp.manual_seed(11)
    ct = tp.rrelu(x.t().contiguous(), training=True)
    tp.manual_seed(11)
    nt = tp.rrelu(x.t(), training=True)
    np.testing.assert_array_equal(nt.numpy(), ct.numpy())
    # eval-mode rrelu_ is leaky_relu_ in place
    z = x.clone()
    tp.rrelu_(z, 0.1, 0.3)
    np.testing.assert_array_equal(z.numpy(), tp.leaky_relu(x, 0.2).numpy())


def test_rrelu_float32_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((4, 33)).astype(np.float32)
    tp.manual_seed(5)
    mine = tp.rrelu(_f32(x), 0.1, 0.3, training=True).numpy()
    torch.manual_seed(5)
    theirs = torch.rrelu(torch.from_numpy(x), 0.1, 0.3, training=True).numpy()
    np.testing.assert_array_equal(mine, theirs)
