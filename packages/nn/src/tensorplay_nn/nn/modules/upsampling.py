"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``: resize the spatial dims.

Where it sits: parameter-free modules over ``F.interpolate`` (P10's ``tensorplay_p10/_interpolate.py`` and
its upsample kernels). ``scale_factor`` is stored as a float (or tuple of floats), and ``extra_repr`` shows
it, or else the size, then the mode, as PyTorch does.
"""

from __future__ import annotations

from typing import Any

from tensorplay_p10 import Tensor

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    r"""Resize ``[N, C, *spatial]`` to ``size`` or by ``scale_factor`` with ``mode`` 'nearest', 'linear',
    'bilinear', 'bicubic', 'trilinear', 'area' or 'nearest-exact' (see ``F.interpolate``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Upsample(scale_factor=2)
        Upsample(scale_factor=2.0, mode='nearest')
        >>> nn.Upsample(scale_factor=2)(tp.tensor([[[1.0, 2.0]]]))
        tensor([[[1., 1., 2., 2.]]])
    """

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        info = (
            f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        )
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    r"""2-D nearest-neighbour upsampling: ``Upsample(mode='nearest')``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.UpsamplingNearest2d(scale_factor=2)(tp.ones(1, 1, 2, 2)).shape
        tensorplay.Size([1, 1, 4, 4])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""2-D bilinear upsampling with ``align_corners=True``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.UpsamplingBilinear2d(size=3)(tp.tensor([[[[0.0, 2.0]]]]))
        tensor([[[[0., 1., 2.],
                  [0., 1., 2.],
                  [0., 1., 2.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
