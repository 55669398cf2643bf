"""Derivatives of elementwise ops (P10's unary*, binary*, ternary and compare kernel files).

Where it sits: registered by ``formulas/__init__.py`` (read its Note [Formula conventions]). Gradients may be
returned in the broadcast shape: the engine sums them back to each input's shape.
"""

from __future__ import annotations

import cmath
import math

import tensorplay_p10 as tp

from . import _conj, derivative, nondifferentiable

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _zeros(grad: tp.Tensor) -> tp.Tensor:
    return tp.zeros_like(grad)


# ---- arithmetic
# -----------------------------------------------------------------------------------------------
def _cconj(v: complex | float) -> complex | float:
    """The conjugate of a Python scalar (a complex alpha/value enters the gradient conjugated)."""
    return v.conjugate() if isinstance(v, complex) else v


@derivative("add", "add_")
def _add(ctx, grad):
    return grad, (grad if ctx.alpha == 1 else grad * _cconj(ctx.alpha))


@derivative("sub", "sub_")
def _sub(ctx, grad):
    return grad, (-grad if ctx.alpha == 1 else grad * -_cconj(ctx.alpha))


@derivative("mul", "mul_", save={"self": "other", "other": "self"})
def _mul(ctx, grad):
    gs = grad * _conj(ctx.other) if ctx.needs_input_grad["self"] else None
    go = grad * _conj(ctx.self) if ctx.needs_input_grad["other"] else None
    return gs, go


@derivative("div", "div_", save={"self": "other", "other": ("self", "other")})
def _div(ctx, grad):
    if ctx.rounding_mode is not None:  # floor/trunc division: piecewise constant
        return _zeros(grad), _zeros(grad)
    other = _conj(ctx.other)
    gs = grad / other if ctx.needs_input_grad["self"] else None
    go = -grad * _conj(ctx.self) / (other * other) if ctx.needs_input_grad["other"] else None
    return gs, go


@derivative("true_divide", "true_divide_", save={"self": "other", "other": ("self", "other")})
def _true_divide(ctx, grad):
    other = _conj(ctx.other)
    go = -grad * _conj(ctx.self) / (other * other) if ctx.needs_input_grad["other"] else None
    return grad / other, go


@derivative("neg", "neg_")
def _neg(ctx, grad):
    return -grad


@derivative("remainder", "remainder_", save=("self", "other"))
def _remainder(ctx, grad):
    return grad, -grad * tp.floor_divide(ctx.self, ctx.other)


@derivative("fmod", "fmod_", save=("self", "other"))
def _fmod(ctx, grad):
    return grad, -grad * tp.div(ctx.self, ctx.other, rounding_mode="trunc")


@derivative("remainder.Scalar_Tensor", save=("other",))
def _remainder_scalar_self(ctx, grad):
    return -grad * tp.div(tp.full_like(ctx.other, ctx.self), ctx.other, rounding_mode="floor")


@derivative("float_power.Scalar", results=True)
def _float_power_scalar_base(ctx, grad):
    if ctx.self == 0:
        return tp.zeros_like(grad)
    return grad * ctx.result * math.log(ctx.self) if ctx.self > 0 else grad * math.nan


@derivative("angle", save=("self",))
def _angle(ctx, grad):
    z = ctx.self
    if not z.is_complex():
        return tp.zeros_like(grad)  # the angle of a real number is piecewise constant (0 or pi)
    # angle = atan2(y, x): d/dx = -y/|z|^2, d/dy = x/|z|^2, so dL/dx + i dL/dy = grad * i z / |z|^2
    # (Note [Complex gradients] in csrc/engine.cpp); PyTorch takes 0 at z = 0.
    g = grad * z * 1j / (z.abs() ** 2)
    return tp.where(z == 0, tp.zeros_like(g), g)


@derivative("floor_divide", "floor_divide_")
def _floor_divide(ctx, grad):
    return _zeros(grad), _zeros(grad)


@derivative("pow.Tensor_Scalar", save=("self",))
def _pow_scalar(ctx, grad):
    e = ctx.exponent
    if e == 0:
        return _zeros(grad)
    return grad * _conj(e * ctx.self.pow(e - 1))


@derivative("pow", "pow_", save=("self", "exponent"), results=True)
def _pow(ctx, grad):
    base, e = ctx.self, ctx.exponent
    gs = go = None
    if ctx.needs_input_grad["self"]:
        gs = tp.where(e == 0, tp.zeros_like(grad), grad * _conj(e * base.pow(e - 1)))
    if ctx.needs_input_grad["exponent"]:
        # d/de b^e = b^e log b, taken as 0 where b == 0 and e >= 0 (PyTorch's convention)
        d = grad * _conj(ctx.result * tp.log(base))
        go = d if e.is_complex() else tp.where((base == 0) & (e >= 0), tp.zeros_like(d), d)
    return gs, go


