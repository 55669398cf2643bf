"""Normalisation layers over features: ``LayerNorm``, ``RMSNorm``, ``GroupNorm``, ``LocalResponseNorm``.

Where it sits: modules over ``nn.functional.normalization`` (batch and instance norm, which keep running
statistics, live in batchnorm.py and instancenorm.py). The affine parameters start at ``weight = 1``,
``bias = 0``, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplay_p10 as tp

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _as_shape(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


class LayerNorm(Module):
    r"""Normalise over the last ``len(normalized_shape)`` dimensions of each sample:
    :math:`y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta`.

    ``elementwise_affine=True`` learns :math:`\gamma` (``weight``) and, with ``bias=True``, :math:`\beta`
    (``bias``), both of shape ``normalized_shape``.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.LayerNorm(10)
        >>> y = m(tp.randn(20, 5, 10))
        >>> bool(y.mean(-1).abs().max() < 1e-5)
        True
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(tp.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(tp.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    r"""Root-mean-square normalisation over the last dimensions:
    :math:`y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot \gamma` (no centring, no bias).

    ``eps=None`` uses ``tp.finfo(x.dtype).eps``, as PyTorch does.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.RMSNorm([2, 3])
        >>> m(tp.randn(2, 2, 3)).shape
        tensorplay.Size([2, 2, 3])
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(tp.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    r"""Split the channels into ``num_groups`` groups and normalise each group of each sample:
    :math:`y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta`, with
    per-channel :math:`\gamma` (and :math:`\beta`, with ``bias=True``) when ``affine``.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.GroupNorm(3, 6)
        >>> m(tp.randn(20, 6, 10, 10)).shape
        tensorplay.Size([20, 6, 10, 10])
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups != 0:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(tp.empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(tp.empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class LocalResponseNorm(Module):
    r"""Normalise each channel by the energy of its ``size`` neighbouring channels:
    :math:`y_c = x_c \big/ \big(k + \frac{\alpha}{n}\sum_{c'} x_{c'}^2\big)^{\beta}`.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.LocalResponseNorm(2)(tp.randn(32, 5, 24, 24)).shape
        tensorplay.Size([32, 5, 24, 24])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
