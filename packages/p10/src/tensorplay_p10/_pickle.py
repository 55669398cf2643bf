"""Pickling tensors: ``pickle.dumps(t)``, ``copy.deepcopy(t)`` and tensors sent between processes.

Where it sits: ``Tensor.__reduce_ex__`` (``_tensor.py``) calls :func:`reduce_tensor`. A tensor pickles as its
storage (the raw bytes of the whole buffer, once) plus its view metadata (sizes, strides, offset). The same
helpers serve ``tp.load`` (``_pt_pickle.py``, ``_pt_legacy.py``, ``serialization.py``), so every reader checks
a view against its storage the same way (:func:`check_view`).

Note [Storage sharing in one pickle]
    Views of one buffer must come back as views of one new buffer (``a`` and ``a[1:]`` still alias after
    ``pickle.loads(pickle.dumps([a, a[1:]]))``, as in PyTorch). Pickle shares an object between two places
    only when it is the *same* Python object, so every tensor on one buffer must reduce to the same
    :class:`_StorageRef`. :func:`_storage_ref` keeps them in a weak dictionary keyed by the buffer's address:
    while one ``dumps`` runs, pickle's memo holds the first ref, so the second tensor finds it again; once
    ``dumps`` ends the refs die and the dictionary forgets them. The ref holds a tensor on its buffer, so the
    address cannot be freed and reused while the key is alive.

Example:
    >>> import pickle, tensorplay_p10 as tp
    >>> a = tp.arange(4.0)
    >>> b, c = pickle.loads(pickle.dumps((a, a[1:])))
    >>> c[0] = 9.0
    >>> b
    tensor([0., 9., 2., 3.])
"""

from __future__ import annotations

import ctypes
import math
import weakref
from typing import Any

from . import _C
from . import _dtype as D

# Note [Storage sharing in one pickle]: address of a buffer -> the one ref pickled for it.
_live_refs: weakref.WeakValueDictionary[int, _StorageRef] = weakref.WeakValueDictionary()


def storage_bytes(t: Any) -> bytes:
    """The raw bytes of the whole buffer under ``t`` (CPU), whatever part of it ``t`` views."""
    n = t._storage_nbytes()
    return ctypes.string_at(t._storage_data_ptr(), n) if n else b""


def storage_from_bytes(data: bytes | bytearray | memoryview, dtype: D.dtype) -> Any:
    """A new 1-d CPU tensor of ``dtype`` whose buffer holds ``data`` (a whole number of elements)."""
    from ._factories import empty

    if len(data) % dtype.itemsize:
        raise RuntimeError(
            f"storage of {len(data)} bytes is not a whole number of {dtype} elements "
            f"({dtype.itemsize} bytes each)"
        )
    base = empty(len(data) // dtype.itemsize, dtype=dtype)
    if len(data):
        ctypes.memmove(base.data_ptr(), data if isinstance(data, bytes) else bytes(data), len(data))
    return base


# Note [A view's dense size]: a zero-stride view of one element may claim 2**62 elements; cloning it asks for
# numel * itemsize bytes, which must not wrap around 64 bits (the allocator would get a tiny size and the
# copy would write past it). A view from a file whose dense size cannot be addressed is refused here.
_MAX_NBYTES = 2**63 - 1


def check_view(
    numel: int, size: list[int], stride: list[int], offset: int, what: str, itemsize: int = 1
) -> None:
    """RuntimeError unless the view (size, stride, offset) lies inside a buffer of ``numel`` elements."""
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"{what}: invalid view (size={size}, stride={stride}, offset={offset})")
    if any(s == 0 for s in size):
        return  # an empty view touches no element
    if math.prod(size) * itemsize > _MAX_NBYTES:  # Note [A view's dense size]
        raise RuntimeError(
            f"{what}: view (size={size}, stride={stride}) has {math.prod(size)} elements, more than a "
            "tensor can hold"
        )
    last = offset + sum((s - 1) * st for s, st in zip(size, stride, strict=False))
    if last >= numel:
        raise RuntimeError(
            f"{what}: view (size={size}, stride={stride}, offset={offset}) reaches element {last} of a "
            f"storage of {numel} elements"
        )


def view_of(base: Any, size: list[int], stride: list[int], offset: int) -> Any:
    """``base``'s buffer seen with (size, stride, offset), in elements of ``base.dtype``."""
    return base.as_strided(size, stride, offset)


class _StorageRef:
    """Stands for one buffer while a pickle is written (Note [Storage sharing in one pickle])."""

    __slots__ = ("owner", "__weakref__")

    def __init__(self, owner: Any) -> None:
        self.owner = owner

    def __reduce__(self) -> tuple:
        t = self.owner
        return (storage_from_bytes, (storage_bytes(t), t.dtype))


def _storage_ref(t: Any) -> _StorageRef:
    key = t._storage_data_ptr()
    ref = _live_refs.get(key) if key else None
    if ref is None or ref.owner.dtype is not t.dtype:
        ref = _StorageRef(t.detach())
        if key:  # size-0 buffers have no address to share by
            _live_refs[key] = ref
    return ref


def _rebuild_tensor(
    base: Any,
    size: list[int],
    stride: list[int],
    offset: int,
    device: str,
    requires_grad: bool,
    cls: type,
    state: Any,
) -> Any:
    check_view(base.numel(), size, stride, offset, "unpickling a tensor", base.dtype.itemsize)
    t = view_of(base, size, stride, offset)
    if device != "cpu":
        t = t.to(device)
    if cls is not type(t):
        t = _C._make_subclass(cls, t, False)
    if requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(t: Any) -> tuple:
    """``t.__reduce_ex__``: rebuild from the shared buffer and the view metadata (data only, no graph)."""
    if t.device.type == "meta":
        raise RuntimeError("cannot pickle a meta tensor: it has no data")
    state = dict(t.__dict__) if hasattr(t, "__dict__") else None
    # Other devices travel as a dense CPU copy (their buffers are not shared across the pickle).
    src = t if t.device.type == "cpu" else t.detach().contiguous().cpu()
    return (
        _rebuild_tensor,
        (
            _storage_ref(src),
            list(src.shape),
            list(src.stride()),
            src.storage_offset(),
            str(t.device),
            t.requires_grad,
            type(t),
            state,
        ),
    )
