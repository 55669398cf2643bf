"""`Adagrad`: per-coordinate learning rates from the running sum of squared gradients (Duchi et al., 2011).

Where it sits: one algorithm of `tensorplay.optim` (base class in optimizer.py). Like PyTorch, it creates its
state when constructed, so a fresh optimizer's `state_dict()` already lists every parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from .optimizer import Optimizer, ParamsT, _check_hparams, _check_lr, _new_step, _params_with_grad, _scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad, step for step PyTorch's `torch.optim.Adagrad`.

    .. math::
        \tilde\gamma_t = \frac{\gamma}{1 + (t-1)\eta}, \qquad s_t = s_{t-1} + g_t^2, \qquad
        \theta_t = \theta_{t-1} - \tilde\gamma_t \frac{g_t}{\sqrt{s_t} + \epsilon}

    with :math:`g_t` plus :math:`\lambda\theta_{t-1}` when `weight_decay` is set, and :math:`s_0` =
    `initial_accumulator_value`.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-2).
        lr_decay: :math:`\eta` (default 0).
        weight_decay: L2 penalty :math:`\lambda` (default 0).
        initial_accumulator_value: starting value of :math:`s` (default 0).
        eps: :math:`\epsilon` (default 1e-10).
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.Adagrad([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 3) for v in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _new_step()
                state["sum"] = tp.full_like(p, group["initial_accumulator_value"])

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adagrad update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, eps, weight_decay = (
                _scalar(group["lr"]),
                group["lr_decay"],
                group["eps"],
                group["weight_decay"],
            )
            for p in _params_with_grad(group):
                state = self.state[p]
                state["step"].add_(1)
                step = state["step"].item()
                grad = -p.grad if group["maximize"] else p.grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state["sum"].addcmul_(grad, grad, value=1)
                std = state["sum"].sqrt().add_(eps)
                p.addcdiv_(grad, std, value=-clr)
        return loss
