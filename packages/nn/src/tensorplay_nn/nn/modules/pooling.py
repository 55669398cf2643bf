"""Pooling layers: ``MaxPool``, ``AvgPool``, ``LPPool``, ``AdaptiveMaxPool``, ``AdaptiveAvgPool`` (1, 2 and 3
spatial dims) and ``MaxUnpool``.

Where it sits: modules without parameters that keep their window options and call ``nn/functional/pooling.py``
(where the maths is). Attributes and ``extra_repr`` follow PyTorch exactly, including its quirks: MaxPool and
the 2-D/3-D AvgPool keep ``kernel_size`` as given (``MaxPool2d(kernel_size=2, stride=2, ...)``), while
AvgPool1d and MaxUnpool store tuples.
"""

from __future__ import annotations

from typing import Any

from tensorplay_p10 import Tensor

from .. import functional as F
from ..functional._utils import ntuple
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


class _MaxPoolNd(Module):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    r"""1-D max pooling over ``[N, C, L]`` (see ``F.max_pool1d``); ``return_indices=True`` also returns
    the positions ``MaxUnpool1d`` needs.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MaxPool1d(2)(tp.tensor([[[1.0, 3.0, 2.0, 5.0]]]))
        tensor([[[3., 5.]]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class MaxPool2d(_MaxPoolNd):
    r"""2-D max pooling over ``[N, C, H, W]`` (see ``F.max_pool2d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MaxPool2d(2)
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> nn.MaxPool2d(2)(tp.randn(1, 3, 8, 8)).shape
        tensorplay.Size([1, 3, 4, 4])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class MaxPool3d(_MaxPoolNd):
    r"""3-D max pooling over ``[N, C, D, H, W]`` (see ``F.max_pool3d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.MaxPool3d(2)(tp.randn(1, 1, 4, 4, 4)).shape
        tensorplay.Size([1, 1, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, self._n)
        self.stride = ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = ntuple(padding, self._n)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""Partial inverse of ``MaxPool1d``: values back at their recorded positions, zeros elsewhere (see
    ``F.max_unpool1d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> y, i = nn.MaxPool1d(2, return_indices=True)(tp.tensor([[[1.0, 3.0, 2.0, 5.0]]]))
        >>> nn.MaxUnpool1d(2)(y, i)
        tensor([[[0., 3., 0., 5.]]])
    """

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    r"""Partial inverse of ``MaxPool2d`` (see ``F.max_unpool2d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> y, i = nn.MaxPool2d(2, return_indices=True)(tp.randn(1, 1, 4, 4))
        >>> nn.MaxUnpool2d(2)(y, i).shape
        tensorplay.Size([1, 1, 4, 4])
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    r"""Partial inverse of ``MaxPool3d`` (see ``F.max_unpool3d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> y, i = nn.MaxPool3d(2, return_indices=True)(tp.randn(1, 1, 2, 2, 2))
        >>> nn.MaxUnpool3d(2)(y, i).shape
        tensorplay.Size([1, 1, 2, 2, 2])
    """

    _n = 3


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    r"""1-D average pooling over ``[N, C, L]`` (see ``F.avg_pool1d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AvgPool1d(2)(tp.tensor([[[1.0, 3.0, 2.0, 6.0]]]))
        tensor([[[2., 4.]]])
    """

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, 1)
        self.stride = ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad
        )


class _AvgPoolWithDivisor(_AvgPoolNd):
    _n = 0

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        pool = F.avg_pool2d if self._n == 2 else F.avg_pool3d
        return pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool2d(_AvgPoolWithDivisor):
    r"""2-D average pooling over ``[N, C, H, W]`` (see ``F.avg_pool2d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AvgPool2d(2)(tp.ones(1, 1, 4, 4))
        tensor([[[[1., 1.],
                  [1., 1.]]]])
    """

    _n = 2


class AvgPool3d(_AvgPoolWithDivisor):
    r"""3-D average pooling over ``[N, C, D, H, W]`` (see ``F.avg_pool3d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AvgPool3d(2)(tp.ones(1, 1, 2, 2, 2)).flatten()
        tensor([1.])
    """

    _n = 3


class _LPPoolNd(Module):
    _n = 0

    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._n - 1]
        return pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    r"""1-D power-average pooling :math:`(\sum_{\text{window}} x^p)^{1/p}` (see ``F.lp_pool1d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.LPPool1d(2, 2)(tp.tensor([[[3.0, 4.0]]]))
        tensor([[[5.]]])
    """

    _n = 1


class LPPool2d(_LPPoolNd):
    r"""2-D power-average pooling (see ``F.lp_pool2d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.LPPool2d(2, 2)(tp.ones(1, 1, 2, 2)).flatten()
        tensor([2.])
    """

    _n = 2


class LPPool3d(_LPPoolNd):
    r"""3-D power-average pooling (see ``F.lp_pool3d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.LPPool3d(1, 2)(tp.ones(1, 1, 2, 2, 2)).flatten()
        tensor([8.])
    """

    _n = 3


class _AdaptiveMaxPoolNd(Module):
    _n = 0

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._n - 1]
        return pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    r"""1-D adaptive max pooling to ``output_size`` cells (see ``F.adaptive_max_pool1d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AdaptiveMaxPool1d(2)(tp.tensor([[[1.0, 3.0, 2.0, 6.0]]]))
        tensor([[[3., 6.]]])
    """

    _n = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    r"""2-D adaptive max pooling; ``None`` in ``output_size`` keeps that input size.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AdaptiveMaxPool2d((None, 1))(tp.randn(1, 2, 5, 7)).shape
        tensorplay.Size([1, 2, 5, 1])
    """

    _n = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    r"""3-D adaptive max pooling (see ``F.adaptive_max_pool3d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AdaptiveMaxPool3d(1)(tp.randn(1, 2, 3, 3, 3)).shape
        tensorplay.Size([1, 2, 1, 1, 1])
    """

    _n = 3


class _AdaptiveAvgPoolNd(Module):
    _n = 0

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._n - 1]
        return pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    r"""1-D adaptive average pooling to ``output_size`` cells (see ``F.adaptive_avg_pool1d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AdaptiveAvgPool1d(2)(tp.tensor([[[1.0, 3.0, 2.0, 6.0]]]))
        tensor([[[2., 4.]]])
    """

    _n = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    r"""2-D adaptive average pooling; ``AdaptiveAvgPool2d(1)`` is global average pooling.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AdaptiveAvgPool2d(1)(tp.ones(1, 3, 4, 4)).shape
        tensorplay.Size([1, 3, 1, 1])
    """

    _n = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    r"""3-D adaptive average pooling (see ``F.adaptive_avg_pool3d``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.AdaptiveAvgPool3d(1)(tp.ones(1, 2, 3, 3, 3)).flatten()
        tensor([1., 1.])
    """

    _n = 3
