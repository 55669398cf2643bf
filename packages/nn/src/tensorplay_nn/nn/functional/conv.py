"""Convolutions of ``tensorplay.nn.functional``: ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d`` and the sliding
block helpers ``unfold`` (im2col) and ``fold`` (col2im).

Where it sits: each is one P10 op (``packages/p10/csrc/kernels/conv*.cpp`` and ``im2col``/``col2im``; their
derivatives in TPX). This file only spells PyTorch's Python signatures; the ops check shapes and raise
PyTorch's messages.
"""

from __future__ import annotations

from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from ._utils import ntuple

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""1-D cross-correlation of ``input`` ``[N, C_in, L]`` (or ``[C_in, L]``) with ``weight``
    ``[C_out, C_in / groups, k]``: :math:`y_{o,l} = b_o + \sum_{c,j} w_{o,c,j}\, x_{c,\, l s - p + j d}`.
    ``padding`` may be ``'valid'`` (none) or ``'same'`` (output as long as the input; stride 1 only).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.conv1d(tp.tensor([[[1.0, 2.0, 3.0]]]), tp.tensor([[[1.0, -1.0]]]))
        tensor([[[-1., -1.]]])
    """
    return tp.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""2-D cross-correlation of ``[N, C_in, H, W]`` with ``weight`` ``[C_out, C_in / groups, kH, kW]``; see
    :func:`conv1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.conv2d(tp.ones(1, 1, 3, 3), tp.ones(1, 1, 2, 2))
        tensor([[[[4., 4.],
                  [4., 4.]]]])
    """
    return tp.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""3-D cross-correlation of ``[N, C_in, D, H, W]``; see :func:`conv1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.conv3d(tp.ones(1, 1, 2, 2, 2), tp.ones(1, 1, 2, 2, 2))
        tensor([[[[[8.]]]]])
    """
    return tp.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    r"""1-D transposed convolution (the gradient of :func:`conv1d` with respect to its input), ``weight``
    ``[C_in, C_out / groups, k]``; output length :math:`(L-1)s - 2p + d(k-1) + \text{output\_padding} + 1`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.conv_transpose1d(tp.tensor([[[1.0, 2.0]]]), tp.tensor([[[1.0, 1.0]]]))
        tensor([[[1., 3., 2.]]])
    """
    return tp.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    r"""2-D transposed convolution; see :func:`conv_transpose1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.conv_transpose2d(tp.ones(1, 1, 1, 1), tp.ones(1, 1, 2, 2), stride=2)
        tensor([[[[1., 1.],
                  [1., 1.]]]])
    """
    return tp.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    r"""3-D transposed convolution; see :func:`conv_transpose1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.conv_transpose3d(tp.ones(1, 1, 1, 1, 1), tp.ones(1, 1, 1, 1, 2)).shape
        tensorplay.Size([1, 1, 1, 1, 2])
    """
    return tp.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    r"""Sliding blocks (im2col): ``[N, C, H, W]`` becomes ``[N, C \cdot kH \cdot kW, L]``, one column per
    position of the kernel window, ``L`` the number of positions.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.unfold(tp.arange(4.0).reshape(1, 1, 2, 2), 1)
        tensor([[[0., 1., 2., 3.]]])
    """
    return tp.im2col(
        input, ntuple(kernel_size, 2), ntuple(dilation, 2), ntuple(padding, 2), ntuple(stride, 2)
    )


def fold(
    input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    r"""The adjoint of :func:`unfold` (col2im): columns ``[N, C \cdot kH \cdot kW, L]`` summed back into
    ``[N, C, *output_size]``; overlapping blocks add up.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.fold(tp.ones(1, 4, 4), (3, 3), 2)
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    return tp.col2im(
        input,
        ntuple(output_size, 2),
        ntuple(kernel_size, 2),
        ntuple(dilation, 2),
        ntuple(padding, 2),
        ntuple(stride, 2),
    )
