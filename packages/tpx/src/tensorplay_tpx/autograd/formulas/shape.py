"""Derivatives of views, copies, joins and indexing (P10's view, copy, join, rearrange and index kernel
files).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). Which ops are views
(so that in-place writes into their outputs rewrite the base's history, Note [Views and in-place] in
csrc/meta.h) comes from their P10 schemas' alias annotations, ``view(Tensor(a) self, ...) -> Tensor(a)``.
"""

from __future__ import annotations

import tensorplay_p10 as tp

from . import derivative, nondifferentiable


def _zeros(shape, grad: tp.Tensor) -> tp.Tensor:
    return tp.zeros(shape, dtype=grad.dtype, device=grad.device)


# ---- views
# -----------------------------------------------------------------------------------------------------
@derivative("view")
def _view(ctx, grad):
    return grad.reshape(ctx.self_shape)


# The parts of a complex number (Note [Complex gradients] in csrc/engine.cpp: a gradient is dL/dx + i dL/dy).
# On real tensors real and conj return their input itself, which the recording kernel passes through.
@derivative("conj")  # a new tensor in P10 (PyTorch's conj_physical), not a view
def _conj(ctx, grad):
    return grad.conj()


@derivative("real")
def _real(ctx, grad):
    return grad  # dL/dx; the engine makes it complex (imaginary part 0)


@derivative("imag")
def _imag(ctx, grad):
    return grad * 1j  # i dL/dy


@derivative("alias")
def _alias(ctx, grad):
    return grad


@derivative("expand")
def _expand(ctx, grad):
    return grad  # the engine sums the broadcast dims back (Note [Gradient shapes])


@derivative("permute")
def _permute(ctx, grad):
    n = len(ctx.self_shape)
    dims = [d % n for d in ctx.dims] if n else []
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d] = i
    return grad.permute(inverse)


@derivative("transpose")
def _transpose(ctx, grad):
    return grad.transpose(ctx.dim0, ctx.dim1)


@derivative("t")
def _t(ctx, grad):
    return grad.t()


@derivative("squeeze")
def _squeeze(ctx, grad):
    return grad.reshape(ctx.self_shape)


@derivative("unsqueeze")
def _unsqueeze(ctx, grad):
    return grad.squeeze(ctx.dim)


@derivative("slice")
def _slice(ctx, grad):
    g = _zeros(ctx.self_shape, grad)
    g.slice(ctx.dim, ctx.start, ctx.end, ctx.step).copy_(grad)
    return g


@derivative("narrow")
def _narrow(ctx, grad):
    g = _zeros(ctx.self_shape, grad)
    g.narrow(ctx.dim, ctx.start, ctx.length).copy_(grad)
    return g


@derivative("select")
def _select(ctx, grad):
    g = _zeros(ctx.self_shape, grad)
    g.select(ctx.dim, ctx.index).copy_(grad)
    return g


# Note [One op for all the pieces] (P10 kernels/view.cpp): one node for every piece, one cat/stack in
# backward. Pieces nobody used arrive as zeros (Note [Formula conventions]).
@derivative("split_with_sizes")
def _split_with_sizes(ctx, *grads):
    return tp.cat(list(grads), ctx.dim)


@derivative("unbind.int")
def _unbind(ctx, *grads):
    return tp.stack(list(grads), ctx.dim)


@derivative("diagonal")
def _diagonal(ctx, grad):
    g = _zeros(ctx.self_shape, grad)
    g.diagonal(ctx.offset, ctx.dim1, ctx.dim2).copy_(grad)
    return g


@derivative("unfold")
def _unfold(ctx, grad):
    # out[..., i, ..., k] = self[..., i * step + k, ...]: scatter each window back with index_add
    shape = ctx.self_shape
    if len(shape) == 0:
        return grad.reshape(())
    d = ctx.dimension % len(shape)
    n_windows = grad.shape[d]
    g = _zeros(shape, grad)
    for k in range(ctx.size):
        idx = tp.arange(n_windows, device=grad.device) * ctx.step + k
        g = g.index_add(d, idx, grad.select(-1, k))
    return g


def _last_position(shape, stride, offset) -> int:
    """The highest storage position a geometry reaches (offset - 1 when it has no element)."""
    if any(s == 0 for s in shape):
        return offset - 1
    return offset + sum((s - 1) * st for s, st in zip(shape, stride, strict=True))


