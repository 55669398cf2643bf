"""Op database: unary elementwise ops (kernels/unary.cpp, unary_float.cpp, unary_special.cpp and
unary_complex.cpp).

References are NumPy in float64, or ``math`` vectorised where NumPy lacks the function (erf, lgamma, …).
Each op's sample values stay in a domain where the function is well conditioned, plus special values
(±inf, NaN, ±0) for the ops whose contract is about them.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplay_p10 as tp

from . import (
    ALL,
    BOOL,
    FLOATS,
    INTS,
    SIGNED_INTS,
    ErrorInput,
    OpInfo,
    SampleInput,
    bool_dtype,
    float_dtype,
    register,
    same_dtype,
)
from .samples import from_array, layouts, make_tensor, rng_for, transposed, unary_samples

COMPLEX = (tp.complex64,)


def _vec(fn):
    """A float64 NumPy reference from a scalar ``math`` function (NaN where ``math`` raises)."""

    def one(v: float) -> float:
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.nan

    return lambda x: np.vectorize(one, otypes=[np.float64])(np.asarray(x, np.float64))


def _lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # the poles: math raises where the function's value is +inf
        return math.inf


def _digamma(x: float) -> float:
    """digamma in float64: PyTorch's values at the poles (-inf at 0, NaN at negative integers), reflection
    below 0, recurrence up to 10, then the asymptotic series (error < 1e-15 there)."""
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 0:
        return math.copysign(math.inf, -x)
    if x < 0:
        if x == math.floor(x):
            return math.nan
        return _digamma(1 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10:
        acc -= 1 / x
        x += 1
    z = 1 / (x * x)
    series = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * (1 / 132)))))
    return acc + math.log(x) - 0.5 / x - series


def _erfinv(y: float) -> float:
    """Bisection on math.erf: slow but plainly correct, and the samples are small."""
    if math.isnan(y) or y == 0:
        return y
    if y <= -1 or y >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    lo, hi = -6.0, 6.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def _errstate(ref):
    """NumPy warns on log(-1) and friends; the NaN/inf results are the reference values we want."""

    def wrapped(x, *args, **kwargs):
        with np.errstate(all="ignore"):
            return ref(x, *args, **kwargs)

    return wrapped


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _round(x, decimals=0):
    if not np.issubdtype(x.dtype, np.floating):
        return np.round(x, decimals) if decimals >= 0 else x
    return np.round(x, decimals)


def _sign(x):
    """PyTorch's sign: (0 < x) - (x < 0), so NaN gives 0 (NumPy's sign gives NaN)."""
    if x.dtype == np.bool_:
        return x.copy()
    return ((0 < x).astype(np.int8) - (x < 0).astype(np.int8)).astype(x.dtype)


def _sgn(x):
    if np.iscomplexobj(x):
        mag = np.abs(x)
        with np.errstate(all="ignore"):
            return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
    return _sign(x)


def _special_values(dtype):
    """±inf, NaN and ±0 as a 1-d tensor of ``dtype`` (floats only)."""
    return from_array(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5, -2.5]), dtype)


def _with_specials(op, dtype, **value_kw):
    yield from unary_samples(op, dtype, **value_kw)
    if dtype.is_floating_point:
        yield SampleInput(_special_values(dtype), name="inf/nan/±0")


def _samples_in(low, high, specials=False):
    def gen(op, dtype):
        kw = {} if not (dtype.is_floating_point or dtype.is_complex) else {"low": low, "high": high}
        if specials:
            yield from _with_specials(op, dtype, **kw)
        else:
            yield from unary_samples(op, dtype, **kw)

    return gen


def _large_unary(op):
    """1M float32 elements in the op's domain, transposed: the threaded strided path."""
    lo, hi = _DOMAIN.get(op.name, (-9, 9))
    x = make_tensor((1024, 1024), tp.float32, rng_for(op.id, "large"), low=lo, high=hi)
    return SampleInput(transposed(x), name="1M elements, transposed")


def _neg_bool_errors(op):
    x = tp.tensor([True, False])
    yield ErrorInput(SampleInput(x), RuntimeError, r"Negation, the `-` operator, on a bool tensor", False)


def _imag_real_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(3)), RuntimeError, r"imag is not implemented for tensors with non-complex"
    )


