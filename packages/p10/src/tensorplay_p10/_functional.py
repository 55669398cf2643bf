"""Functional forms of tensor methods (``tp.add``, ``tp.reshape`` …), each a call of one dispatcher op.

Where it sits: re-exported by ``tensorplay_p10/__init__.py``. Kept apart from ``__init__`` so that the dtype
names ``bool``/``int``/``float`` exported there do not shadow the builtins here.
"""

from __future__ import annotations

from typing import Any

from . import _C, ops
from ._dtype import dtype
from ._tensor import Tensor


def result_type(tensor1: object, tensor2: object) -> dtype:
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` (tensors or Python numbers) would produce."""
    return _C._result_type(tensor1, tensor2)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Any = None,
) -> Any:
    """Distinct values of ``input`` (see ``Tensor.unique``)."""
    return input.unique(sorted, return_inverse, return_counts, dim)


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    """Runs of equal neighbours merged (see ``Tensor.unique_consecutive``)."""
    return input.unique_consecutive(return_inverse, return_counts, dim)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Coordinates of the nonzero elements (see ``Tensor.nonzero``)."""
    return input.nonzero(as_tuple=as_tuple)


def where(condition: Tensor, input: Any = None, other: Any = None, *, out: Tensor | None = None) -> Any:
    """``input`` where ``condition`` holds, else ``other``, broadcast together. With ``condition`` alone,
    ``nonzero(condition, as_tuple=True)``: one index tensor per dim, as in PyTorch."""
    if input is None and other is None:
        if out is not None:
            raise TypeError("where(condition) takes no out= argument")
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() expects either only condition, or condition, input and other")
    where_op = ops._function("where")
    return where_op(condition, input, other) if out is None else where_op(condition, input, other, out=out)


def is_tensor(obj: object) -> bool:
    """True for tensorplay tensors (and subclasses)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def add(input: Tensor, other: object, *, alpha: object = 1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion."""
    return (
        ops.call("add", input, other, alpha=alpha)
        if out is None
        else ops.call("add.out", input, other, alpha=alpha, out=out)
    )


def sub(input: Tensor, other: object, *, alpha: object = 1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``."""
    return (
        ops.call("sub", input, other, alpha=alpha)
        if out is None
        else ops.call("sub.out", input, other, alpha=alpha, out=out)
    )


def mul(input: Tensor, other: object, *, out: Tensor | None = None) -> Tensor:
    """``input * other``."""
    return ops.call("mul", input, other) if out is None else ops.call("mul.out", input, other, out=out)


def div(
    input: Tensor, other: object, *, rounding_mode: str | None = None, out: Tensor | None = None
) -> Tensor:
    """``input / other`` (true division), or rounded with ``rounding_mode="trunc"|"floor"``."""
    if out is None:
        return ops.call("div", input, other, rounding_mode=rounding_mode)
    return ops.call("div.out", input, other, rounding_mode=rounding_mode, out=out)


true_divide = div


def reshape(input: Tensor, shape: object) -> Tensor:
    return input.reshape(shape)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return input.transpose(dim0, dim1)


def permute(input: Tensor, dims: object) -> Tensor:
    return input.permute(dims)


def squeeze(input: Tensor, dim: object = None) -> Tensor:
    return input.squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return input.unsqueeze(dim)


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    return input.narrow(dim, start, length)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    return input.select(dim, index)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return input.diagonal(offset, dim1, dim2)


def as_strided(input: Tensor, size: object, stride: object, storage_offset: int | None = None) -> Tensor:
    return input.as_strided(size, stride, storage_offset)


def t(input: Tensor) -> Tensor:
    return input.t()


def clone(input: Tensor) -> Tensor:
    return input.clone()


def detach(input: Tensor) -> Tensor:
    return input.detach()
