"""Derivatives of the resampling ops (P10's kernels/upsample.cpp) and of im2col / col2im (kernels/im2col.cpp).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). ``interpolate``
is a Composite that picks one of the upsample ops, so these formulas cover it too.

Note [Upsample gradients]
  Every upsample mode is linear and separable (Note [Interpolation taps] in upsample.cpp): along spatial dim
  k the output is ``y = x @ M_k`` over that dim, with M_k the (in_k x out_k) matrix of interpolation weights.
  The gradient is therefore ``g @ M_k^T`` applied dim by dim. M_k is not rebuilt from the index formulas
  here: it is *read off the kernel itself* by resampling an identity — input ``eye(in_k)`` laid out as
  ``in_k`` channels whose dim k runs over the input positions, every other spatial dim of size 1 mapped to
  size 1 (one tap of weight 1). Taps depend only on (in_k, out_k, align_corners, scale_k), so this gives the
  exact weights of the forward call, in its precision (opmath: float32 for float32/16-bit, float64 for
  float64), border clamping, align_corners, explicit scales and the nearest2d legacy rule included. Since M_k
  is a constant, the backward is a matmul of the gradient and is differentiable again.
  Why a dense matmul when M_k has only 1, 2 or 4 nonzeros per column: adding g times each tap with index_add
  along the moved dim measured 2.5-4.5x slower than the GEMM at 64x64 -> 128x128 and 128x128 -> 256x256
  (2-core machine); the dense backward is within 2x of PyTorch's (bilinear, bicubic), 7x for nearest.
"""

from __future__ import annotations

import functools

import tensorplay_p10 as tp
from tensorplay_p10 import ops

from . import derivative


def _weights(op, nsp: int, k: int, n_in: int, n_out: int, align, scale, dtype, device):
    """M_k of Note [Upsample gradients]: (n_in, n_out) weights of spatial dim k (of nsp), from the kernel."""
    shape = [1, n_in] + [1] * nsp
    shape[2 + k] = n_in
    probe = tp.eye(n_in, dtype=dtype, device=device).reshape(shape)
    size = [1] * nsp
    size[k] = n_out
    scales = [None] * nsp
    scales[k] = scale
    args = [probe, size] + ([align] if align is not None else []) + scales
    out = op(*args)
    return out.reshape(n_in, n_out)


def _upsample_backward(op, nsp: int, ctx, grad, align, scales):
    # The weights in the forward's opmath precision; 16-bit gradients are contracted in float32.
    work = tp.float64 if grad.dtype == tp.float64 else tp.float32
    g = grad.to(work)
    in_shape = ctx.self_shape
    for k in range(nsp):
        d = 2 + k
        m = _weights(op, nsp, k, in_shape[d], grad.shape[d], align, scales[k], work, grad.device)
        g = (g.movedim(d, -1) @ m.mT).movedim(-1, d)
    return g.to(grad.dtype)


def _register(name: str, nsp: int, linear: bool) -> None:
    op = functools.partial(ops.call, name)

    @derivative(name)
    def _(ctx, grad):
        if nsp == 1:
            scales = [ctx.scales]
        elif nsp == 2:
            scales = [ctx.scales_h, ctx.scales_w]
        else:
            scales = [ctx.scales_d, ctx.scales_h, ctx.scales_w]
        return _upsample_backward(op, nsp, ctx, grad, ctx.align_corners if linear else None, scales)


for _name, _nsp, _linear in (
    ("upsample_nearest1d", 1, False),
    ("upsample_nearest2d", 2, False),
    ("upsample_nearest3d", 3, False),
    ("_upsample_nearest_exact1d", 1, False),
    ("_upsample_nearest_exact2d", 2, False),
    ("_upsample_nearest_exact3d", 3, False),
    ("upsample_linear1d", 1, True),
    ("upsample_bilinear2d", 2, True),
    ("upsample_bicubic2d", 2, True),
    ("upsample_trilinear3d", 3, True),
):
    _register(_name, _nsp, _linear)


# ---- im2col / col2im --------------------------------------------------------------------------------------
# im2col copies (with zero padding) each input pixel into the columns of the windows that cover it; col2im
# sums the columns back into the pixels. They are each other's transpose, so each one's gradient is the
# other op with the same parameters.
@derivative("im2col")
def _im2col(ctx, grad):
    size = list(ctx.self_shape[-2:])
    return tp.col2im(grad, size, ctx.kernel_size, ctx.dilation, ctx.padding, ctx.stride)


@derivative("col2im")
def _col2im(ctx, grad):
    return tp.im2col(grad, ctx.kernel_size, ctx.dilation, ctx.padding, ctx.stride)
