"""The operators and arithmetic methods of ``tensorplay.Tensor`` (``+``, ``==``, ``&``, ``x.add(...)``, ...).

Where it sits: a base class of ``Tensor`` (``_tensor.py``), kept in its own file because it is one concept:
how Python's operator protocol maps onto ops. Each method is one call of an op packet; a comparison with an
operand no overload takes returns NotImplemented, so Python tries the reflected operator (``_compare``).

Example:
    >>> import tensorplay_p10 as tp
    >>> x = tp.tensor([1, 2, 3])
    >>> (x + 1) * 2, x == 2, ~(x > 1)
    (tensor([4, 6, 8]), tensor([False,  True, False]), tensor([ True, False, False]))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _C

if TYPE_CHECKING:
    from ._tensor import Tensor

_op = _C._op
_add, _sub, _mul, _div = _op("add"), _op("sub"), _op("mul"), _op("div")
_add_, _sub_, _mul_, _div_ = _op("add_"), _op("sub_"), _op("mul_"), _op("div_")


def _compare(name: str, self: Any, other: Any) -> Any:
    """``self <op> other``, or NotImplemented when no overload takes ``other`` (Python then reflects)."""
    try:
        return _op(name)(self, other)
    except TypeError as e:
        if "invalid combination of arguments" in str(e):
            return NotImplemented
        raise


class TensorOperators:
    """Python's operators and the arithmetic methods, for ``Tensor``."""

    __slots__ = ()

    def __add__(self, other: Any) -> Tensor:
        return _add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _add(self, other)

    def __iadd__(self, other: Any) -> Tensor:
        return _add_(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _sub(_C._wrapped_number(other), self)

    def __isub__(self, other: Any) -> Tensor:
        return _sub_(self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _mul(self, other)

    def __imul__(self, other: Any) -> Tensor:
        return _mul_(self, other)

    def __matmul__(self, other: Any) -> Tensor:
        return _op("matmul")(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _op("matmul")(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _div(_C._wrapped_number(other), self)

    def __itruediv__(self, other: Any) -> Tensor:
        return _div_(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _op("floor_divide")(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _op("floor_divide")(_C._wrapped_number(other), self)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return _op("floor_divide_")(self, other)

    def __mod__(self, other: Any) -> Tensor:
        return _op("remainder")(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _op("remainder")(other, self)  # remainder.Scalar_Tensor

    def __imod__(self, other: Any) -> Tensor:
        return _op("remainder_")(self, other)

    def __pow__(self, exponent: Any) -> Tensor:
        return _op("pow")(self, exponent)

    def __rpow__(self, other: Any) -> Tensor:
        return _op("pow")(other, self)  # pow.Scalar: the number is the base

    def __ipow__(self, exponent: Any) -> Tensor:
        return _op("pow_")(self, exponent)

    # Comparisons answer NotImplemented for operands no overload takes, so `t == None` is False, like PyTorch.
    def __eq__(self, other: Any) -> Any:
        return _compare("eq", self, other)

    def __ne__(self, other: Any) -> Any:
        return _compare("ne", self, other)

    def __lt__(self, other: Any) -> Any:
        return _compare("lt", self, other)

    def __le__(self, other: Any) -> Any:
        return _compare("le", self, other)

    def __gt__(self, other: Any) -> Any:
        return _compare("gt", self, other)

    def __ge__(self, other: Any) -> Any:
        return _compare("ge", self, other)

    # Defining __eq__ would make Python drop __hash__: tensors stay hashable by identity, as in PyTorch.
    def __hash__(self) -> int:
        return id(self)

    def __and__(self, other: Any) -> Tensor:
        return _op("bitwise_and")(self, other)

    __rand__ = __and__

    def __iand__(self, other: Any) -> Tensor:
        return _op("bitwise_and_")(self, other)

    def __or__(self, other: Any) -> Tensor:
        return _op("bitwise_or")(self, other)

    __ror__ = __or__

    def __ior__(self, other: Any) -> Tensor:
        return _op("bitwise_or_")(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return _op("bitwise_xor")(self, other)

    __rxor__ = __xor__

    def __ixor__(self, other: Any) -> Tensor:
        return _op("bitwise_xor_")(self, other)

    def __invert__(self) -> Tensor:
        # PyTorch refuses `~` on other dtypes in Python with a TypeError (bitwise_not: NotImplementedError).
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _op("bitwise_not")(self)

    def __lshift__(self, other: Any) -> Tensor:
        return _op("bitwise_left_shift")(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return _op("bitwise_left_shift")(other, self)  # bitwise_left_shift.Scalar_Tensor

    def __ilshift__(self, other: Any) -> Tensor:
        return _op("bitwise_left_shift_")(self, other)

    def __rshift__(self, other: Any) -> Tensor:
        return _op("bitwise_right_shift")(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return _op("bitwise_right_shift")(other, self)

    def __irshift__(self, other: Any) -> Tensor:
        return _op("bitwise_right_shift_")(self, other)

    # Ops with an overload whose first argument is a number (`pow.Scalar`) are not automatic methods (Note
    # [Ops as functions and methods] wants `Tensor self` first in every overload), so they are spelled out.
    def pow(self, exponent: Any) -> Tensor:
        return _op("pow")(self, exponent)

    def float_power(self, exponent: Any) -> Tensor:
        return _op("float_power")(self, exponent)

    def remainder(self, other: Any) -> Tensor:
        return _op("remainder")(self, other)

    def xlogy(self, other: Any) -> Tensor:
        return _op("xlogy")(self, other)

    def bitwise_left_shift(self, other: Any) -> Tensor:
        return _op("bitwise_left_shift")(self, other)

    def bitwise_right_shift(self, other: Any) -> Tensor:
        return _op("bitwise_right_shift")(self, other)

    def __neg__(self) -> Tensor:
        return _op("neg")(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _op("abs")(self)

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _add(self, other, alpha=alpha)

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _add_(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _sub(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _sub_(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        return _mul(self, other)

    def mul_(self, other: Any) -> Tensor:
        return _mul_(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _div(self, other, rounding_mode=rounding_mode)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _div_(self, other, rounding_mode=rounding_mode)
