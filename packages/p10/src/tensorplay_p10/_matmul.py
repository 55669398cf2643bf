"""``tp.einsum`` and ``tp.tensordot``: products whose Python calling conventions differ from their ops.

Where it sits: re-exported by ``tensorplay_p10/__init__.py``. The work happens in the ops ``einsum(str
equation, Tensor[] tensors, *, int[]? path=None)`` and ``tensordot(Tensor self, Tensor other, int[] dims_self,
int[] dims_other)`` (``csrc/kernels/einsum.cpp``, ``csrc/kernels/matmul.cpp``); these wrappers only accept
PyTorch's Python forms: operands as varargs or one list, and ``dims`` as an int, a pair of lists or a tensor.

Example:
    >>> import tensorplay_p10 as tp
    >>> a, b = tp.ones(2, 3), tp.ones(3, 4)
    >>> tp.einsum("ij,jk->ik", a, b).shape
    tensorplay.Size([2, 4])
    >>> tp.tensordot(a, b, dims=([1], [0])).shape
    tensorplay.Size([2, 4])
"""

from __future__ import annotations

from typing import Any

from . import ops
from ._tensor import Tensor


def einsum(equation: str, *operands: Any, path: list[int] | None = None) -> Tensor:
    """Sum of products over the labelled dims of ``operands`` (PyTorch's ``torch.einsum``).

    Operands may be given one by one or as a single list. The pairwise contraction order is greedy (cheapest
    pair first, Note [einsum contraction order] in einsum.cpp) unless ``path`` lists the pairs to contract.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return ops.call("einsum", equation, list(operands), path=path)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contract ``dims`` of ``a`` with ``dims`` of ``b`` (PyTorch's ``torch.tensordot``).

    ``dims`` is an int (the last ``dims`` dims of ``a`` with the first of ``b``), a pair of lists of dims, or
    a tensor holding either.
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = dims
        if isinstance(dims_a, int):
            dims_a = [dims_a]
        if isinstance(dims_b, int):
            dims_b = [dims_b]
    kwargs = {} if out is None else {"out": out}
    return ops.call("tensordot", a, b, list(dims_a), list(dims_b), **kwargs)
