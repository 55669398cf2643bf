"""Op database: binary and ternary elementwise arithmetic (kernels/binary.cpp, binary_special.cpp,
ternary.cpp) and the Python operators that call them.

Samples (``binary_samples``) cover equal shapes, broadcasting both ways, 0-d operands, size-0 and size-1
dims, Python numbers (wrapped numbers: they do not widen the tensor's dtype), mixed dtypes (a float64 0-d, an
int64 tensor, a float32 tensor with integers), non-contiguous and expanded (stride 0) operands.
Comparisons and logical/bitwise ops are in compare.py.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import BOOL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register
from .samples import from_array, make_tensor, rng_for, strided, transposed


def promoted(sample: SampleInput, dtype) -> object:
    """PyTorch's result type of the first two operands (tp.result_type is checked in test_properties)."""
    return tp.result_type(sample.input, sample.args[0])


def float_promoted(sample: SampleInput, dtype) -> object:
    d = promoted(sample, dtype)
    return d if d.is_floating_point or d.is_complex else tp.get_default_dtype()


def binary_samples(
    op,
    dtype,
    low=None,
    high=None,
    rlow=None,
    rhigh=None,
    nonzero_rhs=False,
    scalars=(2, 1.5),
    mixed=True,
    kwargs=None,
):
    """Two-operand samples; ``rlow``/``rhigh``/``nonzero_rhs`` constrain the right operand (divisors,
    exponents). ``scalars`` are the Python numbers tried on the right; ``kwargs`` are added to every call."""
    rng = rng_for(op.id, str(dtype))
    kw = dict(kwargs or {})
    lhs = {"low": low, "high": high}
    rhs = {
        "low": low if rlow is None else rlow,
        "high": high if rhigh is None else rhigh,
        "exclude_zero": nonzero_rhs,
    }

    def pair(sa, sb, name, db=None):
        a = make_tensor(sa, dtype, rng, **lhs)
        b = make_tensor(sb, db or dtype, rng, **rhs)
        return SampleInput(a, (b,), dict(kw), name)

    yield pair((3, 4), (3, 4), "same shape")
    yield pair((3, 1), (1, 4), "broadcast (3,1)x(1,4)")
    yield pair((2, 3, 4), (4,), "broadcast (2,3,4)x(4)")
    yield pair((4,), (2, 3, 4), "broadcast (4)x(2,3,4)")
    yield pair((5,), (), "tensor x 0-d")
    yield pair((), (), "0-d x 0-d")
    yield pair((), (5,), "0-d x tensor")
    yield pair((1,), (1,), "size-1")
    yield pair((0, 3), (3,), "size-0 broadcast")
    yield pair((2, 0), (2, 1), "size-0 x size-1")
    a, b = make_tensor((3, 4), dtype, rng, **lhs), make_tensor((4, 3), dtype, rng, **rhs)
    yield SampleInput(transposed(a), (strided(b.t()),), dict(kw), "transposed x strided")
    b = make_tensor((1, 4), dtype, rng, **rhs)
    yield SampleInput(make_tensor((3, 4), dtype, rng, **lhs), (b.expand(3, 4),), dict(kw), "expanded rhs")
    for s in scalars:
        if isinstance(s, float) and dtype is tp.bool:
            continue
        if nonzero_rhs or rlow is not None:  # keep Python numbers inside the right operand's domain
            s = abs(s) if rlow is None or rlow >= 0 else s
        yield SampleInput(make_tensor((3, 4), dtype, rng, **lhs), (s,), dict(kw), f"tensor x Python {s!r}")
    if mixed and dtype is not tp.bool:
        other = tp.int64 if dtype.is_floating_point else tp.float32
        yield pair((3, 4), (3, 4), f"mixed with {other}", db=other)
        yield pair((3, 4), (), "with a float64 0-d", db=tp.float64)


def _nonzero_rhs(**kw):
    return lambda op, dtype: binary_samples(op, dtype, nonzero_rhs=True, **kw)


def _plain(**kw):
    return lambda op, dtype: binary_samples(op, dtype, **kw)


def _large_binary(op):
    rng = rng_for(op.id, "large")
    a = make_tensor((1024, 1024), tp.float32, rng, low=0.5, high=4)
    b = make_tensor((1024, 1024), tp.float32, rng, low=0.5, high=4)
    return SampleInput(transposed(a), (b,), name="1M elements, one transposed")