@derivative("as_strided", save=("self",))
def _as_strided(ctx, grad):
    # Work on a flat copy of the storage both geometries address: scatter-add the output's gradient to the
    # storage positions it read (overlapping outputs add up), then read the input's positions back, sharing a
    # position's gradient among the input elements that alias it (an expanded input).
    x = ctx.self
    in_shape, in_stride, in_offset = tuple(x.shape), tuple(x.stride()), x.storage_offset()
    out_offset = in_offset if ctx.storage_offset is None else ctx.storage_offset
    n = 1 + max(
        _last_position(in_shape, in_stride, in_offset), _last_position(ctx.size, ctx.stride, out_offset), 0
    )
    positions = tp.arange(n, device=grad.device)
    out_pos = positions.as_strided(ctx.size, ctx.stride, out_offset).reshape(-1)
    flat = _zeros(n, grad).index_add(0, out_pos, grad.reshape(-1))
    in_pos = positions.as_strided(in_shape, in_stride, in_offset).reshape(-1)
    count = _zeros(n, grad).index_add(0, in_pos, tp.ones_like(in_pos, dtype=grad.dtype))
    return (flat / count.clamp(min=1)).index_select(0, in_pos).reshape(in_shape)


# ---- copies
# ----------------------------------------------------------------------------------------------------
@derivative("clone", "contiguous")
def _clone(ctx, grad):
    return grad


@derivative("to")
def _to(ctx, grad):
    return grad  # the engine casts to the input's dtype


@derivative("copy_")
def _copy(ctx, grad):
    return tp.zeros_like(grad), grad  # self's old value is overwritten; src gets the (broadcast-summed) grad


@derivative("fill_")
def _fill(ctx, grad):
    return tp.zeros_like(grad)


@derivative("flip")
def _flip(ctx, grad):
    return grad.flip(ctx.dims)


@derivative("tril", "tril_")
def _tril(ctx, grad):
    return grad.tril(ctx.diagonal)


@derivative("triu", "triu_")
def _triu(ctx, grad):
    return grad.triu(ctx.diagonal)


@derivative("repeat")
def _repeat(ctx, grad):
    shape = ctx.self_shape
    reps = list(ctx.repeats)
    lead = len(reps) - len(shape)
    full = [1] * lead + list(shape)
    # grad viewed as [r0, s0, r1, s1, ...], summed over the r's
    inter = []
    for r, s in zip(reps, full, strict=False):
        inter += [r, s]
    g = grad.reshape(inter).sum(list(range(0, 2 * len(reps), 2)))
    return g.reshape(shape)


@derivative("cat")
def _cat(ctx, grad):
    shapes = ctx.tensors_shapes
    ref = next((s for s in shapes if s is not None and len(s) > 0), None)
    if ref is None:
        return [None for _ in shapes]
    d = ctx.dim % len(ref)
    out, start = [], 0
    for s in shapes:
        if s is None:  # an undefined input (the recorder knows every defined one's shape, needed or not)
            out.append(None)
            continue
        if len(s) == 1 and s[0] == 0 and len(ref) != 1:  # legacy empty 1-D inputs are skipped by cat
            out.append(_zeros(s, grad))
            continue
        out.append(grad.narrow(d, start, s[d]))
        start += s[d]
    return out


@derivative("stack")
def _stack(ctx, grad):
    return list(grad.unbind(ctx.dim))


# ---- indexing
# --------------------------------------------------------------------------------------------------
@derivative("index_select", save=("index",))
def _index_select(ctx, grad):
    return _zeros(ctx.self_shape, grad).index_add(ctx.dim, ctx.index, grad), None


@derivative("gather", save=("index",))
def _gather(ctx, grad):
    return _zeros(ctx.self_shape, grad).scatter_add(ctx.dim, ctx.index, grad), None


@derivative("index.Tensor", save=("indices",))
def _index(ctx, grad):
    return _zeros(ctx.self_shape, grad).index_put_(ctx.indices, grad, accumulate=True), None


@derivative("index_put_", "index_put", save=("indices",))
def _index_put(ctx, grad):
    gs = grad if ctx.accumulate else grad.index_put(ctx.indices, _zeros((), grad))
    # a None entry of Tensor?[] takes the whole dim (not a new axis, as None means in a Python subscript)
    gv = (
        grad[tuple(slice(None) if i is None else i for i in ctx.indices)]
        if ctx.needs_input_grad["values"]
        else None
    )
    return gs, None, gv


