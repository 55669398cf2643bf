"""`Muon`: momentum, then Newton–Schulz orthogonalisation of the update, for 2-D weight matrices.

Where it sits: one algorithm of `tensorplay.optim` (base class in optimizer.py), matching PyTorch 2.13's
`torch.optim.Muon` (signature, update, coefficients, `adjust_lr_fn`, errors). Like PyTorch it runs the
Newton–Schulz iteration in bfloat16, so the update is only as exact as bfloat16 matmuls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from .optimizer import Optimizer, ParamsT, _params_with_grad, _scalar

__all__ = ["Muon"]

# Keller Jordan's quintic coefficients (kellerjordan.github.io/posts/muon), PyTorch's defaults.
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(
    grad: Tensor, ns_coefficients: Sequence[float], ns_steps: int, eps: float
) -> Tensor:
    r"""Approximately orthogonalise `grad` (:math:`G = USV^T \mapsto US'V^T`, :math:`S'_{ii} \approx 1`).

    After scaling :math:`X_0 = G/\max(\|G\|_F, \epsilon)` (spectral norm at most 1), each step is the quintic
    :math:`X \leftarrow aX + (bA + cA^2)X` with :math:`A = XX^T`, on the wide orientation of the matrix.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        ortho_grad = ortho_grad.T
    ortho_grad = ortho_grad.div(ortho_grad.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = tp.addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = tp.addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    return ortho_grad.T if tall else ortho_grad


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: Sequence[int]) -> float:
    """Scale lr so the orthogonal update's RMS is consistent across matrix shapes (PyTorch's rule)."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":  # Keller Jordan: sqrt(max(1, A/B))
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":  # Moonshot: 0.2 sqrt(max(A, B)), reuse AdamW's lr
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    r"""Muon (MomentUm Orthogonalized by Newton–Schulz), step for step PyTorch's `torch.optim.Muon`.

    .. math::
        B_t &= \mu B_{t-1} + (1-\mu) g_t \quad\text{(an interpolation, as PyTorch's lerp)} \\
        \tilde B_t &= g_t + \mu (B_t - g_t) \text{ if nesterov else } B_t, \qquad
        O_t = \mathrm{NS}^{(a,b,c)}_k(\tilde B_t) \\
        \theta_t &= (1 - \gamma\lambda)\,\theta_{t-1} - \mathrm{AdjustLR}(\gamma)\, O_t

    Only for 2-D parameters (hidden-layer weights); optimise biases and embeddings with e.g. AdamW.

    Args:
        params: 2-D parameters or parameter groups to optimize.
        lr: learning rate :math:`\gamma` (default 1e-3).
        weight_decay: decoupled weight decay :math:`\lambda` (default 0.1).
        momentum: :math:`\mu` (default 0.95).
        nesterov: use Nesterov momentum (default True).
        ns_coefficients: :math:`(a, b, c)` of the quintic iteration (default (3.4445, -4.775, 2.0315)).
        eps: floor of the Frobenius norm used to scale the update (default 1e-7).
        ns_steps: Newton–Schulz iterations :math:`k` (default 5).
        adjust_lr_fn: "original" (:math:`\sqrt{\max(1, A/B)}`, the default) or "match_rms_adamw"
            (:math:`0.2\sqrt{\max(A, B)}`).

    Example:
        >>> import tensorplay as tp
        >>> w = tp.ones(4, 3, requires_grad=True)
        >>> opt = tp.optim.Muon([w], lr=0.02)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> tuple(w.shape)
        (4, 3)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}"
                    )

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Muon update of every parameter that has a gradient."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, weight_decay, momentum = _scalar(group["lr"]), group["weight_decay"], group["momentum"]
            for p in _params_with_grad(group):
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                grad = p.grad
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = tp.zeros_like(grad)
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(
                    update, group["ns_coefficients"], group["ns_steps"], group["eps"]
                )
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                p.mul_(1 - lr * weight_decay)
                p.add_(update, alpha=-adjusted_lr)
        return loss
