"""Image-shaped operations of ``tensorplay.nn.functional``: ``pad``, ``interpolate`` and the deprecated
``upsample*`` spellings, ``pixel_shuffle`` / ``pixel_unshuffle``, ``channel_shuffle``, ``affine_grid`` and
``grid_sample``.

Where it sits: ``pad`` is P10's ``pad`` op (constant, reflect, replicate and circular modes, in
``packages/p10/csrc/kernels``) and ``interpolate`` is P10's Python front of the upsample ops
(``tensorplay_p10/_interpolate.py``); both are re-exported here under PyTorch's names. The shuffles are
reshapes and a permute (views where possible), so they need no kernel and autograd differentiates them.
``affine_grid`` is one matmul of a base grid; ``grid_sample`` gathers the input at the taps around each grid
point and weights them (bilinear, nearest or bicubic), following ATen's ``GridSampler.h`` step by step
(coordinate unnormalisation, padding of coordinates, tap weights), so autograd differentiates it too.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor, interpolate

__all__ = [
    "affine_grid",
    "channel_shuffle",
    "grid_sample",
    "interpolate",
    "native_channel_shuffle",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    r"""Pad the last ``len(pad) // 2`` dims of ``input``; ``pad`` lists (before, after) pairs starting from
    the last dim. ``mode`` is ``'constant'`` (fill with ``value``, default 0; negative pads crop),
    ``'reflect'`` (mirror without repeating the edge), ``'replicate'`` (repeat the edge) or ``'circular'``
    (wrap around).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.pad(tp.tensor([[[1.0, 2.0, 3.0]]]), (2, 1), mode="reflect")
        tensor([[[3., 2., 1., 2., 3., 2.]]])
    """
    return tp.pad(input, list(pad), mode, value)


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated spelling of :func:`interpolate` (PyTorch warns the same way).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.interpolate(tp.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: :func:`interpolate` with ``mode='nearest'``."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: :func:`interpolate` with ``mode='bilinear'`` and ``align_corners=True``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    r"""Rearrange ``[*, C r^2, H, W]`` into ``[*, C, H r, W r]``: output pixel :math:`(c, h r + i, w r + j)`
    is input :math:`(c r^2 + i r + j, h, w)` (sub-pixel convolution's upsampling step).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.pixel_shuffle(tp.arange(4.0).reshape(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            "upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    # [*, C, r_i, r_j, H, W] -> [*, C, H, r_i, W, r_j]
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    r"""The inverse of :func:`pixel_shuffle`: ``[*, C, H r, W r]`` into ``[*, C r^2, H, W]``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.pixel_unshuffle(tp.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
        tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r != 0:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
            f"{h} is not divisible by {r}"
        )
    if w % r != 0:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
            f"{w} is not divisible by {r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    # [*, C, H, r_i, W, r_j] -> [*, C, r_i, r_j, H, W]
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    r"""Interleave the channels of ``[N, C, *]`` across ``groups`` (ShuffleNet): the channels, seen as a
    ``groups x (C / groups)`` grid, are transposed. Output channel :math:`i \cdot g + j` is input channel
    :math:`j \cdot (C/g) + i`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.channel_shuffle(tp.arange(4.0).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with {input.dim()} "
            "dimension(s)"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    n, rest = input.shape[0], list(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle  # PyTorch's name for the same op without the Python checks


def _linspace_from_neg_one(steps: int, align_corners: bool, dtype: Any) -> Tensor:
    # PyTorch's base grid: pixel centres in [-1, 1]; one step is the centre, 0.
    if steps <= 1:
        return tp.zeros(1, dtype=dtype)
    base = tp.linspace(-1, 1, steps, dtype=dtype)
    return base if align_corners else base * ((steps - 1) / steps)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    r"""The sampling grid of an affine transform, for :func:`grid_sample`: for ``size = [N, C, H, W]`` and
    ``theta`` ``[N, 2, 3]``, ``grid[n, h, w] = theta[n] @ (x_w, y_h, 1)`` with :math:`x, y` the normalised
    pixel centres in [-1, 1]; for 3-D, ``size = [N, C, D, H, W]`` and ``theta`` ``[N, 3, 4]``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> identity = tp.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(identity, [1, 1, 1, 2], align_corners=True)
        tensor([[[[-1.,  0.],
                  [ 1.,  0.]]]])
    """
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
            "Please specify align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            stacklevel=2,
        )
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    spatial = size[2:]  # [H, W] or [D, H, W]
    n = len(spatial)
    # Homogeneous coordinates (x, y[, z], 1), x running along the last dim: [*spatial, n + 1].
    axes = [_linspace_from_neg_one(s, align_corners, theta.dtype) for s in spatial]
    coords = []
    for k in range(n):  # coordinate k (x first) varies along spatial dim n - 1 - k
        shape = [1] * n
        shape[n - 1 - k] = spatial[n - 1 - k]
        coords.append(axes[n - 1 - k].reshape(shape).expand(*spatial))
    coords.append(tp.ones(*spatial, dtype=theta.dtype))
    base = tp.stack(coords, -1).reshape(1, -1, n + 1)
    grid = base.matmul(theta.transpose(1, 2))  # [N, prod(spatial), n]
    return grid.reshape(size[0], *spatial, n)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    # [-1, 1] to pixel index: the corner pixels' centres (align_corners) or their outer edges.
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    # Reflect about the borders low and high (given doubled so that half-pixel borders stay integers).
    if twice_low == twice_high:
        return tp.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    extra = tp.fmod(dist, span)
    flips = tp.floor(dist / span)
    return tp.where(tp.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _pad_coord(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A pixel coordinate moved into the input as ``padding_mode`` says ('zeros' leaves it)."""
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return _reflect(coord, low, high).clamp(0, size - 1)
    return coord


def _taps(flat: Tensor, spatial: list[int], index: list[Tensor]) -> Tensor:
    """``flat`` ``[N, C, prod(spatial)]`` read at the integer coordinates ``index`` (each ``[N, L]``, x
    first); positions outside the input read 0."""
    n_dims = len(spatial)
    inside = None
    linear = None
    for k in range(n_dims):  # index[k] runs along spatial dim n_dims - 1 - k
        size = spatial[n_dims - 1 - k]
        ok = (index[k] >= 0) & (index[k] < size)
        inside = ok if inside is None else inside & ok
    stride = 1
    for k in range(n_dims):
        size = spatial[n_dims - 1 - k]
        term = index[k].clamp(0, size - 1).to(tp.int64) * stride
        linear = term if linear is None else linear + term
        stride *= size
    n, c = flat.shape[0], flat.shape[1]
    values = flat.gather(2, linear.unsqueeze(1).expand(n, c, linear.shape[1]))
    return values * inside.unsqueeze(1).to(flat.dtype)


def _cubic_weights(t: Tensor) -> list[Tensor]:
    # Keys' cubic convolution with A = -0.75 (PyTorch's), at the four taps -1, 0, 1, 2 around the point.
    a = -0.75

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    r"""Sample ``input`` ``[N, C, H, W]`` at the normalised locations ``grid`` ``[N, H_out, W_out, 2]``
    (``(x, y)`` in [-1, 1]; 5-D input with ``[N, D_out, H_out, W_out, 3]`` grids too). ``mode`` is
    ``'bilinear'``, ``'nearest'`` or ``'bicubic'`` (4-D only); locations outside the input read zeros, the
    border value (``'border'``) or the mirrored input (``'reflection'``). Written with gathers and
    elementwise ops, so autograd gives gradients for both ``input`` and ``grid``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> x = tp.tensor([[[[0.0, 10.0]]]])
        >>> F.grid_sample(x, tp.tensor([[[[0.0, 0.0]]]]), align_corners=True)
        tensor([[[[5.]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
            f"but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
            "Please specify align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            stacklevel=2,
        )
        align_corners = False
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    n_dims = input.dim() - 2
    if grid.shape[0] != input.shape[0] or grid.shape[-1] != n_dims:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {n_dims} in last dimension and the batch size of "
            f"input ({input.shape[0]}), but got grid with sizes {list(grid.shape)}"
        )
    if mode == "bicubic" and n_dims != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c = input.shape[0], input.shape[1]
    spatial = list(input.shape[2:])
    out_spatial = list(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, n_dims)
    # coords[k]: the pixel coordinate along spatial dim n_dims - 1 - k (x first), [N, L]
    sizes = [spatial[n_dims - 1 - k] for k in range(n_dims)]
    raw = [_unnormalize(g[..., k], sizes[k], align_corners) for k in range(n_dims)]

    if mode == "bicubic":
        # The taps are padded one by one (not the point), as PyTorch does.
        base = [tp.floor(r) for r in raw]
        weights = [_cubic_weights(r - b) for r, b in zip(raw, base, strict=True)]
        out = None
        for i in range(4):
            for j in range(4):
                ix = _pad_coord(base[0] - 1 + i, sizes[0], padding_mode, align_corners)
                iy = _pad_coord(base[1] - 1 + j, sizes[1], padding_mode, align_corners)
                term = _taps(flat, spatial, [ix.detach(), iy.detach()]) * (
                    weights[0][i] * weights[1][j]
                ).unsqueeze(1)
                out = term if out is None else out + term
        return out.reshape(n, c, *out_spatial)

    coords = [_pad_coord(raw[k], sizes[k], padding_mode, align_corners) for k in range(n_dims)]
    if mode == "nearest":
        index = [tp.round(x).detach() for x in coords]  # round half to even, as std::nearbyint
        return _taps(flat, spatial, index).reshape(n, c, *out_spatial)
    lows = [tp.floor(x).detach() for x in coords]
    fracs = [x - low for x, low in zip(coords, lows, strict=True)]
    out = None
    for corner in range(2**n_dims):  # every corner of the cell around the point: its weight is a product
        index, weight = [], None
        for k in range(n_dims):
            upper = (corner >> k) & 1
            index.append(lows[k] + upper)
            w = fracs[k] if upper else 1 - fracs[k]
            weight = w if weight is None else weight * w
        term = _taps(flat, spatial, index) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out.reshape(n, c, *out_spatial)
