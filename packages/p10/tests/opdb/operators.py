"""Op database: the Python operators (``+ - * / // % **``), their reflected forms (``2 - t``:
``Tensor.__rsub__``) and in-place forms (``t += u``), on the samples of the named ops in binary.py.
Comparison, bitwise and shift operators sit beside their ops in compare.py; ``@`` is in linalg_basic.py.
"""

from __future__ import annotations

import operator

import numpy as np

from . import FLOATS, OpInfo, SampleInput, register
from .binary import NUMERIC, _floor_divide_ref, _nonzero_rhs, _plain, _pow_ref, float_promoted, promoted
from .samples import make_tensor, rng_for, transposed


def _reflected_samples(op, dtype):
    """``2 - t``, ``1.5 / t``: a Python number on the left (``Tensor.__rsub__`` …), positive tensors."""
    rng = rng_for(op.id, str(dtype))
    for shape in [(3, 4), (), (0,), (1,)]:
        for s in (2, 1.5):
            yield SampleInput(make_tensor(shape, dtype, rng, low=1, high=4), (s,), name=f"{s!r} op {shape}")
    yield SampleInput(transposed(make_tensor((3, 4), dtype, rng, low=1, high=4)), (3,), name="transposed")


def _op_rdt(name):
    return float_promoted if name == "true_divide" else promoted


# Python operators (and their reflected and in-place forms) on the same samples as the named ops.
_OPERATORS = [
    ("add", operator.add, operator.iadd, np.add, NUMERIC, _plain()),
    ("sub", operator.sub, operator.isub, np.subtract, NUMERIC, _plain()),
    ("mul", operator.mul, operator.imul, np.multiply, NUMERIC, _plain()),
    ("true_divide", operator.truediv, operator.itruediv, np.true_divide, FLOATS, _nonzero_rhs()),
    ("floor_divide", operator.floordiv, operator.ifloordiv, _floor_divide_ref, NUMERIC, _nonzero_rhs()),
    ("remainder", operator.mod, operator.imod, np.remainder, NUMERIC, _nonzero_rhs()),
    ("pow", operator.pow, operator.ipow, _pow_ref, FLOATS, _plain(low=0.2, high=3, rlow=-2, rhigh=3)),
]
for _name, _fn, _ifn, _ref, _dtypes, _samples in _OPERATORS:
    register(
        OpInfo(
            _name,
            variant="operator",
            op=_fn,
            ref=_ref,
            dtypes=_dtypes,
            sample_inputs=_samples,
            inplace=_ifn,
            result_dtype=_op_rdt(_name),
            ref_cast=_op_rdt(_name),
            torch=lambda torch, f=_fn: f,
        ),
        OpInfo(
            _name,
            variant="reflected",
            op=lambda x, s, f=_fn: f(s, x),
            ref=lambda x, s, r=_ref: r(s, x),
            dtypes=_dtypes,
            sample_inputs=_reflected_samples,
            result_dtype=_op_rdt(_name),
            ref_cast=_op_rdt(_name),
            torch=lambda torch, f=_fn: lambda x, s: f(s, x),
        ),
    )
