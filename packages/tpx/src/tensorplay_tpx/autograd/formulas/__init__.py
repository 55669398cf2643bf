"""Derivative formulas: how to differentiate each P10 op, one file per op family.

Where it sits: every formula here becomes the ``Autograd`` kernel of a P10 op (through
``tensorplay_tpx._C``). When grad mode is on and an input requires grad, that kernel runs the op, records a
node named after the op (``mul`` -> ``MulBackward``) and keeps what the formula asked to ``save``. During
backward the engine calls the formula with a :class:`Ctx` and the gradients of the op's outputs; it returns
one gradient per tensor input.

Formulas are written with TensorPlay's own ops, so under ``create_graph=True`` the backward pass is itself
recorded and can be differentiated again (second and third derivatives).

A formula looks like this (the ``mul`` entry of ``pointwise.py``)::

    @derivative("mul", save=("self", "other"))
    def _(ctx, grad):
        return grad * ctx.other.conj(), grad * ctx.self.conj()

Note [Formula conventions]
  - ``ctx.<arg>`` is each argument of the call, by its schema name: saved tensors (only those listed in
    ``save``; others are ``None``), and every non-tensor argument (ints, lists, dtypes, ...).
    ``save`` may map an argument to the arguments whose gradient reads it
    (``save={"self": "other", "other": "self"}`` for mul): it is then kept only when one of those wants a
    gradient and is ``None`` otherwise, so such a formula reads it only under ``ctx.needs_input_grad``
    (Note [Save what backward reads] in csrc/record.cpp).
  - ``ctx.result`` (``ctx.results`` for several outputs) when ``results=True`` is given.
  - ``ctx.<arg>_shape`` and ``ctx.<arg>_dtype`` describe each tensor input that needs a gradient, without
    keeping the tensor alive.
  - ``ctx.needs_input_grad[<arg>]`` says whether that input wants a gradient (skip work when not).
  - Return one value per tensor argument, in schema order (a single value when there is one): a tensor,
    ``None`` (no gradient / zero), or a list for a ``Tensor[]`` argument. A gradient may come back in the
    broadcast shape of the computation: the engine sums it back to the input's shape and casts it to the
    input's dtype (Note [Gradient shapes] in engine.cpp), so formulas never repeat that bookkeeping.
  - Gradients of unused outputs arrive as zeros for floating outputs, ``None`` for integer outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import _dtype as D

from ... import _C

__all__ = ["Ctx", "derivative", "nondifferentiable", "registered"]

_REGISTERED: dict[str, str] = {}  # op name -> node name


class Ctx:
    """What a formula sees: the call's arguments by name, its results, and input shapes (Note above)."""

    needs_input_grad: dict[str, bool]

    def __repr__(self) -> str:
        return f"Ctx({', '.join(sorted(self.__dict__))})"


def _node_name(op_name: str) -> str:
    base = op_name.split(".", 1)[0].split("::")[-1].strip("_")
    return "".join(part.capitalize() for part in base.split("_")) + "Backward"


def _make_backward(
    op_name: str, fn: Callable[..., Any], args: list[tuple[str, str]], n_results: int
) -> Callable[..., Any]:
    names = [n for _, n in args]
    tensor_args = [i for i, (t, _) in enumerate(args) if t.startswith("Tensor")]
    is_list = {i: "[]" in args[i][0] for i in tensor_args}
    dtype_args = {n for t, n in args if t.startswith("ScalarType")}

    def backward(values: list, results: list, grads: list, needs: tuple, metas: list, counts: list) -> list:
        ctx = Ctx()
        ctx.op_name = op_name
        for name, value in zip(names, values, strict=False):
            if name in dtype_args and isinstance(value, int):
                value = D._ALL[value]
            setattr(ctx, name, value)
        ctx.results = results
        ctx.result = results[0] if results else None
        # Edge bookkeeping: which edges belong to which tensor argument.
        ctx.needs_input_grad = {}
        spans, e = [], 0
        for i in tensor_args:
            count = counts[i]
            spans.append((i, e, count))
            ctx.needs_input_grad[names[i]] = any(needs[e : e + count])
            if not is_list[i] and count and metas[e] is not None:
                setattr(ctx, names[i] + "_shape", tuple(metas[e][0]))
                setattr(ctx, names[i] + "_dtype", D._ALL[metas[e][1]])
            elif is_list[i]:
                setattr(
                    ctx,
                    names[i] + "_shapes",
                    [None if m is None else tuple(m[0]) for m in metas[e : e + count]],
                )
            e += count
        out = fn(ctx, *grads)
        if (
            len(tensor_args) == 1
            or not isinstance(out, (tuple, list))
            or (len(tensor_args) == 1 and is_list[tensor_args[0]])
        ):
            out = (out,)
        if len(out) != len(tensor_args):
            raise RuntimeError(
                f"derivative formula of '{op_name}' returned {len(out)} gradients, expected "
                f"{len(tensor_args)} "
                f"(one per tensor argument: {', '.join(names[i] for i in tensor_args)})"
            )
        flat: list[Any] = []
        for (i, start, count), g in zip(spans, out, strict=False):
            if is_list[i]:
                gs = list(g) if g is not None else [None] * count
                flat.extend(gs[k] if needs[start + k] else None for k in range(count))
            elif count:
                flat.append(g if needs[start] else None)
        return flat

    return backward


