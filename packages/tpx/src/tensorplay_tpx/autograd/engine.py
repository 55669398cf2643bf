"""The Python face of the engine: ``backward``, ``grad``, and the hooks P10's Tensor calls.

Where it sits: ``tensorplay_tpx`` registers :data:`ENGINE` with P10 (``tensorplay_p10._autograd_hooks``) at
import; from then on ``Tensor.backward()``, ``.grad``, ``.grad_fn``, ``register_hook`` … land here and go
on to
the C++ engine (``csrc/engine.cpp``). This file only checks arguments and materialises default gradients.

    >>> import tensorplay as tp
    >>> x = tp.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10.fake_tensor import FakeTensorMode

from .. import _C
from .function import Function

__all__ = ["backward", "grad"]

Tensor = tp.Tensor


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: Sequence[Tensor], grads: Sequence[Any], is_grads_batched: bool = False) -> list:
    """The gradient each output starts with: the given one, or ones for a scalar output."""
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads, strict=False)):
        if g is None:
            if o.requires_grad and o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point and not o.dtype.is_complex:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {o.dtype}"
                )
            g = tp.ones_like(o)
        elif not isinstance(g, Tensor):
            g = tp.tensor(g, dtype=o.dtype)
        elif tuple(g.shape) != tuple(o.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] has a "
                f"shape of {tuple(o.shape)}."
            )
        out.append(g)
    return out


def _fake_scope(outputs: Sequence[Tensor]) -> contextlib.AbstractContextManager:
    """A graph of fake tensors runs its backward under FakeTensorMode (p10's Note [Fake tensors]), so that
    the factories inside formulas (``tp.zeros(shape, device=g.device)``) make fake tensors too."""
    if any(getattr(o, "_is_fake", False) for o in outputs):
        return FakeTensorMode()
    return contextlib.nullcontext()


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaves) into the leaves' ``.grad`` (PyTorch's ``torch.autograd.backward``)."""
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outputs)} tensors")
    ins = _as_tuple(inputs)
    if inputs is not None and not ins:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    with _fake_scope(outputs):
        _C._backward(
            list(outputs), _make_grads(outputs, grads), retain_graph, create_graph, list(ins), True, True
        )


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """d(outputs)/d(inputs), returned instead of accumulated (PyTorch's ``torch.autograd.grad``).

    >>> import tensorplay as tp
    >>> x = tp.tensor(3.0, requires_grad=True)
    >>> (dx,) = tp.autograd.grad(x ** 3, x, create_graph=True)
    >>> dx, tp.autograd.grad(dx, x)[0]
    (tensor(27., grad_fn=<MulBackward>), tensor(18.))
    """
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not supported")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True")
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"grad_outputs has {len(grads)} entries for {len(outs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    with _fake_scope(outs):
        result = _C._backward(
            list(outs), _make_grads(outs, grads), retain_graph, create_graph, list(ins), False, allow_unused
        )
    if materialize_grads:
        result = [tp.zeros_like(i) if r is None else r for r, i in zip(result, ins, strict=False)]
    return tuple(result)


class RemovableHandle:
    """Returned by ``register_hook``: ``handle.remove()`` takes the hook away again."""

    def __init__(self, remove: Any) -> None:
        self._remove = remove

    def remove(self) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None


class _Engine:
    """What P10's Tensor calls for its autograd surface (tensorplay_p10/_autograd_hooks.py)."""

    def set_requires_grad(self, t: Tensor, flag: bool) -> None:
        _C._set_requires_grad(t, flag)

    def get_grad(self, t: Tensor) -> Tensor | None:
        return _C._get_grad(t)

    def set_grad(self, t: Tensor, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if tuple(value.shape) != tuple(t.shape):
                raise RuntimeError("assigned grad has data of a different size")
            if value.dtype != t.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        _C._set_grad(t, value)

    def grad_fn(self, t: Tensor) -> Any:
        return _C._grad_fn(t)

    def output_nr(self, t: Tensor) -> int:
        return _C._output_nr(t)

    def backward(
        self, t: Tensor, gradient: Any, *, retain_graph: Any, create_graph: bool, inputs: Any
    ) -> None:
        backward(t, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def detach(self, t: Tensor) -> Tensor:
        return _C._detach(t)

    def detach_(self, t: Tensor) -> None:
        _C._detach_(t)

    def retain_grad(self, t: Tensor) -> None:
        _C._retain_grad(t)

    def retains_grad(self, t: Tensor) -> bool:
        return _C._retains_grad(t)

    def register_hook(self, t: Tensor, hook: Any) -> RemovableHandle:
        _C._register_tensor_hook(t, hook)
        return RemovableHandle(lambda: _C._remove_tensor_hook(t, hook))

    def register_post_accumulate_grad_hook(self, t: Tensor, hook: Any) -> RemovableHandle:
        _C._register_post_accumulate_hook(t, hook)
        return RemovableHandle(lambda: _C._remove_tensor_hook(t, hook))

    # For P10 code that records a backward of its own (cuda/graphs.py's make_graphed_callables).
    grad = staticmethod(grad)
    Function = Function


ENGINE = _Engine()
