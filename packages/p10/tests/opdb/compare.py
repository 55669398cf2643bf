"""Op database: comparisons (kernels/compare.cpp) and logical/bitwise ops (kernels/logical.cpp).

Comparison samples draw values from a few integers (floats included) so that ties — the cases where eq/le/ge
differ from lt/gt — actually occur; the NaN/inf sample checks that NaN compares unequal to everything.
"""

from __future__ import annotations

import operator

import numpy as np

import tensorplay_p10 as tp

from . import ALL, BOOL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, bool_dtype, register, same_dtype
from .binary import binary_samples, promoted
from .samples import from_array, make_tensor, rng_for, transposed, unary_samples


def _tie_samples(op, dtype):
    """Binary samples with values in [-3, 3] rounded to integers: many equal pairs."""
    for s in binary_samples(op, dtype, low=-3, high=3):
        yield s.map_tensors(lambda t: t.round() if t.dtype.is_floating_point else t)
    if dtype.is_floating_point:
        a = from_array(np.array([np.nan, np.nan, 1.0, np.inf, -np.inf, 0.0]), dtype)
        b = from_array(np.array([np.nan, 1.0, np.nan, np.inf, np.inf, -0.0]), dtype)
        yield SampleInput(a, (b,), name="nan/inf/±0")


_COMPARE = [
    ("eq", np.equal, operator.eq),
    ("ne", np.not_equal, operator.ne),
    ("lt", np.less, operator.lt),
    ("le", np.less_equal, operator.le),
    ("gt", np.greater, operator.gt),
    ("ge", np.greater_equal, operator.ge),
]
for _name, _ref, _pyop in _COMPARE:
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=ALL,
            sample_inputs=_tie_samples,
            inplace=True,
            out=True,
            result_dtype=bool_dtype,
            ref_cast=promoted,
            differentiable=False,
        ),
        OpInfo(
            _name,
            variant="operator",
            op=_pyop,
            ref=_ref,
            dtypes=(tp.float32, tp.int64, tp.bool),
            sample_inputs=_tie_samples,
            result_dtype=bool_dtype,
            ref_cast=promoted,
            differentiable=False,
            torch=lambda torch, f=_pyop: f,
        ),
    )


def _isclose_ref(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    with np.errstate(all="ignore"):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _close_samples(op, dtype):
    """Pairs that are equal, a little apart and far apart, with NaN and inf; the tolerances varied."""
    rng = rng_for(op.id, str(dtype))
    a = make_tensor((4, 5), dtype, rng)
    if dtype.is_floating_point:
        near = a + from_array(rng.uniform(-1e-3, 1e-3, (4, 5)), dtype)
        yield SampleInput(a, (near,), name="near")
        yield SampleInput(a, (near,), {"rtol": 1e-2, "atol": 1e-3}, name="near, wide tolerance")
        sp = from_array(np.array([np.nan, np.inf, -np.inf, 1.0, 0.0]), dtype)
        sq = from_array(np.array([np.nan, np.inf, np.inf, 1.0 + 1e-6, 1e-9]), dtype)
        yield SampleInput(sp, (sq,), name="nan/inf")
        yield SampleInput(sp, (sq,), {"equal_nan": True}, name="equal_nan")
    yield SampleInput(a, (a.clone(),), name="equal")
    yield SampleInput(a, (make_tensor((4, 5), dtype, rng),), name="random")
    yield SampleInput(transposed(a), (make_tensor((5,), dtype, rng),), name="transposed, broadcast")
    yield SampleInput(make_tensor((), dtype, rng), (make_tensor((0,), dtype, rng),), name="0-d x size-0")
    yield SampleInput(a, (a.clone(),), {"rtol": 0.0, "atol": 0.0}, name="zero tolerance")


register(
    OpInfo(
        "isclose",
        ref=_isclose_ref,
        dtypes=FLOATS + INTS + BOOL,
        sample_inputs=_close_samples,
        result_dtype=bool_dtype,
        ref_cast=promoted,
        differentiable=False,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(2), (tp.ones(2),), {"rtol": -1.0}),
                ValueError,  # PyTorch raises RuntimeError here
                "rtol must be greater than or equal to zero",
            )
        ],
    ),
    OpInfo(
        "allclose",
        ref=lambda *a, **k: bool(np.all(_isclose_ref(*a, **k))),
        dtypes=FLOATS + INTS,
        sample_inputs=_close_samples,
        differentiable=False,
        meta=False,  # a Python bool from the values: meta tensors have none (as in PyTorch)
    ),
)


