"""Derivatives of convolution and pooling (P10's conv, pool and pool_adaptive kernel files).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). The named convs
(conv1d/2d/3d, conv_transpose*) are Composites over ``convolution``, so one formula covers them all. Every
backward is itself made of ``convolution`` calls, so it is differentiable again.

Note [Convolution gradients]
  For y = conv(x, w) (stride s, padding p, dilation d):
  - dx is the transposed convolution of dy with the same w (and the output padding that restores x's size);
  - dw[o, c, k] = sum_{n, i} dy[n, o, i] x[n, c, i s + k d - p]: a convolution of x (batch and channel
    swapped) with dy as the kernel, stride and dilation exchanged, cut to w's size.
  A transposed convolution swaps the roles: its dx is a plain convolution of dy with w, and its dw is the
  plain dw formula with x and dy exchanged.
"""

from __future__ import annotations

import math

import tensorplay_p10 as tp

from . import derivative


def _expand(v, n: int) -> list[int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


def _conv(x, w, stride, padding, dilation, groups, transposed=False, output_padding=None):
    n = x.dim() - 2
    return tp.convolution(
        x, w, None, stride, padding, dilation, transposed, output_padding or [0] * n, groups
    )


def _weight_grad(x, gy, w_shape, stride, padding, dilation, groups):
    """dw of a plain convolution (Note [Convolution gradients]), group by group."""
    n = x.dim() - 2
    cin_g = x.shape[1] // groups
    cout_g = gy.shape[1] // groups
    parts = []
    for g in range(groups):
        xg = x.narrow(1, g * cin_g, cin_g).transpose(0, 1)  # [Cin_g, N, *S]: channels become the batch
        gg = gy.narrow(1, g * cout_g, cout_g).transpose(0, 1)  # [Cout_g, N, *O]: the kernel
        r = _conv(xg, gg, dilation, padding, stride, 1)  # [Cin_g, Cout_g, *K'] with K' >= K
        for k in range(n):
            r = r.narrow(2 + k, 0, w_shape[2 + k])
        parts.append(r.transpose(0, 1))
    return parts[0] if groups == 1 else tp.cat(parts, 0)


@derivative("convolution", save=("input", "weight"))
def _convolution(ctx, grad):
    x, w = ctx.input, ctx.weight
    n = x.dim() - 2
    s, p, d = _expand(ctx.stride, n), _expand(ctx.padding, n), _expand(ctx.dilation, n)
    groups = ctx.groups
    gx = gw = gb = None
    if ctx.needs_input_grad.get("bias"):
        gb = grad.sum([0] + list(range(2, grad.dim())))
    if not ctx.transposed:
        if ctx.needs_input_grad["input"]:
            # the output padding that makes the transposed convolution give back exactly x's size
            op = [
                x.shape[2 + k] - ((grad.shape[2 + k] - 1) * s[k] - 2 * p[k] + d[k] * (w.shape[2 + k] - 1) + 1)
                for k in range(n)
            ]
            gx = _conv(grad, w, s, p, d, groups, True, op)
        if ctx.needs_input_grad["weight"]:
            gw = _weight_grad(x, grad, tuple(w.shape), s, p, d, groups)
    else:
        if ctx.needs_input_grad["input"]:
            gx = _conv(grad, w, s, p, d, groups)
        if ctx.needs_input_grad["weight"]:
            # y = conv_T(x, w)  <=>  x = conv(y, w)^T: dw is the plain dw with x and dy exchanged
            gw = _weight_grad(grad, x, tuple(w.shape), s, p, d, groups)
    return gx, gw, gb


# ---- pooling ----------------------------------------------------------------------------------------------
def _spatial(ctx) -> int:
    """1, 2 or 3: read from the op's name (max_pool2d_with_indices -> 2)."""
    name = ctx.op_name
    return int(name[name.index("pool") + 4])


def _max_pool_backward(grad, indices, in_shape, nsp: int):
    """Each output's gradient goes to the input element its index names (flat within its plane, PyTorch's
    convention); overlapping windows add up."""
    lead = list(in_shape[: len(in_shape) - nsp])
    plane = math.prod(in_shape[len(in_shape) - nsp :])
    rows = math.prod(lead)
    g = grad.reshape(rows, -1)
    out = tp.zeros(rows, plane, dtype=grad.dtype, device=grad.device).scatter_add(
        1, indices.reshape(rows, -1), g
    )
    return out.reshape(in_shape)


@derivative(
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    results=True,
    outputs=(True, False),
)
def _max_pool_with_indices(ctx, grad, _indices_grad):
    return _max_pool_backward(grad, ctx.results[1], ctx.self_shape, _spatial(ctx))


@derivative("max_pool1d", "max_pool2d", "max_pool3d", save=("self",))
def _max_pool(ctx, grad):
    nsp = _spatial(ctx)
    with_indices = getattr(tp, f"max_pool{nsp}d_with_indices")
    _, idx = with_indices(ctx.self, ctx.kernel_size, ctx.stride, ctx.padding, ctx.dilation, ctx.ceil_mode)
    return _max_pool_backward(grad, idx, ctx.self_shape, nsp)


def _windows_sum_transposed(g, in_spatial, k, s, p):
    """Sum every output's value back over its window: a transposed convolution with a ones kernel, computed
    without padding and then cut to the input (so ceil_mode windows that hang over the edge are handled)."""
    n = len(k)
    planes = g.reshape(-1, 1, *g.shape[g.dim() - n :])
    ones = tp.ones([1, 1] + list(k), dtype=g.dtype, device=g.device)
    full = tp.convolution(planes, ones, None, s, [0] * n, [1] * n, True, [0] * n, 1)
    # inputs after the last window (floor mode) get no gradient: pad the sums with zeros to cover them
    pads = []
    for d in reversed(range(n)):
        pads += [0, max(0, p[d] + in_spatial[d] - full.shape[2 + d])]
    if any(pads):
        full = tp.pad(full, pads)
    for d in range(n):
        full = full.narrow(2 + d, p[d], in_spatial[d])
    return full


def _avg_divisors(in_spatial, out_spatial, k, s, p, count_include_pad, dtype, device):
    """How many elements each window of avg_pool divides by (PyTorch's rule), as a tensor of the output's
    spatial shape."""
    n = len(k)
    extra = [max(0, (out_spatial[d] - 1) * s[d] + k[d] - (in_spatial[d] + 2 * p[d])) for d in range(n)]
    if count_include_pad:  # the window, clipped to the padded input
        region = tp.ones([1, 1] + [in_spatial[d] + 2 * p[d] for d in range(n)], dtype=dtype, device=device)
    else:  # the window, clipped to the input itself
        region = tp.ones([1, 1] + list(in_spatial), dtype=dtype, device=device)
        pads = []
        for d in reversed(range(n)):
            pads += [p[d], p[d]]
        region = tp.pad(region, pads)
    pads = []
    for d in reversed(range(n)):
        pads += [0, extra[d]]
    region = tp.pad(region, pads)
    counts = tp.convolution(
        region,
        tp.ones([1, 1] + list(k), dtype=dtype, device=device),
        None,
        s,
        [0] * n,
        [1] * n,
        False,
        [0] * n,
        1,
    )
    for d in range(n):
        counts = counts.narrow(2 + d, 0, out_spatial[d])
    return counts.reshape(out_spatial)


@derivative("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(ctx, grad):
    nsp = _spatial(ctx)
    shape = ctx.self_shape
    in_spatial = list(shape[len(shape) - nsp :])
    out_spatial = list(grad.shape[grad.dim() - nsp :])
    k = _expand(ctx.kernel_size, nsp)
    s = _expand(ctx.stride, nsp) if len(ctx.stride) else k
    p = _expand(ctx.padding, nsp)
    override = getattr(ctx, "divisor_override", None)
    if override:
        g = grad / override
    else:
        g = grad / _avg_divisors(
            in_spatial, out_spatial, k, s, p, ctx.count_include_pad, grad.dtype, grad.device
        )
    return _windows_sum_transposed(g, in_spatial, k, s, p).reshape(shape)


def _adaptive_matrix(in_size: int, out_size: int, dtype, device) -> tp.Tensor:
    """[out, in]: row i averages input[floor(i in / out) : ceil((i + 1) in / out)] (PyTorch's windows)."""
    rows = []
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -((-(i + 1) * in_size) // out_size)
        row = [0.0] * in_size
        for j in range(start, end):
            row[j] = 1.0 / (end - start)
        rows.append(row)
    return tp.tensor(rows, dtype=dtype, device=device).reshape(out_size, in_size)


@derivative("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
def _adaptive_avg_pool(ctx, grad):
    nsp = _spatial(ctx)
    shape = ctx.self_shape
    g = grad
    # separable: undo the average along each spatial dim with the transposed averaging matrix
    for d in range(nsp):
        dim = len(shape) - nsp + d
        m = _adaptive_matrix(shape[dim], g.shape[dim], grad.dtype, grad.device)  # [out, in]
        g = (g.movedim(dim, -1) @ m).movedim(-1, dim)  # a matmul: it has a CUDA kernel, tensordot has not
    return g
