"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``.

Where it sits: modules holding a ``weight`` (and optional ``bias``) ``Parameter`` and calling
``nn.functional.conv*d`` / ``conv_transpose*d``. Initialisation is PyTorch's (``kaiming_uniform_`` with
``a = sqrt(5)``, bias uniform in :math:`\\pm 1/\\sqrt{\\text{fan\\_in}}`), drawn in the same order from the
same generator stream, so a seeded layer holds PyTorch's exact weights. ``padding_mode`` other than
``'zeros'`` pads with ``F.pad`` first and convolves with no padding, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from .. import functional as F
from .. import init
from ..functional._utils import ntuple
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """What every convolution shares: argument checks, parameters, initialisation and ``extra_repr``."""

    _n: int = 0  # spatial dims, set by each subclass

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        transposed: bool,
        output_padding: Any,
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        n = self._n
        kernel_size, stride, dilation = ntuple(kernel_size, n), ntuple(stride, n), ntuple(dilation, n)
        padding = padding if isinstance(padding, str) else ntuple(padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order: last dim first, (before, after) per dim. 'same' splits odd totals with more after.
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size), strict=True)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(tp.empty(*shape, *kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tp.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation: weight ~ kaiming_uniform(a=sqrt(5)) = U(±1/sqrt(fan_in)); bias too."""
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if isinstance(self.padding, str) or self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """A forward convolution: ``F.conv{n}d``, after ``F.pad`` when ``padding_mode`` is not 'zeros'."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            0,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._n - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    r"""1-D convolution over ``[N, C_in, L]`` (or ``[C_in, L]``):
    :math:`y_{n,o} = b_o + \sum_{c} w_{o,c} \star x_{n,c}` (:math:`\star` cross-correlation, with ``stride``,
    ``padding`` (int, ``'valid'`` or ``'same'``), ``dilation``, ``groups``). ``weight`` is
    ``[C_out, C_in / groups, k]``, initialised :math:`U(\pm\sqrt{\text{groups} / (C_{in} k)})`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> conv = nn.Conv1d(4, 8, 3, padding=1)
        >>> conv(tp.randn(2, 4, 10)).shape
        tensorplay.Size([2, 8, 10])
    """

    _n = 1


class Conv2d(_Conv):
    r"""2-D convolution over ``[N, C_in, H, W]``; see :class:`Conv1d`. ``weight`` is
    ``[C_out, C_in / groups, kH, kW]``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Conv2d(3, 8, 3)
        Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))
        >>> nn.Conv2d(3, 8, 3)(tp.randn(1, 3, 5, 5)).shape
        tensorplay.Size([1, 8, 3, 3])
    """

    _n = 2


class Conv3d(_Conv):
    r"""3-D convolution over ``[N, C_in, D, H, W]``; see :class:`Conv1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Conv3d(2, 4, 3)(tp.randn(1, 2, 4, 4, 4)).shape
        tensorplay.Size([1, 4, 2, 2, 2])
    """

    _n = 3


class _ConvTranspose(_ConvNd):
    """A transposed convolution: ``F.conv_transpose{n}d``; ``forward`` may take the wanted ``output_size``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """The ``output_padding`` that makes the output ``output_size`` (which must be reachable)."""
        n = self._n
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                f"{non_spatial + n} elements (got {len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for d in range(n):
            size = (
                (input.shape[d + non_spatial] - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            min_sizes.append(size)
            max_sizes.append(size + self.stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes, strict=True):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {min_sizes} to "
                    f"{max_sizes} (for an input of {input.shape[2:]})"
                )
        return tuple(output_size[d] - min_sizes[d] for d in range(n))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        output_padding = self._output_padding(input, output_size)
        return conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTranspose):
    r"""1-D transposed convolution (the input-gradient of :class:`Conv1d`): output length
    :math:`(L-1)s - 2p + d(k-1) + \text{output\_padding} + 1`. ``weight`` is ``[C_in, C_out / groups, k]``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ConvTranspose1d(4, 2, 3, stride=2)(tp.randn(1, 4, 5)).shape
        tensorplay.Size([1, 2, 11])
    """

    _n = 1


class ConvTranspose2d(_ConvTranspose):
    r"""2-D transposed convolution; see :class:`ConvTranspose1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> up = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1)
        >>> up(tp.randn(1, 8, 6, 6), output_size=[12, 12]).shape
        tensorplay.Size([1, 8, 12, 12])
    """

    _n = 2


class ConvTranspose3d(_ConvTranspose):
    r"""3-D transposed convolution; see :class:`ConvTranspose1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ConvTranspose3d(2, 2, 2, stride=2)(tp.randn(1, 2, 2, 2, 2)).shape
        tensorplay.Size([1, 2, 4, 4, 4])
    """

    _n = 3
