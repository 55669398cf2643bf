"""Derivatives of the sequence-mixer kernels: delta_rule (the gated delta-rule scan, P10's delta_rule.cpp) and
paged_attention (attention over a paged key/value cache, P10's paged_attention.cpp).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). Both ops have a
fused CPU kernel and a reference written with P10 ops (``_delta_rule_reference``,
``_paged_attention_reference``); the references are what these formulas differentiate whenever a fused
backward is not available or not allowed (Note [Delta rule backward paths]).

Note [Delta rule backward paths]
  delta_rule's gradients come from one of two places. When the backward pass is not recorded (grad mode off
  inside backward: create_graph=False, the training-step case), P10's fused delta_rule_backward runs the
  reverse-time recurrence from state checkpoints (Note [Delta rule backward] in
  kernels/delta_rule_backward.cpp). When it is recorded (create_graph=True, or a JVP, which runs the formula
  under enable_grad), the formula replays the forward with _delta_rule_reference — T steps of ordinary ops —
  and takes its vector-Jacobian product with the engine, keeping that graph, so the gradients differentiate
  again. The fused backward has no formula of its own. paged_attention is an inference op: its gradient always
  takes the second path (the reference is a gather plus scaled_dot_product_attention, whose own backward is
  fused), which keeps the kernel free of backward bookkeeping and is still exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import tensorplay_p10 as tp

from ..engine import grad as _grad
from ..grad_mode import enable_grad, is_grad_enabled
from . import derivative


def _vjp_through(
    reference: Callable[..., object],
    args: Sequence[object],
    wants: Sequence[bool],
    grads: Sequence[tp.Tensor],
) -> list[tp.Tensor | None]:
    """The gradients of ``reference(*args)`` (one or several outputs) with respect to the tensor arguments
    flagged in ``wants``, for output gradients ``grads`` (Note [Delta rule backward paths]).

    Under a recorded backward each wanted input enters through a fresh alias (a view with history), so the
    result stays connected to the input's graph for the next derivative and two arguments that are one tensor
    still get their own gradients. Otherwise detached leaves stand in for the inputs, so the engine never
    walks the graph that produced them."""
    recorded = is_grad_enabled()
    ins = list(args)
    wrt: list[int] = []
    for i, want in enumerate(wants):
        t = ins[i]
        if not want or not isinstance(t, tp.Tensor):
            continue
        ins[i] = t.view(t.shape) if recorded and t.requires_grad else t.detach().requires_grad_(True)
        wrt.append(i)
    out: list[tp.Tensor | None] = [None] * len(ins)
    if not wrt:
        return out
    with enable_grad():
        results = reference(*ins)
        results = results if isinstance(results, tuple) else (results,)
        # an output may not depend on any wanted input (delta_rule's final state on the query)
        pairs = [(r, g) for r, g in zip(results, grads, strict=True) if g is not None and r.requires_grad]
        if not pairs:
            return out
        found = _grad(
            [r for r, _ in pairs],
            [ins[i] for i in wrt],
            [g for _, g in pairs],
            create_graph=recorded,
            allow_unused=True,
        )
    for i, gi in zip(wrt, found, strict=True):
        out[i] = gi
    return out


_DELTA_INPUTS = ("query", "key", "value", "g", "beta", "initial_state")


@derivative("delta_rule", save=_DELTA_INPUTS)
def _delta_rule(ctx, grad_out, grad_final_state):
    args = [getattr(ctx, n) for n in _DELTA_INPUTS]
    if not is_grad_enabled():  # Note [Delta rule backward paths]
        return tp.delta_rule_backward(grad_out, grad_final_state, *args, ctx.chunk_size)
    wants = [ctx.needs_input_grad[n] for n in _DELTA_INPUTS]
    return tuple(
        _vjp_through(
            lambda *xs: tp.ops._delta_rule_reference(*xs, ctx.chunk_size),
            args,
            wants,
            [grad_out, grad_final_state],
        )
    )


_PAGED_INPUTS = ("query", "key_pool", "value_pool", "block_table", "seq_lens")


@derivative("paged_attention", save=_PAGED_INPUTS)
def _paged_attention(ctx, grad):
    args = [getattr(ctx, n) for n in _PAGED_INPUTS]
    wants = [ctx.needs_input_grad[n] for n in _PAGED_INPUTS]
    return tuple(
        _vjp_through(
            lambda *xs: tp.ops._paged_attention_reference(*xs, ctx.scale),
            args,
            wants,
            [grad],
        )
    )
