"""The Python view of a graph node (a tensor's ``grad_fn``): hooks and names.

Where it sits: ``tensorplay_tpx._C.Node`` is the C++ node (csrc/node.h); this module adds PyTorch's hook API
on top of it (``register_hook``, ``register_prehook`` returning removable handles).

    >>> import tensorplay as tp
    >>> x = tp.ones(2, requires_grad=True)
    >>> y = (x * 2).sum()
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('SumBackward', 'MulBackward')
"""

from __future__ import annotations

from typing import Any

from .. import _C
from .engine import RemovableHandle

Node = _C.Node


def _register_hook(self: Any, fn: Any) -> RemovableHandle:
    """``fn(grad_inputs, grad_outputs)`` after the node ran; a returned tuple replaces grad_inputs."""
    self._register_hook(fn)
    return RemovableHandle(lambda: self._remove_hook(fn))


def _register_prehook(self: Any, fn: Any) -> RemovableHandle:
    """``fn(grad_outputs)`` before the node runs; a returned tuple replaces grad_outputs."""
    self._register_prehook(fn)
    return RemovableHandle(lambda: self._remove_hook(fn))


Node.register_hook = _register_hook
Node.register_prehook = _register_prehook