def _errs(*specs):
    """ErrorInputs from (input, args, kwargs, error, regex, names_op) tuples, built lazily."""

    def gen(op):
        for inp, args, kw, err, rx, names in specs:
            yield ErrorInput(SampleInput(inp(), args(), kw), err, rx, names)

    return gen


def _broadcast_error(op):
    yield ErrorInput(
        SampleInput(tp.ones(3), (tp.ones(4),)), RuntimeError, r"size of tensor a \(3\) must match", False
    )


def _add_errors(op):
    yield from _broadcast_error(op)
    yield ErrorInput(
        SampleInput(tp.ones(2, dtype=tp.int64), (tp.ones(2, dtype=tp.int64),), {"alpha": 1.5}),
        RuntimeError,
        "alpha must not be a floating point number",
    )


def _sub_errors(op):
    yield from _add_errors(op)
    b = tp.tensor([True])
    yield ErrorInput(
        SampleInput(b, (b,)), RuntimeError, r"Subtraction, the `-` operator, with two bool", False
    )
    yield ErrorInput(
        SampleInput(tp.ones(1), (b,)),
        RuntimeError,
        r"Subtraction, the `-` operator, with a bool tensor",
        False,
    )


def _int_div_zero(op):
    a = tp.tensor([1, 2])
    yield ErrorInput(
        SampleInput(a, (tp.tensor([1, 0]),)),
        RuntimeError,
        "ZeroDivisionError: integer division or modulo by zero in",
    )


def _div_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(2), (tp.ones(2),), {"rounding_mode": "round"}),
        ValueError,
        "expected rounding_mode to be one of None, 'trunc', or 'floor'",
    )


def _pow_errors(op):
    yield ErrorInput(
        SampleInput(tp.tensor([2, 3]), (-1,)),
        RuntimeError,
        "Integers to negative integer powers are not allowed",
    )


def _add_ref(x, y, alpha=1):
    """Two bool operands add as logical or (the reference sees operands already cast to the result dtype)."""
    if isinstance(x, np.ndarray) and x.dtype == np.bool_ and np.asarray(y).dtype == np.bool_:
        return x | (y & bool(alpha))
    return x + alpha * y


def _sub_ref(x, y, alpha=1):
    return x - alpha * y


def _div_ref(x, y, rounding_mode=None):
    with np.errstate(all="ignore"):
        q = np.true_divide(x, y)
        if rounding_mode == "trunc":
            q = (
                np.trunc(q)
                if np.issubdtype(q.dtype, np.floating) and not _ints(x, y)
                else _int_trunc_div(x, y)
            )
        elif rounding_mode == "floor":
            q = np.floor_divide(x, y)
    return q


def _ints(*vs):
    return all(
        not isinstance(v, float) and (not isinstance(v, np.ndarray) or v.dtype.kind in "iub") for v in vs
    )


def _int_trunc_div(x, y):
    q = np.abs(x) // np.abs(y)
    return np.where((np.sign(x) * np.sign(y)) < 0, -q, q)


def _floor_divide_ref(x, y):
    with np.errstate(all="ignore"):
        return np.floor_divide(x, y)


def _pow_ref(x, y):
    with np.errstate(all="ignore"):
        if _ints(x, y):
            return np.power(np.asarray(x, np.int64), np.asarray(y, np.int64))
        return np.power(np.asarray(x, np.float64), np.asarray(y, np.float64))


def _nextafter_ref(x, y, *, _dtype):
    np_t = {tp.float32: np.float32, tp.float64: np.float64}[_dtype]
    return np.nextafter(np.asarray(x, np_t), np.asarray(y, np_t))


def _xlogy_ref(x, y):
    with np.errstate(all="ignore"):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


def _logaddexp2(x, y):
    return np.logaddexp2(x, y)


def _with_specials(gen):
    """A generator plus one sample of NaN/inf pairs (floats), for ops whose contract is about them."""

    def wrapped(op, dtype):
        yield from gen(op, dtype)
        if dtype.is_floating_point:
            a = from_array(np.array([np.nan, 1.0, np.inf, -np.inf, np.nan, 0.0]), dtype)
            b = from_array(np.array([1.0, np.nan, 2.0, np.inf, np.nan, -0.0]), dtype)
            yield SampleInput(a, (b,), name="nan/inf")

    return wrapped