# Note [JVP from the VJP]
#   Forward-mode AD needs J t (the Jacobian times a tangent) where a formula gives u -> J^T u. The latter is
#   linear in u, so J t = d/du <J^T u, t>: run the formula once with u requiring grad (recorded), take the
#   inner product with the tangents, and differentiate it with respect to u. Every op with a formula thus gets
#   a JVP, at the price of two backward evaluations per forward op (only inside a dual level).
#   With complex tensors the pairing is Re <J^H u, t> = Re sum(vjp(u) * conj(t)) = Re <u, J t>, whose gradient
#   with respect to u is J t under PyTorch's convention (Note [Complex gradients] in csrc/engine.cpp).
def _make_jvp(backward: Callable[..., Any]) -> Callable[..., Any]:
    def jvp(values: list, results: list, tangents: list, metas: list, counts: list) -> list:
        from ..engine import grad as _grad
        from ..grad_mode import enable_grad

        us = [
            tp.zeros_like(r).requires_grad_(True)
            if r is not None and (r.dtype.is_floating_point or r.dtype.is_complex)
            else None
            for r in results
        ]
        with enable_grad():
            needs = tuple(t is not None for t in tangents)
            grads = backward(values, results, us, needs, metas, counts)
            total = None
            for g, t in zip(grads, tangents, strict=False):
                if g is None or t is None:
                    continue
                term = (g * _conj(t)).sum()
                if term.is_complex():
                    term = tp.real(term)
                total = term if total is None else total + term
            live = [u for u in us if u is not None]
            if total is None or not live:
                return [None] * len(results)
            dus = iter(_grad(total, live, allow_unused=True))
        out = []
        for u in us:
            if u is None:
                out.append(None)
                continue
            d = next(dus)
            out.append(tp.zeros_like(u).detach() if d is None else d.detach())
        return out

    return jvp


def derivative(
    *op_names: str,
    save: Sequence[str] | dict[str, str | Sequence[str]] = (),
    results: bool = False,
    outputs: Sequence[bool] | None = None,
    name: str | None = None,
    decompose: Callable[..., Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(ctx, *grads)`` as the derivative of each op in ``op_names``.

    Read Note [Formula conventions] above. ``save`` names the tensor arguments backward needs (a dict: only
    when the named gradients are wanted); ``results=True`` keeps the outputs; ``outputs`` flags which
    outputs are differentiable (default: every floating one). ``decompose(*args)``, when given, is asked
    first on every recorded call: a tensor it returns (computed with recorded ops) is the result, None runs
    the op (Note [Decomposed under autograd] in csrc/record.cpp).

    Whether the op is a view (its outputs alias its first argument, so in-place writes into them rewrite the
    base's history: Note [Views and in-place] in csrc/meta.h) is read from its schema's alias annotations,
    ``view(Tensor(a) self, int[] size) -> Tensor(a)`` (Note [Alias annotations] in P10's dispatch/schema.h).
    """
    when = (
        {k: ((v,) if isinstance(v, str) else tuple(v)) for k, v in save.items()}
        if isinstance(save, dict)
        else {}
    )

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op_name in op_names:
            info = tp.ops.info(op_name)
            args = [(a["type"], a["name"]) for a in info["arguments"]]
            names = [n for _, n in args]
            unknown = [s for s in [*save, *(n for v in when.values() for n in v)] if s not in names]
            if unknown:
                raise ValueError(
                    f"derivative('{op_name}'): save={unknown} are not arguments of {info['schema']}"
                )
            n_results = max(1, sum(r["type"].startswith("Tensor") for r in info["returns"]))
            node = name or _node_name(op_name)
            backward = _make_backward(op_name, fn, args, n_results)
            _C._register_formula(
                op_name,
                node,
                backward,
                _make_jvp(backward),
                [n in save for n in names],
                results,
                info["is_view"],
                list(outputs) if outputs is not None else [],
                [[names.index(d) for d in when.get(n, ())] for n in names] if when else [],
                decompose,
            )
            _REGISTERED[op_name] = node
        return fn

    return register


def nondifferentiable(*op_names: str) -> None:
    """Ops whose floating outputs have no gradient: they pass through autograd untracked."""
    for op_name in op_names:
        _C._mark_nondifferentiable(op_name)


def registered() -> dict[str, str]:
    """Op name -> node name of every op with a formula."""
    return dict(_REGISTERED)


def _conj(t: tp.Tensor) -> tp.Tensor:
    """conj() for complex tensors; real tensors pass through without recording an op."""
    return t.conj() if t.is_complex() else t


# The families register on import.
from . import (  # noqa: E402,F401
    activation,
    attention,
    conv,
    linalg,
    linalg_decomp,
    nn,
    pointwise,
    recurrent,
    reduce,
    shape,
    upsample,
)