# (name, reference, dtypes, result dtype, sample generator, extras)
_FLOAT_FNS = [
    ("exp", np.exp, (-9, 9)),
    ("exp2", np.exp2, (-9, 9)),
    ("expm1", np.expm1, (-9, 9)),
    ("log", np.log, (-2, 9)),
    ("log2", np.log2, (-2, 9)),
    ("log10", np.log10, (-2, 9)),
    ("log1p", np.log1p, (-2, 9)),
    ("sqrt", np.sqrt, (-2, 9)),
    ("rsqrt", lambda x: 1 / np.sqrt(x), (-2, 9)),
    ("reciprocal", lambda x: 1 / x, (-9, 9)),
    ("sin", np.sin, (-9, 9)),
    ("cos", np.cos, (-9, 9)),
    ("tan", np.tan, (-1.5, 1.5)),
    ("asin", np.arcsin, (-1.2, 1.2)),
    ("acos", np.arccos, (-1.2, 1.2)),
    ("atan", np.arctan, (-9, 9)),
    ("sinh", np.sinh, (-9, 9)),
    ("cosh", np.cosh, (-9, 9)),
    ("tanh", np.tanh, (-9, 9)),
    ("asinh", np.arcsinh, (-9, 9)),
    ("acosh", np.arccosh, (0.5, 9)),
    ("atanh", np.arctanh, (-1.2, 1.2)),
    ("sigmoid", _sigmoid, (-9, 9)),
    ("deg2rad", np.deg2rad, (-9, 9)),
    ("rad2deg", np.rad2deg, (-9, 9)),
    ("erf", _vec(math.erf), (-3, 3)),
    ("erfc", _vec(math.erfc), (-3, 3)),
    ("erfinv", _vec(_erfinv), (-1, 1)),
    ("lgamma", _vec(_lgamma), (-4.5, 9)),
    ("digamma", _vec(_digamma), (0.1, 9)),
]
_DOMAIN = {name: (lo, hi) for name, _, (lo, hi) in _FLOAT_FNS}
# Float functions the kernels also define for complex inputs (TP_FLOAT_FN's takes_complex).
_COMPLEX_OK = {"exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "reciprocal"}

for _name, _ref, (_lo, _hi) in _FLOAT_FNS:
    register(
        OpInfo(
            _name,
            ref=_errstate(_ref),
            dtypes=FLOATS + INTS + BOOL + (COMPLEX if _name in _COMPLEX_OK else ()),
            sample_inputs=_samples_in(_lo, _hi, specials=True),
            inplace=True,
            out=True,
            result_dtype=float_dtype,
            ref_cast=float_dtype,
            large=_large_unary,
        )
    )

register(
    OpInfo(
        "logit",
        ref=_errstate(_logit),
        dtypes=FLOATS,
        sample_inputs=lambda op, dtype: [
            *unary_samples(op, dtype, low=0.02, high=0.98),
            SampleInput(
                from_array(np.array([0.0, 0.01, 0.5, 0.99, 1.0]), dtype),
                kwargs={"eps": 0.05},
                name="eps clamps",
            ),
        ],
        inplace=True,
        out=True,
        result_dtype=float_dtype,
        ref_cast=float_dtype,
    ),
)

# Ops whose result keeps the input's dtype.
_SAME_DTYPE = [
    ("neg", np.negative, FLOATS + SIGNED_INTS + (tp.uint8,) + COMPLEX, _neg_bool_errors),
    ("abs", np.abs, FLOATS + SIGNED_INTS + (tp.uint8,), None),
    ("sign", _sign, FLOATS + INTS + BOOL, None),
    ("sgn", _sgn, FLOATS + INTS + BOOL + COMPLEX, None),
    ("square", np.square, FLOATS + INTS, None),
    ("floor", np.floor, FLOATS + INTS, None),
    ("ceil", np.ceil, FLOATS + INTS, None),
    ("trunc", np.trunc, FLOATS + INTS, None),
    ("frac", lambda x: x - np.trunc(x), FLOATS, None),
]
for _name, _ref, _dtypes, _errors in _SAME_DTYPE:
    register(
        OpInfo(
            _name,
            ref=_errstate(_ref),
            dtypes=_dtypes,
            sample_inputs=_samples_in(-9, 9, specials=True),
            inplace=True,
            out=True,
            result_dtype=same_dtype,
            error_inputs=_errors,
            large=_large_unary,
        )
    )


def _round_samples(op, dtype):
    yield from _with_specials(op, dtype)
    if dtype.is_floating_point:
        rng = rng_for("round", str(dtype))
        x = from_array(rng.uniform(-50, 50, (4, 5)), dtype)
        for d in (1, 2, -1):
            yield SampleInput(x, kwargs={"decimals": d}, name=f"decimals={d}")
        # Halves round to even, as in NumPy and PyTorch.
        yield SampleInput(from_array(np.array([0.5, 1.5, 2.5, -0.5, -1.5]), dtype), name="ties to even")


register(
    OpInfo(
        "round",
        ref=_errstate(_round),
        dtypes=FLOATS + INTS,
        sample_inputs=_round_samples,
        inplace=True,
        out=True,
        result_dtype=same_dtype,
        differentiable=False,
    )
)


def _nan_to_num_ref(x, nan=None, posinf=None, neginf=None, *, _dtype):
    """Infinities become the largest finite value of the *tensor's* dtype (float16: 65504)."""
    if not np.issubdtype(x.dtype, np.floating):
        return x
    big = tp.finfo(_dtype).max
    return np.nan_to_num(
        x,
        nan=0.0 if nan is None else nan,
        posinf=big if posinf is None else posinf,
        neginf=-big if neginf is None else neginf,
    )


def _nan_to_num_samples(op, dtype):
    yield from _with_specials(op, dtype)
    if dtype.is_floating_point:
        x = _special_values(dtype)
        yield SampleInput(x, kwargs={"nan": 2.0, "posinf": 7.0, "neginf": -7.0}, name="given replacements")
        yield SampleInput(x, kwargs={"posinf": 3.0}, name="posinf only")


register(
    OpInfo(
        "nan_to_num",
        ref=_nan_to_num_ref,
        ref_gets_dtype=True,
        dtypes=FLOATS + INTS + BOOL,
        sample_inputs=_nan_to_num_samples,
        inplace=True,
        out=True,
        result_dtype=same_dtype,
    )
)

for _name, _ref in [
    ("isnan", np.isnan),
    ("isinf", np.isinf),
    ("isfinite", np.isfinite),
    ("signbit", np.signbit),
]:
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=ALL,
            sample_inputs=_samples_in(-9, 9, specials=True),
            out=_name == "signbit",
            result_dtype=bool_dtype,
            differentiable=False,
        )
    )