NUMERIC = FLOATS + INTS
_ARITH = [
    # name, ref, dtypes, samples, result dtype, errors
    (
        "add",
        _add_ref,
        NUMERIC + BOOL,
        lambda op, d: [
            *binary_samples(op, d),
            *(
                binary_samples(op, d, kwargs={"alpha": 2}, mixed=False, scalars=())
                if d is not tp.bool
                else ()
            ),
        ],
        promoted,
        _add_errors,
    ),
    (
        "sub",
        _sub_ref,
        NUMERIC,
        lambda op, d: [
            *binary_samples(op, d),
            *binary_samples(op, d, kwargs={"alpha": 3}, mixed=False, scalars=()),
        ],
        promoted,
        _sub_errors,
    ),
    ("mul", np.multiply, NUMERIC + BOOL, _plain(), promoted, _broadcast_error),
    (
        "div",
        _div_ref,
        NUMERIC,
        lambda op, d: [
            *binary_samples(op, d, nonzero_rhs=True),
            *binary_samples(op, d, nonzero_rhs=True, kwargs={"rounding_mode": "trunc"}),
            *binary_samples(op, d, nonzero_rhs=True, kwargs={"rounding_mode": "floor"}),
        ],
        lambda s, d: promoted(s, d) if s.kwargs.get("rounding_mode") else float_promoted(s, d),
        _div_errors,
    ),
    ("true_divide", np.true_divide, NUMERIC, _nonzero_rhs(), float_promoted, None),
    ("floor_divide", _floor_divide_ref, NUMERIC, _nonzero_rhs(), promoted, _int_div_zero),
    ("remainder", np.remainder, NUMERIC, _nonzero_rhs(), promoted, _int_div_zero),
    ("fmod", np.fmod, NUMERIC, _nonzero_rhs(), promoted, _int_div_zero),
    (
        "pow",
        _pow_ref,
        NUMERIC,
        lambda op, d: binary_samples(
            op,
            d,
            low=0.2 if d.is_floating_point else -4,
            high=3 if d.is_floating_point else 4,
            rlow=-2 if d.is_floating_point else 0,
            rhigh=3,
            scalars=(2, 0.5),
        ),
        promoted,
        _pow_errors,
    ),
    (
        "float_power",
        lambda x, y: np.float_power(np.asarray(x, np.float64), y),
        NUMERIC,
        _plain(low=0.2, high=3, rlow=-2, rhigh=3, scalars=(2, 0.5)),
        lambda s, d: tp.float64,
        None,
    ),
    ("atan2", np.arctan2, NUMERIC, _with_specials(_plain()), float_promoted, None),
    ("hypot", np.hypot, FLOATS, _with_specials(_plain()), promoted, None),
    ("logaddexp", np.logaddexp, FLOATS, _with_specials(_plain()), promoted, None),
    ("logaddexp2", _logaddexp2, FLOATS, _with_specials(_plain()), promoted, None),
    ("maximum", np.maximum, NUMERIC + BOOL, _with_specials(_plain(scalars=())), promoted, None),
    ("minimum", np.minimum, NUMERIC + BOOL, _with_specials(_plain(scalars=())), promoted, None),
    ("fmax", np.fmax, NUMERIC, _with_specials(_plain(scalars=())), promoted, None),
    ("fmin", np.fmin, NUMERIC, _with_specials(_plain(scalars=())), promoted, None),
    ("copysign", np.copysign, NUMERIC, _with_specials(_plain()), float_promoted, None),
    ("xlogy", _xlogy_ref, NUMERIC, _with_specials(_plain(rlow=0.1, rhigh=9)), float_promoted, None),
]

for _name, _ref, _dtypes, _samples, _rdt, _errors in _ARITH:
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=_dtypes,
            sample_inputs=_samples,
            inplace=True,
            inplace_exact_dtype=_name == "float_power",
            out=True,
            result_dtype=_rdt,
            ref_cast=_rdt,
            error_inputs=_errors,
            large=_large_binary,
        )
    )

register(
    OpInfo(
        "nextafter",
        ref=_nextafter_ref,
        ref_gets_dtype=True,
        dtypes=(tp.float32, tp.float64),
        sample_inputs=_with_specials(_plain(scalars=())),
        inplace=True,
        out=True,
        result_dtype=promoted,
        ref_cast=promoted,
        differentiable=False,
    ),
)


