"""`NAdam`: Adam with Nesterov momentum and a momentum-decay schedule (Dozat, 2016).

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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam, step for step PyTorch's `torch.optim.NAdam`.

    .. math::
        \mu_t &= \beta_1\,(1 - \tfrac12 \cdot 0.96^{t\psi}), \qquad m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t,
        \qquad v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2 \\
        \theta_t &= \theta_{t-1} - \gamma\,\frac{(1-\mu_t)\, g_t / (1-\prod_{i\le t}\mu_i)
                    + \mu_{t+1} m_t / (1-\prod_{i\le t+1}\mu_i)}{\sqrt{v_t/(1-\beta_2^t)} + \epsilon}

    where :math:`\psi` is `momentum_decay`. The running product of :math:`\mu` is kept as a float32 tensor,
    as PyTorch keeps it.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 2e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        momentum_decay: :math:`\psi` (default 4e-3).
        decoupled_weight_decay: shrink the weights by :math:`1-\gamma\lambda` (NAdamW) instead of adding
            :math:`\lambda\theta` to the gradient.
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.NAdam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 2) for v in w.tolist()]
        [0.89, -1.89]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
        )
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one NAdam update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = _scalar(group["lr"]), group["betas"], group["eps"]
            weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
            for p in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["mu_product"] = tp.tensor(1.0, dtype=tp.float32)
                    state["exp_avg"] = tp.zeros_like(p)
                    state["exp_avg_sq"] = tp.zeros_like(p)
                grad = -p.grad if group["maximize"] else p.grad
                state["step"].add_(1)
                step = state["step"].item()
                bias_correction2 = 1 - beta2**step
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                state["mu_product"].mul_(mu)
                mu_product = state["mu_product"].item()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
                p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product)))
                p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product * mu_next))
        return loss
