"""`Adamax`: Adam with the infinity norm in place of the second moment (Kingma & Ba, 2014, section 7).

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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax, step for step PyTorch's `torch.optim.Adamax`.

    .. math::
        m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \qquad u_t = \max(\beta_2 u_{t-1}, |g_t| + \epsilon), \qquad
        \theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\frac{m_t}{u_t}

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 2e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: L2 penalty added to the gradient (default 0).
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.Adamax([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize
        )
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adamax update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = _scalar(group["lr"]), group["betas"], group["eps"]
            for p in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["exp_avg"] = tp.zeros_like(p)
                    state["exp_inf"] = tp.zeros_like(p)
                grad = -p.grad if group["maximize"] else p.grad
                state["step"].add_(1)
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_inf.copy_(tp.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                clr = lr / (1 - beta1 ** state["step"].item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
