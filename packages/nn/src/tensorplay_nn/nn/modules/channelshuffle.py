"""``ChannelShuffle``: interleave the channels of ``groups`` channel groups (ShuffleNet).

Where it sits: a parameter-free module over ``F.channel_shuffle`` (``nn/functional/vision.py``).
"""

from __future__ import annotations

from tensorplay_p10 import Tensor

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    r"""Transpose the channels of ``[N, C, *]`` seen as a ``groups x (C / groups)`` grid.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ChannelShuffle(2)(tp.arange(4.0).reshape(1, 4, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
