"""Dropout in ``nn.functional``: ``dropout``, ``dropout1d/2d/3d``, ``alpha_dropout``,
``feature_alpha_dropout`` (one file: they share one noise routine).

Where it sits: element-wise dropout is P10's ``dropout`` op; the channel-wise (feature) and alpha variants are
compositions here that draw their noise exactly as PyTorch's ``_dropout_impl`` does (one ``bernoulli_(1 - p)``
on a tensor shaped like the input, or like ``(N, C, 1, ...)`` for feature dropout), so with the same seed the
masks equal PyTorch's bit for bit.
"""

from __future__ import annotations

import math
import warnings

import tensorplay_p10 as tp

__all__ = [
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
]

# SELU's constants: alpha dropout keeps a SELU network's zero mean and unit variance (Klambauer et al. 2017).
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ALPHA_PRIME = _SELU_ALPHA * _SELU_SCALE  # the value a dropped unit is set to, negated: 1.7580993408473766


def _check_p(name: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")


def _finish(input: tp.Tensor, result: tp.Tensor, inplace: bool) -> tp.Tensor:
    """Return ``result``, or write it into ``input`` for the ``inplace=True`` forms."""
    if not inplace or result is input:
        return result
    return input.copy_(result)


def _noise_dropout(
    input: tp.Tensor, p: float, training: bool, feature: bool, alpha: bool, inplace: bool
) -> tp.Tensor:
    r"""PyTorch's ``_dropout_impl``: keep each unit (or channel, with ``feature``) with probability ``1 - p``.

    Plain dropout scales kept units by :math:`1/(1-p)`. Alpha dropout sets dropped units to
    :math:`-\alpha'` and applies the affine map :math:`a x + b` with
    :math:`a = ((1-p)(1 + p\alpha'^2))^{-1/2}`, :math:`b = a\alpha' p` (after masking), which keeps mean 0 and
    variance 1 for standardised inputs.
    """
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return _finish(input, input * tp.zeros((), dtype=input.dtype, device=input.device), inplace)
    if feature:
        if input.dim() < 2:
            raise RuntimeError(
                f"Feature dropout requires at least 2 dimensions in the input, but got a {input.dim()}D input"
            )
        noise_shape = [input.shape[0], input.shape[1]] + [1] * (input.dim() - 2)
    else:
        noise_shape = list(input.shape)
    noise = tp.empty(noise_shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA_PRIME * _ALPHA_PRIME * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA_PRIME * a).add_(_ALPHA_PRIME * a * p)
        noise.mul_(a)
        return _finish(input, input * noise + b, inplace)
    noise.div_(1 - p)
    return _finish(input, input * noise, inplace)


def dropout(input: tp.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> tp.Tensor:
    r"""Zero each element with probability ``p`` and scale the rest by :math:`1/(1-p)` (when ``training``).

    The expectation is unchanged: :math:`E[y] = x`. In evaluation (``training=False``) it is the identity.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> _ = tp.manual_seed(0)
        >>> y = F.dropout(tp.ones(8), p=0.5)
        >>> sorted(set(y.tolist())) in ([0.0, 2.0], [0.0], [2.0])
        True
    """
    _check_p("dropout", p)
    if not training or p == 0 or input.numel() == 0:
        return input
    return _finish(input, tp.dropout(input, p, training), inplace)


def _feature_dropout_nd(
    name: str, input: tp.Tensor, p: float, training: bool, inplace: bool, spatial: int
) -> tp.Tensor:
    """Channel-wise dropout of ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` inputs."""
    _check_p(name, p)
    batched_dim, unbatched_dim = spatial + 2, spatial + 1
    if input.dim() not in (unbatched_dim, batched_dim):
        raise RuntimeError(
            f"{name}: Expected {unbatched_dim}D or {batched_dim}D input, "
            f"but received a {input.dim()}D input. "
            f"Note that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial "
            f"dimension{'s' if spatial > 1 else ''}, a channel dimension, and an optional batch dimension "
            f"(i.e. {unbatched_dim}D or {batched_dim}D inputs)."
        )
    batched = input.dim() == batched_dim
    x = input if batched else input.unsqueeze(0)
    result = _noise_dropout(x, p, training, feature=True, alpha=False, inplace=False)
    if not batched:
        result = result.squeeze(0)
    return _finish(input, result, inplace)


def dropout1d(input: tp.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> tp.Tensor:
    r"""Zero whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``; scale by
    :math:`1/(1-p)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> y = F.dropout1d(tp.ones(2, 3, 4), p=0.5)
        >>> bool(((y == 0) | (y == 2)).all())
        True
    """
    return _feature_dropout_nd("dropout1d", input, p, training, inplace, spatial=1)


def dropout2d(input: tp.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> tp.Tensor:
    r"""Zero whole channels of an ``(N, C, H, W)`` input with probability ``p``; scale by :math:`1/(1-p)`.

    As in PyTorch, a 3-D input is read as ``(N, C, L)`` (with a warning), not as an unbatched image.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.dropout2d(tp.ones(2, 3, 4, 4), p=0.5).shape
        tensorplay.Size([2, 3, 4, 4])
    """
    _check_p("dropout2d", p)
    if input.dim() not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.dim()}-D input to dropout2d, "
            "which is deprecated and will result in "
            "an error in a future release. To retain the behavior and silence this warning, please use "
            "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
            "spatial dimensions, a channel dimension, and an optional batch dimension "
            "(i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
            "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _noise_dropout(input, p, training, feature=True, alpha=False, inplace=inplace)


def dropout3d(input: tp.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> tp.Tensor:
    r"""Zero whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with probability ``p``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.dropout3d(tp.ones(1, 2, 2, 2, 2), p=0.0).sum().item()
        16.0
    """
    _check_p("dropout3d", p)
    if input.dim() not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.dim()}-D input to dropout3d, "
            "which is deprecated and will result in "
            "an error in a future release. To retain the behavior and silence this warning, please use "
            "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
            "spatial dimensions, a channel dimension, and an optional batch dimension "
            "(i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    result = _noise_dropout(x, p, training, feature=True, alpha=False, inplace=False)
    if not batched:
        result = result.squeeze(0)
    return _finish(input, result, inplace)


def alpha_dropout(
    input: tp.Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> tp.Tensor:
    r"""Dropout for SELU networks: dropped units take SELU's negative saturation value and an affine map
    restores zero mean and unit variance.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.alpha_dropout(tp.ones(3), p=0.5, training=False).tolist()
        [1.0, 1.0, 1.0]
    """
    _check_p("alpha_dropout", p)
    return _noise_dropout(input, p, training, feature=False, alpha=True, inplace=inplace)


def feature_alpha_dropout(
    input: tp.Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> tp.Tensor:
    r"""Alpha dropout of whole channels (the mask is shared along the spatial dimensions).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.feature_alpha_dropout(tp.ones(2, 3, 4), p=0.2, training=True).shape
        tensorplay.Size([2, 3, 4])
    """
    _check_p("feature_alpha_dropout", p)
    return _noise_dropout(input, p, training, feature=True, alpha=True, inplace=inplace)