@derivative("pow.Scalar", save=("exponent",), results=True)
def _pow_scalar_base(ctx, grad):
    if ctx.self == 0:
        return tp.where(ctx.exponent >= 0, tp.zeros_like(grad), grad * ctx.result * -math.inf)
    base = ctx.self
    # a negative real base has no real logarithm: NaN, as in PyTorch
    log_base = cmath.log(base) if isinstance(base, complex) else math.log(base) if base > 0 else math.nan
    return grad * _conj(ctx.result * log_base)


@derivative("float_power.Tensor_Scalar", save=("self",))
def _float_power_scalar(ctx, grad):
    e = ctx.exponent
    if e == 0:
        return _zeros(grad)
    return grad * e * ctx.self.double().pow(e - 1)


@derivative("float_power", "float_power_", save=("self", "exponent"), results=True)
def _float_power(ctx, grad):
    base, e = ctx.self.double(), ctx.exponent.double()
    gs = tp.where(e == 0, tp.zeros_like(grad), grad * e * base.pow(e - 1))
    go = tp.where((base == 0) & (e >= 0), tp.zeros_like(grad), grad * ctx.result * tp.log(base))
    return gs, go


# ---- unary math
# -----------------------------------------------------------------------------------------------
@derivative("abs", "abs_", save=("self",))
def _abs(ctx, grad):
    return grad * ctx.self.sgn()


@derivative("exp", "exp_", results=True)
def _exp(ctx, grad):
    return grad * _conj(ctx.result)


@derivative("exp2", "exp2_", results=True)
def _exp2(ctx, grad):
    return grad * _conj(ctx.result) * _LN2


@derivative("expm1", "expm1_", results=True)
def _expm1(ctx, grad):
    return grad * _conj(ctx.result + 1)


@derivative("log", "log_", save=("self",))
def _log(ctx, grad):
    return grad / _conj(ctx.self)


@derivative("log2", "log2_", save=("self",))
def _log2(ctx, grad):
    return grad / _conj(ctx.self * _LN2)


@derivative("log10", "log10_", save=("self",))
def _log10(ctx, grad):
    return grad / _conj(ctx.self * _LN10)


@derivative("log1p", "log1p_", save=("self",))
def _log1p(ctx, grad):
    return grad / _conj(ctx.self + 1)


@derivative("sqrt", "sqrt_", results=True)
def _sqrt(ctx, grad):
    return grad / (2 * _conj(ctx.result))


@derivative("rsqrt", "rsqrt_", results=True)
def _rsqrt(ctx, grad):
    return -0.5 * grad * _conj(ctx.result.pow(3))


@derivative("square", "square_", save=("self",))
def _square(ctx, grad):
    return 2 * grad * _conj(ctx.self)


@derivative("reciprocal", "reciprocal_", results=True)
def _reciprocal(ctx, grad):
    r = _conj(ctx.result)
    return -grad * r * r


@derivative("sin", "sin_", save=("self",))
def _sin(ctx, grad):
    return grad * _conj(ctx.self.cos())


@derivative("cos", "cos_", save=("self",))
def _cos(ctx, grad):
    return -grad * _conj(ctx.self.sin())


@derivative("tan", "tan_", results=True)
def _tan(ctx, grad):
    r = _conj(ctx.result)
    return grad * (1 + r * r)


@derivative("asin", "asin_", save=("self",))
def _asin(ctx, grad):
    return grad / _conj((1 - ctx.self * ctx.self).sqrt())


@derivative("acos", "acos_", save=("self",))
def _acos(ctx, grad):
    return -grad / _conj((1 - ctx.self * ctx.self).sqrt())


@derivative("atan", "atan_", save=("self",))
def _atan(ctx, grad):
    return grad / _conj(1 + ctx.self * ctx.self)


@derivative("sinh", "sinh_", save=("self",))
def _sinh(ctx, grad):
    return grad * _conj(ctx.self.cosh())


@derivative("cosh", "cosh_", save=("self",))
def _cosh(ctx, grad):
    return grad * _conj(ctx.self.sinh())


@derivative("tanh", "tanh_", results=True)
def _tanh(ctx, grad):
    r = _conj(ctx.result)
    return grad * (1 - r * r)


@derivative("asinh", "asinh_", save=("self",))
def _asinh(ctx, grad):
    return grad / _conj((ctx.self * ctx.self + 1).sqrt())


@derivative("acosh", "acosh_", save=("self",))
def _acosh(ctx, grad):
    return grad / _conj((ctx.self * ctx.self - 1).sqrt())


@derivative("atanh", "atanh_", save=("self",))
def _atanh(ctx, grad):
    return grad / _conj(1 - ctx.self * ctx.self)


