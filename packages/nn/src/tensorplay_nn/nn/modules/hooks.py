"""Calling a module that has hooks: forward pre-hooks, ``forward``, forward hooks, and the backward hooks.

Where it sits: ``Module.__call__`` is a plain ``forward`` call until a hook is registered; then it calls
:func:`call_with_hooks` here (Note [Calling a module] in module.py). For the backward hooks
(``register_full_backward_hook`` / ``register_full_backward_pre_hook``) the module's tensor inputs and
outputs are wrapped in identity ``autograd.Function`` nodes, as PyTorch's ``BackwardHook`` does
(Note [Backward hooks as identity nodes]); nothing else in autograd changes.

Note [Backward hooks as identity nodes]
    ``y = module(x)`` becomes ``y' = Id_out(module(Id_in(x)))``. In backward, ``Id_out`` receives
    ``grad_output`` first: the pre-hooks may replace it, and it is remembered. Later ``Id_in`` receives
    ``grad_input`` (the gradient w.r.t. the module's inputs); the hooks are called with
    ``(module, grad_input, grad_output)`` and may replace ``grad_input``. When no input requires grad,
    ``Id_in`` does not exist and the hooks are called from ``Id_out`` with ``grad_input`` all ``None``. Both
    tuples are aligned with the positional arguments / outputs, ``None`` where that entry is not a tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import Function, is_grad_enabled

__all__ = ["call_with_hooks"]


class _Identity(Function):
    """Pass tensors through; in backward, hand their gradients to ``on_grads`` (which may replace them)."""

    @staticmethod
    def forward(ctx: Any, on_grads: Callable[[tuple], tuple], *tensors: tp.Tensor) -> tuple[tp.Tensor, ...]:
        ctx.on_grads = on_grads
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: tp.Tensor) -> tuple:
        return (None, *ctx.on_grads(grads))


def _checked(result: Any, expected: int, what: str, module: Any) -> tuple:
    if not isinstance(result, (tuple, list)) or len(result) != expected:
        got = len(result) if isinstance(result, (tuple, list)) else type(result).__name__
        raise RuntimeError(
            f"Backward hook of {type(module).__name__} returned an invalid number of {what} "
            f"- got {got}, but expected {expected}"
        )
    return tuple(result)


def call_with_backward_hooks(
    module: Any, args: tuple, kwargs: dict, forward: Callable[..., Any], hooks: list, pre_hooks: list
) -> Any:
    """Run ``forward(*args, **kwargs)`` with ``hooks``/``pre_hooks`` attached to its gradients (see Note)."""
    n_args = len(args)
    in_pos = [i for i, a in enumerate(args) if isinstance(a, tp.Tensor) and a.requires_grad]
    state: dict[str, Any] = {"grad_output": None}

    def run_hooks(grad_input: tuple) -> tuple:
        for hook in hooks:
            res = hook(module, grad_input, state["grad_output"])
            if res is not None:
                grad_input = _checked(res, n_args, "grad_input", module)
        return grad_input

    def on_input_grads(grads: tuple) -> tuple:
        full = [None] * n_args
        for i, g in zip(in_pos, grads, strict=True):
            full[i] = g
        new = run_hooks(tuple(full))
        return tuple(new[i] for i in in_pos)

    if in_pos and is_grad_enabled():
        wrapped = _Identity.apply(on_input_grads, *(args[i] for i in in_pos))
        args = list(args)
        for i, t in zip(in_pos, wrapped, strict=True):
            args[i] = t
        args = tuple(args)
    result = forward(*args, **kwargs)

    single = isinstance(result, tp.Tensor)
    outs = (result,) if single else result
    if not isinstance(outs, tuple) or not is_grad_enabled():
        return result  # PyTorch too leaves non-tensor / non-tuple outputs unhooked
    out_pos = [i for i, o in enumerate(outs) if isinstance(o, tp.Tensor) and o.requires_grad]
    if not out_pos:
        return result

    def on_output_grads(grads: tuple) -> tuple:
        full = [None] * len(outs)
        for i, g in zip(out_pos, grads, strict=True):
            full[i] = g
        grad_output = tuple(full)
        for hook in pre_hooks:
            res = hook(module, grad_output)
            if res is not None:
                grad_output = _checked(res, len(outs), "grad_output", module)
        state["grad_output"] = grad_output
        if not in_pos:
            run_hooks((None,) * n_args)
        return tuple(grad_output[i] for i in out_pos)

    wrapped = _Identity.apply(on_output_grads, *(outs[i] for i in out_pos))
    new_outs = list(outs)
    for i, t in zip(out_pos, wrapped, strict=True):
        new_outs[i] = t
    return new_outs[0] if single else tuple(new_outs)


def _run_forward(module: Any, args: tuple, kwargs: dict) -> Any:
    if not (module._backward_hooks or module._backward_pre_hooks):
        return module.forward(*args, **kwargs)
    return call_with_backward_hooks(
        module,
        args,
        kwargs,
        module.forward,
        list(module._backward_hooks.values()),
        list(module._backward_pre_hooks.values()),
    )


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its pre-hooks (which may replace the arguments), forward hooks (which
    may replace the result) and backward hooks, in PyTorch's order."""
    called: set[int] = set()
    try:
        for hook_id, hook in list(module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                res = hook(module, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {res}."
                        )
                    args, kwargs = res
            else:
                res = hook(module, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        result = _run_forward(module, args, kwargs)
        for hook_id, hook in list(module._forward_hooks.items()):
            called.add(hook_id)
            if hook_id in module._forward_hooks_with_kwargs:
                res = hook(module, args, kwargs, result)
            else:
                res = hook(module, args, result)
            if res is not None:
                result = res
        return result
    except Exception:
        # hooks registered with always_call still see the call (PyTorch: for cleanup such as profilers)
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in module._forward_hooks_with_kwargs:
                        hook(module, args, kwargs, None)
                    else:
                        hook(module, args, None)
                except Exception:  # the original error is the one to report
                    pass
        raise
