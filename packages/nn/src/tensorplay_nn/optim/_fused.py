"""The fused multi-tensor path of SGD, Adam and AdamW: one native call per parameter group.

Where it sits: between the optimizers (sgd.py, adam.py) and the ops `nn::_fused_sgd_` / `nn::_fused_adam_`
that NN's native module defines (packages/nn/csrc/fused_optim.cpp, with CUDA kernels in
cuda_kernels/fused_optim.cu). `eligible` says whether a group can take this path (float32/float64, contiguous,
all on the CPU or all on one GPU, one dtype per parameter and its state); when it cannot, the optimizer keeps
its for-loop path, so `foreach=True` is always safe to ask for.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import _C  # noqa: F401  (importing the native module defines the ops)

__all__ = ["adam", "eligible", "requested", "sgd"]

_FLOATS = (tp.float32, tp.float64)


def requested(group: dict) -> bool:
    """Whether a group asks for the native path: `foreach=True` or `fused=True`, or neither option given.

    PyTorch picks its for-loop on CPU when both are None; we pick the native path, because it gives the
    same updates (to float rounding; test_optim checks both against the same recorded trajectories) at a
    fraction of the cost of one Python-driven update per parameter (benchmarks/optim.py). `foreach=False`
    or `fused=False` keeps the for-loop, the readable reference.
    """
    if group["foreach"] is None and group["fused"] is None:
        return True
    return bool(group["foreach"] or group["fused"])


def eligible(params: Sequence[Tensor], *states: Sequence[Tensor | None]) -> bool:
    """Whether every parameter, its gradient and its state tensors (None: not created yet) suit the kernel:
    one device for the whole group (the CPU or one GPU), one float dtype per parameter and its state."""
    device = params[0].device if params else None
    if device is not None and device.type not in ("cpu", "cuda"):
        return False
    for i, p in enumerate(params):
        tensors = [p, p.grad] + [s[i] for s in states if s and s[i] is not None]
        for t in tensors:
            if t.dtype != p.dtype or t.dtype not in _FLOATS or t.device != device or not t.is_contiguous():
                return False
            if t.numel() != p.numel():
                return False
    return True


def sgd(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffers: list[Tensor | None],
    is_first: list[int],
    *,
    lr: float,
    weight_decay: float,
    momentum: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    """SGD over a whole group in place; buffers flagged in `is_first` are filled from the first gradient."""
    bufs = momentum_buffers if momentum != 0 else []
    tp.ops.call(
        "nn::_fused_sgd_",
        params,
        grads,
        bufs,
        is_first,
        lr,
        weight_decay,
        momentum,
        dampening,
        nesterov,
        maximize,
    )


def adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
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
    """Adam/AdamW over a whole group in place, incrementing each float32 step counter."""
    tp.ops.call(
        "nn::_fused_adam_",
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        lr,
        beta1,
        beta2,
        weight_decay,
        eps,
        amsgrad,
        maximize,
        decoupled_weight_decay,
    )
