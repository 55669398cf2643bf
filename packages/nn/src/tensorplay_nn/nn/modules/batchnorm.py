"""Batch normalisation: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d`` and their shared base ``_NormBase``.

Where it sits: modules over ``nn.functional.batch_norm``. ``_NormBase`` holds what batch and instance norm
share (affine parameters, the running statistics ``running_mean``/``running_var`` and the
``num_batches_tracked`` counter as buffers, the ``repr``); instancenorm.py builds on it.
"""

from __future__ import annotations

from typing import Any

import tensorplay_p10 as tp

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _NormBase(Module):
    """Affine parameters and running statistics of a per-channel normalisation over ``num_features``."""

    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(tp.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(tp.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", tp.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", tp.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tp.tensor(0, dtype=tp.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics and set ``weight = 1``, ``bias = 0``."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: tp.Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        # Checkpoints from before the counter existed (PyTorch < 0.4.1) lack num_batches_tracked: keep ours.
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict and self.num_batches_tracked is not None:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    """The batch-norm forward shared by the 1d/2d/3d layers, which differ only in the input ranks accepted."""

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative average, each batch weighing 1/n
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        # batch statistics in training, and in evaluation when there are no running statistics
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        # the running statistics are passed only when they are to be used or updated
        pass_stats = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if pass_stats else None,
            self.running_var if pass_stats else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs, per channel:
    :math:`y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta`.

    In training the statistics are the batch's (biased variance for normalising) and the running estimates
    move as :math:`\hat{x} \leftarrow (1 - m)\hat{x} + m x_t` (unbiased variance), or as a cumulative average
    when ``momentum=None``; in evaluation the running estimates are used.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.BatchNorm1d(100)
        >>> m(tp.randn(20, 100)).shape
        tensorplay.Size([20, 100])
        >>> int(m.num_batches_tracked)
        1
    """

    def _check_input_dim(self, input: tp.Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalisation of ``(N, C, H, W)`` inputs, per channel (see :class:`BatchNorm1d`).

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.BatchNorm2d(3)(tp.randn(4, 3, 5, 5)).shape
        tensorplay.Size([4, 3, 5, 5])
    """

    def _check_input_dim(self, input: tp.Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"{type(self).__name__}: expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch normalisation of ``(N, C, D, H, W)`` inputs, per channel (see :class:`BatchNorm1d`).

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.BatchNorm3d(3)(tp.randn(2, 3, 2, 4, 4)).shape
        tensorplay.Size([2, 3, 2, 4, 4])
    """

    def _check_input_dim(self, input: tp.Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"{type(self).__name__}: expected 5D input (got {input.dim()}D input)")
