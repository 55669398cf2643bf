"""Affine layers: ``Identity``, ``Linear``, ``Bilinear``.

Where it sits: modules over ``nn.functional.linear``/``bilinear``; their default initialisation is PyTorch's
(Kaiming-uniform weights with ``a = sqrt(5)``, i.e. :math:`\\mathcal{U}(\\pm 1/\\sqrt{\\text{fan\\_in}})`, and
the same bound for the bias), drawn in PyTorch's order so that equal seeds give equal weights.
"""

from __future__ import annotations

import math
from typing import Any

import tensorplay_p10 as tp

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Bilinear", "Identity", "Linear"]


class Identity(Module):
    r"""Return the input unchanged; any constructor arguments are ignored (a placeholder for a layer).

    Example:
        >>> import tensorplay as tp
        >>> x = tp.ones(2)
        >>> tp.nn.Identity(54, unused="x")(x) is x
        True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return input


class Linear(Module):
    r"""Apply :math:`y = x W^T + b`.

    ``weight`` has shape ``(out_features, in_features)`` and ``bias`` ``(out_features,)`` (or is ``None`` with
    ``bias=False``); both start as :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{in\_features}}`. Input
    ``(*, in_features)``, output ``(*, out_features)``.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.Linear(20, 30)
        >>> m(tp.randn(128, 20)).shape
        tensorplay.Size([128, 30])
    """

    in_features: int
    out_features: int
    weight: Parameter

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(tp.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tp.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: Kaiming-uniform weight (``a=sqrt(5)``), bias uniform in ``±1/sqrt(fan_in)``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class Bilinear(Module):
    r"""Apply :math:`y_k = x_1^T A_k x_2 + b_k`.

    ``weight`` ``(out_features, in1_features, in2_features)``, ``bias`` ``(out_features,)``; both start as
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{in1\_features}}`.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.Bilinear(20, 30, 40)
        >>> m(tp.randn(128, 20), tp.randn(128, 30)).shape
        tensorplay.Size([128, 40])
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            tp.empty((out_features, in1_features, in2_features), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(tp.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: weight and bias uniform in ``±1/sqrt(in1_features)``."""
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: tp.Tensor, input2: tp.Tensor) -> tp.Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
