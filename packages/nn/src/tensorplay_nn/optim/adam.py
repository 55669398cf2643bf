"""`Adam`: adaptive moment estimation (Kingma & Ba, 2014), with AMSGrad and optional decoupled weight decay.

Where it sits: one algorithm of `tensorplay.optim`; `AdamW` (adamw.py) is this class with decoupled weight
decay on. The for-loop path is the reference; `foreach=True` / `fused=True` run a group in one native call
(packages/nn/csrc/fused_optim.cpp), tested against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from . import _fused
from .optimizer import Optimizer, ParamsT, _check_hparams, _check_lr, _new_step, _params_with_grad, _scalar

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam, step for step PyTorch's `torch.optim.Adam`.

    With gradient :math:`g_t` (negated when `maximize`):

    .. math::
        g_t &\leftarrow g_t + \lambda\theta_{t-1} \quad\text{(L2; or } \theta_{t-1} \leftarrow
              (1-\gamma\lambda)\theta_{t-1} \text{ when decoupled)} \\
        m_t &= \beta_1 m_{t-1} + (1-\beta_1) g_t, \qquad v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2 \\
        \hat v_t &= \max(\hat v_{t-1}, v_t) \text{ (amsgrad) else } v_t \\
        \theta_t &= \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,
                    \frac{m_t}{\sqrt{\hat v_t}/\sqrt{1-\beta_2^t} + \epsilon}

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` added to the denominator (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        amsgrad: use the running maximum of :math:`v_t` (AMSGrad).
        maximize: maximize the objective instead of minimizing.
        foreach, fused: update each group in one native call (float32/float64 contiguous tensors, CPU or
            CUDA); also the default when neither is given. ``foreach=False`` keeps the for-loop reference
            path.
        decoupled_weight_decay: shrink the weights directly (AdamW) instead of adding :math:`\lambda\theta`
            to the gradient.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_hparams(eps=eps, betas=betas, weight_decay=weight_decay)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, amsgrad: bool) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _new_step()
            state["exp_avg"] = tp.zeros_like(p)
            state["exp_avg_sq"] = tp.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = tp.zeros_like(p)
        return state

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adam update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params = _params_with_grad(group)
            if not params:
                continue
            amsgrad = group["amsgrad"]
            states = [self._init_state(p, amsgrad) for p in params]
            beta1, beta2 = group["betas"]
            hp = dict(
                lr=_scalar(group["lr"]),
                beta1=beta1,
                beta2=beta2,
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                amsgrad=amsgrad,
                maximize=group["maximize"],
                decoupled_weight_decay=group["decoupled_weight_decay"],
            )
            grads = [p.grad for p in params]
            exp_avgs = [s["exp_avg"] for s in states]
            exp_avg_sqs = [s["exp_avg_sq"] for s in states]
            max_sqs = [s["max_exp_avg_sq"] for s in states] if amsgrad else []
            steps = [s["step"] for s in states]
            if _fused.requested(group) and _fused.eligible(params, exp_avgs, exp_avg_sqs, max_sqs):
                _fused.adam(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, **hp)
                continue
            for i, p in enumerate(params):
                _adam_single(
                    p, grads[i], exp_avgs[i], exp_avg_sqs[i], max_sqs[i] if amsgrad else None, steps[i], **hp
                )
        return loss


def _adam_single(
    param: Tensor,
    grad: Tensor,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    max_exp_avg_sq: Tensor | None,
    step_t: Tensor,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    weight_decay: float,
    eps: float,
    amsgrad: bool,
    maximize: bool,
    decoupled_weight_decay: bool,
) -> None:
    """The reference update of one parameter (PyTorch's `_single_tensor_adam`)."""
    if maximize:
        grad = -grad
    step_t.add_(1)
    if weight_decay != 0:
        if decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step = step_t.item()
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    if amsgrad:
        assert max_exp_avg_sq is not None  # the caller creates it with the state
        max_exp_avg_sq.copy_(tp.maximum(max_exp_avg_sq, exp_avg_sq))
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-step_size)
