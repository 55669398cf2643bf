"""Derivatives of the NN kernels P10 ships (softmax, norms, losses, dropout).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). Each backward is
written from the forward's definition with TensorPlay ops, so it stays differentiable (double backward).
"""

from __future__ import annotations

import math

import tensorplay_p10 as tp

from ..grad_mode import is_grad_enabled
from . import derivative


@derivative("softmax.int", results=True)
def _softmax(ctx, grad):
    y = ctx.result
    return y * (grad - (grad * y).sum(ctx.dim, keepdim=True))


@derivative("log_softmax.int", results=True)
def _log_softmax(ctx, grad):
    return grad - ctx.result.exp() * grad.sum(ctx.dim, keepdim=True)


def _norm_dims(x: tp.Tensor, normalized_shape) -> list[int]:
    return list(range(x.dim() - len(normalized_shape), x.dim()))


# Note [Norm backward paths]
#   layer_norm and rms_norm have two backward paths. When the backward pass is not recorded (grad mode is off
#   inside backward, i.e. create_graph=False: the training-step case), the formula calls P10's fused
#   layer_norm_backward / rms_norm_backward, one pass over the rows (Note [Norm backward] in
#   kernels/norm_backward.cpp). When it is recorded (create_graph=True, or a JVP, which runs the formula under
#   enable_grad), the formula builds the same gradients from tp ops, so autograd can differentiate them again;
#   the fused ops have no formula of their own. Both paths compute the maths of Note [Norm backward].


def _layer_norm_composite(ctx, grad, dims: list[int], n: int):
    x, w = ctx.input, ctx.weight
    mean = x.mean(dims, keepdim=True)
    rstd = ((x - mean).pow(2).mean(dims, keepdim=True) + ctx.eps).rsqrt()
    xhat = (x - mean) * rstd
    batch = list(range(x.dim() - len(dims)))
    gw = (grad * xhat).sum(batch) if w is not None and ctx.needs_input_grad["weight"] else None
    gb = grad.sum(batch) if ctx.needs_input_grad["bias"] else None
    g = grad * w if w is not None else grad
    gx = None
    if ctx.needs_input_grad["input"]:
        gx = rstd * (g - g.sum(dims, keepdim=True) / n - xhat * (g * xhat).sum(dims, keepdim=True) / n)
    return gx, gw, gb


@derivative("layer_norm", save=("input", "weight"))
def _layer_norm(ctx, grad):
    if not is_grad_enabled():  # Note [Norm backward paths]
        return tp.layer_norm_backward(
            grad,
            ctx.input,
            ctx.normalized_shape,
            ctx.weight,
            ctx.eps,
            ctx.needs_input_grad["input"],
            ctx.needs_input_grad["weight"],
            ctx.needs_input_grad["bias"],
        )
    dims = _norm_dims(ctx.input, ctx.normalized_shape)
    return _layer_norm_composite(ctx, grad, dims, math.prod(ctx.normalized_shape))


