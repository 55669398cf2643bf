"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and ``CircularPad``,
each in 1, 2 and 3 spatial dims.

Where it sits: modules without parameters that call ``F.pad`` (P10's ``pad`` op) with their mode. ``padding``
is one int (the same on every side) or ``(left, right[, top, bottom[, front, back]])``, last dim first, and
is stored as that tuple; ``extra_repr`` matches PyTorch's (``ReflectionPad2d((1, 1, 2, 0))``).
"""

from __future__ import annotations

from typing import Any

from tensorplay_p10 import Tensor

from .. import functional as F
from ..functional._utils import ntuple
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


class _PadNd(Module):
    """Pads the last ``_n`` dims with ``F.pad(input, padding, _mode)``."""

    _n = 0
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = ntuple(padding, 2 * self._n)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    r"""Pad the last dim with ``value``: ``padding`` is ``(left, right)`` or one int.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ConstantPad1d((1, 2), 9.0)(tp.tensor([[1.0, 2.0]]))
        tensor([[9., 1., 2., 9., 9.]])
    """

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    r"""Pad the last two dims with ``value``: ``(left, right, top, bottom)`` or one int.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ConstantPad2d(1, 0.5)(tp.ones(1, 1, 1)).shape
        tensorplay.Size([1, 3, 3])
    """

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    r"""Pad the last three dims with ``value``: ``(left, right, top, bottom, front, back)`` or one int.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ConstantPad3d(1, 0.0)(tp.ones(1, 1, 1, 1)).shape
        tensorplay.Size([1, 3, 3, 3])
    """

    _n = 3


class _ZeroPad:
    """Constant padding with 0 (PyTorch makes ``ZeroPad1d`` a ``ConstantPad1d``, and so do we)."""

    padding: tuple[int, ...]

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)  # type: ignore[call-arg]

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    r"""Pad the last dim with zeros (negative padding crops).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ZeroPad1d((1, -1))(tp.tensor([[1.0, 2.0]]))
        tensor([[0., 1.]])
    """

    _n = 1


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    r"""Pad the last two dims with zeros.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ZeroPad2d((1, 0, 0, 1))(tp.ones(1, 1, 1))
        tensor([[[0., 1.],
                 [0., 0.]]])
    """

    _n = 2


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    r"""Pad the last three dims with zeros.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ZeroPad3d(1)(tp.ones(1, 1, 1, 1)).sum()
        tensor(1.)
    """

    _n = 3


class ReflectionPad1d(_PadNd):
    r"""Pad the last dim with its mirror image, the edge not repeated (each pad < the dim's size).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReflectionPad1d(2)(tp.tensor([[1.0, 2.0, 3.0]]))
        tensor([[3., 2., 1., 2., 3., 2., 1.]])
    """

    _n = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    r"""Reflection padding of the last two dims; see :class:`ReflectionPad1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReflectionPad2d((1, 1, 0, 0))(tp.tensor([[[1.0, 2.0]]]))
        tensor([[[2., 1., 2., 1.]]])
    """

    _n = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    r"""Reflection padding of the last three dims; see :class:`ReflectionPad1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReflectionPad3d(1)(tp.ones(1, 2, 2, 2)).shape
        tensorplay.Size([1, 4, 4, 4])
    """

    _n = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    r"""Pad the last dim by repeating its edge values.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReplicationPad1d((2, 1))(tp.tensor([[1.0, 2.0]]))
        tensor([[1., 1., 1., 2., 2.]])
    """

    _n = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    r"""Replication padding of the last two dims; see :class:`ReplicationPad1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReplicationPad2d(1)(tp.ones(1, 1, 1)).sum()
        tensor(9.)
    """

    _n = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    r"""Replication padding of the last three dims; see :class:`ReplicationPad1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReplicationPad3d(1)(tp.ones(1, 1, 1, 1)).sum()
        tensor(27.)
    """

    _n = 3
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    r"""Pad the last dim by wrapping around: the left pad comes from the right end and vice versa.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CircularPad1d(1)(tp.tensor([[1.0, 2.0, 3.0]]))
        tensor([[3., 1., 2., 3., 1.]])
    """

    _n = 1


class CircularPad2d(_CircularPadNd):
    r"""Circular padding of the last two dims; see :class:`CircularPad1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CircularPad2d(1)(tp.ones(1, 2, 2)).shape
        tensorplay.Size([1, 4, 4])
    """

    _n = 2


class CircularPad3d(_CircularPadNd):
    r"""Circular padding of the last three dims; see :class:`CircularPad1d`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CircularPad3d(1)(tp.ones(1, 1, 2, 2, 2)).shape
        tensorplay.Size([1, 1, 4, 4, 4])
    """

    _n = 3
