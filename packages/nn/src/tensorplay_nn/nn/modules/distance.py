"""``PairwiseDistance`` and ``CosineSimilarity`` as modules.

Where it sits: parameter-free modules over ``F.pairwise_distance`` / ``F.cosine_similarity``
(``nn/functional/distance.py``). ``PairwiseDistance`` keeps ``p`` as ``self.norm``, as PyTorch does.
"""

from __future__ import annotations

from tensorplay_p10 import Tensor

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    r"""Row-wise p-norm distance :math:`\lVert x_1 - x_2 + \epsilon \rVert_p` over the last dim.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.PairwiseDistance(eps=0.0)(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]))
        tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    r"""Cosine of the angle between ``x1`` and ``x2`` along ``dim``, norms clamped at ``eps``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CosineSimilarity()(tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 2.0]]))
        tensor([0.])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
