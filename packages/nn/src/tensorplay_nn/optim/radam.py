"""`RAdam`: Adam with a rectified adaptive learning rate (Liu et al., 2019).

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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam, step for step PyTorch's `torch.optim.RAdam`.

    .. math::
        \rho_\infty = \frac{2}{1-\beta_2} - 1, \qquad
        \rho_t = \rho_\infty - \frac{2t\beta_2^t}{1-\beta_2^t}, \qquad \hat m_t = \frac{m_t}{1-\beta_1^t}

    If :math:`\rho_t > 5`: :math:`\theta_t = \theta_{t-1} - \gamma\,\hat m_t\,\frac{\sqrt{1-\beta_2^t}}
    {\sqrt{v_t}+\epsilon}\, r_t` with :math:`r_t = \sqrt{\frac{(\rho_t-4)(\rho_t-2)\rho_\infty}
    {(\rho_\infty-4)(\rho_\infty-2)\rho_t}}`; otherwise :math:`\theta_t = \theta_{t-1} - \gamma\hat m_t`.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        decoupled_weight_decay: shrink the weights by :math:`1-\gamma\lambda` (RAdamW) instead of adding
            :math:`\lambda\theta` to the gradient.
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.RAdam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.8, -1.6]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RAdam update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps, weight_decay = (
                _scalar(group["lr"]),
                group["betas"],
                group["eps"],
                group["weight_decay"],
            )
            for p in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["exp_avg"] = tp.zeros_like(p)
                    state["exp_avg_sq"] = tp.zeros_like(p)
                grad = -p.grad if group["maximize"] else p.grad
                state["step"].add_(1)
                step = state["step"].item()
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                bias_corrected_exp_avg = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = (
                        (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    ) ** 0.5
                    adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                    p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
