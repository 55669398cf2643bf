"""How a loss turns its per-element values into its result: ``reduction='none' | 'mean' | 'sum'``.

Where it sits: a private helper of ``nn/functional/loss.py`` and ``loss_margin.py``, the counterpart of
``torch.nn._reduction``. It also maps PyTorch's deprecated ``size_average`` / ``reduce`` flags onto a
``reduction`` string, with PyTorch's warning, so old call sites keep working.
"""

from __future__ import annotations

import warnings

from tensorplay_p10 import Tensor

_VALID = ("none", "mean", "sum")


def check(reduction: str) -> str:
    """``reduction`` itself, or PyTorch's ``ValueError`` when it is not one of 'none', 'mean', 'sum'."""
    if reduction not in _VALID:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def legacy(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction the deprecated ``size_average`` / ``reduce`` flags ask for (``reduction`` when unset).

    As in PyTorch: an unset flag counts as ``True``; ``reduce=False`` wins ('none'), then
    ``size_average=False`` ('sum'), else 'mean'.
    """
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.",
        stacklevel=3,
    )
    return result


def apply(loss: Tensor, reduction: str) -> Tensor:
    """``loss`` reduced: unchanged for 'none', its mean for 'mean', its sum for 'sum'."""
    check(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
