"""Dropout layers: ``Dropout``, ``Dropout1d/2d/3d``, ``AlphaDropout``, ``FeatureAlphaDropout``.

Where it sits: modules over ``nn.functional``'s dropout functions; active only in training mode
(``module.train()``), the identity after ``module.eval()``.
"""

from __future__ import annotations

import tensorplay_p10 as tp

from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """What every dropout layer holds: the drop probability ``p`` and ``inplace``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(
                f"{type(self).__name__}: dropout probability has to be between 0 and 1, but got {p}"
            )
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    r"""In training, zero each element with probability ``p`` and scale the others by :math:`1/(1-p)`.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.Dropout(p=0.2)
        >>> m(tp.ones(4, 5)).shape
        tensorplay.Size([4, 5])
        >>> m.eval()(tp.ones(2)).tolist()
        [1.0, 1.0]
    """

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    r"""In training, zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs with probability ``p``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.Dropout1d(p=0.2)(tp.ones(20, 16, 32)).shape
        tensorplay.Size([20, 16, 32])
    """

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    r"""In training, zero whole channels of ``(N, C, H, W)`` inputs with probability ``p``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.Dropout2d(p=0.2)(tp.ones(2, 4, 3, 3)).shape
        tensorplay.Size([2, 4, 3, 3])
    """

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    r"""In training, zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs with probability
    ``p``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.Dropout3d(p=0.2)(tp.ones(2, 4, 2, 3, 3)).shape
        tensorplay.Size([2, 4, 2, 3, 3])
    """

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    r"""Dropout that keeps SELU's self-normalisation (zero mean, unit variance) in training.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.AlphaDropout(p=0.2)(tp.randn(20, 16)).shape
        tensorplay.Size([20, 16])
    """

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    r"""Alpha dropout of whole channels in training.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.FeatureAlphaDropout(p=0.2)(tp.randn(2, 4, 3)).shape
        tensorplay.Size([2, 4, 3])
    """

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