def _equal_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    a = make_tensor((3, 4), dtype, rng)
    yield SampleInput(a, (a.clone(),), name="equal")
    yield SampleInput(a, (transposed(a),), name="equal, other transposed")
    b = a.clone()
    b[1, 2] = b[1, 2] + 1 if dtype is not tp.bool else ~b[1, 2]
    yield SampleInput(a, (b,), name="one element differs")
    yield SampleInput(a, (a[:2],), name="shapes differ")
    yield SampleInput(make_tensor((0, 3), dtype, rng), (make_tensor((0, 3), dtype, rng),), name="size-0")
    z = make_tensor((), dtype, rng)
    yield SampleInput(z, (z.clone(),), name="0-d")


def _equal_ref(a, b):
    return a.shape == b.shape and bool(np.array_equal(a, b))


register(
    OpInfo(
        "equal", ref=_equal_ref, dtypes=ALL, sample_inputs=_equal_samples, differentiable=False, meta=False
    )
)

# Logical ops: any dtype, nonzero is true, the result is bool.
for _name, _ref in [
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
]:
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=ALL,
            sample_inputs=lambda op, d: binary_samples(op, d, low=-1, high=1),
            inplace=True,
            out=True,
            result_dtype=bool_dtype,
            differentiable=False,
        )
    )
register(
    OpInfo(
        "logical_not",
        ref=np.logical_not,
        dtypes=ALL,
        sample_inputs=lambda op, d: unary_samples(op, d, low=-1, high=1),
        inplace=True,
        out=True,
        result_dtype=bool_dtype,
        differentiable=False,
    )
)


def _bitwise_float_error(name):
    def gen(op):
        yield ErrorInput(
            SampleInput(tp.ones(2), (tp.ones(2),)),
            NotImplementedError,
            f"\"{name}\" not implemented for 'Float'",
            True,
        )

    return gen


def _int_samples(op, dtype):
    yield from binary_samples(
        op, dtype, scalars=(3,), low=-9 if dtype is not tp.uint8 else 0, high=9, mixed=False
    )


for _name, _ref, _pyop in [
    ("bitwise_and", np.bitwise_and, operator.and_),
    ("bitwise_or", np.bitwise_or, operator.or_),
    ("bitwise_xor", np.bitwise_xor, operator.xor),
]:
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=INTS + BOOL,
            sample_inputs=_int_samples,
            inplace=True,
            out=True,
            result_dtype=promoted,
            differentiable=False,
            error_inputs=_bitwise_float_error(_name),
        ),
        OpInfo(
            _name,
            variant="operator",
            op=_pyop,
            ref=_ref,
            dtypes=(tp.int64, tp.uint8, tp.bool),
            sample_inputs=_int_samples,
            result_dtype=promoted,
            differentiable=False,
            torch=lambda torch, f=_pyop: f,
        ),
    )
register(
    OpInfo(
        "bitwise_not",
        ref=np.invert,
        dtypes=INTS + BOOL,
        sample_inputs=unary_samples,
        inplace=True,
        out=True,
        result_dtype=same_dtype,
        differentiable=False,
    ),
    OpInfo(
        "bitwise_not",
        variant="operator",
        op=operator.invert,
        ref=np.invert,
        dtypes=(tp.int64, tp.bool),
        sample_inputs=unary_samples,
        result_dtype=same_dtype,
        differentiable=False,
        torch=lambda torch: operator.invert,
    ),
)


def _shift_samples(op, dtype):
    """Shift amounts in [0, 3] so that every dtype holds the result (-9 << 3 fits int8)."""
    yield from binary_samples(
        op, dtype, low=-9 if dtype is not tp.uint8 else 0, high=9, rlow=0, rhigh=3, scalars=(2,), mixed=False
    )


def _shift_ref(fn):
    def ref(x, y):
        return fn(np.asarray(x), np.asarray(y, np.asarray(x).dtype))

    return ref


for _name, _np, _pyop in [
    ("bitwise_left_shift", np.left_shift, operator.lshift),
    ("bitwise_right_shift", np.right_shift, operator.rshift),
]:
    register(
        OpInfo(
            _name,
            ref=_shift_ref(_np),
            dtypes=INTS,
            sample_inputs=_shift_samples,
            inplace=True,
            out=True,
            result_dtype=promoted,
            differentiable=False,
        ),
        OpInfo(
            _name,
            variant="operator",
            op=_pyop,
            ref=_shift_ref(_np),
            dtypes=(tp.int64, tp.int32),
            sample_inputs=_shift_samples,
            result_dtype=promoted,
            differentiable=False,
            torch=lambda torch, f=_pyop: f,
        ),
    )
