"""`Adadelta`: an adaptive learning-rate method with no base learning rate to tune (Zeiler, 2012).

Where it sits: one algorithm of `tensorplay.optim` (base class in optimizer.py), written in plain tensor
ops under no_grad.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from .optimizer import Optimizer, ParamsT, _check_hparams, _check_lr, _new_step, _params_with_grad, _scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta, step for step PyTorch's `torch.optim.Adadelta`.

    .. math::
        v_t &= \rho v_{t-1} + (1-\rho) g_t^2, \qquad
        \Delta_t = \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}}\, g_t \\
        u_t &= \rho u_{t-1} + (1-\rho)\Delta_t^2, \qquad \theta_t = \theta_{t-1} - \gamma\Delta_t

    Args:
        params: parameters or parameter groups to optimize.
        lr: coefficient :math:`\gamma` that scales the delta (default 1.0).
        rho: decay :math:`\rho` of the running averages (default 0.9).
        eps: :math:`\epsilon` for numerical stability (default 1e-6).
        weight_decay: L2 penalty added to the gradient (default 0).
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.Adadelta([w])
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.9968, -1.9968]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_hparams(eps=eps, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach
        )
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adadelta update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, rho, eps, weight_decay = (
                _scalar(group["lr"]),
                group["rho"],
                group["eps"],
                group["weight_decay"],
            )
            for p in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["square_avg"] = tp.zeros_like(p)
                    state["acc_delta"] = tp.zeros_like(p)
                state["step"].add_(1)
                grad = -p.grad if group["maximize"] else p.grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
