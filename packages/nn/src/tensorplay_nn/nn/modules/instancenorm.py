"""Instance normalisation: ``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``.

Where it sits: modules over ``nn.functional.instance_norm``, on batchnorm.py's ``_NormBase`` (the same
parameters and optional running statistics; PyTorch's defaults differ: ``affine=False`` and
``track_running_stats=False``). Each accepts an unbatched input too.
"""

from __future__ import annotations

import warnings
from typing import Any

import tensorplay_p10 as tp

from .. import functional as F
from .batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """The instance-norm forward shared by the 1d/2d/3d layers (which fix the number of spatial dims)."""

    _spatial_dims: int

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

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
        # Old checkpoints (PyTorch < 0.4) saved running statistics that this layer no longer tracks by
        # default.
        if not self.track_running_stats:
            stale = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if stale:
                names = " and ".join(f'"{k}"' for k in stale)
                klass = type(self).__name__
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. "
                    f"If state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} "
                    "does not track running stats by default since 0.4.0. Please remove these keys from "
                    "state_dict. If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the documentation of {klass} "
                    "for details."
                )
                for key in stale:
                    state_dict.pop(key)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def _apply_instance_norm(self, input: tp.Tensor) -> tp.Tensor:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        no_batch_dim = self._spatial_dims + 1
        if input.dim() not in (no_batch_dim, no_batch_dim + 1):
            raise ValueError(
                f"{type(self).__name__}: expected {no_batch_dim}D or {no_batch_dim + 1}D input "
                f"(got {input.dim()}D input)"
            )
        feature_dim = input.dim() - no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), "
                    f"but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. "
                "You can silence this warning "
                "by not passing in num_features, which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    r"""Normalise each channel of each sample of ``(N, C, L)`` (or ``(C, L)``) over ``L``:
    :math:`y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta`.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.InstanceNorm1d(100)(tp.randn(20, 100, 40)).shape
        tensorplay.Size([20, 100, 40])
    """

    _spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    r"""Normalise each channel of each sample of ``(N, C, H, W)`` (or ``(C, H, W)``) over ``H, W``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.InstanceNorm2d(3, affine=True)(tp.randn(2, 3, 4, 4)).shape
        tensorplay.Size([2, 3, 4, 4])
    """

    _spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    r"""Normalise each channel of each sample of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) over ``D, H, W``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.InstanceNorm3d(3)(tp.randn(2, 3, 2, 4, 4)).shape
        tensorplay.Size([2, 3, 2, 4, 4])
    """

    _spatial_dims = 3
