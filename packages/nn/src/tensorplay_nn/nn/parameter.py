"""``nn.Parameter``: a tensor that a :class:`~tensorplay.nn.Module` registers as one of its learnable weights.

Where it sits: the only thing that makes a tensor a parameter is its type. ``Module.__setattr__`` sees an
``isinstance(value, Parameter)`` and files it under ``_parameters``; everything else about it (ops, autograd,
printing) is the ordinary :class:`tensorplay.Tensor` it subclasses. The subclass object is made by P10's
``_make_subclass``, which wraps the same storage in a Python object of the subclass (as PyTorch's
``Tensor._make_subclass``): no copy, and results of ops on a parameter are plain tensors again.
"""

from __future__ import annotations

import copy
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import _C as _p10_C
from tensorplay_p10 import _pt_pickle

__all__ = ["Buffer", "Parameter"]


class Parameter(tp.Tensor):
    r"""A tensor that is a module's learnable weight: assigning one to a module attribute registers it.

    ``Parameter(data, requires_grad=True)`` shares ``data``'s storage and is a leaf of the autograd graph
    (``data`` is detached first), so ``requires_grad`` defaults to ``True`` and gradients accumulate into
    ``.grad``.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.Parameter(tp.ones(2))
        >>> w.requires_grad, isinstance(w, tp.Tensor)
        (True, True)
        >>> w
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
    """

    def __new__(cls, data: tp.Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = tp.empty(0)
        if not isinstance(data, tp.Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, but got {type(data).__name__}")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError(
                f"Parameter(): only Tensors of floating point and complex dtype can require gradients, "
                f"but got dtype {data.dtype}"
            )
        return _p10_C._make_subclass(cls, data.detach(), requires_grad)

    def __init__(
        self, data: tp.Tensor | None = None, requires_grad: bool = True
    ) -> None:  # work is in __new__
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        # attributes a user hung on the parameter travel with it, as in PyTorch
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter, (self.detach().clone().numpy(), self.requires_grad))


def _rebuild_parameter(array: Any, requires_grad: bool) -> Parameter:
    """Unpickle a :class:`Parameter` (pickling goes through NumPy; ``tp.save`` is the format for files)."""
    return Parameter(tp.from_numpy(array.copy()), requires_grad)


# tp.load rebuilds PyTorch's `torch._utils._rebuild_parameter` as this class (P10 cannot import nn).
_pt_pickle.register_parameter_type(Parameter)


class Buffer(tp.Tensor):
    r"""A marker for a module buffer: ``module.x = nn.Buffer(t)`` is ``module.register_buffer("x", t)``.

    ``Buffer(data, persistent=True)`` is only a wrapper while it is being assigned: the module stores ``data``
    itself (a plain tensor), as PyTorch does, and ``persistent=False`` keeps it out of ``state_dict``.

    Example:
        >>> import tensorplay as tp
        >>> m = tp.nn.Module()
        >>> m.running = tp.nn.Buffer(tp.zeros(2))
        >>> [name for name, _ in m.named_buffers()]
        ['running']
    """

    persistent: bool

    def __new__(cls, data: tp.Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = tp.empty(0)
        if not isinstance(data, tp.Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, but got {type(data).__name__}")
        t = _p10_C._make_subclass(cls, data.detach(), False)
        t.persistent = persistent
        t._buffer_data = data  # what the module registers: the caller's own tensor, not this wrapper
        return t

    def __init__(self, data: tp.Tensor | None = None, *, persistent: bool = True) -> None:
        pass
