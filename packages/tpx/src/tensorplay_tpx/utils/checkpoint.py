"""Activation checkpointing: trade compute for memory by recomputing a block's forward during backward.

Where it sits: a custom ``autograd.Function`` (tensorplay_tpx/autograd/function.py). Forward runs the block
with grad mode off (so none of its intermediates are kept); backward runs it again with grad mode on, from the
saved inputs and the same random-number state, and differentiates that recomputation.

    >>> import tensorplay as tp
    >>> from tensorplay.utils.checkpoint import checkpoint
    >>> w = tp.ones(3, requires_grad=True)
    >>> x = tp.arange(3.0)
    >>> checkpoint(lambda t: (t * w).sin().sum(), x).backward()
    >>> w.grad
    tensor([ 0.0000,  0.5403, -0.8323])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp

from ..autograd.engine import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad

__all__ = ["checkpoint"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx: Any, fn: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
        ctx.fn = fn
        ctx.rng_state = tp.get_rng_state() if preserve_rng_state else None
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, tp.Tensor)]
        ctx.others = [None if isinstance(a, tp.Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, tp.Tensor)])
        return fn(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        saved = ctx.saved_tensors
        args = list(ctx.others)
        inputs = []
        for pos, t in zip(ctx.tensor_positions, saved, strict=False):
            d = t.detach().requires_grad_(t.requires_grad)
            args[pos] = d
            inputs.append(d)
        if ctx.rng_state is not None:
            outer = tp.get_rng_state()
            tp.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                out = ctx.fn(*args)
        finally:
            if ctx.rng_state is not None:
                tp.set_rng_state(outer)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [
            (o, g) for o, g in zip(outs, grads, strict=False) if isinstance(o, tp.Tensor) and o.requires_grad
        ]
        if pairs:
            # Accumulate into every leaf the recomputation reaches: the block's parameters (closed over) get
            # their .grad directly; the detached inputs' .grad are handed back to the outer graph below.
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        result: list[Any] = [None, None] + [None] * len(args)
        for pos, x in zip(ctx.tensor_positions, inputs, strict=False):
            result[2 + pos] = x.grad if x.requires_grad else None
        return tuple(result)


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args)`` without keeping its intermediates; recompute them in backward.

    Parameters the function closes over (module weights) get their gradients too: the recomputation runs under
    grad mode and its graph reaches them directly.
    """
    if kwargs:
        raise ValueError(f"Unexpected keyword arguments: {', '.join(kwargs)}")
    if not any(isinstance(a, tp.Tensor) and a.requires_grad for a in args):
        # Only closed-over parameters need gradients: a dummy input that requires grad makes the call
        # recorded.
        dummy = tp.empty(0, requires_grad=True)
        return _Checkpoint.apply(lambda _d, *a: function(*a), preserve_rng_state, dummy, *args)
    return _Checkpoint.apply(function, preserve_rng_state, *args)
