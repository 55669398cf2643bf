"""``tensorplay.autograd.functional``: Jacobians, Hessians and their products, for functions of tensors.

Where it sits: plain compositions of ``grad`` (engine.py). Forward products (``jvp``, ``hvp``) use the
double-backward trick PyTorch's functional API uses: ``J v = d/du (u^T J)^T v`` with a dummy ``u``.

    >>> import tensorplay as tp
    >>> from tensorplay.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, tp.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp

from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

Tensor = tp.Tensor


def _tuple(x: Any) -> tuple[bool, tuple]:
    return (True, x) if isinstance(x, tuple) else (False, (x,))


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    return tuple(
        x.detach().requires_grad_(True) if not create_graph or not x.requires_grad else x.view_as(x)
        for x in inputs
    )


def _fill_none(grads: tuple, like: tuple) -> tuple:
    return tuple(tp.zeros_like(x) if g is None else g for g, x in zip(grads, like, strict=False))


def vjp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """(func(inputs), v^T J)."""
    was_tuple, ins = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _tuple(out)
        vs = _tuple(v)[1] if v is not None else tuple(None for _ in outs)
        gs = _grad(outs, ins, vs, create_graph=create_graph, allow_unused=True)
    gs = _fill_none(gs, ins)
    if not create_graph:
        out = tuple(o.detach() for o in outs) if out_tuple else outs[0].detach()
        gs = tuple(g.detach() for g in gs)
    return out, (gs if was_tuple else gs[0])


def jvp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """(func(inputs), J v), by the double-backward trick."""
    was_tuple, ins = _tuple(inputs)
    vs = _tuple(v)[1] if v is not None else tuple(tp.ones_like(x) for x in ins)
    with enable_grad():
        ins = _prepare(ins, True)
        out = func(*ins)
        out_tuple, outs = _tuple(out)
        us = tuple(tp.zeros_like(o).requires_grad_(True) for o in outs)
        gs = _grad(outs, ins, us, create_graph=True, allow_unused=True)
        pairs = [(g, vv) for g, vv in zip(gs, vs, strict=False) if g is not None]
        jv = (
            _grad(
                [g for g, _ in pairs],
                us,
                [vv for _, vv in pairs],
                create_graph=create_graph,
                allow_unused=True,
            )
            if pairs
            else tuple(None for _ in us)
        )
    jv = _fill_none(jv, outs)
    if not create_graph:
        jv = tuple(t.detach() for t in jv)
        outs = tuple(o.detach() for o in outs)
    return (outs if out_tuple else outs[0]), (jv if out_tuple else jv[0])


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """d func / d inputs, one vector-Jacobian product per output element (``vectorize=False``)."""
    if vectorize:
        raise NotImplementedError("jacobian(vectorize=True) is not supported; use vectorize=False")
    was_tuple, ins = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _tuple(out)
        result = []
        for o in outs:
            rows = []
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                gs = _grad(flat[k], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
                rows.append(_fill_none(gs, ins))
            per_input = []
            for i, x in enumerate(ins):
                if rows:
                    j = tp.stack([r[i] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    j = tp.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                per_input.append(j if create_graph else j.detach())
            result.append(tuple(per_input) if was_tuple else per_input[0])
    return tuple(result) if out_tuple else result[0]


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """Second derivatives of a scalar function."""
    was_tuple, ins = _tuple(inputs)

    def gradient(*xs: Tensor) -> Any:
        out = func(*xs)
        gs = _grad(out, xs, create_graph=True, allow_unused=True)
        gs = _fill_none(gs, xs)
        return gs if was_tuple else gs[0]

    return jacobian(gradient, ins if was_tuple else ins[0], create_graph=create_graph)


def vhp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """(func(inputs), v^T H)."""
    was_tuple, ins = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, True)
        out = func(*ins)
        gs = _fill_none(_grad(out, ins, create_graph=True, allow_unused=True), ins)
        vs = _tuple(v)[1]
        hv = _grad(gs, ins, vs, create_graph=create_graph, allow_unused=True)
    hv = _fill_none(hv, ins)
    if not create_graph:
        hv = tuple(t.detach() for t in hv)
        out = out.detach()
    return out, (hv if was_tuple else hv[0])


def hvp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """(func(inputs), H v); equal to vhp for the symmetric Hessian of a twice-differentiable function."""
    return vhp(func, inputs, v, create_graph=create_graph, strict=strict)
