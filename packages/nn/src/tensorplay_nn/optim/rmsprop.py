"""`RMSprop`: divide the gradient by a running root-mean-square of recent gradients (Hinton's lecture 6e).

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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop, step for step PyTorch's `torch.optim.RMSprop`.

    .. math::
        v_t &= \alpha v_{t-1} + (1-\alpha) g_t^2, \qquad
        \tilde v_t = v_t - \bar g_t^2 \text{ with } \bar g_t = \alpha\bar g_{t-1} + (1-\alpha) g_t
        \text{ (centered)} \\
        b_t &= \mu b_{t-1} + g_t / (\sqrt{\tilde v_t} + \epsilon), \qquad \theta_t = \theta_{t-1} - \gamma b_t

    (without momentum: :math:`\theta_t = \theta_{t-1} - \gamma g_t / (\sqrt{\tilde v_t} + \epsilon)`).

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-2).
        alpha: smoothing constant :math:`\alpha` (default 0.99).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: L2 penalty added to the gradient (default 0).
        momentum: momentum factor :math:`\mu` (default 0).
        centered: normalise by an estimate of the gradient's variance instead of its second moment.
        maximize: maximize the objective instead of minimizing.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.RMSprop([w], lr=0.01)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 3) for v in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RMSprop update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, alpha, eps = _scalar(group["lr"]), group["alpha"], group["eps"]
            momentum, centered, weight_decay = group["momentum"], group["centered"], group["weight_decay"]
            for p in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["square_avg"] = tp.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = tp.zeros_like(p)
                    if centered:
                        state["grad_avg"] = tp.zeros_like(p)
                grad = -p.grad if group["maximize"] else p.grad
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(grad, avg, value=-lr)
        return loss
