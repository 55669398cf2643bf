"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``.

Where it sits: on :class:`~tensorplay.nn.Module`. A container is an ordinary module whose children (or
parameters) are named by position (``"0"``, ``"1"``...) or by key, so ``state_dict`` keys read
``layers.0.weight`` exactly as in PyTorch. Only ``Sequential`` has a ``forward``.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any

import tensorplay_p10 as tp

from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _abs_index(idx: Any, size: int) -> int:
    """``idx`` as a position in ``range(size)``; negative counts from the end; out of range: IndexError."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


def _renumber(module: Module) -> None:
    """After a deletion, name the children ``"0"..."n-1"`` again so that positions and names agree."""
    module._modules = OrderedDict((str(i), m) for i, m in enumerate(module._modules.values()))


def _update_pairs(owner: str, pairs: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """The (key, value) pairs of a ``ModuleDict``/``ParameterDict`` ``update`` sequence, one at a time
    (earlier ones are stored before a later malformed one raises), with PyTorch's errors."""
    for j, pair in enumerate(pairs):
        if not isinstance(pair, Iterable):
            raise TypeError(
                f"{owner} update sequence element #{j} should be Iterable; is{type(pair).__name__}"
            )
        if len(pair) != 2:
            raise ValueError(f"{owner} update sequence element #{j} has length {len(pair)}; 2 is required")
        yield pair[0], pair[1]


class Sequential(Module):
    r"""Modules chained in order: ``forward(x)`` is ``m_n(...m_1(m_0(x)))``.

    ``Sequential(m0, m1, ...)`` names the children ``"0"``, ``"1"``...; ``Sequential(OrderedDict(name=m))``
    keeps the given names. Indexing gives a child, slicing a new ``Sequential`` of the same children.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.Flatten(), nn.Linear(8, 2))
        >>> model(tp.ones(3, 4)).shape
        tensorplay.Size([3, 2])
        >>> len(model[:2])
        2
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key_at(self, idx: int) -> str:
        return next(islice(iter(self._modules), _abs_index(idx, len(self)), None))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key_at(idx)]
        for key in keys:
            delattr(self, key)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {type(other)} is given."
            )
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {type(other)} is given."
            )
        return self.extend(other)

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int) or other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at position ``index``, shifting the later ones."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index if index >= 0 else index + n, module)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(items))
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key: int) -> Module:
        """Remove and return the module at position ``key``."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    r"""A list of modules, registered so that their parameters belong to the parent; it has no ``forward``.

    Example:
        >>> from tensorplay import nn
        >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        >>> len(list(layers.parameters()))
        6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [str(_abs_index(idx, len(self)))]
        for key in keys:
            delattr(self, key)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` at position ``index``, shifting the later ones."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules = OrderedDict()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of ``modules``."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got " + type(modules).__name__
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self) -> str:
        # PyTorch compresses runs of identical children: "(0-3): 4 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list[Any]] = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [
            _addindent(f"({s}): {r}" if s == e else f"({s}-{e}): {e - s + 1} x {r}", 2) for s, e, r in runs
        ]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    r"""An ordered dict of modules, registered under their keys; it has no ``forward``.

    Example:
        >>> from tensorplay import nn
        >>> heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "box": nn.Linear(8, 4)})
        >>> list(heads.keys())
        ['cls', 'box']
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``."""
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Any:
        return self._modules.keys()

    def items(self) -> Any:
        return self._modules.items()

    def values(self) -> Any:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add the modules of a mapping, or of an iterable of ``(key, module)`` pairs, in order."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                + type(modules).__name__
            )
        if isinstance(modules, Mapping):
            for key, module in modules.items():
                self[key] = module
            return
        for key, module in _update_pairs("ModuleDict", modules):
            self[key] = module


def _param_line(key: Any, p: Any, by_type_name: bool = False) -> str:
    """One line of a ParameterList/ParameterDict repr: what is stored, not its values (PyTorch's layout;
    PyTorch's ParameterDict names the tensor type, ``FloatTensor``, where ParameterList names the dtype)."""
    if isinstance(p, tp.Tensor):
        size_str = "x".join(str(s) for s in p.shape)
        device_str = f" ({p.device})" if p.device.type != "cpu" else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        what = p.type() if by_type_name else p.dtype
        return f"  ({key}): {kind} containing: [{what} of size {size_str}{device_str}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    r"""A list of parameters, registered under ``"0"``, ``"1"``...; plain tensors are wrapped as parameters.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> ps = nn.ParameterList([nn.Parameter(tp.zeros(2)), tp.ones(3)])
        >>> [type(p).__name__ for p in ps]
        ['Parameter', 'Parameter']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        if isinstance(param, tp.Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(_abs_index(idx, len(self))), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a tensor becomes a :class:`Parameter`)."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every element of ``values``."""
        if not isinstance(values, Iterable) or isinstance(values, tp.Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got " + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p) for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    r"""An ordered dict of parameters under string keys; plain tensors are wrapped as parameters.

    A plain ``dict`` given to the constructor or to ``update`` is added in sorted key order (as PyTorch does);
    an ``OrderedDict``, another ``ParameterDict`` or a list of pairs keeps its order.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> pd = nn.ParameterDict({"scale": tp.ones(2), "shift": tp.zeros(2)})
        >>> sorted(name for name, _ in pd.named_parameters())
        ['scale', 'shift']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, tp.Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add the entries of a mapping, or of an iterable of ``(key, value)`` pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, but got "
                + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs: Iterable[Any] = parameters.items()
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = parameters
        for key, param in _update_pairs("ParameterDict", pairs):
            self[key] = param

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, by_type_name=True) for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
