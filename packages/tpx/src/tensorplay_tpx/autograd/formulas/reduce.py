"""Derivatives of reductions, scans and sorting (P10's reduce*, scan and sort kernel files).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorplay_p10 as tp

from . import derivative, nondifferentiable


def _dims(dim: int | Sequence[int] | None, ndim: int) -> list[int]:
    """The reduced dims, wrapped and sorted; every dim for None or [] (PyTorch's full reduction)."""
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return list(range(ndim))
    return sorted(d % ndim if ndim else 0 for d in dim)


def _unreduce(grad: tp.Tensor, shape: tuple, dim, keepdim: bool) -> tp.Tensor:
    """Bring a reduction's gradient back to the input's rank (size-1 dims where it reduced)."""
    dims = _dims(dim, len(shape))
    if not keepdim:
        for d in dims:
            grad = grad.unsqueeze(d)
    return grad


def _count(shape: tuple, dim) -> int:
    return math.prod(shape[d] for d in _dims(dim, len(shape))) if shape else 1


@derivative("sum")
def _sum(ctx, grad):
    return _unreduce(grad, ctx.self_shape, ctx.dim, ctx.keepdim).expand(ctx.self_shape)


@derivative("nansum", save=("self",))
def _nansum(ctx, grad):
    g = _unreduce(grad, ctx.self_shape, ctx.dim, ctx.keepdim)
    return g * ~ctx.self.isnan()


@derivative("mean")
def _mean(ctx, grad):
    g = _unreduce(grad, ctx.self_shape, ctx.dim, ctx.keepdim)
    return g.expand(ctx.self_shape) / _count(ctx.self_shape, ctx.dim)


@derivative("nanmean", save=("self",))
def _nanmean(ctx, grad):
    keep = ~ctx.self.isnan()
    n = keep.sum(_dims(ctx.dim, ctx.self.dim()), keepdim=True)
    return _unreduce(grad, ctx.self_shape, ctx.dim, ctx.keepdim) * keep / n


@derivative("prod", save=("self",), results=True)
def _prod(ctx, grad):
    x = ctx.self
    if ctx.dim is None:
        flat = x.reshape(-1)
        g = _prod_dim_backward(grad.reshape(1), flat, ctx.result.reshape(1), 0)
        return g.reshape(x.shape)
    g = _unreduce(grad, ctx.self_shape, ctx.dim, ctx.keepdim)
    r = _unreduce(ctx.result, ctx.self_shape, ctx.dim, ctx.keepdim)
    return _prod_dim_backward(g, x, r, ctx.dim % max(x.dim(), 1))


def _prod_dim_backward(grad, x, result, dim):
    """d prod / d x_i = product of the others: result / x_i, or (with zeros) exclusive prefix x suffix
    products."""
    if not bool((x == 0).any()):
        return grad * result / x
    n = x.shape[dim] if x.dim() else 1
    ones = tp.ones_like(x.narrow(dim, 0, 1)) if x.dim() else tp.ones_like(x)
    before = tp.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim) if n > 1 else ones
    rev = x.flip([dim])
    after = tp.cat([ones, rev.narrow(dim, 0, n - 1)], dim).cumprod(dim).flip([dim]) if n > 1 else ones
    return grad * before * after


def _evenly(grad, x, value, dim, keepdim):
    """Share the gradient of max/min (and friends) equally among the elements equal to the result."""
    g = _unreduce(grad, tuple(x.shape), dim, keepdim)
    v = _unreduce(value, tuple(x.shape), dim, keepdim)
    mask = x == v
    return g * mask / mask.sum(_dims(dim, x.dim()), keepdim=True)


@derivative("amax", "amin", save=("self",), results=True)
def _amax(ctx, grad):
    return _evenly(grad, ctx.self, ctx.result, ctx.dim, ctx.keepdim)


@derivative("max", "min", "median", "nanmedian", save=("self",), results=True)
def _max_all(ctx, grad):
    return _evenly(grad, ctx.self, ctx.result, None, False)


def _select_backward(grad, indices, shape, dim, keepdim):
    """Gradient of an op that picked one element per slice along ``dim`` (max.dim, kthvalue, ...)."""
    if len(shape) == 0:
        return grad
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return tp.zeros(shape, dtype=grad.dtype).scatter(dim, indices, grad)


@derivative("max.dim", "min.dim", "median.dim", "nanmedian.dim", "mode", results=True, outputs=(True, False))
def _max_dim(ctx, grad, _indices_grad):
    return _select_backward(grad, ctx.results[1], ctx.self_shape, ctx.dim, ctx.keepdim)


@derivative("kthvalue", results=True, outputs=(True, False))
def _kthvalue(ctx, grad, _indices_grad):
    return _select_backward(grad, ctx.results[1], ctx.self_shape, ctx.dim, ctx.keepdim)


@derivative("sort", "topk", results=True, outputs=(True, False))
def _sort(ctx, grad, _indices_grad):
    if len(ctx.self_shape) == 0:
        return grad
    return tp.zeros(ctx.self_shape, dtype=grad.dtype, device=grad.device).scatter(
        ctx.dim, ctx.results[1], grad
    )


