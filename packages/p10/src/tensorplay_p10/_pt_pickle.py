"""PyTorch's pickle vocabulary: the globals a ``.pt`` file's ``data.pkl`` names, written and read.

Where it sits: ``_pt_zip.py`` writes ``data.pkl`` with :class:`TorchPickler` and reads it back with one of the
unpicklers of ``_unpickler.py``, both of which resolve a file's globals through :data:`TORCH_NAMES`. Nothing
here touches the zip; everything here is about what the pickle means.

Note [Torch names in data.pkl]
    ``torch.load`` (whose default is ``weights_only=True``) admits a fixed set of globals, so TensorPlay
    writes exactly what ``torch.save`` writes. A tensor is ``REDUCE(torch._utils._rebuild_tensor_v2, (storage,
    storage_offset, size, stride, requires_grad, OrderedDict()))`` where ``storage`` is a persistent id
    ``('storage', torch.FloatStorage, key, location, numel)`` (the storage type names the dtype; ``numel``
    counts elements of it; ``key`` names the member ``data/<key>``). A parameter is
    ``_rebuild_parameter(tensor, requires_grad, OrderedDict())``; other tensor subclasses go through
    ``torch._tensor._rebuild_from_type_v2``; dtypes are the globals ``torch float32`` …; ``torch.Size`` and
    ``torch.device`` are REDUCEs. Python's own pickler cannot emit a global it cannot import (torch need not
    be installed), so :class:`TorchPickler` extends the pure-Python pickler with one more type,
    :class:`TorchGlobal`, which it writes as a raw GLOBAL opcode. On load the same names map to the functions
    below, which check every argument (types, view bounds) before a tensor is made.

Note [Storages load lazily]
    A persistent id only describes a storage; :class:`StorageIn` reads its member the first time a tensor is
    built on it (``_rebuild_tensor_v3`` names the dtype only then), once, so views and tied weights share
    the one buffer, and ``map_location`` sees each storage once.
"""

from __future__ import annotations

import functools
import pickle
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from . import _C
from . import _dtype as D
from ._device import device as Device
from ._pickle import check_view, view_of
from ._shape import Size

# torch's legacy typed-storage class for each dtype (the storage type of a persistent id).
STORAGE_TYPES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
_STORAGE_OF = {dtype: name for name, dtype in STORAGE_TYPES.items()}


class BadCheckpoint(RuntimeError):
    """A file's contents contradict themselves; ``_pt_zip`` adds the file's name and re-raises it."""


# ---- the parameter type: nn registers it (P10 never imports nn) ---------------------------------------
_parameter_type: type | None = None


def register_parameter_type(cls: type) -> None:
    """Called by ``tensorplay_nn`` at import: the class ``_rebuild_parameter`` makes (``nn.Parameter``)."""
    global _parameter_type
    _parameter_type = cls


# ---- writing --------------------------------------------------------------------------------------------
class TorchGlobal:
    """A PyTorch global that :class:`TorchPickler` writes by name (Note [Torch names in data.pkl])."""

    __slots__ = ("module", "qualname")

    def __init__(self, module: str, qualname: str) -> None:
        self.module, self.qualname = module, qualname

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce insists that a reduce function is callable
        raise TypeError(f"{self.module}.{self.qualname} is only a name written into a .pt file")

    def __repr__(self) -> str:
        return f"{self.module}.{self.qualname}"


@functools.cache
def _g(module: str, qualname: str) -> TorchGlobal:
    return TorchGlobal(module, qualname)  # one object per name, so pickle's memo writes it once


class _StorageOut:
    """A storage to write: its key, the CPU tensor owning its buffer, and where the tensor lived."""

    __slots__ = ("key", "tensor", "location")

    def __init__(self, key: str, tensor: Any, location: str) -> None:
        self.key, self.tensor, self.location = key, tensor, location


