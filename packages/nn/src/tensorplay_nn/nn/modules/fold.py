"""``Fold`` and ``Unfold``: sliding blocks to columns (im2col) and back (col2im), as modules.

Where it sits: parameter-free modules over ``F.unfold`` / ``F.fold`` (``nn/functional/conv.py``, which call
P10's ``im2col`` / ``col2im`` kernels). ``Unfold`` is how a convolution becomes one matrix product; ``Fold``
is its adjoint, summing overlapping blocks back into an image.
"""

from __future__ import annotations

from typing import Any

from tensorplay_p10 import Tensor

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    r"""Sum columns ``[N, C \cdot \prod(kernel\_size), L]`` back into ``[N, C, *output_size]``.

    Overlapping blocks add up, so ``Fold(Unfold(x))`` multiplies each pixel by the number of blocks that
    cover it.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Fold(output_size=(3, 3), kernel_size=2)(tp.ones(1, 4, 4))
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """

    def __init__(
        self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            "output_size={output_size}, kernel_size={kernel_size}, "
            "dilation={dilation}, padding={padding}, stride={stride}".format(**self.__dict__)
        )


class Unfold(Module):
    r"""Extract sliding blocks: ``[N, C, H, W]`` to ``[N, C \cdot \prod(kernel\_size), L]``.

    Column ``l`` holds the values under the kernel window at its ``l``-th position.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Unfold(kernel_size=1)(tp.arange(4.0).reshape(1, 1, 2, 2))
        tensor([[[0., 1., 2., 3.]]])
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}".format(
            **self.__dict__
        )
