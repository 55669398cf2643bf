"""Derivatives of the activation ops (P10's kernels/activation.cpp and activation_backward.cpp).

Where it sits: registered by ``formulas/__init__.py`` (read its Note [Formula conventions]). The hot
activations differentiate through their backward ops (``threshold_backward`` for relu, ``gelu_backward``,
...), one fused loop each, as PyTorch does; those backward ops have formulas of their own below, written with
TensorPlay ops, so second and higher derivatives work. The rest are short compositions of ops. Composite
activations (relu6, selu, celu, tanhshrink, softsign, glu, prelu, rrelu) have no formula: autograd sees the
ops they are made of.

In-place forms save ``self``: the engine then keeps a copy of the input from before the op (record.cpp), so
every formula works on the input, whatever the result's sign conventions (relu_ alone uses its result, whose
positive set is the input's).
"""

from __future__ import annotations

import math

import tensorplay_p10 as tp

from . import derivative

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = 0.044715


def _zeros(t: tp.Tensor) -> tp.Tensor:
    return tp.zeros_like(t)


# ---- relu, threshold, hardtanh: piecewise linear, the backward ops are masks
# ------------------------------------------------------------------------------
@derivative("relu", "relu_", results=True)
def _relu(ctx, grad):
    return tp.threshold_backward(grad, ctx.result, 0)


@derivative("threshold", "threshold_", save=("self",))
def _threshold(ctx, grad):
    return tp.threshold_backward(grad, ctx.self, ctx.threshold)


@derivative("threshold_backward", save=("self",))
def _threshold_backward(ctx, grad):
    # Linear in grad_output; piecewise constant in self (zero almost everywhere).
    return tp.threshold_backward(grad, ctx.self, ctx.threshold), None


@derivative("hardtanh", "hardtanh_", save=("self",))
def _hardtanh(ctx, grad):
    return tp.hardtanh_backward(grad, ctx.self, ctx.min_val, ctx.max_val)


@derivative("hardtanh_backward", save=("self",))
def _hardtanh_backward(ctx, grad):
    return tp.hardtanh_backward(grad, ctx.self, ctx.min_val, ctx.max_val), None


@derivative("leaky_relu", "leaky_relu_", save=("self",))
def _leaky_relu(ctx, grad):
    return tp.leaky_relu_backward(grad, ctx.self, ctx.negative_slope, False)


@derivative("leaky_relu_backward", save=("self",))
def _leaky_relu_backward(ctx, grad):
    return tp.leaky_relu_backward(grad, ctx.self, ctx.negative_slope, ctx.self_is_result), None


# ---- elu (selu and celu are elu with other constants)
# ------------------------------------------------------------------------------
@derivative("elu", "elu_", save=("self",))
def _elu(ctx, grad):
    return tp.elu_backward(grad, ctx.alpha, ctx.scale, ctx.input_scale, False, ctx.self)


@derivative("elu_backward", save=("grad_output", "self_or_result"))
def _elu_backward(ctx, grad):
    a, s, k = ctx.alpha, ctx.scale, ctx.input_scale
    x = ctx.self_or_result
    gg = tp.elu_backward(grad, a, s, k, ctx.is_result, x) if ctx.needs_input_grad["grad_output"] else None
    gx = None
    if ctx.needs_input_grad["self_or_result"]:
        # d/dx of the negative branch: g k a s e^(k x) (input saved) or g k (result saved).
        inner = ctx.grad_output * k * (k * a * s * tp.exp(x * k) if not ctx.is_result else 1.0)
        gx = tp.where(x <= 0, grad * inner, _zeros(grad))
    return gg, gx


# ---- gelu, silu, mish, softplus: smooth, with second derivatives written out
# ------------------------------------------------------------------------------
def _gelu_second(x: tp.Tensor, approximate: str) -> tp.Tensor:
    """d^2/dx^2 gelu: phi(x) (2 - x^2) exactly; for the tanh form, with t = tanh u, u = k (x + c x^3),
    (1 - t^2) (u' - x t u'^2 + x u'' / 2)."""
    if approximate == "tanh":
        u1 = _SQRT_2_OVER_PI * (1 + 3 * _GELU_C * x * x)
        u2 = _SQRT_2_OVER_PI * 6 * _GELU_C * x
        t = tp.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x))
        return (1 - t * t) * (u1 - x * t * u1 * u1 + 0.5 * x * u2)
    return _INV_SQRT_2PI * tp.exp(-0.5 * x * x) * (2 - x * x)