# Scalar-first overloads: `2 ** t`, `2 % t`, `xlogy(2, t)`.
def _scalar_first(scalar, **value_kw):
    def gen(op, dtype):
        rng = rng_for(op.id, str(dtype))
        for shape in [(3, 4), (), (0,), (1,)]:
            yield SampleInput(scalar, (make_tensor(shape, dtype, rng, **value_kw),), name=f"scalar x {shape}")
        yield SampleInput(
            scalar, (transposed(make_tensor((3, 4), dtype, rng, **value_kw)),), name="transposed"
        )

    return gen


register(
    OpInfo(
        "pow",
        variant="scalar_self",
        ref=_pow_ref,
        dtypes=NUMERIC,
        sample_inputs=_scalar_first(2, low=0, high=3),
        result_dtype=lambda s, d: tp.result_type(s.input, s.args[0]),
    ),
    OpInfo(
        "remainder",
        variant="scalar_self",
        ref=np.remainder,
        dtypes=NUMERIC,
        sample_inputs=_scalar_first(7, low=1, high=5),
        result_dtype=lambda s, d: tp.result_type(s.input, s.args[0]),
    ),
    OpInfo(
        "xlogy",
        variant="scalar_self",
        ref=_xlogy_ref,
        dtypes=NUMERIC,
        sample_inputs=_scalar_first(3, low=0.1, high=5),
        result_dtype=lambda s, d: float_promoted(SampleInput(s.args[0], (s.input,)), d),
    ),
    OpInfo(
        "float_power",
        variant="scalar_self",
        ref=lambda x, y: np.float_power(x, np.asarray(y, np.float64)),
        dtypes=NUMERIC,
        sample_inputs=_scalar_first(2, low=0, high=3),
        result_dtype=lambda s, d: tp.float64,
    ),
)


# Ternary: lerp, addcmul, addcdiv, clamp/clip, where.
def _ternary_samples(op, dtype, third_scalar=None, low=None, high=None, nonzero_third=False, kwargs=None):
    rng = rng_for(op.id, str(dtype))
    kw = dict(kwargs or {})

    def t(shape, dt=dtype, **extra):
        return make_tensor(shape, dt, rng, low=low, high=high, **extra)

    for sa, sb, sc, name in [
        ((3, 4), (3, 4), (3, 4), "same shape"),
        ((3, 1), (1, 4), (4,), "broadcast"),
        ((), (), (), "0-d"),
        ((0, 2), (2,), (1,), "size-0"),
        ((1,), (1,), (1,), "size-1"),
    ]:
        third = third_scalar if third_scalar is not None else t(sc, exclude_zero=nonzero_third)
        yield SampleInput(t(sa), (t(sb), third), dict(kw), name)
    a, b, c = t((4, 3)), t((3, 4)), t((3, 4), exclude_zero=nonzero_third)
    third = third_scalar if third_scalar is not None else strided(c)
    yield SampleInput(transposed(a.t()), (strided(b), third), dict(kw), "non-contiguous")


def _lerp_ref(start, end, weight):
    return start + weight * (end - start)


register(
    OpInfo(
        "lerp",
        xfails={
            ("meta", None): "a 0-d weight tensor binds to lerp.Scalar, whose conversion calls item() on meta "
            "(python/py_ops.cpp argument parsing; PyTorch picks lerp.Tensor)"
        },
        ref=_lerp_ref,
        dtypes=FLOATS,
        sample_inputs=lambda op, d: [
            *_ternary_samples(op, d, third_scalar=0.3),
            *_ternary_samples(op, d, low=0, high=1),
        ],
        inplace=True,
        out=True,
        result_dtype=lambda s, d: s.input.dtype,
        large=None,
    ),
    OpInfo(
        "addcmul",
        ref=lambda x, a, b, value=1: x + value * a * b,
        dtypes=NUMERIC,
        sample_inputs=lambda op, d: [*_ternary_samples(op, d), *_ternary_samples(op, d, kwargs={"value": 2})],
        inplace=True,
        out=True,
        result_dtype=lambda s, d: s.input.dtype,
    ),
    OpInfo(
        "addcdiv",
        ref=lambda x, a, b, value=1: x + value * a / b,
        dtypes=FLOATS,
        sample_inputs=lambda op, d: [
            *_ternary_samples(op, d, nonzero_third=True),
            *_ternary_samples(op, d, nonzero_third=True, kwargs={"value": 0.5}),
        ],
        inplace=True,
        out=True,
        result_dtype=lambda s, d: s.input.dtype,
        error_inputs=_errs(
            (
                lambda: tp.ones(2, dtype=tp.int64),
                lambda: (tp.ones(2, dtype=tp.int64), tp.ones(2, dtype=tp.int64)),
                {},
                RuntimeError,
                "Integer division with addcdiv is no longer supported",
                True,
            )
        ),
    ),
)


