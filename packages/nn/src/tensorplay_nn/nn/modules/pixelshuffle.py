"""``PixelShuffle`` and ``PixelUnshuffle``: move values between the channel dim and the two spatial dims.

Where it sits: parameter-free modules over ``F.pixel_shuffle`` / ``F.pixel_unshuffle`` (a reshape and a
permute, in ``nn/functional/vision.py``).
"""

from __future__ import annotations

from tensorplay_p10 import Tensor

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    r"""``[*, C r^2, H, W]`` to ``[*, C, H r, W r]`` (sub-pixel convolution's upsampling).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.PixelShuffle(3)(tp.randn(1, 9, 4, 4)).shape
        tensorplay.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    r"""``[*, C, H r, W r]`` to ``[*, C r^2, H, W]``, the inverse of :class:`PixelShuffle`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.PixelUnshuffle(3)(tp.randn(1, 1, 12, 12)).shape
        tensorplay.Size([1, 9, 4, 4])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