@derivative("gelu", "gelu_", save=("self",))
def _gelu(ctx, grad):
    return tp.gelu_backward(grad, ctx.self, approximate=ctx.approximate)


@derivative("gelu_backward", save=("grad_output", "self"))
def _gelu_backward(ctx, grad):
    x = ctx.self
    gg = (
        tp.gelu_backward(grad, x, approximate=ctx.approximate)
        if ctx.needs_input_grad["grad_output"]
        else None
    )
    gx = grad * ctx.grad_output * _gelu_second(x, ctx.approximate) if ctx.needs_input_grad["self"] else None
    return gg, gx


@derivative("silu", "silu_", save=("self",))
def _silu(ctx, grad):
    return tp.silu_backward(grad, ctx.self)


@derivative("silu_backward", save=("grad_output", "self"))
def _silu_backward(ctx, grad):
    x = ctx.self
    gg = tp.silu_backward(grad, x) if ctx.needs_input_grad["grad_output"] else None
    gx = None
    if ctx.needs_input_grad["self"]:
        s = tp.sigmoid(x)  # silu'' = s (1 - s) (2 + x (1 - 2 s))
        gx = grad * ctx.grad_output * s * (1 - s) * (2 + x * (1 - 2 * s))
    return gg, gx


@derivative("mish", "mish_", save=("self",))
def _mish(ctx, grad):
    return tp.mish_backward(grad, ctx.self)


@derivative("mish_backward", save=("grad_output", "self"))
def _mish_backward(ctx, grad):
    x = ctx.self
    gg = tp.mish_backward(grad, x) if ctx.needs_input_grad["grad_output"] else None
    gx = None
    if ctx.needs_input_grad["self"]:
        # t = tanh(softplus x), s = sigmoid x: mish'' = s (1 - t^2) (2 + x (1 - s) - 2 x s t)
        s = tp.sigmoid(x)
        t = tp.tanh(tp.softplus(x))
        gx = grad * ctx.grad_output * s * (1 - t * t) * (2 + x * (1 - s) - 2 * x * s * t)
    return gg, gx


@derivative("softplus", save=("self",))
def _softplus(ctx, grad):
    return tp.softplus_backward(grad, ctx.self, ctx.beta, ctx.threshold)


@derivative("softplus_backward", save=("grad_output", "self"))
def _softplus_backward(ctx, grad):
    x, b = ctx.self, ctx.beta
    gg = tp.softplus_backward(grad, x, b, ctx.threshold) if ctx.needs_input_grad["grad_output"] else None
    gx = None
    if ctx.needs_input_grad["self"]:
        s = tp.sigmoid(x * b)  # d/dx sigmoid(b x) = b s (1 - s), zero above the threshold (linear there)
        gx = tp.where(x * b > ctx.threshold, _zeros(grad), grad * ctx.grad_output * b * s * (1 - s))
    return gg, gx


# ---- the rest, composed of TensorPlay ops
# ------------------------------------------------------------------------------
def _masked(grad: tp.Tensor, keep: tp.Tensor) -> tp.Tensor:
    return tp.where(keep, grad, _zeros(grad))


@derivative("softshrink", "hardshrink", save=("self",))
def _shrink(ctx, grad):
    # Zero on the band [-lambd, lambd] where the output is flat; a NaN input passes grad (PyTorch's rule).
    x, lambd = ctx.self, ctx.lambd
    return tp.where((x >= -lambd) & (x <= lambd), _zeros(grad), grad)


@derivative("hardsigmoid", "hardsigmoid_", save=("self",))
def _hardsigmoid(ctx, grad):
    x = ctx.self
    return _masked(grad / 6, (x > -3) & (x < 3))


@derivative("hardswish", "hardswish_", save=("self",))
def _hardswish(ctx, grad):
    x = ctx.self
    # 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above (PyTorch's convention at the kinks).
    return tp.where(x < -3, _zeros(grad), tp.where(x <= 3, grad * (x / 3 + 0.5), grad))


@derivative("log_sigmoid", save=("self",))
def _log_sigmoid(ctx, grad):
    return grad * tp.sigmoid(-ctx.self)


@derivative("heaviside", "heaviside_")
def _heaviside(ctx, grad):
    raise RuntimeError("derivative for heaviside is not implemented")  # PyTorch's error and wording


@derivative("_rrelu_with_noise", results=True, outputs=(True, False))
def _rrelu_with_noise(ctx, grad, _grad_noise):
    return grad * ctx.results[1]  # the slopes drawn in the forward (1 where x > 0)
