"""Schedulers made of schedulers: `SequentialLR` (one after another) and `ChainedScheduler` (all at once).

Where it sits: part of `tensorplay.optim.lr_scheduler` (re-exported there). Their state_dict holds each
child's state_dict, as PyTorch's does.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ._lr_plateau import ReduceLROnPlateau
from .lr_scheduler import LRScheduler, _param_groups_val_list, _update_param_group_val
from .optimizer import Optimizer

__all__ = ["ChainedScheduler", "SequentialLR"]


def _check_schedulers(owner: str, optimizer: Optimizer, schedulers: Sequence[LRScheduler]) -> None:
    for idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {idx} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to "
                f"be specified when calling `step`, but got one at index {idx} in the given schedulers "
                "sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{scheduler.__class__.__name__} at index {idx} has {scheduler.optimizer}, which is "
                f"different from {optimizer.__class__.__name__}."
            )


class _Composite:
    """state_dict of a scheduler made of schedulers: its own attributes plus each child's state_dict."""

    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for idx, s in enumerate(schedulers):
            self._schedulers[idx].load_state_dict(s)


class SequentialLR(_Composite, LRScheduler):
    """Run `schedulers[i]` from `milestones[i-1]` on (each restarting at its own epoch 0).

    Example:
        >>> import tensorplay as tp
        >>> opt = tp.optim.SGD([tp.zeros(1, requires_grad=True)], lr=0.1)
        >>> warm = tp.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> decay = tp.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        >>> sched = tp.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[5])
    """

    def __init__(
        self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int], last_epoch: int = -1
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{self.__class__.__name__} expects at least one scheduler, but got no scheduler."
            )
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number "
                f"of milestone points, but got number of schedulers {len(schedulers)} and the number of "
                f"milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo the steps the children took when they were built, then start the first one afresh.
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Step every (nested) child back one epoch."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch, switching scheduler at each milestone."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite, LRScheduler):
    """Step several chainable schedulers together, each applying its factor to the current lr.

    Example:
        >>> import tensorplay as tp
        >>> opt = tp.optim.SGD([tp.zeros(1, requires_grad=True)], lr=1.0)
        >>> a = tp.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
        >>> b = tp.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        >>> sched = tp.optim.lr_scheduler.ChainedScheduler([a, b])
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{self.__class__.__name__} expects at least one scheduler to be chained, but got no "
                "scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every chained scheduler once."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")