def _fit_src(ctx, g: tp.Tensor) -> tp.Tensor | None:
    """scatter reads only the index-shaped corner of ``src``: the rest of src gets a zero gradient. None when
    src needs no gradient (``ctx.src_shape`` is then unknown: Note [Formula conventions])."""
    if not ctx.needs_input_grad["src"]:
        return None
    pads = []
    for have, want in reversed(list(zip(g.shape, ctx.src_shape, strict=True))):
        pads += [0, want - have]
    return tp.pad(g, pads) if any(pads) else g


def _src_part(src: tp.Tensor, index: tp.Tensor) -> tp.Tensor:
    """The index-shaped corner of ``src``: the values scatter actually reads."""
    for d, n in enumerate(index.shape):
        if src.shape[d] != n:
            src = src.narrow(d, 0, n)
    return src


def _prod_grads(ctx, grad, include_self: bool):
    """Gradients of ``out = self * prod(src at each index)`` (scatter_reduce 'prod', scatter 'multiply').

    Note [Product gradients with zeros]: d out / d x is the product of the *other* factors. For a nonzero x
    that is P / x * Z, with P the product of the nonzero factors and Z that of the zero ones (1 when there
    are none). For x == 0 it is P times the product of the *other* zeros: 1 when x is the only zero, the
    other zero when there are two (their sum minus x), 0 when there are more. Every piece is
    computed from the inputs with TensorPlay ops, never read from the result, so the formula differentiates
    again with the right second derivatives at zeros too.
    """
    dim, index = ctx.dim, ctx.index
    x, src = ctx.self, _src_part(ctx.src, ctx.index)

    def split(v):  # (v with zeros replaced by 1, v's zeros with the rest 1, v's zeros with the rest 0)
        zero = v == 0
        one, none = tp.ones_like(v), tp.zeros_like(v)
        return tp.where(zero, one, v), tp.where(zero, v, one), tp.where(zero, v, none), zero.to(grad.dtype)

    s_nz, s_z1, s_z0, s_cnt = split(src)
    if include_self:
        x_nz, x_z1, x_z0, x_cnt = split(x)
    else:
        x_nz = x_z1 = tp.ones_like(grad)
        x_z0 = x_cnt = tp.zeros_like(grad)
    p = x_nz.scatter_reduce(dim, index, s_nz, "prod", include_self=True)  # the nonzero factors
    z = x_z1.scatter_reduce(dim, index, s_z1, "prod", include_self=True)  # the zero factors
    zsum = x_z0.scatter_add(dim, index, s_z0)  # their sum (value 0)
    nz = x_cnt.scatter_add(dim, index, s_cnt)  # how many

    def factor_grad(v, v_nz, p, z, zsum, nz, g):
        other_zeros = tp.where(nz == 1, tp.ones_like(p), tp.where(nz == 2, zsum - v, tp.zeros_like(p)))
        return g * tp.where(v != 0, p / v_nz * z, p * other_zeros)

    gself = None
    if ctx.needs_input_grad["self"]:
        if include_self:
            gself = factor_grad(x, x_nz, p, z, zsum, nz, grad)
        else:
            gself = grad.scatter(dim, index, 0)
    gsrc = None
    if ctx.needs_input_grad["src"]:
        at = [t.gather(dim, index) for t in (p, z, zsum, nz, grad)]
        gsrc = _fit_src(ctx, factor_grad(src, s_nz, *at))
    return gself, None, gsrc


@derivative("scatter.src", "scatter_.src", save=("self", "index", "src"))
def _scatter_src(ctx, grad):
    if ctx.reduce == "multiply":  # out = self * (each src written there)
        return _prod_grads(ctx, grad, True)
    gsrc = _fit_src(ctx, grad.gather(ctx.dim, ctx.index))
    if ctx.reduce == "add":  # out = self + (each src written there)
        return grad, None, gsrc
    return grad.scatter(ctx.dim, ctx.index, 0), None, gsrc


@derivative("scatter_.value", save=("index",))
def _scatter_value(ctx, grad):
    if ctx.reduce == "add":
        return grad, None
    if ctx.reduce == "multiply":  # out = self * value ** (how many indices hit that element)
        hits = tp.zeros_like(grad).scatter_add(ctx.dim, ctx.index, tp.ones_like(ctx.index, dtype=grad.dtype))
        return grad * tp.pow(tp.full_like(grad, float(ctx.value)), hits), None
    return grad.scatter(ctx.dim, ctx.index, 0), None


@derivative("scatter_add_", save=("index",))
def _scatter_add(ctx, grad):
    return grad, None, _fit_src(ctx, grad.gather(ctx.dim, ctx.index))


def _extremum_grads(ctx, grad):
    """amax / amin: the gradient is shared evenly among the values equal to the result (self included when
    include_self), as PyTorch does."""
    dim, index, r = ctx.dim, ctx.index, ctx.result
    x, src = ctx.self, _src_part(ctx.src, ctx.index)
    r_at = r.gather(dim, index)
    hit_src = (src == r_at).to(grad.dtype)
    if ctx.include_self:
        hit_self = (x == r).to(grad.dtype)
    else:  # untouched elements keep self (their own maximum); touched ones take only src
        touched = tp.zeros_like(grad).scatter(dim, index, 1.0)
        hit_self = 1 - touched
    count = hit_self.scatter_add(dim, index, hit_src)
    share = grad / count
    gself = share * hit_self
    gsrc = _fit_src(ctx, share.gather(dim, index) * hit_src)
    return gself, None, gsrc


@derivative("scatter_reduce.two", "scatter_reduce_.two", save=("self", "index", "src"), results=True)
def _scatter_reduce(ctx, grad):
    if ctx.reduce == "prod":
        return _prod_grads(ctx, grad, ctx.include_self)
    if ctx.reduce in ("amax", "amin"):
        return _extremum_grads(ctx, grad)
    gsrc = grad.gather(ctx.dim, ctx.index)
    gself = grad if ctx.include_self else grad.scatter(ctx.dim, ctx.index, 0)
    if ctx.reduce == "mean":  # each output was divided by how many values met there (self included or not)
        ones = tp.ones_like(ctx.index, dtype=grad.dtype)
        counts = tp.zeros_like(grad).scatter_add(ctx.dim, ctx.index, ones)  # grad has self's shape
        counts = counts + 1 if ctx.include_self else counts.clamp(min=1)
        gself = gself / counts
        gsrc = gsrc / counts.gather(ctx.dim, ctx.index)
    return gself, None, _fit_src(ctx, gsrc)


@derivative("repeat_interleave.self_Tensor", save=("repeats",))
def _repeat_interleave(ctx, grad):
    shape = ctx.self_shape
    if ctx.dim is None:
        n = 1
        for s_ in shape:
            n *= s_
        idx = tp.arange(n, device=grad.device).repeat_interleave(ctx.repeats)
        return _zeros(n, grad).index_add(0, idx, grad).reshape(shape), None
    d = ctx.dim % len(shape)
    idx = tp.arange(shape[d], device=grad.device).repeat_interleave(ctx.repeats)
    return _zeros(shape, grad).index_add(d, idx, grad), None


@derivative("index_add_", save=("index",))
def _index_add(ctx, grad):
    gsrc = grad.index_select(ctx.dim, ctx.index)
    return grad, None, (gsrc if ctx.alpha == 1 else gsrc * ctx.alpha)


@derivative("index_copy_", save=("index",))
def _index_copy(ctx, grad):
    return grad.index_fill(ctx.dim, ctx.index, 0), None, grad.index_select(ctx.dim, ctx.index)


@derivative("index_fill_.int_Scalar", save=("index",))
def _index_fill(ctx, grad):
    return grad.index_fill(ctx.dim, ctx.index, 0), None


@derivative("masked_fill_.Tensor", save=("mask",))
def _masked_fill(ctx, grad):
    zero = tp.zeros_like(grad)
    gv = tp.where(ctx.mask, grad, zero).sum() if ctx.needs_input_grad["value"] else None
    return tp.where(ctx.mask, zero, grad), None, gv


@derivative("masked_scatter_", save=("mask",))
def _masked_scatter(ctx, grad):
    mask = ctx.mask.expand(grad.shape) if tuple(ctx.mask.shape) != tuple(grad.shape) else ctx.mask
    gs = tp.where(mask, tp.zeros_like(grad), grad)
    gsrc = None
    if ctx.needs_input_grad["source"]:
        picked = grad.masked_select(mask)
        n = 1
        for s in ctx.source_shape:
            n *= s
        gsrc = tp.cat([picked, _zeros(n - picked.numel(), grad)]).reshape(ctx.source_shape)
    return gs, None, gsrc


@derivative("put_", save=("index",))
def _put(ctx, grad):
    gs = grad if ctx.accumulate else grad.clone().put_(ctx.index, tp.zeros_like(ctx.index, dtype=grad.dtype))
    return gs, None, grad.take(ctx.index)


nondifferentiable("unique", "unique_consecutive", "bincount", "searchsorted.Tensor", "searchsorted.Scalar")