@derivative("aminmax", save=("self",), results=True)
def _aminmax(ctx, gmin, gmax):
    dim = ctx.dim
    return _evenly(gmin, ctx.self, ctx.results[0], dim, ctx.keepdim) + _evenly(
        gmax, ctx.self, ctx.results[1], dim, ctx.keepdim
    )


def _correction(ctx) -> float:
    c = getattr(ctx, "correction", None)
    if c is None:
        return 1.0 if getattr(ctx, "unbiased", True) else 0.0
    return float(c)


def _var_backward(grad, x, dim, keepdim, correction):
    n = _count(tuple(x.shape), dim)
    g = _unreduce(grad, tuple(x.shape), dim, keepdim)
    centered = x - x.mean(_dims(dim, x.dim()), keepdim=True)
    if (
        n - correction <= 0
    ):  # the forward is NaN: so is its gradient, except where no gradient flows (var_mean)
        return tp.where(g == 0, tp.zeros_like(centered), tp.full_like(centered, math.nan) * g)
    return g * 2 * centered / (n - correction)


@derivative("var", "var.correction", "var.dim", save=("self",))
def _var(ctx, grad):
    return _var_backward(
        grad, ctx.self, getattr(ctx, "dim", None), getattr(ctx, "keepdim", False), _correction(ctx)
    )


@derivative("std", "std.correction", "std.dim", save=("self",), results=True)
def _std(ctx, grad):
    dim, keepdim = getattr(ctx, "dim", None), getattr(ctx, "keepdim", False)
    g = grad / (2 * ctx.result)
    return _var_backward(g, ctx.self, dim, keepdim, _correction(ctx))


@derivative("var_mean", "var_mean.correction", "var_mean.dim", save=("self",))
def _var_mean(ctx, gvar, gmean):
    dim, keepdim = getattr(ctx, "dim", None), getattr(ctx, "keepdim", False)
    x = ctx.self
    g = _var_backward(gvar, x, dim, keepdim, _correction(ctx))
    return g + _unreduce(gmean, tuple(x.shape), dim, keepdim) / _count(tuple(x.shape), dim)


@derivative("std_mean", "std_mean.correction", "std_mean.dim", save=("self",), results=True)
def _std_mean(ctx, gstd, gmean):
    dim, keepdim = getattr(ctx, "dim", None), getattr(ctx, "keepdim", False)
    x = ctx.self
    g = _var_backward(gstd / (2 * ctx.results[0]), x, dim, keepdim, _correction(ctx))
    return g + _unreduce(gmean, tuple(x.shape), dim, keepdim) / _count(tuple(x.shape), dim)


@derivative("logsumexp", save=("self",), results=True)
def _logsumexp(ctx, grad):
    x = ctx.self
    g = _unreduce(grad, tuple(x.shape), ctx.dim, ctx.keepdim)
    r = _unreduce(ctx.result, tuple(x.shape), ctx.dim, ctx.keepdim)
    return g * (x - r).exp()


def _norm_backward(grad, x, p, result, dim, keepdim):
    g = _unreduce(grad, tuple(x.shape), dim, keepdim)
    r = _unreduce(result, tuple(x.shape), dim, keepdim)
    if p == 0:
        return tp.zeros_like(x)
    if p == 1:
        return g * x.sgn()
    if p == 2:
        return tp.where(r == 0, tp.zeros_like(x), g * x / r)
    if math.isinf(p):
        mask = x.abs() == r
        return g * x.sgn() * mask / mask.sum(_dims(dim, x.dim()), keepdim=True)
    ax = x.abs()
    out = g * x.sgn() * ax.pow(p - 1) / r.pow(p - 1)
    return tp.where(r == 0, tp.zeros_like(x), out)


@derivative("norm", save=("self",), results=True)
def _norm(ctx, grad):
    p = 2.0 if ctx.p is None else float(ctx.p)
    return _norm_backward(grad, ctx.self, p, ctx.result, ctx.dim, ctx.keepdim)


@derivative("norm.str", save=("self",), results=True)
def _norm_str(ctx, grad):
    if ctx.p != "fro":
        raise NotImplementedError(f"the derivative for 'norm' with p='{ctx.p}' is not implemented.")
    return _norm_backward(grad, ctx.self, 2.0, ctx.result, ctx.dim, ctx.keepdim)


# ---- scans
# -----------------------------------------------------------------------------------------------------
def _reverse_cumsum(t: tp.Tensor, dim: int) -> tp.Tensor:
    return t.flip([dim]).cumsum(dim).flip([dim])


@derivative("cumsum")
def _cumsum(ctx, grad):
    if len(ctx.self_shape) == 0:
        return grad
    return _reverse_cumsum(grad, ctx.dim % len(ctx.self_shape))