def _clamp_ref(x, min=None, max=None):
    out = x
    if min is not None:
        out = np.where(np.isnan(out) if out.dtype.kind == "f" else False, out, np.maximum(out, min))
    if max is not None:
        out = np.where(np.isnan(out) if out.dtype.kind == "f" else False, out, np.minimum(out, max))
    return out


def _clamp_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4), dtype, rng)
    lo = 2 if dtype is tp.uint8 else -2  # bounds a uint8 tensor can hold
    yield SampleInput(x, (lo, 5), name="scalar bounds")
    yield SampleInput(x, kwargs={"min": 1}, name="min only")
    yield SampleInput(x, kwargs={"max": 0}, name="max only")
    yield SampleInput(x, (4, lo + 1), name="min > max gives max")
    for shape in [(), (0,), (1,), (2, 3, 4)]:
        yield SampleInput(make_tensor(shape, dtype, rng), (lo, 3), name=f"shape {shape}")
    yield SampleInput(transposed(x), (lo, 4), name="transposed")
    lo, hi = make_tensor((3, 1), dtype, rng, high=0), make_tensor((4,), dtype, rng, low=0)
    yield SampleInput(x, (lo, hi), name="tensor bounds, broadcast")
    yield SampleInput(strided(x), kwargs={"min": lo}, name="tensor min only")
    if dtype.is_floating_point:
        yield SampleInput(
            from_array(np.array([np.nan, -np.inf, np.inf, 0.5]), dtype), (-1, 1), name="nan/inf"
        )


def _clamp_errors(op):
    yield ErrorInput(SampleInput(tp.ones(3)), RuntimeError, "At least one of 'min' or 'max' must not be None")


for _name in ("clamp", "clip"):
    register(
        OpInfo(
            _name,
            ref=_clamp_ref,
            dtypes=NUMERIC,
            sample_inputs=_clamp_samples,
            inplace=True,
            out=True,
            result_dtype=lambda s, d: s.input.dtype,
            error_inputs=_clamp_errors,
        )
    )


def _where_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    for sc, sa, sb, name in [
        ((3, 4), (3, 4), (3, 4), "same shape"),
        ((3, 1), (1, 4), (4,), "broadcast"),
        ((), (), (), "0-d"),
        ((0, 2), (2,), (1,), "size-0"),
    ]:
        c = make_tensor(sc, tp.bool, rng)
        yield SampleInput(c, (make_tensor(sa, dtype, rng), make_tensor(sb, dtype, rng)), name=name)
    c = make_tensor((4, 3), tp.bool, rng).t()
    yield SampleInput(
        c,
        (transposed(make_tensor((3, 4), dtype, rng)), strided(make_tensor((3, 4), dtype, rng))),
        name="non-contiguous",
    )
    yield SampleInput(c, (make_tensor((3, 4), dtype, rng), 0), name="Python number other")
    if dtype is not tp.bool:
        yield SampleInput(
            c, (make_tensor((3, 4), dtype, rng), make_tensor((3, 4), tp.float64, rng)), name="mixed"
        )


register(
    OpInfo(
        "where",
        ref=lambda c, x, y: np.where(c, x, y),
        dtypes=NUMERIC + BOOL,
        sample_inputs=_where_samples,
        out=True,
        result_dtype=lambda s, d: tp.result_type(s.args[0], s.args[1]),
        error_inputs=_errs(
            (
                lambda: tp.ones(2),
                lambda: (tp.ones(2), tp.ones(2)),
                {},
                RuntimeError,
                "where expected condition to be a boolean tensor",
                True,
            )
        ),
    ),
)