def _angle_ref(x):
    return np.angle(x) if np.iscomplexobj(x) else np.where(np.isnan(x), np.nan, np.where(x < 0, np.pi, 0.0))


register(
    OpInfo(
        "angle",
        ref=_angle_ref,
        dtypes=FLOATS + INTS + BOOL + COMPLEX,
        sample_inputs=_samples_in(-9, 9, specials=True),
        out=True,
        result_dtype=lambda s, d: tp.float32 if d is tp.complex64 else float_dtype(s, d),
    )
)


def _complex_samples(op, dtype):
    yield from unary_samples(op, dtype)
    rng = rng_for(op.id, "c", str(dtype))
    values = rng.uniform(-3, 3, (3, 4))
    t = from_array(values + 1j * rng.uniform(-3, 3, (3, 4)) if dtype.is_complex else values, dtype)
    for lname, v in layouts(t):
        yield SampleInput(v, name=lname)


def _part_dtype(sample, dtype):
    return {tp.complex64: tp.float32, tp.complex128: tp.float64}.get(sample.input.dtype, sample.input.dtype)


register(
    OpInfo(
        "real",
        ref=np.real,
        dtypes=FLOATS + COMPLEX + (tp.complex128,),
        sample_inputs=_complex_samples,
        result_dtype=_part_dtype,
    ),
    OpInfo(
        "imag",
        ref=np.imag,
        dtypes=COMPLEX + (tp.complex128,),
        sample_inputs=_complex_samples,
        result_dtype=_part_dtype,
        error_inputs=_imag_real_errors,
    ),
    OpInfo(
        "conj",
        ref=np.conj,
        dtypes=FLOATS + INTS + COMPLEX + (tp.complex128,),
        sample_inputs=_complex_samples,
        result_dtype=same_dtype,
    ),
)