@derivative("rms_norm", save=("input", "weight"))
def _rms_norm(ctx, grad):
    x, w = ctx.input, ctx.weight
    if not is_grad_enabled():  # Note [Norm backward paths]
        return tp.rms_norm_backward(
            grad,
            x,
            ctx.normalized_shape,
            w,
            ctx.eps,
            ctx.needs_input_grad["input"],
            ctx.needs_input_grad["weight"],
        )
    dims = _norm_dims(x, ctx.normalized_shape)
    n = math.prod(ctx.normalized_shape)
    eps = ctx.eps if ctx.eps is not None else tp.finfo(x.dtype).eps
    rrms = (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = x * rrms
    batch = list(range(x.dim() - len(dims)))
    gw = (grad * xhat).sum(batch) if w is not None and ctx.needs_input_grad["weight"] else None
    g = grad * w if w is not None else grad
    gx = rrms * (g - xhat * (g * xhat).sum(dims, keepdim=True) / n)
    return gx, gw


@derivative("native_dropout", results=True, outputs=(True, False))
def _native_dropout(ctx, grad, _mask_grad):
    p = ctx.p
    if ctx.train is False or p == 0:
        return grad
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return grad * ctx.results[1] * scale


def _scale(grad: tp.Tensor, reduction: str, numel: int) -> tp.Tensor:
    """The per-element gradient of a loss reduced with ``reduction`` (grad is 0-d unless 'none')."""
    if reduction == "mean":
        return grad / max(numel, 1) if numel else grad
    return grad


def _elementwise_grads(ctx, grad, d_input):
    """Gradients of an elementwise loss l(input, target) from dl/dinput (dl/dtarget = -dl/dinput here)."""
    n = d_input.numel()
    g = _scale(grad, ctx.reduction, n) * d_input
    return g, -g


@derivative("mse_loss", save=("self", "target"))
def _mse(ctx, grad):
    return _elementwise_grads(ctx, grad, 2 * (ctx.self - ctx.target))


@derivative("l1_loss", save=("self", "target"))
def _l1(ctx, grad):
    return _elementwise_grads(ctx, grad, (ctx.self - ctx.target).sgn())


@derivative("smooth_l1_loss", save=("self", "target"))
def _smooth_l1(ctx, grad):
    d = ctx.self - ctx.target
    beta = ctx.beta
    if beta == 0:
        return _elementwise_grads(ctx, grad, d.sign())
    inner = d.abs() < beta
    return _elementwise_grads(ctx, grad, tp.where(inner, d / beta, d.sign()))


@derivative("huber_loss", save=("self", "target"))
def _huber(ctx, grad):
    d = ctx.self - ctx.target
    delta = ctx.delta
    return _elementwise_grads(ctx, grad, tp.where(d.abs() <= delta, d, delta * d.sign()))


@derivative("binary_cross_entropy", save=("self", "target", "weight"))
def _bce(ctx, grad):
    x, y = ctx.self, ctx.target
    eps = 1e-12
    d = (x - y) / (x * (1 - x)).clamp(min=eps)
    if ctx.weight is not None:
        d = d * ctx.weight
    g = _scale(grad, ctx.reduction, x.numel()) * d
    gy = None
    if ctx.needs_input_grad["target"]:
        gy = _scale(grad, ctx.reduction, x.numel()) * (
            tp.log(1 - x).clamp(min=-100) - tp.log(x).clamp(min=-100)
        )
        if ctx.weight is not None:
            gy = gy * ctx.weight
    return g, gy, None


@derivative("binary_cross_entropy_with_logits", save=("self", "target", "weight", "pos_weight"))
def _bce_logits(ctx, grad):
    x, y, pw = ctx.self, ctx.target, ctx.pos_weight
    s = x.sigmoid()
    if pw is None:
        d = s - y
    else:
        d = (pw * y + 1 - y) * s - pw * y
    if ctx.weight is not None:
        d = d * ctx.weight
    sc = _scale(grad, ctx.reduction, x.numel())
    gy = None
    if ctx.needs_input_grad["target"]:
        # d/dy of -[pw y log s(x) + (1 - y) log s(-x)] = -pw log s(x) + log s(-x)  (= -x when pw is 1)
        gy = -x if pw is None else -pw * x.sigmoid().log() + (-x).sigmoid().log()
        gy = sc * gy
        if ctx.weight is not None:
            gy = gy * ctx.weight
    return sc * d, gy, None, None


@derivative("kl_div", save=("self", "target"))
def _kl_div(ctx, grad):
    x, y = ctx.self, ctx.target
    n = x.numel()
    if ctx.reduction == "batchmean":
        sc = grad / (x.shape[0] if x.dim() else 1)
    else:
        sc = _scale(grad, ctx.reduction, n)
    if ctx.log_target:
        gx = -y.exp() * sc
        gy = (y.exp() * (y - x + 1)) * sc
    else:
        gx = -y * sc
        gy = tp.where(y > 0, (y.log() - x + 1), tp.zeros_like(y)) * sc
    return gx, gy


def _no_weight_grad(ctx, op: str) -> None:
    if ctx.needs_input_grad.get("weight"):
        raise NotImplementedError(f"the derivative for '{op}' with respect to 'weight' is not implemented.")


def _class_weights(ctx, x: tp.Tensor, target: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
    """Per-sample weight w[target] (0 where ignored) and the mean's denominator."""
    w = ctx.weight
    valid = target != ctx.ignore_index
    safe = tp.where(valid, target, tp.zeros_like(target))
    ws = (w[safe] if w is not None else tp.ones(safe.shape, dtype=x.dtype, device=x.device)) * valid
    return ws, ws.sum()


def _class_dim_last(x: tp.Tensor) -> tp.Tensor:
    return x.movedim(1, -1) if x.dim() > 1 else x


@derivative("nll_loss", save=("self", "target", "weight"))
def _nll(ctx, grad):
    _no_weight_grad(ctx, "nll_loss")
    x, t = ctx.self, ctx.target
    ws, denom = _class_weights(ctx, x, t)
    per = ws * (grad / denom if ctx.reduction == "mean" else grad)
    safe = tp.where(t != ctx.ignore_index, t, tp.zeros_like(t))
    cdim = 1 if x.dim() > 1 else 0
    g = tp.zeros_like(x).scatter(cdim, safe.unsqueeze(cdim), -per.unsqueeze(cdim).to(x.dtype))
    return g, None, None


@derivative("cross_entropy", save=("self", "target", "weight"))
def _cross_entropy(ctx, grad):
    _no_weight_grad(ctx, "cross_entropy")
    x, t = ctx.self, ctx.target
    cdim = 1 if x.dim() > 1 else 0
    p = x.softmax(cdim)
    n_classes = x.shape[cdim]
    eps = ctx.label_smoothing
    w = ctx.weight
    if t.dtype.is_floating_point:  # class probabilities
        q = t * (1 - eps) + eps / n_classes if eps else t
        if w is not None:
            shape = [1] * x.dim()
            shape[cdim] = n_classes
            wq = q * w.reshape(shape)
        else:
            wq = q
        g = p * wq.sum(cdim, keepdim=True) - wq
        n = x.numel() // n_classes
        sc = grad if ctx.reduction != "mean" else grad / max(n, 1)
        if ctx.reduction == "none":
            sc = grad.unsqueeze(cdim)
        # loss = -sum_c w_c q_c log_softmax(x)_c, q = t (1 - eps) + eps / C: d/dt = -(1 - eps) w log_softmax
        gt = None
        if ctx.needs_input_grad["target"]:
            lw = x.log_softmax(cdim) * (1 - eps)
            if w is not None:
                lw = lw * w.reshape(shape)
            gt = -lw * sc
        return g * sc, gt, None
    # class indices
    valid = t != ctx.ignore_index
    safe = tp.where(valid, t, tp.zeros_like(t))
    onehot = tp.zeros_like(x).scatter(cdim, safe.unsqueeze(cdim), 1.0)
    shape = [1] * x.dim()
    shape[cdim] = n_classes
    wvec = w.reshape(shape) if w is not None else None
    q = onehot * (1 - eps) + eps / n_classes if eps else onehot
    wq = q * wvec if wvec is not None else q
    g = p * wq.sum(cdim, keepdim=True) - wq
    g = g * valid.unsqueeze(cdim)
    if ctx.reduction == "none":
        return g * grad.unsqueeze(cdim), None, None
    if ctx.reduction == "sum":
        return g * grad, None, None
    ws = (w[safe] if w is not None else tp.ones(safe.shape, dtype=x.dtype, device=x.device)) * valid
    return g * (grad / ws.sum()), None, None


@derivative("embedding", save=("indices",))
def _embedding(ctx, grad):
    # Rows at padding_idx get no gradient; scale_grad_by_freq divides each row's gradient by its count.
    idx = ctx.indices.reshape(-1)
    dim = ctx.weight_shape[1]
    g = grad.reshape(-1, dim)
    if ctx.padding_idx >= 0:
        g = g * (idx != ctx.padding_idx).unsqueeze(1)
    if ctx.scale_grad_by_freq:
        counts = tp.bincount(idx, minlength=ctx.weight_shape[0])
        g = g / counts[idx].unsqueeze(1)
    return tp.zeros(ctx.weight_shape, dtype=grad.dtype, device=grad.device).index_add(0, idx, g), None


# ---- embedding_bag -----------------------------------------------------------------------------------------
# Only the kernel _embedding_bag has a formula; the Composite embedding_bag (2-D input, max_norm) is recorded
# through it. Its extra outputs (Note [Bags] in kernels/embedding_bag.cpp) say where each row went:
# offset2bag[i] is the bag of indices[i] (-1 for none), bag_size[b] how many rows bag b took, and
# max_indices[b, d] the row that gave bag b's maximum in column d (-1 for an empty bag).
@derivative("_embedding_bag", save=("weight", "indices", "per_sample_weights"), results=True)
def _embedding_bag(ctx, grad, *_unused):
    _, offset2bag, bag_size, max_indices = ctx.results
    indices = ctx.indices.to(tp.int64)
    num = ctx.weight.shape[0]
    gw = gpsw = None
    if ctx.mode == 2:  # max: each output element came from one row of weight
        if ctx.needs_input_grad["weight"]:
            taken = (max_indices >= 0).to(grad.dtype)
            rows = max_indices.clamp(min=0)
            gw = tp.zeros(num, grad.shape[1], dtype=grad.dtype, device=grad.device).scatter_add(
                0, rows, grad * taken
            )
        return gw, None, None, None
    # sum / mean: row indices[i] (times its weight, over the bag size) went into bag offset2bag[i]
    used = (offset2bag >= 0) & (indices != ctx.padding_idx) if ctx.padding_idx >= 0 else offset2bag >= 0
    bag = offset2bag.clamp(min=0)
    per_row = grad.index_select(0, bag) * used.to(grad.dtype).unsqueeze(1)
    if ctx.mode == 1:
        per_row = per_row / bag_size.clamp(min=1).index_select(0, bag).to(grad.dtype).unsqueeze(1)
    psw = ctx.per_sample_weights
    if ctx.needs_input_grad["weight"]:
        scaled = per_row if psw is None else per_row * psw.unsqueeze(1)
        if ctx.scale_grad_by_freq:  # each row's gradient divided by how often its index occurs
            ones = tp.ones(indices.shape, dtype=grad.dtype, device=grad.device)
            freq = tp.zeros(num, dtype=grad.dtype, device=grad.device).index_add(0, indices, ones)
            scaled = scaled / freq.index_select(0, indices).unsqueeze(1)
        gw = tp.zeros(num, grad.shape[1], dtype=grad.dtype, device=grad.device).index_add(0, indices, scaled)
    if psw is not None and ctx.needs_input_grad["per_sample_weights"]:
        gpsw = (per_row * ctx.weight.index_select(0, indices)).sum(1)
    return gw, None, None, gpsw
