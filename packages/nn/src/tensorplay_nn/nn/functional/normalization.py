"""Normalisation in ``nn.functional``: layer, RMS, group, batch, instance and local-response norm, and
``normalize``.

Where it sits: ``layer_norm`` and ``rms_norm`` are P10 ops with their own kernels (hot and numerically
delicate); ``group_norm``, ``batch_norm`` and ``instance_norm`` are P10 composites. This file gives them
``torch.nn.functional``'s argument order (``batch_norm`` takes the running statistics first) and the checks
PyTorch makes in Python before calling them (a batch of one value per channel cannot be normalised while
training). ``local_response_norm`` and ``normalize`` are compositions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorplay_p10 as tp

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "normalize",
    "rms_norm",
]


def _verify_batch_size(size: Sequence[int]) -> None:
    """Batch statistics need more than one value per channel (N times the spatial size)."""
    if math.prod([size[0], *size[2:]]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size: Sequence[int]) -> None:
    """Instance statistics need more than one value per (sample, channel)."""
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def layer_norm(
    input: tp.Tensor,
    normalized_shape: Sequence[int] | int,
    weight: tp.Tensor | None = None,
    bias: tp.Tensor | None = None,
    eps: float = 1e-5,
) -> tp.Tensor:
    r"""Normalise over the last ``len(normalized_shape)`` dimensions:
    :math:`y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot w + b` (biased variance).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> y = F.layer_norm(tp.tensor([[1.0, 3.0]]), (2,))
        >>> [round(v, 3) for v in y[0].tolist()]
        [-1.0, 1.0]
    """
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return tp.layer_norm(input, shape, weight, bias, eps)


def rms_norm(
    input: tp.Tensor,
    normalized_shape: Sequence[int] | int,
    weight: tp.Tensor | None = None,
    eps: float | None = None,
) -> tp.Tensor:
    r"""Root-mean-square normalisation over the last dimensions: :math:`y = \frac{x}{\sqrt{\mathrm{E}[x^2] +
    \epsilon}} \cdot w`; ``eps=None`` uses the dtype's machine epsilon, as PyTorch does.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> [round(v, 3) for v in F.rms_norm(tp.tensor([3.0, 4.0]), (2,)).tolist()]
        [0.849, 1.131]
    """
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return tp.rms_norm(input, shape, weight, eps)


def group_norm(
    input: tp.Tensor,
    num_groups: int,
    weight: tp.Tensor | None = None,
    bias: tp.Tensor | None = None,
    eps: float = 1e-5,
) -> tp.Tensor:
    r"""Split the ``C`` channels of ``(N, C, *)`` into ``num_groups`` groups and normalise each
    ``(sample, group)`` over its channels and spatial positions; then the per-channel affine ``w, b``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.group_norm(tp.randn(2, 4, 3), 2).shape
        tensorplay.Size([2, 4, 3])
    """
    if input.dim() < 2:
        raise RuntimeError(
            f"group_norm(): Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    if num_groups <= 0 or input.shape[1] % num_groups != 0:
        raise RuntimeError(
            f"group_norm(): Expected number of channels in input ({input.shape[1]}) to be divisible by "
            f"num_groups ({num_groups})"
        )
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]])
    return tp.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(
    input: tp.Tensor,
    running_mean: tp.Tensor | None,
    running_var: tp.Tensor | None,
    weight: tp.Tensor | None = None,
    bias: tp.Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> tp.Tensor:
    r"""Normalise each channel of ``(N, C, *)``: with the batch's statistics when ``training`` (then, if
    given, the running statistics move by ``momentum``: :math:`\hat{x} \leftarrow (1-m)\hat{x} + m x_t`, with
    the unbiased batch variance), else with ``running_mean``/``running_var``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> mean, var = tp.zeros(2), tp.ones(2)
        >>> _ = F.batch_norm(tp.tensor([[0.0, 2.0], [2.0, 4.0]]), mean, var, training=True)
        >>> mean.tolist()
        [0.10000000149011612, 0.30000001192092896]
    """
    if training:
        _verify_batch_size(list(input.shape))
    return tp.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def instance_norm(
    input: tp.Tensor,
    running_mean: tp.Tensor | None = None,
    running_var: tp.Tensor | None = None,
    weight: tp.Tensor | None = None,
    bias: tp.Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> tp.Tensor:
    r"""Normalise each ``(sample, channel)`` of ``(N, C, *)`` over its spatial positions (batch norm with each
    sample its own batch); running statistics, if given, are averaged over the batch.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> y = F.instance_norm(tp.tensor([[[1.0, 3.0]]]))
        >>> [round(v, 3) for v in y.reshape(-1).tolist()]
        [-1.0, 1.0]
    """
    if use_input_stats:
        _verify_spatial_size(list(input.shape))
    return tp.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps)


def local_response_norm(
    input: tp.Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> tp.Tensor:
    r"""Normalise each channel by its neighbours across channels (AlexNet's LRN):
    :math:`y_c = x_c \big/ \big(k + \frac{\alpha}{n}\sum_{c'} x_{c'}^2\big)^{\beta}`, the sum over the
    ``size`` channels around ``c`` (zero-padded at the ends).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.local_response_norm(tp.ones(1, 3, 2), size=2).shape
        tensorplay.Size([1, 3, 2])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"local_response_norm(): Expected 3D or higher dimensionality input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    # a running mean of x^2 over channels, as an average pool with the channel axis as a spatial one
    div = input.mul(input)
    if dim == 3:
        div = tp.pad(div.unsqueeze(1), [0, 0, size // 2, (size - 1) // 2])
        div = tp.avg_pool2d(div, [size, 1], [1, 1]).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = tp.pad(div, [0, 0, 0, 0, size // 2, (size - 1) // 2])
        div = tp.avg_pool3d(div, [size, 1, 1], [1, 1, 1]).squeeze(1).reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input: tp.Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> tp.Tensor:
    r"""Scale slices along ``dim`` to unit ``p``-norm: :math:`y = x / \max(\lVert x \rVert_p, \epsilon)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.normalize(tp.tensor([[3.0, 4.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    denom = tp.linalg_vector_norm(input, p, [dim], True).clamp(min=eps)
    return input / denom.expand_as(input)
