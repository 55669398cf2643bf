"""``autograd.Function``: define an operation by its forward and its backward, in Python.

Where it sits: ``Function.apply`` runs your ``forward`` with grad mode off, then records one graph node for
the
call (csrc/function.cpp) whose backward calls your ``backward``. Saved tensors are kept by that node and
version-checked like every other saved tensor.

    >>> import tensorplay as tp
    >>> class Cube(tp.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return grad * 3 * x ** 2
    >>> x = tp.tensor(2.0, requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y.backward(); x.grad, y.grad_fn.name()
    (tensor(12.), 'CubeBackward')
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp

from .. import _C
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

Tensor = tp.Tensor


class FunctionCtx:
    """The ``ctx`` a Function's forward and backward share."""

    def __init__(self) -> None:
        self.to_save: tuple = ()
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._node: Any = None

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for backward (read them back with ``ctx.saved_tensors``)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument is not a Tensor")
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._node is None:
            raise RuntimeError("saved_tensors can only be read in backward (after forward has returned)")
        return tuple(self._node._saved_tensors())

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that forward modified in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that carry no gradient (indices, masks, ...)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = value


def _is_setup_context_style(cls: type) -> bool:
    return "setup_context" in cls.__dict__ or any(
        "setup_context" in b.__dict__ and b is not Function for b in cls.__mro__[1:-1]
    )


class Function:
    """Base class of custom differentiable operations: subclass, define static ``forward`` and ``backward``,
    call ``YourFunction.apply(...)``. ``forward(ctx, *args)`` may instead be ``forward(*args)`` with a
    separate
    ``setup_context(ctx, inputs, output)``."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use "
            "it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = FunctionCtx()
        tensor_args = [a if isinstance(a, Tensor) else None for a in args]
        ctx.needs_input_grad = tuple(t is not None and t.requires_grad for t in tensor_args)
        record = _C._is_grad_enabled() and any(ctx.needs_input_grad)
        # Forward-mode AD: the inputs' tangents, read before forward runs (forward AD is off inside forward).
        forward_ad = _C._forward_ad_enabled()
        tangents = [_C._get_fw_grad(t) if t is not None and forward_ad else None for t in tensor_args]
        forward_ad = forward_ad and any(t is not None for t in tangents)
        if forward_ad:
            _C._set_forward_ad(False)
        try:
            output = cls._run_forward(ctx, args, kwargs)
        finally:
            if forward_ad:
                _C._set_forward_ad(True)
        if forward_ad:
            cls._push_tangents(ctx, output, tangents)
        return cls._record(ctx, output, tensor_args, record)

    @classmethod
    def _run_forward(cls, ctx: FunctionCtx, args: tuple, kwargs: dict) -> Any:
        with no_grad():
            if _is_setup_context_style(cls):
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        return output

    @classmethod
    def _push_tangents(cls, ctx: FunctionCtx, output: Any, tangents: list) -> None:
        """Forward-mode AD through a Function: ``jvp(ctx, *input_tangents)`` gives the outputs' tangents."""
        _C._set_forward_ad(False)
        try:
            out_tangents = cls.jvp(ctx, *tangents)
        finally:
            _C._set_forward_ad(True)
        outs = output if isinstance(output, tuple) else (output,)
        out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
        for o, t in zip(outs, out_tangents, strict=False):
            if isinstance(o, Tensor) and t is not None:
                _C._set_fw_grad(o, t)

    @classmethod
    def _record(cls, ctx: FunctionCtx, output: Any, tensor_args: list, record: bool) -> Any:
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        if not record:
            return output
        input_ids = {id(t) for t in tensor_args if t is not None}
        dirty_ids = {id(t) for t in ctx._dirty}
        nondiff_ids = {id(t) for t in ctx._non_differentiable}
        # An input returned unchanged (and not marked dirty) comes back as a new alias, so recording the
        # output
        # does not overwrite the input's own history.
        fixed = []
        for o in outputs:
            if isinstance(o, Tensor) and id(o) in input_ids and id(o) not in dirty_ids:
                o = _C._detach(o)
            fixed.append(o)
        outputs = tuple(fixed)
        tensor_outs = [o if isinstance(o, Tensor) else None for o in outputs]
        ctx._out_meta = [None if o is None else (tuple(o.shape), o.dtype) for o in tensor_outs]
        _C._record_function(
            cls.__name__,
            ctx,
            _make_backward(cls, len(tensor_args)),
            tensor_args,
            tensor_outs,
            [o is not None and id(o) not in nondiff_ids for o in tensor_outs],
            [o is not None and id(o) in dirty_ids for o in tensor_outs],
            list(ctx.to_save),
        )
        ctx.to_save = ()
        return outputs[0] if single else outputs


def _make_backward(cls: type, n_inputs: int) -> Callable[..., Any]:
    def run(ctx: FunctionCtx, node: Any, grads: list) -> tuple:
        if ctx.materialize_grads:
            grads = [
                tp.zeros(m[0], dtype=m[1]) if g is None and m is not None else g
                for g, m in zip(grads, ctx._out_meta, strict=False)
            ]
        ctx._node = node
        try:
            result = cls.backward(ctx, *grads)
        finally:
            ctx._node = None
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != n_inputs:
            if len(result) > n_inputs and all(r is None for r in result[n_inputs:]):
                result = result[:n_inputs]
            else:
                raise RuntimeError(
                    f"function {cls.__name__}Backward returned an incorrect number of gradients (expected "
                    f"{n_inputs}, got {len(result)})"
                )
        return result

    return run


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a backward as not itself differentiable: it runs with grad mode off, and differentiating its
    result
    again raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C._is_grad_enabled():
            return outputs
        requires = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not requires:
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        # The guard must be recorded, so its input must require grad: a detached leaf copy does (PyTorch's
        # trick).
        marked = tuple(
            _OnceDifferentiableGuard.apply(o.detach().requires_grad_(True))
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)
            else o
            for o in outs
        )
        return marked if isinstance(outputs, tuple) else marked[0]

    return wrapper


class _OnceDifferentiableGuard(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )
