"""``tp.interpolate``: resize the spatial dims of a batch, as ``torch.nn.functional.interpolate`` does.

Where it sits: the Python front of the upsample ops (``csrc/kernels/upsample.cpp``) and, for ``mode='area'``,
of adaptive average pooling (``csrc/kernels/pool_adaptive.cpp``). It does what PyTorch does in Python: check
the arguments, turn ``size`` / ``scale_factor`` into one per spatial dim, and pick the op for the input's rank
and the mode. The kernels receive either an output size with no scales, or a size computed here from the
scales plus the scales themselves, which they then use to place the sampling points (see Note
[Interpolation taps] in upsample.cpp) unless ``recompute_scale_factor=True``.

Example:
    >>> import tensorplay_p10 as tp
    >>> x = tp.arange(4.0).reshape(1, 1, 2, 2)
    >>> tp.interpolate(x, scale_factor=2, mode="nearest")[0, 0]
    tensor([[0., 0., 1., 1.],
            [0., 0., 1., 1.],
            [2., 2., 3., 3.],
            [2., 2., 3., 3.]])
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from . import ops
from ._tensor import Tensor

# mode -> (the rank of input it takes, the op), for the modes that are one op per rank.
_OPS = {
    ("nearest", 3): "upsample_nearest1d",
    ("nearest", 4): "upsample_nearest2d",
    ("nearest", 5): "upsample_nearest3d",
    ("nearest-exact", 3): "_upsample_nearest_exact1d",
    ("nearest-exact", 4): "_upsample_nearest_exact2d",
    ("nearest-exact", 5): "_upsample_nearest_exact3d",
    ("area", 3): "adaptive_avg_pool1d",
    ("area", 4): "adaptive_avg_pool2d",
    ("area", 5): "adaptive_avg_pool3d",
    ("linear", 3): "upsample_linear1d",
    ("bilinear", 4): "upsample_bilinear2d",
    ("bicubic", 4): "upsample_bicubic2d",
    ("trilinear", 5): "upsample_trilinear3d",
}
_RANK_OF = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _is_integer(x: object) -> bool:
    return isinstance(x, numbers.Integral)  # int, bool and NumPy integers, as PyTorch accepts


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
) -> Tensor:
    """Down/up-sample ``input`` of shape ``[N, C, *spatial]`` (1 to 3 spatial dims) to ``size`` or by
    ``scale_factor``.

    ``mode`` is one of ``'nearest'`` (source index ``floor(dst * in / out)``), ``'nearest-exact'``
    (pixel centres: ``floor((dst + 0.5) * in / out)``), ``'linear'`` (3-D input), ``'bilinear'`` /
    ``'bicubic'`` (4-D), ``'trilinear'`` (5-D) or ``'area'`` (adaptive average pooling).
    ``align_corners=True`` maps the corner pixels' centres onto each other (linear modes only); with a
    ``scale_factor`` and ``recompute_scale_factor`` not set, the kernels sample at ``dst / scale_factor``
    rather than at ``dst * in / out``.

    Example:
        >>> import tensorplay_p10 as tp
        >>> x = tp.tensor([[[1.0, 2.0, 4.0]]])
        >>> tp.interpolate(x, size=5, mode="linear", align_corners=True)
        tensor([[[1.0000, 1.5000, 2.0000, 3.0000, 4.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the "
                "interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False

    dim = input.dim() - 2  # the number of spatial dims
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True  # adaptive pooling takes a size, never a scale
    if scale_factors is not None:
        # PyTorch's size from scales: the product in float64, truncated (the C++ ops' compute_output_size).
        output_size = [int(math.trunc(float(input.shape[i + 2]) * scale_factors[i])) for i in range(dim)]
        if recompute_scale_factor:
            scale_factors = None  # the kernels then place samples by the integer sizes alone

    op = _OPS.get((mode, input.dim()))
    if op is None:
        if mode in _RANK_OF and input.dim() in (3, 4, 5):
            want = _RANK_OF[mode]
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want}D input")
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area"
            f" | nearest-exact (got {mode})"
        )
    if mode == "area":
        return ops.call(op, input, output_size)
    scales = scale_factors if scale_factors is not None else [None] * dim
    if mode in ("nearest", "nearest-exact"):
        return ops.call(op, input, output_size, *scales)
    return ops.call(op, input, output_size, align_corners, *scales)
