"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay.

Where it sits: one algorithm of `tensorplay.optim` (base class in optimizer.py). The for-loop path below is
the readable reference; `foreach=True` / `fused=True` send a whole group to one native call (_fused.py and
packages/nn/csrc/fused_optim.cpp), which is tested against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from . import _fused
from .optimizer import Optimizer, ParamsT, _check_lr, _params_with_grad, _scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), step for step PyTorch's `torch.optim.SGD`.

    With gradient :math:`g_t` (negated when `maximize`), weight decay :math:`\lambda`, momentum :math:`\mu`,
    dampening :math:`\tau`:

    .. math::
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \\
        b_t &= \mu b_{t-1} + (1 - \tau) g_t \quad (b_1 = g_1) \\
        g_t &\leftarrow g_t + \mu b_t \text{ if nesterov else } b_t \\
        \theta_t &= \theta_{t-1} - \gamma g_t

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-3).
        momentum: momentum factor :math:`\mu` (default 0).
        dampening: dampening :math:`\tau` for momentum (default 0).
        weight_decay: L2 penalty :math:`\lambda` (default 0).
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening = 0).
        maximize: maximize the objective instead of minimizing.
        foreach, fused: update each group in one native call (float32/float64 contiguous tensors, CPU or
            CUDA; other groups take the for-loop path); also the default when neither is given.
            ``foreach=False`` keeps the for-loop reference path. The numbers are the same either way.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 4) for v in w.tolist()]
        [0.8, -1.6]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            fused=fused,
        )
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one SGD update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params = _params_with_grad(group)
            if not params:
                continue
            momentum = group["momentum"]
            bufs = [self.state[p].get("momentum_buffer") for p in params]
            hp = dict(
                lr=_scalar(group["lr"]),
                weight_decay=group["weight_decay"],
                momentum=momentum,
                dampening=group["dampening"],
                nesterov=group["nesterov"],
                maximize=group["maximize"],
            )
            if _fused.requested(group) and _fused.eligible(params, bufs):
                if momentum != 0:  # the native kernel fills new buffers with the first gradient
                    bufs = [tp.empty_like(p) if b is None else b for p, b in zip(params, bufs, strict=True)]
                firsts = [int(self.state[p].get("momentum_buffer") is None) for p in params]
                _fused.sgd(params, [p.grad for p in params], bufs, firsts, **hp)
            else:
                for i, p in enumerate(params):
                    bufs[i] = _sgd_single(p, p.grad, bufs[i], **hp)
            if momentum != 0:
                for p, b in zip(params, bufs, strict=True):
                    self.state[p]["momentum_buffer"] = b
        return loss


def _sgd_single(
    param: Tensor,
    grad: Tensor,
    buf: Tensor | None,
    *,
    lr: float,
    weight_decay: float,
    momentum: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> Tensor | None:
    """The reference update of one parameter; returns its (possibly new) momentum buffer."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = grad.clone().detach()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    param.add_(grad, alpha=-lr)
    return buf
