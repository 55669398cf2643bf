"""Distances and similarities of ``tensorplay.nn.functional``: ``pairwise_distance``, ``cosine_similarity``,
``pdist``.

Where it sits: compositions of P10's ``norm`` / ``linalg_vector_norm`` and elementwise ops, written after
ATen's ``Distance.cpp`` so the values (including where ``eps`` enters) match PyTorch's; autograd
differentiates them. ``normalize`` lives in ``normalization.py``.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    r"""The p-norm distance between matching rows: :math:`\lVert x_1 - x_2 + \mathrm{eps} \rVert_p` over the
    last dim, broadcasting ``x1`` against ``x2``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.pairwise_distance(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]), eps=0.0)
        tensor([5.])
    """
    out_dim = max(x1.dim(), x2.dim())
    return tp.norm(x1 - x2 + eps, p, out_dim - 1, keepdim)  # dim -1 when both are scalars, as in ATen


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    r"""Cosine of the angle between ``x1`` and ``x2`` along ``dim``:
    :math:`\sum \frac{x_1}{\max(\lVert x_1 \rVert, \epsilon)}
    \cdot \frac{x_2}{\max(\lVert x_2 \rVert, \epsilon)}`.

    Each input is divided by its norm before the product, as PyTorch does, so the result stays in [-1, 1];
    the clamp at ``eps`` is applied outside autograd (the gradient is that of the unclamped norm).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.cosine_similarity(tp.tensor([[1.0, 0.0]]), tp.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    common = tp.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(
            f"cosine_similarity: expected common dtype to be floating point, yet common dtype is {common}"
        )
    x1, x2 = tp.broadcast_tensors([x1.to(common), x2.to(common)])
    n1 = tp.linalg.vector_norm(x1, 2, dim, True)
    n2 = tp.linalg.vector_norm(x2, 2, dim, True)
    # PyTorch clamps a clone in place under no_grad; adding the detached difference is the same value with the
    # same gradient, and keeps the graph free of in-place steps.
    n1 = n1 + (n1.clamp(min=eps) - n1).detach()
    n2 = n2 + (n2.clamp(min=eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    r"""The p-norm distance between every pair of rows of ``input`` ``[N, M]``: the upper triangle (row
    :math:`i < j`) of the distance matrix, flattened row by row to ``N (N - 1) / 2`` values.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.pdist(tp.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got: {input.dtype}")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got: {p}")
    n = input.shape[0]
    # The pairs (i, j), i < j, in row order: the upper triangle's indices.
    first = [i for i in range(n) for _ in range(i + 1, n)]
    second = [j for i in range(n) for j in range(i + 1, n)]
    index = tp.tensor([first, second], dtype=tp.int64).reshape(2, -1)
    diff = input.index_select(0, index[0]) - input.index_select(0, index[1])
    return tp.linalg.vector_norm(diff, p, -1)
