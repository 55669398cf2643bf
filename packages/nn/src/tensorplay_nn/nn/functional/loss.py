"""Likelihood and regression losses of ``tensorplay.nn.functional``: cross entropy, NLL, MSE, L1, smooth L1,
Huber, binary cross entropy (with and without logits), KL divergence, Poisson and Gaussian NLL.

Where it sits: each function checks its arguments as ``torch.nn.functional`` does and calls one P10 op (the
kernels live in ``packages/p10/csrc/kernels/loss*.cpp``, their derivatives in TPX), or, for the losses P10
has no kernel for (Poisson and Gaussian NLL, weighted MSE/L1/Huber), composes public tensor ops so autograd
differentiates them. The margin and embedding losses are in ``loss_margin.py``.

``reduction`` is ``'none'`` (per-element losses), ``'mean'`` or ``'sum'``; the deprecated ``size_average``
and ``reduce`` flags are accepted with PyTorch's warning (``_reduction.legacy``).
"""

from __future__ import annotations

import math
import warnings

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from . import _reduction

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "gaussian_nll_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
]


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    # PyTorch warns rather than raises: broadcasting is allowed, but usually a bug (e.g. [N] vs [N, 1]).
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted(errors: Tensor, input: Tensor, weight: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:
    """Elementwise ``errors * weight``, reduced; PyTorch's 'mean' divides by ``weight.sum()`` for MSE/L1
    and by the element count for Huber (``mean_by_weight`` picks)."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    return weighted.sum() / weight.sum() if mean_by_weight else weighted.mean()


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    r"""Cross entropy between the logits ``input`` ``[N, C, *]`` (or ``[C]``) and ``target``.

    With class indices ``y``: :math:`\ell_n = -w_{y_n} \log \mathrm{softmax}(x_n)_{y_n}`, and 'mean'
    divides by :math:`\sum_n w_{y_n}` over the targets that are not ``ignore_index``. With class
    probabilities (``target`` shaped like ``input``):
    :math:`\ell_n = -\sum_c w_c\, p_{n,c} \log \mathrm{softmax}(x_n)_c`.
    ``label_smoothing`` :math:`\varepsilon` mixes the target with the uniform distribution:
    :math:`(1-\varepsilon)\,p + \varepsilon / C`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.cross_entropy(tp.tensor([[2.0, 0.0, 0.0]]), tp.tensor([0]))
        tensor(0.2395)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    return tp.cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Negative log likelihood of the log-probabilities ``input`` ``[N, C, *]`` at the classes ``target``.

    :math:`\ell_n = -w_{y_n} x_{n, y_n}`; targets equal to ``ignore_index`` contribute nothing, and 'mean'
    divides by :math:`\sum_n w_{y_n}` over the others.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.nll_loss(tp.tensor([[-0.5, -1.0], [-2.0, -0.1]]), tp.tensor([0, 1]))
        tensor(0.3000)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    return tp.nll_loss(input, target, weight, reduction, ignore_index)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    r"""Mean squared error :math:`\ell = (x - y)^2`, optionally times ``weight`` (then 'mean' is
    :math:`\sum w (x-y)^2 / \sum w`).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.mse_loss(tp.tensor([1.0, 2.0]), tp.tensor([0.0, 0.0]))
        tensor(2.5000)
    """
    _warn_size_mismatch(input, target)
    reduction = _reduction.legacy(size_average, reduce, reduction)
    input_b, target_b = tp.broadcast_tensors([input, target])
    if weight is not None:
        return _weighted((input_b - target_b) ** 2, input, weight, reduction, mean_by_weight=True)
    _reduction.check(reduction)
    return tp.mse_loss(input_b, target_b, reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    r"""Mean absolute error :math:`\ell = |x - y|`, optionally times ``weight`` (then 'mean' is
    :math:`\sum w |x-y| / \sum w`).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.l1_loss(tp.tensor([1.0, -2.0]), tp.tensor([0.0, 0.0]))
        tensor(1.5000)
    """
    _warn_size_mismatch(input, target)
    reduction = _reduction.legacy(size_average, reduce, reduction)
    input_b, target_b = tp.broadcast_tensors([input, target])
    if weight is not None:
        return _weighted((input_b - target_b).abs(), input, weight, reduction, mean_by_weight=True)
    _reduction.check(reduction)
    return tp.l1_loss(input_b, target_b, reduction)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    r"""Smooth L1: :math:`\ell = 0.5 (x-y)^2 / \beta` where :math:`|x-y| < \beta`, else
    :math:`|x-y| - 0.5 \beta`; ``beta=0`` is the L1 loss.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.smooth_l1_loss(tp.tensor([0.5, 3.0]), tp.tensor([0.0, 0.0]), reduction="none")
        tensor([0.1250, 2.5000])
    """
    _warn_size_mismatch(input, target)
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    input_b, target_b = tp.broadcast_tensors([input, target])
    if beta == 0.0:  # the formula divides by beta; PyTorch routes this case to l1_loss
        return tp.l1_loss(input_b, target_b, reduction)
    return tp.smooth_l1_loss(input_b, target_b, reduction, beta)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    r"""Huber loss: :math:`\ell = 0.5 (x-y)^2` where :math:`|x-y| < \delta`, else
    :math:`\delta (|x-y| - 0.5 \delta)`; optionally times ``weight`` (then 'mean' is the plain mean).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.huber_loss(tp.tensor([0.5, 3.0]), tp.tensor([0.0, 0.0]), reduction="none")
        tensor([0.1250, 2.5000])
    """
    _warn_size_mismatch(input, target)
    input_b, target_b = tp.broadcast_tensors([input, target])
    if weight is not None:
        errors = tp.huber_loss(input_b, target_b, "none", delta)
        return _weighted(errors, input, weight, reduction, mean_by_weight=False)
    _reduction.check(reduction)
    return tp.huber_loss(input_b, target_b, reduction, delta)


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Binary cross entropy of probabilities: :math:`\ell = -w\,[y \log x + (1-y) \log(1-x)]`, each log
    clamped at -100 as in PyTorch.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.binary_cross_entropy(tp.tensor([0.8, 0.4]), tp.tensor([1.0, 0.0]))
        tensor(0.3670)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(tp.broadcast_shapes(target.shape, weight.shape))
    return tp.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    r"""Binary cross entropy of logits, computed stably:
    :math:`\ell = -w\,[p_c\, y \log \sigma(x) + (1-y) \log(1-\sigma(x))]`, with ``pos_weight`` :math:`p_c`
    broadcast along the last (class) dim.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.binary_cross_entropy_with_logits(tp.tensor([0.0]), tp.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return tp.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    r"""Kullback-Leibler divergence with ``input`` as log-probabilities:
    :math:`\ell = y (\log y - x)` (or :math:`e^{y} (y - x)` with ``log_target``). ``reduction='batchmean'``
    divides the sum by the batch size, which is the mathematical KL divergence; 'mean' divides by the
    element count and warns, as PyTorch does.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> p = tp.tensor([[0.5, 0.5]])
        >>> F.kl_div(tp.tensor([[0.25, 0.75]]).log(), p, reduction="batchmean")
        tensor(0.1438)
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    op_reduction = "sum" if reduction == "batchmean" else _reduction.check(reduction)
    reduced = tp.kl_div(input, target, op_reduction, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    r"""Poisson negative log likelihood: :math:`\ell = e^{x} - y x` (``log_input=True``) or
    :math:`\ell = x - y \log(x + \mathrm{eps})`. ``full`` adds Stirling's term
    :math:`y \log y - y + \tfrac12 \log(2\pi y)` where :math:`y > 1`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.poisson_nll_loss(tp.tensor([0.0, 1.0]), tp.tensor([1.0, 2.0]), reduction="none")
        tensor([1.0000, 0.7183])
    """
    reduction = _reduction.legacy(size_average, reduce, reduction)
    _reduction.check(reduction)
    if log_input:
        loss = tp.exp(input) - target * input
    else:
        loss = input - target * tp.log(input + eps)
    if full:
        # Stirling's approximation of log(y!); zero where y <= 1 (where it is not a good approximation).
        stirling = target * tp.log(target) - target + 0.5 * tp.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduction.apply(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    r"""Gaussian negative log likelihood with predicted mean ``input`` and variance ``var``:
    :math:`\ell = \tfrac12 (\log \max(v, \mathrm{eps}) + (x - y)^2 / \max(v, \mathrm{eps}))`, plus
    :math:`\tfrac12 \log 2\pi` with ``full``. ``var`` is shaped like ``input``, or has one dim fewer, or
    size 1 in one dim (one variance shared along it), or is a float.

    The clamp at ``eps`` is applied without autograd, as in PyTorch: the gradient reaches ``var`` as if it
    had not been clamped.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.gaussian_nll_loss(tp.tensor([1.0]), tp.tensor([3.0]), tp.tensor([1.0]))
        tensor(2.)
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * tp.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)  # one variance per row of the last dim
        elif (
            input.dim() == var.dim()
            and sum(v for i, v in zip(input.shape, var.shape, strict=True) if i != v) == 1
        ):
            pass  # one dim of size 1: the variance is shared along it by broadcasting
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (tp.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduction.apply(loss, reduction)
