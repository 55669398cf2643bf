"""Shape layers: ``Flatten`` and ``Unflatten``, the module forms of ``Tensor.flatten``/``unflatten``.

Where it sits: on :class:`~tensorplay.nn.Module`; typically between the convolutional and the linear part of a
``Sequential``.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorplay_p10 as tp

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flatten dimensions ``start_dim..end_dim`` into one (by default all but the batch dimension).

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.Flatten()(tp.ones(32, 1, 5, 5)).shape
        tensorplay.Size([32, 25])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Expand dimension ``dim`` into ``unflattened_size`` (one entry may be ``-1``).

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.Unflatten(1, (2, 5, 5))(tp.ones(2, 50)).shape
        tensorplay.Size([2, 2, 5, 5])
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list, tp.Size)):
            raise TypeError(
                f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}"
            )
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, "
                    f"but found element of type {type(elem).__name__} "
                    f"at pos {idx}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
