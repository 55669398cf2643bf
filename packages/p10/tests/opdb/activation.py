"""Op database: the activation functions (kernels/activation.cpp) and their backward ops
(kernels/activation_backward.cpp).

References are the textbook float64 formulas written with NumPy, one line each, so a reader can check a
kernel against the maths; the backward ops' references are the derivatives written out. Every entry also
runs a row of special values (±inf, NaN, ±0, the kinks and thresholds), and the parameters (slopes,
alpha, beta, threshold, lambd, approximate) on a second set of samples.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import from_array, make_tensor, rng_for, transposed, unary_samples

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_K = math.sqrt(2 / math.pi)  # gelu's tanh form: tanh(K (x + 0.044715 x^3))
_SPECIAL = [
    -math.inf,
    -30.0,
    -6.0,
    -3.0,
    -1.0,
    -0.5,
    -0.0,
    0.0,
    0.25,
    0.5,
    1.0,
    3.0,
    6.0,
    25.0,
    math.inf,
    math.nan,
]

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _phi(x):  # the standard normal CDF
    return 0.5 * _erfc(-x / math.sqrt(2))


# ---- references -------------------------------------------------------------------------------------------
def _relu(x):
    return np.maximum(x, 0).astype(x.dtype)


def _leaky_relu(x, negative_slope=0.01):
    return np.where(x > 0, x, x * negative_slope)


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x > 0, x * scale, np.expm1(x * input_scale) * alpha * scale)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_K * (x + 0.044715 * x**3)))
    return x * _phi(x)


def _silu(x):
    return x / (1 + np.exp(-x))


def _mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _softshrink(x, lambd=0.5):
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0))


def _hardshrink(x, lambd=0.5):
    return np.where((x >= -lambd) & (x <= lambd), 0, x)


def _threshold(x, threshold, value):
    if x.dtype.kind in "iu":  # PyTorch casts both numbers to the tensor's dtype first
        threshold, value = int(threshold), int(value)
    return np.where(x <= threshold, value, x).astype(x.dtype)


def _hardtanh(x, min_val=-1.0, max_val=1.0):
    return np.minimum(np.maximum(x, min_val), max_val).astype(x.dtype)


def _hardsigmoid(x):
    return np.minimum(np.maximum(x + 3, 0), 6) / 6


def _log_sigmoid(x):
    return -np.logaddexp(0, -x)


def _heaviside(x, values):
    return np.where(x == 0, values, (x > 0).astype(x.dtype)).astype(x.dtype)  # NaN -> 0, as in PyTorch


def _glu(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _prelu(x, weight):
    w = weight.reshape(()) if weight.size == 1 else weight.reshape((-1,) + (1,) * (x.ndim - 2))
    return np.where(x > 0, x, w * x)


def _rrelu_eval(x, lower=0.125, upper=1 / 3, training=False):
    return _leaky_relu(x, (lower + upper) / 2)


# ---- references of the backward ops: grad * f'(x) ---------------------------------------------------------
def _threshold_backward(g, x, threshold):
    return np.where(x <= threshold, 0, g)


def _leaky_relu_backward(g, x, negative_slope, self_is_result):
    return np.where(x > 0, g, g * negative_slope)


def _elu_backward(g, alpha, scale, input_scale, is_result, x):
    neg = (
        g * input_scale * (x + alpha * scale)
        if is_result
        else g * input_scale * alpha * scale * np.exp(x * input_scale)
    )
    return np.where(x <= 0, neg, g * scale)  # PyTorch's test: a NaN x takes the positive side


def _gelu_backward(g, x, approximate="none"):
    if approximate == "tanh":
        t = np.tanh(_K * (x + 0.044715 * x**3))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _K * (1 + 3 * 0.044715 * x * x))
    return g * (_phi(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _silu_backward(g, x):
    s = 1 / (1 + np.exp(-x))
    return g * s * (1 + x * (1 - s))


def _mish_backward(g, x):
    t = np.tanh(np.log1p(np.exp(x)))
    s = 1 / (1 + np.exp(-x))
    return g * (t + x * s * (1 - t * t))


def _softplus_backward(g, x, beta, threshold):
    return np.where(x * beta > threshold, g, g / (1 + np.exp(-x * beta)))


def _hardtanh_backward(g, x, min_val, max_val):
    return np.where((x <= min_val) | (x >= max_val), 0, g)


# ---- samples ----------------------------------------------------------------------------------------------
def _specials(dtype, nan=True):
    return from_array(np.array([v for v in _SPECIAL if nan or not math.isnan(v)]), dtype)


def _act_samples(*params, low=None, high=None):
    """The unary shapes and layouts with ``params[0]`` (a tuple of positional arguments and a dict of keyword
    arguments), the special values with every parameter set, and a (3, 4) tensor with each of the others."""

    def gen(op, dtype):
        args, kwargs = params[0] if params else ((), {})
        for s in unary_samples(op, dtype, low=low, high=high):
            yield SampleInput(s.input, args, dict(kwargs), name=s.name)
        rng = rng_for(op.id, str(dtype), "params")
        for args, kwargs in params or [((), {})]:
            label = f"{args} {kwargs}"
            if dtype.is_floating_point:
                yield SampleInput(_specials(dtype), args, dict(kwargs), name=f"special values {label}")
            yield SampleInput(
                make_tensor((3, 4), dtype, rng, low=low, high=high), args, dict(kwargs), name=label
            )

    return gen


def _backward_samples(*params, low=None, high=None, nan=True):
    """(grad, x) pairs: equal shapes and layouts, a broadcast 0-d grad, special values of x; ``params`` are
    (positional-after-x, keyword) pairs as in :func:`_act_samples`; ``x_last`` puts x after them (elu)."""

    def gen(op, dtype):
        rng = rng_for(op.id, str(dtype))
        x_last = op.name == "elu_backward"

        def call(g, x, args, kwargs, name):
            if x_last:
                return SampleInput(g, (*args, x), dict(kwargs), name=name)
            return SampleInput(g, (x, *args), dict(kwargs), name=name)

        for i, (args, kwargs) in enumerate(params):
            for shape in [(), (0,), (5,), (3, 4), (2, 3, 4)] if i == 0 else [(3, 4)]:
                g = make_tensor(shape, dtype, rng)
                x = make_tensor(shape, dtype, rng, low=low, high=high)
                yield call(g, x, args, kwargs, f"shape {shape} {args} {kwargs}")
            g, x = make_tensor((3, 4), dtype, rng), make_tensor((3, 4), dtype, rng, low=low, high=high)
            yield call(transposed(g), transposed(x), args, kwargs, f"transposed {args}")
            yield call(make_tensor((), dtype, rng), x, args, kwargs, f"0-d grad broadcast {args}")
            special = _specials(dtype, nan)
            yield call(
                make_tensor(special.shape, dtype, rng), special, args, kwargs, f"special values {args}"
            )

    return gen


def _large(op):
    x = make_tensor((1024, 1024), tp.float32, rng_for(op.id, "large"))
    return SampleInput(transposed(x), name="1M elements, transposed")


def _float_errors(call_args=(), call_kwargs=None):
    def errors(op):
        x = tp.arange(6)
        yield ErrorInput(
            SampleInput(x, call_args, call_kwargs or {}), NotImplementedError, "not implemented for 'Long'"
        )

    return errors


def _named(name):
    """``torch.nn.functional.<name>`` for the comparison (most activations are not in ``torch.*``)."""
    return lambda torch: getattr(torch.nn.functional, name)


def _aten(name):
    return lambda torch: getattr(torch.ops.aten, name)


# ---- the entries ------------------------------------------------------------------------------------------
def _act(
    name, ref, samples, *, dtypes=FLOATS, inplace=True, out=True, torch=None, errors=None, hot=False, **kw
):
    return OpInfo(
        name,
        ref=ref,
        dtypes=dtypes,
        sample_inputs=samples,
        inplace=inplace,
        out=out,
        result_dtype=same_dtype,
        error_inputs=(errors or None)
        if errors is not None
        else (_float_errors() if dtypes == FLOATS else None),
        large=_large if hot else None,
        torch=torch if torch is not None else _named(name),
        **kw,
    )


def _relu_errors(op):
    yield ErrorInput(SampleInput(tp.tensor([True, False])), RuntimeError, "Boolean inputs not supported")


def _gelu_errors(op):
    yield from _float_errors()(op)
    x = tp.ones(3)
    yield ErrorInput(
        SampleInput(x, (), {"approximate": "fast"}), RuntimeError, "approximate argument must be"
    )


def _shrink_errors(op):
    yield from _float_errors()(op)
    yield ErrorInput(SampleInput(tp.ones(3), (-0.5,)), RuntimeError, "lambda must be greater or equal to 0")


def _celu_errors(op):
    yield from _float_errors()(op)
    yield ErrorInput(SampleInput(tp.ones(3), (0.0,)), RuntimeError, "alpha cannot be 0 for CELU")


def _glu_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 6, 2), dtype, rng)
    for dim in (-1, 0, 1, 2):
        yield SampleInput(x, (dim,), name=f"dim {dim}")
    yield SampleInput(transposed(make_tensor((3, 4), dtype, rng)), (1,), name="transposed")
    yield SampleInput(make_tensor((0, 2), dtype, rng), name="size-0")
    yield SampleInput(make_tensor((2,), dtype, rng), name="size-2 vector")


def _glu_errors(op):
    yield ErrorInput(SampleInput(tp.ones(3)), RuntimeError, r"Halving dimension must be even.*size 3")
    yield ErrorInput(SampleInput(tp.tensor(1.0)), RuntimeError, "does not support scalars")


def _prelu_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    t = lambda *shape: make_tensor(shape, dtype, rng)  # noqa: E731
    yield SampleInput(t(2, 3, 4), (t(3),), name="per channel (2,3,4)")
    yield SampleInput(t(2, 3), (t(3),), name="per channel (2,3)")
    yield SampleInput(t(2, 3, 4), (t(1),), name="one weight")
    yield SampleInput(t(5), (t(1),), name="1-d input")
    yield SampleInput(t(), (t(1),), name="0-d input")
    yield SampleInput(transposed(t(4, 3)), (t(3),), name="transposed input")
    yield SampleInput(t(0, 3), (t(3),), name="size-0")


def _prelu_errors(op):
    yield ErrorInput(SampleInput(tp.ones(2, 3), (tp.ones(4),)), RuntimeError, "Mismatch of parameter numbers")
    yield ErrorInput(SampleInput(tp.ones(2, 3), (tp.ones(3, 1),)), RuntimeError, "scalar or 1D tensor")


def _heaviside_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4), dtype, rng, low=-2, high=2)
    x = tp.where(x.abs() < 1, tp.zeros_like(x), x)  # plenty of exact zeros
    yield SampleInput(x, (make_tensor((3, 4), dtype, rng),), name="same shape")
    yield SampleInput(x, (make_tensor((4,), dtype, rng),), name="broadcast values")
    yield SampleInput(transposed(x), (make_tensor((), dtype, rng),), name="transposed, 0-d values")
    yield SampleInput(make_tensor((0,), dtype, rng), (make_tensor((0,), dtype, rng),), name="size-0")
    if dtype.is_floating_point:
        s = _specials(dtype)
        yield SampleInput(s, (make_tensor(s.shape, dtype, rng),), name="special values")


def _heaviside_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(3), (tp.ones(3, dtype=tp.float64),)), RuntimeError, "different dtypes"
    )


def _rrelu_errors(op):
    yield ErrorInput(SampleInput(tp.ones(3), (0.5, 0.25)), RuntimeError, "Lower bound should be less than")


register(
    _act(
        "relu",
        _relu,
        _act_samples(),
        dtypes=FLOATS + INTS,
        errors=_relu_errors,
        hot=True,
        torch=True,
    ),
    _act(
        "leaky_relu",
        _leaky_relu,
        _act_samples(((), {}), ((0.2,), {}), ((), {"negative_slope": -1.5})),
        hot=True,
    ),
    _act(
        "elu",
        _elu,
        _act_samples(((), {}), ((0.5, 2.0, 1.5), {}), ((), {"alpha": -0.25})),
        hot=True,
        torch=_aten("elu"),
    ),
    _act("gelu", _gelu, _act_samples(((), {}), ((), {"approximate": "tanh"})), errors=_gelu_errors, hot=True),
    _act("silu", _silu, _act_samples(), hot=True),
    _act("mish", _mish, _act_samples(), hot=True),
    _act(
        "softplus",
        _softplus,
        _act_samples(((), {}), ((2.0, 5.0), {}), ((), {"beta": 0.5, "threshold": -1.0})),
        inplace=False,
        hot=True,
    ),
    _act(
        "softshrink",
        _softshrink,
        _act_samples(((), {}), ((2.0,), {}), ((0.0,), {})),
        inplace=False,
        errors=_shrink_errors,
    ),
    _act("hardshrink", _hardshrink, _act_samples(((), {}), ((2.0,), {}), ((0.0,), {})), inplace=False),
    _act(
        "threshold",
        _threshold,
        _act_samples(((1.0, -2.0), {}), ((-0.5, 7.0), {}), ((0.0, 0.0), {})),
        dtypes=FLOATS + INTS,
        errors=False,
        torch=True,
    ),
    _act(
        "hardtanh",
        _hardtanh,
        _act_samples(((), {}), ((-2.0, 3.0), {}), ((), {"min_val": 0.0, "max_val": 6.0})),
        dtypes=FLOATS + INTS,
        errors=False,
    ),
    _act("hardsigmoid", _hardsigmoid, _act_samples()),
    _act("hardswish", lambda x: x * _hardsigmoid(x), _act_samples()),
    _act(
        "log_sigmoid",
        _log_sigmoid,
        _act_samples(),
        inplace=False,
        torch=lambda torch: torch._C._nn.log_sigmoid,
    ),
    _act("relu6", lambda x: _hardtanh(x, 0.0, 6.0), _act_samples(), dtypes=FLOATS + INTS, out=False),
    _act("selu", lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE), _act_samples(), out=False, torch=True),
    _act(
        "celu",
        lambda x, alpha=1.0: _elu(x, alpha, 1.0, 1 / alpha),
        _act_samples(((), {}), ((0.5,), {})),
        out=False,
        errors=_celu_errors,
        torch=True,
    ),
    _act("tanhshrink", lambda x: x - np.tanh(x), _act_samples(), inplace=False, out=False),
    _act("softsign", lambda x: x / (1 + np.abs(x)), _act_samples(), inplace=False, out=False),
    _act("glu", _glu, _glu_samples, inplace=False, out=False, errors=_glu_errors),
    _act("prelu", _prelu, _prelu_samples, inplace=False, out=False, errors=_prelu_errors, torch=True),
    _act(
        "rrelu",
        _rrelu_eval,
        _act_samples(((), {}), ((0.1, 0.3), {}), ((), {"training": False})),
        out=False,
        errors=_rrelu_errors,
        torch=True,
    ),
    OpInfo(
        "heaviside",
        ref=_heaviside,
        dtypes=FLOATS + INTS,
        sample_inputs=_heaviside_samples,
        inplace=True,
        out=True,
        result_dtype=same_dtype,
        error_inputs=_heaviside_errors,
        differentiable=False,  # PyTorch has no derivative for heaviside
    ),
)


def _bwd(name, ref, samples, **kw):
    return OpInfo(
        name, ref=ref, dtypes=FLOATS, sample_inputs=samples, result_dtype=same_dtype, torch=_aten(name), **kw
    )


register(
    _bwd("threshold_backward", _threshold_backward, _backward_samples(((0.0,), {}), ((1.5,), {}))),
    _bwd(
        "leaky_relu_backward", _leaky_relu_backward, _backward_samples(((0.01, False), {}), ((0.3, True), {}))
    ),
    _bwd(
        "elu_backward",
        _elu_backward,
        _backward_samples(
            ((1.0, 1.0, 1.0, False), {}), ((0.5, 2.0, 1.5, False), {}), ((1.0, 1.0, 1.0, True), {}), high=5
        ),
    ),
    _bwd("gelu_backward", _gelu_backward, _backward_samples(((), {}), ((), {"approximate": "tanh"}))),
    _bwd("silu_backward", _silu_backward, _backward_samples(((), {}))),
    _bwd("mish_backward", _mish_backward, _backward_samples(((), {}))),
    _bwd("softplus_backward", _softplus_backward, _backward_samples(((1.0, 20.0), {}), ((2.0, 5.0), {}))),
    # No NaN input: PyTorch's own scalar and vectorised loops disagree there (grad vs 0); ours gives grad.
    _bwd(
        "hardtanh_backward",
        _hardtanh_backward,
        _backward_samples(((-1.0, 1.0), {}), ((0.0, 6.0), {}), nan=False),
    ),
)
