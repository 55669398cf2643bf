"""dtypes: the twelve ``tensorplay.<dtype>`` objects, promotion helpers, ``finfo`` and ``iinfo``.

Where it sits: the C++ core names dtypes by code (``ScalarType`` in ``csrc/core/scalar_type.h``); this module
gives each code its Python object and registers the objects with ``_C`` so tensors hand them back directly.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.promote_types(tp.int32, tp.float16)
    tensorplay.float16
    >>> tp.finfo(tp.float32).eps
    1.1920928955078125e-07
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _C


class dtype:
    """A tensor element type, e.g. ``tensorplay.float32``. Compare with ``is`` or ``==``."""

    __slots__ = ("_code", "_name", "itemsize", "is_floating_point", "is_complex", "is_signed")

    def __init__(self, code: int, name: str, itemsize: int, kind: str) -> None:
        self._code = code
        self._name = name
        self.itemsize = itemsize
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = name not in ("bool", "uint8")

    def __repr__(self) -> str:
        return f"tensorplay.{self._name}"

    def __reduce__(self) -> str:  # pickles by name, like torch dtypes
        return self._name

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        return complex128 if self in (float64, complex128) else complex64


_SPECS = [
    ("bool", 1, "b"),
    ("uint8", 1, "u"),
    ("int8", 1, "i"),
    ("int16", 2, "i"),
    ("int32", 4, "i"),
    ("int64", 8, "i"),
    ("float16", 2, "f"),
    ("bfloat16", 2, "f"),
    ("float32", 4, "f"),
    ("float64", 8, "f"),
    ("complex64", 8, "c"),
    ("complex128", 16, "c"),
]
_ALL = [dtype(i, n, s, k) for i, (n, s, k) in enumerate(_SPECS)]
(bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128) = _ALL
# PyTorch's aliases
half, float, double, short, int, long = float16, float32, float64, int16, int32, int64
cfloat, cdouble, chalf = complex64, complex128, None
_C._register_dtypes(_ALL)

_NUMPY = {
    bool: np.bool_,
    uint8: np.uint8,
    int8: np.int8,
    int16: np.int16,
    int32: np.int32,
    int64: np.int64,
    float16: np.float16,
    float32: np.float32,
    float64: np.float64,
    complex64: np.complex64,
    complex128: np.complex128,
}
_FROM_NUMPY = {np.dtype(v): k for k, v in _NUMPY.items()}


_PYTORCH_NAMES = {"bfloat16": "BFloat16"}


def to_numpy_dtype(dt: dtype) -> Any:
    """The NumPy dtype of a tensorplay dtype (bfloat16 has none: TypeError)."""
    if dt not in _NUMPY:
        raise TypeError(
            f"Got unsupported ScalarType {_PYTORCH_NAMES.get(dt._name, dt._name)}: NumPy has no such dtype"
        )
    return _NUMPY[dt]


def from_numpy_dtype(npdt: Any) -> dtype:
    """The tensorplay dtype of a NumPy dtype; TypeError naming it when there is none."""
    npdt = np.dtype(npdt)
    if npdt not in _FROM_NUMPY:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{npdt}. The only supported types are: float64, float32, "
            "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        )
    return _FROM_NUMPY[npdt]


def _check(dt: Any, arg: str) -> dtype:
    if not isinstance(dt, dtype):
        raise TypeError(f"{arg} must be a tensorplay dtype, got {type(dt).__name__}")
    return dt


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be cast to (PyTorch's promotion lattice)."""
    return _ALL[_C._promote_types(_check(type1, "type1")._code, _check(type2, "type2")._code)]


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """Whether casting keeps the category (bool < int < float < complex) from going down."""
    return _C._can_cast(_check(from_, "from_")._code, _check(to, "to")._code)


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    return _ALL[_C._get_default_dtype()]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only floating dtypes are accepted (TypeError otherwise)."""
    _C._set_default_dtype(_check(d, "d")._code)


class finfo:
    """Machine limits of a floating dtype: ``bits, eps, max, min, tiny, smallest_normal, resolution``."""

    def __init__(self, type: dtype | None = None) -> None:
        dt = get_default_dtype() if type is None else _check(type, "type")
        if not (dt.is_floating_point or dt.is_complex):
            raise TypeError(f"finfo: expected a floating point or complex dtype, got {dt}")
        dt = dt.to_real()
        if dt is bfloat16:  # NumPy has no bfloat16: its constants, from its 8-bit mantissa
            self.bits, self.eps, self.max = 16, 0.0078125, 3.3895313892515355e38
            self.tiny = self.smallest_normal = 1.1754943508222875e-38
            self.resolution = 0.01
        else:
            info = np.finfo(_NUMPY[dt])
            self.bits, self.eps, self.max = info.bits, builtins.float(info.eps), builtins.float(info.max)
            self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
            self.resolution = builtins.float(info.resolution)
        self.min = -self.max
        self.dtype = dt._name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype: ``bits, min, max``."""

    def __init__(self, type: dtype) -> None:
        dt = _check(type, "type")
        if dt.is_floating_point or dt.is_complex:
            raise TypeError(f"iinfo: expected an integer dtype, got {dt}")
        info = np.iinfo(np.uint8 if dt is bool else _NUMPY[dt])
        self.bits = 8 if dt is bool else info.bits
        self.min, self.max = (0, 1) if dt is bool else (builtins.int(info.min), builtins.int(info.max))
        self.dtype = dt._name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
