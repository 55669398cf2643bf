"""Pooling of ``tensorplay.nn.functional``: max / average / adaptive / power-average pooling in 1, 2 and 3
spatial dims, and max unpooling.

Where it sits: max, average and adaptive pooling are P10 ops (``packages/p10/csrc/kernels/pool*.cpp``, their
derivatives in TPX); this file gives them PyTorch's Python signatures (``stride=None`` meaning the kernel
size, ``return_indices``, ``None`` entries in an adaptive output size). ``lp_pool*`` is average pooling of
``x ** p`` (PyTorch's own composition) and ``max_unpool*`` scatters into a zero tensor, so autograd
differentiates both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from ._utils import ntuple

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _max_pool(
    n: int,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    args = (ntuple(kernel_size, n), ntuple(stride, n), ntuple(padding, n), ntuple(dilation, n), ceil_mode)
    if return_indices:
        return getattr(tp, f"max_pool{n}d_with_indices")(input, *args)
    return getattr(tp, f"max_pool{n}d")(input, *args)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    r"""1-D max pooling over ``[N, C, L]`` (or ``[C, L]``):
    :math:`y_{l} = \max_{k} x_{l s - p + k d}` over the ``kernel_size`` taps, padding counting as
    :math:`-\infty`. ``stride`` defaults to ``kernel_size``; ``return_indices`` also returns each maximum's
    flat position in its input plane (what ``max_unpool1d`` takes).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.max_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2)
        tensor([[[3., 5.]]])
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    r"""2-D max pooling over ``[N, C, H, W]`` (or ``[C, H, W]``); see :func:`max_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.max_pool2d(tp.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    r"""3-D max pooling over ``[N, C, D, H, W]`` (or ``[C, D, H, W]``); see :func:`max_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.max_pool3d(tp.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[7.]]]]])
    """
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    r"""1-D average pooling: :math:`y_l = \frac1k \sum_{j<k} x_{l s - p + j}`; with
    ``count_include_pad=False`` the divisor counts only taps inside the input.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.avg_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    stride = kernel_size if stride is None else stride
    return tp.avg_pool1d(
        input, ntuple(kernel_size, 1), ntuple(stride, 1), ntuple(padding, 1), ceil_mode, count_include_pad
    )


def _avg_pool(
    n: int,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    stride = kernel_size if stride is None else stride
    op = getattr(tp, f"avg_pool{n}d")
    k, s, p = ntuple(kernel_size, n), ntuple(stride, n), ntuple(padding, n)
    return op(input, k, s, p, ceil_mode, count_include_pad, divisor_override)


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    r"""2-D average pooling; ``divisor_override`` replaces the window size as the divisor. See
    :func:`avg_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.avg_pool2d(tp.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    r"""3-D average pooling; see :func:`avg_pool2d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.avg_pool3d(tp.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[3.5000]]]]])
    """
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _with_default(output_size: Any, input: Tensor, n: int) -> list[int]:
    """The adaptive output size, ``None`` entries taken from the input's matching spatial size."""
    sizes = ntuple(output_size, n)
    if input.dim() < n + 1:
        raise ValueError(f"Input dimension should be at least {n + 1}")
    spatial = list(input.shape[-n:])
    return [spatial[i] if s is None else int(s) for i, s in enumerate(sizes)]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    r"""1-D adaptive average pooling to ``output_size`` cells: cell ``i`` averages
    :math:`x[\lfloor iL/O \rfloor : \lceil (i+1)L/O \rceil]`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.adaptive_avg_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    return tp.adaptive_avg_pool1d(input, ntuple(output_size, 1))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    r"""2-D adaptive average pooling (``None`` in ``output_size`` keeps that input size); see
    :func:`adaptive_avg_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.adaptive_avg_pool2d(tp.arange(16.0).reshape(1, 1, 4, 4), 1)
        tensor([[[[7.5000]]]])
    """
    return tp.adaptive_avg_pool2d(input, _with_default(output_size, input, 2))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    r"""3-D adaptive average pooling; see :func:`adaptive_avg_pool2d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.adaptive_avg_pool3d(tp.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
        tensor([[[[[3.5000]]]]])
    """
    return tp.adaptive_avg_pool3d(input, _with_default(output_size, input, 3))


def _adaptive_max(n: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:
    size = ntuple(output_size, 1) if n == 1 else _with_default(output_size, input, n)
    out, indices = getattr(tp, f"adaptive_max_pool{n}d")(input, size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    r"""1-D adaptive max pooling: the maximum of each cell of :func:`adaptive_avg_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.adaptive_max_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)
        tensor([[[3., 6.]]])
    """
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    r"""2-D adaptive max pooling; see :func:`adaptive_max_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.adaptive_max_pool2d(tp.arange(16.0).reshape(1, 1, 4, 4), 1)
        tensor([[[[15.]]]])
    """
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    r"""3-D adaptive max pooling; see :func:`adaptive_max_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.adaptive_max_pool3d(tp.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
        tensor([[[[[7.]]]]])
    """
    return _adaptive_max(3, input, output_size, return_indices)


def _lp_pool(
    n: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool
) -> Tensor:
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[n - 1]
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    window = 1
    for k in ntuple(kernel_size, n):
        window *= k
    # PyTorch writes sign(out) * relu(abs(out)); relu of an absolute value is the identity, with the same
    # gradient everywhere but 0, where sign(out) = 0 zeroes both. A negative sum of odd powers stays negative,
    # so pow(1/p) gives nan there, as in PyTorch.
    return (tp.sign(out) * out.abs()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    r"""1-D power-average pooling: :math:`y = (\sum_{\text{window}} x^p)^{1/p}` (``p = inf`` is max
    pooling of :math:`|x|`).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.lp_pool1d(tp.tensor([[[3.0, 4.0]]]), 2, 2)
        tensor([[[5.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    r"""2-D power-average pooling; see :func:`lp_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.lp_pool2d(tp.ones(1, 1, 2, 2), 2, 2)
        tensor([[[[2.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    r"""3-D power-average pooling; see :func:`lp_pool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.lp_pool3d(tp.ones(1, 1, 2, 2, 2), 1, 2)
        tensor([[[[[8.]]]]])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _unpool_output_size(
    input: Tensor, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int], output_size: Any
) -> list[int]:
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    output_size = list(ntuple(output_size, n)) if isinstance(output_size, int) else list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(
            f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length of "
            f"'{len(output_size)}'"
        )
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    for d in range(n):
        if output_size[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={output_size[d]}"
            )
    return [int(s) for s in output_size]


def _max_unpool(
    n: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any, output_size: Any
) -> Tensor:
    name = f"max_unpool{n}d"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"{name}: expected a {n + 1}D or {n + 2}D input, but got input of size {list(input.shape)}"
        )
    if indices.shape != input.shape:
        raise RuntimeError(
            f"{name}: expected indices to have the same shape as input, but got input of size "
            f"{list(input.shape)} and indices of size {list(indices.shape)}"
        )
    if indices.dtype != tp.int64:
        raise RuntimeError(f"{name}: expected indices to have dtype int64, but got {indices.dtype}")
    k = ntuple(kernel_size, n)
    s = k if stride is None else ntuple(stride, n)
    size = _unpool_output_size(input, k, s, ntuple(padding, n), output_size)
    plane = 1
    for d in size:
        plane *= d
    lead = list(input.shape[:-n])
    flat_in = input.reshape(*lead, -1)
    flat_idx = indices.reshape(*lead, -1)
    if flat_idx.numel() > 0 and (bool((flat_idx < 0).any()) or bool((flat_idx >= plane).any())):
        bad = int(flat_idx[(flat_idx < 0) | (flat_idx >= plane)][0])
        raise RuntimeError(
            f"{name}: Found an invalid max index: {bad} "
            f"(output volumes are of size {'x'.join(map(str, size))})"
        )
    # Each input value lands at its recorded position in a zero plane; scatter's gradient gathers it back.
    out = tp.zeros(*lead, plane, dtype=input.dtype).scatter(-1, flat_idx, flat_in)
    return out.reshape(*lead, *size)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    r"""Partial inverse of :func:`max_pool1d`: each value goes back to the position ``indices`` recorded,
    zeros elsewhere. The output length defaults to :math:`(L - 1) s - 2p + k`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> y, i = F.max_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2, return_indices=True)
        >>> F.max_unpool1d(y, i, 2)
        tensor([[[0., 3., 0., 5.]]])
    """
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    r"""Partial inverse of :func:`max_pool2d`; see :func:`max_unpool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> y, i = F.max_pool2d(tp.arange(4.0).reshape(1, 1, 2, 2), 2, return_indices=True)
        >>> F.max_unpool2d(y, i, 2)
        tensor([[[[0., 0.],
                  [0., 3.]]]])
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    r"""Partial inverse of :func:`max_pool3d`; see :func:`max_unpool1d`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> y, i = F.max_pool3d(tp.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> F.max_unpool3d(y, i, 2).flatten()
        tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