class TorchPickler(pickle._Pickler):
    """Protocol-2 pickler writing tensors, dtypes, devices and sizes with PyTorch's globals.

    The pure-Python ``pickle._Pickler`` is used because its type dispatch can be extended (the C pickler's
    cannot write a global it cannot import). ``storages`` lists what ``data/<key>`` members must hold.
    """

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file: Any) -> None:
        super().__init__(file, protocol=2)
        self.storages: list[_StorageOut] = []
        self._by_buffer: dict[tuple[int, Any], _StorageOut] = {}

    def save_torch_global(self, obj: TorchGlobal) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.qualname}\n".encode())
        self.memoize(obj)

    dispatch[TorchGlobal] = save_torch_global
    dispatch[D.dtype] = lambda self, dt: self.save(_g("torch", dt._name))

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not _StorageOut:
            return None
        t = obj.tensor
        storage_type = _g("torch", _STORAGE_OF[t.dtype._name])
        return ("storage", storage_type, obj.key, obj.location, t._storage_nbytes() // t.dtype.itemsize)

    def _storage(self, src: Any, location: str) -> _StorageOut:
        """The one storage entry for ``src``'s buffer (tensors on one buffer share it: views, tied ones)."""
        ident = (src._storage_data_ptr(), src.dtype)
        out = self._by_buffer.get(ident) if ident[0] else None
        if out is None:
            out = _StorageOut(str(len(self.storages)), src, location)
            self.storages.append(out)
            if ident[0]:  # size-0 buffers have no address to share by
                self._by_buffer[ident] = out
        return out

    def reducer_override(self, obj: Any) -> Any:
        from ._tensor import Tensor

        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_g("torch", "device"), args)
        if isinstance(obj, Size):
            return (_g("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t: Any) -> tuple:
        from ._tensor import Tensor

        if t.device.type == "meta":
            raise RuntimeError("tp.save: a meta tensor has no data to save")
        if type(t) is _parameter_type:
            hooks: Any = OrderedDict()
            if t.__dict__:
                return (
                    _g("torch._utils", "_rebuild_parameter_with_state"),
                    (t.detach(), t.requires_grad, hooks, dict(t.__dict__)),
                )
            return (_g("torch._utils", "_rebuild_parameter"), (t.detach(), t.requires_grad, hooks))
        # Other devices are written from a dense CPU copy; the location restores them on load.
        src = t.detach() if t.device.type == "cpu" else t.detach().contiguous().cpu()
        args = (
            self._storage(src, str(t.device)),
            src.storage_offset(),
            tuple(src.shape),
            tuple(src.stride()),
            t.requires_grad,
            OrderedDict(),
        )
        rebuild = _g("torch._utils", "_rebuild_tensor_v2")
        if type(t) is Tensor:
            return (rebuild, args)
        state = dict(t.__dict__) if getattr(t, "__dict__", None) else None
        return (_g("torch._tensor", "_rebuild_from_type_v2"), (rebuild, type(t), args, state))


# ---- reading ----------------------------------------------------------------------------------------------
class StorageType:
    """A storage global such as ``torch.FloatStorage`` (…): a dtype, or raw bytes (``UntypedStorage``)."""

    def __init__(self, name: str, dtype: D.dtype | None) -> None:
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return self.name


class StorageIn:
    """A storage named by a persistent id, read on first use (Note [Storages load lazily])."""

    def __init__(self, key: str, dtype: D.dtype | None, numel: int, read: Callable[[D.dtype], Any]) -> None:
        self.key, self.dtype, self.numel, self._read = key, dtype, numel, read
        self._base: Any = None

    def base(self, dtype: D.dtype | None) -> Any:
        """The storage as a 1-d tensor of ``dtype`` (an untyped storage takes its first tensor's dtype)."""
        dtype = dtype or self.dtype or D.uint8
        if self._base is None:
            self._base = self._read(dtype)
        elif self._base.dtype is not dtype:
            raise BadCheckpoint(f"storage {self.key!r} is read as {self._base.dtype} and as {dtype}")
        return self._base

    def __repr__(self) -> str:
        return f"<storage {self.key!r} of {self.numel} {self.dtype or 'bytes'}>"


def _ints(x: Any, what: str) -> list[int]:
    if not isinstance(x, (tuple, list)) or not all(type(i) is int for i in x):
        raise BadCheckpoint(f"{what} must be a tuple of ints, got {str(x)[:80]}")
    return list(x)


def _view(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any, dtype: Any, fn: str) -> Any:
    if not isinstance(storage, StorageIn):
        raise BadCheckpoint(f"{fn}: the storage argument is a {type(storage).__name__}, not a storage")
    size, stride = _ints(size, f"{fn}: size"), _ints(stride, f"{fn}: stride")
    if type(offset) is not int or type(requires_grad) is not bool:
        raise BadCheckpoint(f"{fn}: bad storage_offset {offset!r} or requires_grad {requires_grad!r}")
    base = storage.base(dtype)
    try:
        check_view(base.numel(), size, stride, offset, fn, base.dtype.itemsize)
    except RuntimeError as e:
        raise BadCheckpoint(str(e)) from None
    t = view_of(base, size, stride, offset)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: a checked view of a storage (hooks and metadata are dropped)."""
    return _view(storage, storage_offset, size, stride, requires_grad, None, "_rebuild_tensor_v2")


def rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
):
    """``torch._utils._rebuild_tensor_v3``: as v2, the dtype given explicitly (torch's untyped storages)."""
    if not isinstance(dtype, D.dtype):
        raise BadCheckpoint(f"_rebuild_tensor_v3: dtype is {dtype!r}")
    if isinstance(storage, StorageIn) and storage.dtype not in (None, dtype):
        raise BadCheckpoint(f"_rebuild_tensor_v3: a {storage.dtype} storage read as {dtype}")
    return _view(storage, storage_offset, size, stride, requires_grad, dtype, "_rebuild_tensor_v3")


def _set_state(obj: Any, state: Any, fn: str) -> None:
    if state is None:
        return
    if not isinstance(state, dict) or not all(isinstance(k, str) and not k.startswith("__") for k in state):
        raise BadCheckpoint(f"{fn}: the state must be a dict of attribute names, got {str(state)[:80]}")
    obj.__dict__.update(state)


def rebuild_parameter(data, requires_grad, backward_hooks):
    """``torch._utils._rebuild_parameter``: ``nn.Parameter(data)`` when nn is loaded, else a leaf tensor."""
    from ._tensor import Tensor

    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise BadCheckpoint(f"_rebuild_parameter: bad arguments {type(data).__name__}, {requires_grad!r}")
    if _parameter_type is not None:
        return _parameter_type(data, requires_grad)
    return data.detach().requires_grad_(requires_grad)


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """``torch._utils._rebuild_parameter_with_state``: a parameter plus the attributes hung on it."""
    p = rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(p, state, "_rebuild_parameter_with_state")
    return p


_REBUILDS = (rebuild_tensor_v2, rebuild_tensor_v3, rebuild_parameter, rebuild_parameter_with_state)


def rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a tensor rebuilt by ``func``, then made a ``new_type``."""
    from ._tensor import Tensor

    if func not in _REBUILDS or not isinstance(args, tuple):
        raise BadCheckpoint(f"_rebuild_from_type_v2: {func!r} is not a tensor rebuild function")
    if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise BadCheckpoint(f"_rebuild_from_type_v2: {new_type!r} is not a tensor type")
    t = func(*args)
    if type(t) is not new_type:
        t = _C._make_subclass(new_type, t, t.requires_grad)
    _set_state(t, state, "_rebuild_from_type_v2")
    return t


# ---- the plain values a weights-only load may build (each argument checked: no huge bytes(n), no set(t)) ---
def _plain(*types: type) -> Callable[[Any], bool]:
    return lambda v: type(v) in types


_is_seq = _plain(list, tuple)
_is_num = _plain(int, float)


def make_ordered_dict(*args):
    if args and not (len(args) == 1 and (isinstance(args[0], dict) or _is_seq(args[0]))):
        raise BadCheckpoint("collections.OrderedDict takes one dict or list of pairs")
    return OrderedDict(*args)


def make_set(items=()):
    if not _is_seq(items):
        raise BadCheckpoint("builtins.set takes a list")
    return set(items)


def make_frozenset(items=()):
    if not _is_seq(items):
        raise BadCheckpoint("builtins.frozenset takes a list")
    return frozenset(items)


def make_complex(real=0.0, imag=0.0):
    if not (_is_num(real) and _is_num(imag)):
        raise BadCheckpoint("builtins.complex takes two numbers")
    return complex(real, imag)


def make_slice(*args):
    if not 1 <= len(args) <= 3 or not all(a is None or type(a) is int for a in args):
        raise BadCheckpoint("builtins.slice takes up to three ints or None")
    return slice(*args)


def codecs_encode(text, encoding="latin1"):
    """``_codecs.encode``: how protocol 2 writes bytes (latin-1 text) and nothing else."""
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise BadCheckpoint("_codecs.encode is allowed only for latin-1 text (pickled bytes)")
    return text.encode("latin-1")


def make_bytes(*args):
    if args and not (len(args) == 1 and type(args[0]) in (bytes, str)):
        raise BadCheckpoint("builtins.bytes takes no argument or bytes")
    return bytes(*args) if not args or type(args[0]) is bytes else args[0].encode("latin-1")


def make_bytearray(*args):
    if len(args) == 2 and type(args[0]) is str and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0], "latin-1")
    if args and not (len(args) == 1 and type(args[0]) is bytes):
        raise BadCheckpoint("builtins.bytearray takes bytes or latin-1 text")
    return bytearray(*args)


def make_size(dims=()):
    size = _ints(dims, "torch.Size")
    if any(s < 0 for s in size):
        raise BadCheckpoint(f"torch.Size({size}) has a negative size")
    return Size(size)


def make_device(kind, index=None):
    if type(kind) is not str or not (index is None or type(index) is int):
        raise BadCheckpoint(f"torch.device({kind!r}, {index!r}) is not a device")
    return Device(kind) if index is None else Device(kind, index)


def _names() -> dict[str, Any]:
    from ._tensor import Tensor

    rc: dict[str, Any] = {
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch.Tensor": Tensor,
        "torch.Size": make_size,
        "torch.device": make_device,
        "torch.storage.UntypedStorage": StorageType("torch.storage.UntypedStorage", None),
        "collections.OrderedDict": make_ordered_dict,
        "builtins.set": make_set,
        "builtins.frozenset": make_frozenset,
        "builtins.complex": make_complex,
        "builtins.slice": make_slice,
        "builtins.bytes": make_bytes,
        "builtins.bytearray": make_bytearray,
        "_codecs.encode": codecs_encode,
    }
    for name, dtype in STORAGE_TYPES.items():
        rc[f"torch.{name}"] = StorageType(f"torch.{name}", getattr(D, dtype))
    for name in dir(D):
        if isinstance(getattr(D, name), D.dtype):
            rc[f"torch.{getattr(D, name)._name}"] = getattr(D, name)
    return rc


# Every global a weights-only load admits, by the name a file uses (the parameter type resolves at use).
TORCH_NAMES: dict[str, Any] = {}
# The ones NEWOBJ may construct (pickle writes complex, sets and sizes this way for some classes).
NEWABLE = (make_complex, make_set, make_frozenset, make_ordered_dict, make_size)


def torch_names() -> dict[str, Any]:
    """:data:`TORCH_NAMES`, filled on first use (``_tensor`` imports after this module)."""
    if not TORCH_NAMES:
        TORCH_NAMES.update(_names())
    table = dict(TORCH_NAMES)
    if _parameter_type is not None:
        table["torch.nn.parameter.Parameter"] = _parameter_type
    return table