@derivative("sigmoid", "sigmoid_", results=True)
def _sigmoid(ctx, grad):
    r = _conj(ctx.result)
    return grad * r * (1 - r)


@derivative("logit", "logit_", save=("self",))
def _logit(ctx, grad):
    x = ctx.self
    g = grad / (x * (1 - x))
    if ctx.eps is None:
        return tp.where((x < 0) | (x > 1), tp.full_like(g, math.nan), g)
    return tp.where((x < ctx.eps) | (x > 1 - ctx.eps), tp.zeros_like(g), g)


@derivative("erf", "erf_", save=("self",))
def _erf(ctx, grad):
    return grad * (2 / math.sqrt(math.pi)) * tp.exp(-ctx.self * ctx.self)


@derivative("erfc", "erfc_", save=("self",))
def _erfc(ctx, grad):
    return grad * (-2 / math.sqrt(math.pi)) * tp.exp(-ctx.self * ctx.self)


@derivative("erfinv", "erfinv_", results=True)
def _erfinv(ctx, grad):
    return grad * (math.sqrt(math.pi) / 2) * tp.exp(ctx.result * ctx.result)


@derivative("lgamma", "lgamma_", save=("self",))
def _lgamma(ctx, grad):
    return grad * tp.digamma(ctx.self)


def _trigamma(x: tp.Tensor) -> tp.Tensor:
    """polygamma(1, x) = d/dx digamma(x), with TensorPlay ops (so it differentiates again).

    For x >= 1/2: trigamma(x) = sum_{k<6} 1/(x+k)^2 + trigamma(x+6), the last by its asymptotic series
    1/y + 1/(2y^2) + 1/(6y^3) - 1/(30y^5) + 1/(42y^7) - 1/(30y^9) (error ~ 1/y^11 at y >= 6.5). Below, the
    reflection trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x).
    """

    def positive(z: tp.Tensor) -> tp.Tensor:
        acc = tp.zeros_like(z)
        for k in range(6):
            acc = acc + 1 / (z + k).square()
        y = z + 6
        inv = 1 / y
        inv2 = inv * inv
        series = inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
        return acc + series

    small = x < 0.5
    safe = tp.where(small, 1 - x, x)  # both branches evaluate at an argument >= 1/2
    reflected = (math.pi / tp.sin(math.pi * x)).square() - positive(safe)
    return tp.where(small, reflected, positive(safe))


@derivative("digamma", "digamma_", save=("self",))
def _digamma(ctx, grad):
    return grad * _trigamma(ctx.self)


@derivative("deg2rad", "deg2rad_")
def _deg2rad(ctx, grad):
    return grad * (math.pi / 180)


@derivative("rad2deg", "rad2deg_")
def _rad2deg(ctx, grad):
    return grad * (180 / math.pi)


@derivative("frac", "frac_")
def _frac(ctx, grad):
    return grad


@derivative("nan_to_num", "nan_to_num_", save=("self",))
def _nan_to_num(ctx, grad):
    return grad * tp.isfinite(ctx.self)


# Piecewise-constant functions: zero gradient everywhere (PyTorch returns zeros, not None).
@derivative("floor", "floor_", "ceil", "ceil_", "round", "round_", "trunc", "trunc_", "sign", "sign_")
def _piecewise_constant(ctx, grad):
    return _zeros(grad)


@derivative("sgn", "sgn_", save=("self",), results=True)
def _sgn(ctx, grad):
    if not ctx.self.is_complex():
        return _zeros(grad)
    # d sgn(z) for complex z = z/|z|: (grad - Re(grad * conj(sgn)) sgn) / |z|, zero at 0
    a = ctx.self.abs()
    s = ctx.result
    g = (grad - tp.real(grad * _conj(s)) * s) / a
    return tp.where(a == 0, tp.zeros_like(g), g)


# ---- two-argument math
# ----------------------------------------------------------------------------------------
@derivative("atan2", "atan2_", save=("self", "other"))
def _atan2(ctx, grad):
    y, x = ctx.self, ctx.other
    denom = x * x + y * y
    return grad * x / denom, -grad * y / denom


@derivative("hypot", "hypot_", save=("self", "other"), results=True)
def _hypot(ctx, grad):
    return grad * ctx.self / ctx.result, grad * ctx.other / ctx.result


@derivative("logaddexp", "logaddexp_", save=("self", "other"))
def _logaddexp(ctx, grad):
    a, b = ctx.self, ctx.other
    return grad / (1 + tp.exp(b - a)), grad / (1 + tp.exp(a - b))


@derivative("logaddexp2", "logaddexp2_", save=("self", "other"))
def _logaddexp2(ctx, grad):
    a, b = ctx.self, ctx.other
    return grad / (1 + tp.exp2(b - a)), grad / (1 + tp.exp2(a - b))


