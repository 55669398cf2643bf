"""Loss modules: each holds its options (``reduction``, margins, class ``weight`` as a buffer) and calls the
matching ``nn.functional`` loss, where the maths is written out.

Where it sits: thin ``Module`` wrappers over ``nn/functional/loss.py`` and ``loss_margin.py``, with PyTorch's
constructor signatures (the deprecated ``size_average`` / ``reduce`` flags included) and its ``repr``
(no extra text: ``CrossEntropyLoss()``).
"""

from __future__ import annotations

from collections.abc import Callable

from tensorplay_p10 import Tensor

from .. import functional as F
from ..functional import _reduction
from .distance import PairwiseDistance
from .module import Module

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CosineEmbeddingLoss",
    "CrossEntropyLoss",
    "GaussianNLLLoss",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "NLLLoss",
    "PoissonNLLLoss",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]


class _Loss(Module):
    """A loss with a ``reduction``; the deprecated flags, when given, decide it (with PyTorch's warning)."""

    def __init__(
        self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.reduction = _reduction.legacy(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    """A loss with an optional per-class ``weight``, a buffer so that it follows ``.to()`` and state_dict."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    r"""Mean absolute error :math:`|x - y|` (see ``F.l1_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.L1Loss()(tp.tensor([1.0, -2.0]), tp.tensor([0.0, 0.0]))
        tensor(1.5000)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    r"""Mean squared error :math:`(x - y)^2` (see ``F.mse_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MSELoss()(tp.tensor([1.0, 2.0]), tp.tensor([0.0, 0.0]))
        tensor(2.5000)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    r"""Negative log likelihood :math:`-w_y x_y` of log-probabilities (see ``F.nll_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.NLLLoss()(tp.tensor([[-0.5, -1.0], [-2.0, -0.1]]), tp.tensor([0, 1]))
        tensor(0.3000)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(
            input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class CrossEntropyLoss(_WeightedLoss):
    r"""Cross entropy of logits against class indices or probabilities, with class weights,
    ``ignore_index`` and ``label_smoothing`` (see ``F.cross_entropy``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CrossEntropyLoss()(tp.tensor([[2.0, 0.0, 0.0]]), tp.tensor([0]))
        tensor(0.2395)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class PoissonNLLLoss(_Loss):
    r"""Poisson negative log likelihood :math:`e^x - y x` (see ``F.poisson_nll_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.PoissonNLLLoss(reduction="sum")(tp.tensor([0.0, 1.0]), tp.tensor([1.0, 2.0]))
        tensor(1.7183)
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    r"""Gaussian negative log likelihood :math:`\tfrac12(\log v + (x - y)^2 / v)` (see
    ``F.gaussian_nll_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.GaussianNLLLoss()(tp.tensor([1.0]), tp.tensor([3.0]), tp.tensor([1.0]))
        tensor(2.)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class KLDivLoss(_Loss):
    r"""Kullback-Leibler divergence :math:`y (\log y - x)` with ``input`` in log space (see ``F.kl_div``);
    ``reduction='batchmean'`` gives the mathematical KL divergence.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> loss = nn.KLDivLoss(reduction="batchmean")
        >>> loss(tp.tensor([[0.25, 0.75]]).log(), tp.tensor([[0.5, 0.5]]))
        tensor(0.1438)
    """

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class BCELoss(_WeightedLoss):
    r"""Binary cross entropy of probabilities :math:`-w[y \log x + (1-y) \log(1-x)]` (see
    ``F.binary_cross_entropy``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.BCELoss()(tp.tensor([0.8, 0.4]), tp.tensor([1.0, 0.0]))
        tensor(0.3670)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Binary cross entropy of logits, stable, with ``weight`` and ``pos_weight`` buffers (see
    ``F.binary_cross_entropy_with_logits``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.BCEWithLogitsLoss()(tp.tensor([0.0]), tp.tensor([1.0]))
        tensor(0.6931)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class SmoothL1Loss(_Loss):
    r"""Smooth L1: quadratic below ``beta``, linear above (see ``F.smooth_l1_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.SmoothL1Loss(reduction="none")(tp.tensor([0.5, 3.0]), tp.tensor([0.0, 0.0]))
        tensor([0.1250, 2.5000])
    """

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""Huber loss: quadratic below ``delta``, linear (slope ``delta``) above (see ``F.huber_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.HuberLoss(delta=2.0, reduction="none")(tp.tensor([1.0, 3.0]), tp.tensor([0.0, 0.0]))
        tensor([0.5000, 4.0000])
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    r"""Two-class logistic loss :math:`\log(1 + e^{-y x})` (see ``F.soft_margin_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.SoftMarginLoss()(tp.tensor([0.0]), tp.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    r"""One-vs-all logistic loss averaged over classes (see ``F.multilabel_soft_margin_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MultiLabelSoftMarginLoss()(tp.tensor([[0.0, 0.0]]), tp.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    r"""Multi-label hinge loss over the listed target classes (see ``F.multilabel_margin_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MultiLabelMarginLoss()(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    r"""Multi-class hinge loss :math:`\frac1C \sum_{i \ne y} \max(0, m - x_y + x_i)^p` (see
    ``F.multi_margin_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MultiMarginLoss()(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([3]))
        tensor(0.3250)
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(
            input, target, p=self.p, margin=self.margin, weight=self.weight, reduction=self.reduction
        )


class HingeEmbeddingLoss(_Loss):
    r"""Hinge embedding loss: :math:`x` for :math:`y = 1`, :math:`\max(0, m - x)` for :math:`y = -1` (see
    ``F.hinge_embedding_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.HingeEmbeddingLoss()(tp.tensor([0.3, 0.2]), tp.tensor([1.0, -1.0]))
        tensor(0.5500)
    """

    def __init__(
        self,
        margin: float = 1.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""Cosine embedding loss: :math:`1 - \cos` for similar pairs, :math:`\max(0, \cos - m)` for dissimilar
    ones (see ``F.cosine_embedding_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CosineEmbeddingLoss()(tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.0]]), tp.tensor([1]))
        tensor(1.)
    """

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    r"""Ranking hinge :math:`\max(0, -y (x_1 - x_2) + m)` (see ``F.margin_ranking_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MarginRankingLoss()(tp.tensor([1.0, 1.0]), tp.tensor([2.0, 0.0]), tp.tensor([1.0, 1.0]))
        tensor(0.5000)
    """

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    r"""Triplet loss :math:`\max(0, d(a, p) - d(a, n) + m)` with the p-norm distance (see
    ``F.triplet_margin_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> a, p, n = tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]), tp.tensor([[1.0, 0.0]])
        >>> nn.TripletMarginLoss(eps=0.0)(a, p, n)
        tensor(5.)
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Loss):
    r"""Triplet loss with any distance function, :class:`PairwiseDistance` by default (see
    ``F.triplet_margin_with_distance_loss``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> loss = nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: (x - y).abs().sum(-1))
        >>> loss(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]), tp.tensor([[1.0, 0.0]]))
        tensor(7.)
    """

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )
