"""Derivatives of products (P10's matmul, blas and einsum kernel files).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). For C = A @ B the
gradients are dA = dC @ B^H and dB = A^H @ dC; batch dims that broadcast are summed back by the engine.
"""

from __future__ import annotations

import string

import tensorplay_p10 as tp

from . import _conj, derivative


def _mH(t: tp.Tensor) -> tp.Tensor:
    return _conj(t.transpose(-2, -1))


@derivative("mm", "bmm", save={"self": "mat2", "mat2": "self"})
def _mm(ctx, grad):
    ga = grad @ _mH(ctx.mat2) if ctx.needs_input_grad["self"] else None
    gb = _mH(ctx.self) @ grad if ctx.needs_input_grad["mat2"] else None
    return ga, gb


@derivative("matmul", save=("self", "other"))
def _matmul(ctx, grad):
    a, b = ctx.self, ctx.other
    if a.dim() == 1 and b.dim() == 1:  # dot
        return grad * _conj(b), grad * _conj(a)
    if a.dim() == 1:  # [k] @ [..., k, n] -> [..., n]
        g = grad.unsqueeze(-2)
        ga = (g @ _mH(b)).squeeze(-2) if ctx.needs_input_grad["self"] else None
        gb = _conj(a).unsqueeze(-1) @ g if ctx.needs_input_grad["other"] else None
        return ga, gb
    if b.dim() == 1:  # [..., m, k] @ [k] -> [..., m]
        g = grad.unsqueeze(-1)
        ga = g @ _conj(b).unsqueeze(0) if ctx.needs_input_grad["self"] else None
        gb = (_mH(a) @ g).squeeze(-1) if ctx.needs_input_grad["other"] else None
        return ga, gb
    ga = grad @ _mH(b) if ctx.needs_input_grad["self"] else None
    gb = None
    if ctx.needs_input_grad["other"]:
        if a.dim() >= 3 and b.dim() == 2:
            # [..., m, k] @ [k, n]: the forward folded the batch into the rows of one mm, and so does dB: one
            # [k, rows] @ [rows, n] product instead of a batch of them that the engine would then sum.
            gb = _mH(a.reshape(-1, a.shape[-1])) @ grad.reshape(-1, grad.shape[-1])
        else:
            gb = _mH(a) @ grad
    return ga, gb


@derivative("mv", save={"self": "vec", "vec": "self"})
def _mv(ctx, grad):
    ga = tp.outer(grad, _conj(ctx.vec)) if ctx.needs_input_grad["self"] else None
    return ga, _mH(ctx.self) @ grad if ctx.needs_input_grad["vec"] else None


@derivative("dot", save={"self": "tensor", "tensor": "self"})
def _dot(ctx, grad):
    ga = grad * _conj(ctx.tensor) if ctx.needs_input_grad["self"] else None
    return ga, grad * _conj(ctx.self) if ctx.needs_input_grad["tensor"] else None


@derivative("vdot", save=("self", "other"))
def _vdot(ctx, grad):
    return _conj(grad) * ctx.other, grad * ctx.self


@derivative("inner", save=("self", "other"))
def _inner(ctx, grad):
    a, b = ctx.self, ctx.other
    if a.dim() == 0 or b.dim() == 0:
        return grad * b, grad * a
    # inner(a, b)[..., ...] = sum_k a[..., k] b[..., k]: the output's dims are a's leading then b's leading
    na, nb = a.dim() - 1, b.dim() - 1
    ga = tp.tensordot(grad, b, dims=(list(range(na, na + nb)), list(range(nb))))
    gb = tp.tensordot(grad, a, dims=(list(range(na)), list(range(na))))
    return ga, gb


@derivative("outer", save={"self": "vec2", "vec2": "self"})
def _outer(ctx, grad):
    ga = grad @ _conj(ctx.vec2) if ctx.needs_input_grad["self"] else None
    return ga, _mH(grad) @ _conj(ctx.self) if ctx.needs_input_grad["vec2"] else None


@derivative("addmm", "addmm_", save={"mat1": "mat2", "mat2": "mat1"})
def _addmm(ctx, grad):
    a, b = ctx.mat1, ctx.mat2
    gs = grad if ctx.beta == 1 else grad * ctx.beta
    ga = grad @ _mH(b) if ctx.needs_input_grad["mat1"] else None
    gb = _mH(a) @ grad if ctx.needs_input_grad["mat2"] else None
    if ctx.alpha != 1:
        ga = None if ga is None else ga * ctx.alpha
        gb = None if gb is None else gb * ctx.alpha
    return gs, ga, gb


@derivative("baddbmm", "baddbmm_", save={"batch1": "batch2", "batch2": "batch1"})
def _baddbmm(ctx, grad):
    gs = grad if ctx.beta == 1 else grad * ctx.beta
    g1 = (grad @ _mH(ctx.batch2)) * ctx.alpha if ctx.needs_input_grad["batch1"] else None
    g2 = (_mH(ctx.batch1) @ grad) * ctx.alpha if ctx.needs_input_grad["batch2"] else None
    return gs, g1, g2


@derivative("addbmm", "addbmm_", save=("batch1", "batch2"))
def _addbmm(ctx, grad):
    b1, b2 = ctx.batch1, ctx.batch2
    g = grad.unsqueeze(0).expand(b1.shape[0], *grad.shape)
    gs = grad if ctx.beta == 1 else grad * ctx.beta
    return gs, (g @ _mH(b2)) * ctx.alpha, (_mH(b1) @ g) * ctx.alpha


@derivative("addmv", "addmv_", save=("mat", "vec"))
def _addmv(ctx, grad):
    gs = grad if ctx.beta == 1 else grad * ctx.beta
    return gs, tp.outer(grad, _conj(ctx.vec)) * ctx.alpha, (_mH(ctx.mat) @ grad) * ctx.alpha


@derivative("kron", save=("self", "other"))
def _kron(ctx, grad):
    a, b = ctx.self, ctx.other
    nd = max(a.dim(), b.dim())
    a_ = a.reshape([1] * (nd - a.dim()) + list(a.shape))
    b_ = b.reshape([1] * (nd - b.dim()) + list(b.shape))
    # kron(a, b) viewed as [a0, b0, a1, b1, ...] = a[i0, i1, ..] * b[j0, j1, ..]
    inter = []
    for sa, sb in zip(a_.shape, b_.shape, strict=False):
        inter += [sa, sb]
    g = grad.reshape(inter)
    a_dims = list(range(0, 2 * nd, 2))
    b_dims = list(range(1, 2 * nd, 2))
    b_exp = b_.reshape([x for s in b_.shape for x in (1, s)])
    a_exp = a_.reshape([x for s in a_.shape for x in (s, 1)])
    ga = (g * _conj(b_exp)).sum(b_dims).reshape(a.shape)
    gb = (g * _conj(a_exp)).sum(a_dims).reshape(b.shape)
    return ga, gb


@derivative("cross", save=("self", "other"))
def _cross(ctx, grad):
    d = ctx.dim
    return tp.cross(_conj(ctx.other), grad, dim=d), tp.cross(grad, _conj(ctx.self), dim=d)


@derivative("tensordot", save=("self", "other"))
def _tensordot(ctx, grad):
    a, b = ctx.self, ctx.other
    da, db = [d % a.dim() for d in ctx.dims_self], [d % b.dim() for d in ctx.dims_other]
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    na, nb = len(free_a), len(free_b)
    # grad has dims (free_a..., free_b...); contract its free_b part with b's free dims
    ga = tp.tensordot(grad, b, dims=(list(range(na, na + nb)), free_b))  # dims: free_a..., db (in order)
    order_a = free_a + da
    ga = ga.permute([order_a.index(d) for d in range(a.dim())])
    gb = tp.tensordot(a, grad, dims=(free_a, list(range(na))))  # dims: da..., free_b...
    order_b = db + free_b
    gb = gb.permute([order_b.index(d) for d in range(b.dim())])
    return ga, gb


@derivative("einsum", save=("tensors",))
def _einsum(ctx, grad):
    return [_einsum_operand_grad(ctx.equation, ctx.tensors, i, grad) for i in range(len(ctx.tensors))]


def _explicit_subscripts(equation: str, shapes: list) -> tuple[list[str], str]:
    """Each operand's subscripts and the output's, with every '...' spelled out in letters the equation
    does not use (right-aligned, as the ellipsis broadcasts) and an implicit output made explicit: the
    ellipsis dims first, then the letters used once, in alphabetical order (NumPy's and PyTorch's rule)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    subs = lhs.split(",")
    ranks = [len(shape) - (len(s) - 3) for s, shape in zip(subs, shapes, strict=True) if "..." in s]
    n = max(ranks, default=0)
    free = "".join(c for c in string.ascii_letters if c not in eq)[:n]
    subs = [
        s.replace("...", free[n - (len(shape) - (len(s) - 3)) :] if n else "") if "..." in s else s
        for s, shape in zip(subs, shapes, strict=True)
    ]
    if arrow:
        out = out.replace("...", free)
    else:
        letters = lhs.replace(",", "").replace("...", "")
        out = free + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return subs, out


def _einsum_operand_grad(equation: str, ops: list, i: int, grad: tp.Tensor) -> tp.Tensor:
    """d out / d op_i = einsum(out, other operands -> op_i's subscripts), broadcast back over subscripts only
    op_i has (they were summed in forward). A subscript repeated inside op_i (``ii``: a diagonal) gets the
    gradient on that diagonal only, written with index_put. '...' is spelled out in letters first; a dim of
    size 1 that broadcast against a longer one (an ellipsis dim, or a letter) is summed back to size 1."""
    subs, out = _explicit_subscripts(equation, [tuple(o.shape) for o in ops])
    full: dict[str, int] = {}  # each letter's size after broadcasting (1 gives way to any other size, 0 too)
    for s, shape in [*zip(subs, (o.shape for o in ops), strict=True), (out, grad.shape)]:
        for c, n in zip(s, shape, strict=True):
            full[c] = n if full.get(c, 1) == 1 else full[c]
    mine = subs[i]
    unique = "".join(dict.fromkeys(mine))  # first appearance order
    sizes = {c: ops[i].shape[pos] for pos, c in enumerate(mine)}
    others = [s for k, s in enumerate(subs) if k != i]
    other_ops = [o.expand([full[c] for c in subs[k]]) for k, o in enumerate(ops) if k != i]
    available = set(out) | set("".join(others))
    target = "".join(c for c in unique if c in available)
    g = tp.einsum(",".join([out] + others) + "->" + target, grad.expand([full[c] for c in out]), *other_ops)
    for pos, c in enumerate(target):
        if sizes[c] == 1 and g.shape[pos] != 1:  # op_i broadcast along c
            g = g.sum(pos, keepdim=True)
    for pos, c in enumerate(unique):
        if c not in available:
            g = g.unsqueeze(pos)
    g = g.expand([sizes[c] for c in unique])
    if len(unique) == len(mine):
        return g
    index = []
    for c in mine:
        shape = [1] * len(unique)
        shape[unique.index(c)] = sizes[c]
        index.append(tp.arange(sizes[c], device=g.device).reshape(shape))
    return tp.zeros(tuple(ops[i].shape), dtype=g.dtype, device=g.device).index_put(tuple(index), g)