@derivative("cumprod", save=("self",), results=True)
def _cumprod(ctx, grad):
    x = ctx.self
    if x.dim() == 0:
        return grad
    d = ctx.dim % x.dim()
    if bool((x == 0).any()):
        # With zeros, result / x is undefined: use d y_j / d x_i = prod_{k <= j, k != i} x_k directly
        # (O(n^2) along dim, exact).
        xs, g = x.movedim(d, -1), grad.movedim(d, -1)
        cols = []
        for i in range(xs.shape[-1]):
            without_i = xs.clone()
            without_i[..., i] = 1
            cols.append((g[..., i:] * without_i.cumprod(-1)[..., i:]).sum(-1))
        return tp.stack(cols, -1).movedim(-1, d)
    return _reverse_cumsum(grad * ctx.result, d) / x


@derivative("logcumsumexp", save=("self",), results=True)
def _logcumsumexp(ctx, grad):
    x = ctx.self
    if x.dim() == 0:
        return grad
    d = ctx.dim % x.dim()
    # d r_j / d x_i = exp(x_i - r_j) for i <= j: sum_j grad_j exp(x_i - r_j), shifted for stability
    m = ctx.result.amax()
    return (x - m).exp() * _reverse_cumsum(grad * (m - ctx.result).exp(), d)


@derivative("cummax", "cummin", results=True, outputs=(True, False))
def _cummax(ctx, grad, _indices_grad):
    if len(ctx.self_shape) == 0:
        return grad
    return tp.zeros(ctx.self_shape, dtype=grad.dtype).scatter_add(ctx.dim, ctx.results[1], grad)


nondifferentiable("histc")


# ---- quantile / nanquantile ------------------------------------------------------------------------------
# Note [Quantile gradients]
#   Per row, q's quantile reads the sorted values at ranks lo = floor(r) and hi = ceil(r), r = q (m - 1), with
#   m the row's length (nanquantile: its count of non-NaN values, which sort last), and mixes them with the
#   interpolation's weights: linear 1 - (r - lo) and r - lo, lower 1 and 0, higher 0 and 1, midpoint 1/2 and
#   1/2, nearest all on round-half-even(r). The gradient goes back to the two elements at those ranks with the
#   same weights. The weights and ranks are constants of the input (piecewise), so the formula is linear in
#   the gradient and differentiates again.
def _quantile_weights(rank: tp.Tensor, interpolation: str) -> tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
    """(lo, hi, weight of hi) of Note [Quantile gradients]."""
    lo, hi = rank.floor(), rank.ceil()
    if interpolation == "linear":
        w = rank - lo
    elif interpolation == "lower":
        w = tp.zeros_like(rank)
    elif interpolation == "higher":
        w = tp.ones_like(rank)
    elif interpolation == "midpoint":
        w = tp.full_like(rank, 0.5)
    else:  # nearest: the kernel's nearbyint (round half to even)
        lo = hi = rank.round()
        w = tp.zeros_like(rank)
    return lo, hi, w


@derivative("quantile", "nanquantile", save=("self", "q"))
@derivative("quantile.scalar", "nanquantile.scalar", save=("self",))
def _quantile(ctx, grad):
    x = ctx.self.detach()
    dim = ctx.dim
    rows = x.reshape(-1) if dim is None else x.movedim(dim, -1)  # [*batch, n]
    n = rows.shape[-1]
    q = ctx.q
    q_is_list = isinstance(q, tp.Tensor) and q.dim() == 1
    qv = (
        (q.detach() if isinstance(q, tp.Tensor) else tp.tensor(float(q), dtype=tp.float64))
        .to(tp.float64)
        .reshape(-1)
    )
    batch = list(rows.shape[:-1])
    nq = qv.shape[0]
    # the gradient as [Q, *batch]
    g = grad
    if not q_is_list:
        g = g.unsqueeze(0)
    g = g.reshape([nq] + batch)
    order = rows.argsort(-1)  # NaNs sort last
    if ctx.op_name.startswith("nanquantile"):
        m = (rows == rows).sum(-1).to(tp.float64)
    else:
        m = tp.full(batch, float(n), dtype=tp.float64)
    rank = qv.reshape([nq] + [1] * len(batch)) * (m.unsqueeze(0) - 1)
    lo, hi, w = _quantile_weights(rank, ctx.interpolation)
    # rows with no value (all NaN) or NaN results got NaN; their ranks are clamped only to stay in range
    lo, hi = lo.clamp(0, n - 1).to(tp.int64), hi.clamp(0, n - 1).to(tp.int64)
    w = w.to(grad.dtype)
    order = order.unsqueeze(0).expand([nq] + batch + [n])
    src_lo = order.gather(-1, lo.unsqueeze(-1))
    src_hi = order.gather(-1, hi.unsqueeze(-1))
    out = tp.zeros([nq] + batch + [n], dtype=grad.dtype)
    out = out.scatter_add(-1, src_lo, ((1 - w) * g).unsqueeze(-1)).scatter_add(
        -1, src_hi, (w * g).unsqueeze(-1)
    )
    out = out.sum(0)
    out = out.reshape(ctx.self_shape) if dim is None else out.movedim(-1, dim)
    return out if not isinstance(q, tp.Tensor) else (out, None)
