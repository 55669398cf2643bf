"""`Lion`: EvoLved Sign Momentum (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms").

Where it sits: one algorithm of `tensorplay.optim` (base class in optimizer.py). PyTorch has no Lion; this is
the paper's Algorithm 2 (the rule of its reference implementation), tested against a NumPy transcription.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from .optimizer import Optimizer, ParamsT, _check_hparams, _check_lr, _params_with_grad, _scalar

__all__ = ["Lion"]


class Lion(Optimizer):
    r"""Lion: the update is the *sign* of an interpolation between momentum and gradient.

    .. math::
        c_t &= \beta_1 m_{t-1} + (1-\beta_1) g_t \\
        \theta_t &= (1 - \gamma\lambda)\,\theta_{t-1} - \gamma\,\operatorname{sign}(c_t) \\
        m_t &= \beta_2 m_{t-1} + (1-\beta_2) g_t

    Weight decay is decoupled (applied to the weights, not the gradient). Every coordinate moves by exactly
    :math:`\gamma`, so Lion wants a learning rate 3-10x smaller than AdamW's and a larger weight decay.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-4).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.99)).
        weight_decay: decoupled weight decay :math:`\lambda` (default 0).
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.Lion([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-4,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Lion update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), weight_decay = _scalar(group["lr"]), group["betas"], group["weight_decay"]
            for p in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = tp.zeros_like(p)
                grad = -p.grad if group["maximize"] else p.grad
                exp_avg = state["exp_avg"]
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                update = exp_avg.lerp(grad, 1 - beta1).sign_()
                p.add_(update, alpha=-lr)
                exp_avg.lerp_(grad, 1 - beta2)
        return loss
