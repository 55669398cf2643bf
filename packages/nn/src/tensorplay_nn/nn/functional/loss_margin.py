"""Margin and embedding losses of ``tensorplay.nn.functional``: cosine embedding, margin ranking, hinge
embedding, soft margin, multilabel soft margin, multi-class and multilabel margin, triplet margin.

Where it sits: beside ``loss.py`` (the likelihood and regression losses). P10 has no kernels for these, so
each is a short composition of public tensor ops written to follow ATen's formula step by step (the comments
name where it departs); autograd differentiates the composition.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from . import _reduction
from .distance import pairwise_distance
from .loss import binary_cross_entropy_with_logits

__all__ = [
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Pull pairs together (``target = 1``) or push them apart (``target = -1``) by cosine similarity:
    :math:`\ell = 1 - \cos(x_1, x_2)` for :math:`y = 1`, :math:`\max(0, \cos(x_1, x_2) - \mathrm{margin})`
    for :math:`y = -1`. Inputs are ``[N, D]`` with ``target`` ``[N]``, or ``[D]`` with a 0-dim ``target``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.cosine_embedding_loss(tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.0]]), tp.tensor([1]))
        tensor(1.)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if target.dim() not in (0, 1):
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported, got {target.dim()}D"
        )
    want = 2 if target.dim() == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(
            f"{target.dim()}D target tensor expects {want}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    dim = input1.dim() - 1
    eps = 1e-12  # ATen's EPSILON: keeps zero vectors from dividing by zero
    prod_sum = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = tp.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    loss = tp.where(target == 1, pos, zeros) + tp.where(target == -1, neg, zeros)
    return _reduction.apply(loss, reduction)


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Rank ``input1`` above ``input2`` where ``target = 1`` (below where -1):
    :math:`\ell = \max(0, -y (x_1 - x_2) + \mathrm{margin})`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.margin_ranking_loss(tp.tensor([1.0, 1.0]), tp.tensor([2.0, 0.0]), tp.tensor([1.0, 1.0]))
        tensor(0.5000)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduction.apply(loss, reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Hinge embedding loss for distances ``input`` and labels :math:`y \in \{1, -1\}`:
    :math:`\ell = x` for :math:`y = 1`, :math:`\max(0, \mathrm{margin} - x)` for :math:`y = -1`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.hinge_embedding_loss(tp.tensor([0.3, 0.2]), tp.tensor([1.0, -1.0]), reduction="none")
        tensor([0.3000, 0.8000])
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    zeros = tp.zeros_like(input)
    # ATen's two masked terms: a target that is neither 1 nor -1 gets both (input + the margin term).
    margin_term = tp.where(target != 1, (margin - input).clamp(min=0), zeros)
    self_term = tp.where(target != -1, input, zeros)
    return _reduction.apply(margin_term + self_term, reduction)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Two-class logistic loss :math:`\ell = \log(1 + e^{-y x})` for :math:`y \in \{1, -1\}`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.soft_margin_loss(tp.tensor([0.0]), tp.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    return _reduction.apply(tp.log1p(tp.exp(-input * target)), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""One-vs-all logistic loss over ``C`` classes, averaged over the classes:
    :math:`\ell_n = -\frac1C \sum_c w_c [y_{nc} \log \sigma(x_{nc}) + (1 - y_{nc}) \log \sigma(-x_{nc})]`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.multilabel_soft_margin_loss(tp.tensor([[0.0, 0.0]]), tp.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    # The bracket is exactly the elementwise logits BCE, which P10 computes stably.
    loss = binary_cross_entropy_with_logits(input, target.to(input.dtype), reduction="none")
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduction.apply(loss, reduction)


def _check_class_targets(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, int]:
    """``input`` as ``[N, C]`` (a 0/1-dim input is one sample) and ``C``, after ATen's shape checks."""
    if (
        input.dim() > 2
        or (input.dim() == 2 and input.shape[1] == 0)
        or (input.dim() < 2 and input.numel() == 0)
    ):
        raise RuntimeError(
            f"{name}: Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    x = input.reshape(1, -1) if input.dim() < 2 else input
    return x, x.shape[1]


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Multi-class hinge loss for scores ``input`` ``[N, C]`` (or ``[C]``) and class indices ``target``:
    :math:`\ell_n = \frac1C \sum_{i \ne y_n} w_{y_n} \max(0, \mathrm{margin} - x_{n,y_n} + x_{n,i})^p`,
    ``p`` 1 or 2.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.multi_margin_loss(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([3]))
        tensor(0.3250)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x, n_classes = _check_class_targets("multi_margin_loss", input, target)
    if target.dim() > 1 or target.numel() != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}")
    if target.numel() > 0 and (bool((target < 0).any()) or bool((target >= n_classes).any())):
        raise RuntimeError(f"multi_margin_loss: target out of range (classes: {n_classes})")
    y = target.reshape(-1)
    x_y = x.gather(1, y.unsqueeze(1))
    z = (margin - x_y + x).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y].unsqueeze(1)
    # The i = y term is max(0, margin)^p, never part of the loss.
    z = z.masked_fill(tp.one_hot(y, n_classes).to(tp.bool), 0)
    loss = z.sum(1) / n_classes
    if reduction == "none":
        # ATen's shape: [N] for a batched target, 0-dim when input and target are one sample.
        return loss if target.dim() > 0 else loss.reshape(())
    return _reduction.apply(loss, reduction)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Multi-label hinge loss. ``target`` holds each sample's class indices, ended by the first -1:
    :math:`\ell_n = \frac1C \sum_{j \in Y_n} \sum_{i \notin Y_n} \max(0, 1 - (x_{n,j} - x_{n,i}))`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.multilabel_margin_loss(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    x, n_classes = _check_class_targets("multilabel_margin_loss", input, target)
    same = (
        target.dim() <= 1 and target.numel() == n_classes if input.dim() <= 1 else target.shape == input.shape
    )
    if not same:
        raise RuntimeError(
            f"multilabel_margin_loss: inconsistent target size: {list(target.shape)} for input of size: "
            f"{list(input.shape)}"
        )
    y = target.reshape(x.shape).to(tp.int64)
    if y.numel() > 0 and (bool((y < -1).any()) or bool((y >= n_classes).any())):
        raise RuntimeError(f"multilabel_margin_loss: target out of range (classes: {n_classes})")
    valid = (y == -1).to(tp.int64).cumsum(1) == 0  # the indices before the first -1
    y_safe = y.clamp(min=0)
    is_target = (tp.one_hot(y_safe, n_classes) * valid.unsqueeze(-1).to(tp.int64)).sum(1) > 0  # [N, C]
    x_j = x.gather(1, y_safe)  # [N, T]: the score of each listed target
    z = (1 - x_j.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)  # [N, T, C]
    mask = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = z.masked_fill(~mask, 0).sum((1, 2)) / n_classes
    if reduction == "none":
        return loss if target.dim() == 2 else loss.reshape(())
    return _reduction.apply(loss, reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Triplet loss with the p-norm distance :math:`d(a, b) = \lVert a - b + \mathrm{eps} \rVert_p`:
    :math:`\ell = \max(0, d(a, p) - d(a, n) + \mathrm{margin})`; ``swap`` uses
    :math:`\min(d(a, n), d(p, n))` as the negative distance.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> a, p, n = tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]), tp.tensor([[1.0, 0.0]])
        >>> F.triplet_margin_loss(a, p, n, eps=0.0)
        tensor(5.)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = tp.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduction.apply((margin + d_pos - d_neg).clamp(min=0), reduction)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    r"""Triplet loss with any distance: :math:`\ell = \max(0, d(a, p) - d(a, n) + \mathrm{margin})`, ``d``
    defaulting to :func:`pairwise_distance`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> a, p, n = tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]), tp.tensor([[1.0, 0.0]])
        >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y: (x - y).abs().sum(-1))
        tensor(7.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = tp.minimum(d_neg, distance(positive, negative))
    return _reduction.apply((margin + d_pos - d_neg).clamp(min=0), reduction)