def _pick(grad, take_self, tie):
    """Split ``grad`` between two inputs: where take_self, to self; at ties, half each."""
    half = grad / 2
    gs = tp.where(tie, half, tp.where(take_self, grad, tp.zeros_like(grad)))
    go = tp.where(tie, half, tp.where(take_self, tp.zeros_like(grad), grad))
    return gs, go


@derivative("maximum", "maximum_", save=("self", "other"))
def _maximum(ctx, grad):
    return _pick(grad, ctx.self > ctx.other, ctx.self == ctx.other)


@derivative("minimum", "minimum_", save=("self", "other"))
def _minimum(ctx, grad):
    return _pick(grad, ctx.self < ctx.other, ctx.self == ctx.other)


@derivative("fmax", "fmax_", save=("self", "other"))
def _fmax(ctx, grad):
    a, b = ctx.self, ctx.other
    return _pick(grad, (a > b) | b.isnan(), (a == b))


@derivative("fmin", "fmin_", save=("self", "other"))
def _fmin(ctx, grad):
    a, b = ctx.self, ctx.other
    return _pick(grad, (a < b) | b.isnan(), (a == b))


@derivative("copysign", "copysign_", save=("self",), results=True)
def _copysign(ctx, grad):
    x, r = ctx.self, ctx.result
    g = tp.where(x == 0, tp.zeros_like(grad), grad * (r / x))
    return g, _zeros(grad)


@derivative("xlogy", "xlogy_", save=("self", "other"))
def _xlogy(ctx, grad):
    x, y = ctx.self, ctx.other
    gs = tp.where((x == 0) & ~y.isnan(), tp.zeros_like(grad), grad * tp.log(y))
    go = grad * x / y
    return gs, go


@derivative("xlogy.Scalar_Self", save=("other",))
def _xlogy_scalar_self(ctx, grad):
    return grad * ctx.self / ctx.other


@derivative("clamp", "clamp_", "clip", "clip_", save=("self",))
def _clamp(ctx, grad):
    x = ctx.self
    keep = tp.ones_like(x, dtype=tp.bool)
    if ctx.min is not None:
        keep = keep & (x >= ctx.min)
    if ctx.max is not None:
        keep = keep & (x <= ctx.max)
    return grad * keep


@derivative("clamp.Tensor", "clamp_.Tensor", "clip.Tensor", "clip_.Tensor", save=("self", "min", "max"))
def _clamp_tensor(ctx, grad):
    x, lo, hi = ctx.self, ctx.min, ctx.max
    zero = tp.zeros_like(grad)
    above_min = tp.ones_like(x, dtype=tp.bool) if lo is None else (x >= lo)
    below_max = tp.ones_like(x, dtype=tp.bool) if hi is None else (x <= hi)
    gs = tp.where(above_min & below_max, grad, zero)
    gmin = (
        None if lo is None else tp.where(~above_min & (below_max if hi is None else (lo <= hi)), grad, zero)
    )
    gmax = None if hi is None else tp.where(~below_max, grad, zero)
    return gs, gmin, gmax


# ---- ternary
# ---------------------------------------------------------------------------------------------------
@derivative("lerp.Scalar", "lerp_.Scalar")
def _lerp_scalar(ctx, grad):
    w = _cconj(ctx.weight)
    return grad * (1 - w), grad * w


@derivative("lerp.Tensor", "lerp_.Tensor", save=("self", "end", "weight"))
def _lerp_tensor(ctx, grad):
    w = _conj(ctx.weight)
    return grad * (1 - w), grad * w, grad * _conj(ctx.end - ctx.self)


@derivative("addcmul", "addcmul_", save={"tensor1": "tensor2", "tensor2": "tensor1"})
def _addcmul(ctx, grad):
    v = _cconj(ctx.value)
    g1 = grad * _conj(ctx.tensor2) * v if ctx.needs_input_grad["tensor1"] else None
    g2 = grad * _conj(ctx.tensor1) * v if ctx.needs_input_grad["tensor2"] else None
    return grad, g1, g2


@derivative("addcdiv", "addcdiv_", save={"tensor1": "tensor2", "tensor2": ("tensor1", "tensor2")})
def _addcdiv(ctx, grad):
    v, t2 = _cconj(ctx.value), _conj(ctx.tensor2)
    g2 = -grad * v * _conj(ctx.tensor1) / (t2 * t2) if ctx.needs_input_grad["tensor2"] else None
    return grad, grad * v / t2, g2


@derivative("where", save=("condition",))
def _where(ctx, grad):
    zero = tp.zeros_like(grad)
    c = ctx.condition
    return None, tp.where(c, grad, zero), tp.where(c, zero, grad)


# ---- no gradient
# -----------------------------------------------------------------------------------------------
nondifferentiable("nextafter", "nextafter_", "signbit", "isnan", "isinf", "isfinite")
