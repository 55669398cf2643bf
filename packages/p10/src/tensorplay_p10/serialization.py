"""``tp.save`` / ``tp.load``: checkpoints on disk, in PyTorch's ``.pt`` layout unless the name asks otherwise.

Where it sits: the front door. It picks a format and hands over: ``_pt_zip.py`` (the ``.pt`` zip, with
``_pt_pickle.py`` for what its pickle means and ``_unpickler.py`` for reading it safely), the ``safetensors``
package for ``.safetensors``, ``_mega.py`` for ``.mega``.

Formats:
- ``.pt`` (what ``tp.save`` writes for any name but the two below, and for file-like objects): PyTorch's zip
  layout (Note [The .pt zip layout]), so ``torch.load`` reads TensorPlay's files and ``tp.load`` reads
  ``torch.save``'s, shared storage (views, tied weights) kept both ways.
- ``.safetensors``: through the ``safetensors`` package; a flat ``{str: Tensor}`` dict.
- ``.mega``: through the ``megatensors`` package's C++ backend when it is installed (``_mega.py``).

Note [Format by content]
    ``save`` chooses by name only between ``.safetensors``, ``.mega`` and everything else (``.pt``). ``load``
    never trusts the name: it reads the first bytes. ``PK\x03\x04`` is a zip (PyTorch's layout, or
    TensorPlay's old manifest layout, still read); an 8-byte little-endian header length followed by ``{``
    is safetensors; ``MEGA`` is mega; a pickle opcode at byte 0 is PyTorch's legacy pre-1.6 format (or a bare
    pickle), which is refused with that name. Anything else is "not a valid checkpoint".

Loading never runs code from a file unless asked: ``weights_only=True`` (the default, as in PyTorch) reads the
pickle with an allow-list (Note [A pickle that cannot run code]) that :func:`add_safe_globals` extends;
``weights_only=False`` is Python's own unpickler, for files you trust (whole pickled modules).

Example:
    >>> import io, tensorplay_p10 as tp
    >>> w = tp.arange(6.0).reshape(2, 3)
    >>> buf = io.BytesIO()
    >>> tp.save({"w": w, "row": w[1], "step": 7}, buf)
    >>> _ = buf.seek(0)
    >>> ck = tp.load(buf)
    >>> ck["row"].add_(10.0)
    tensor([13., 14., 15.])
    >>> ck["w"]
    tensor([[ 0.,  1.,  2.],
            [13., 14., 15.]])
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable
from typing import IO, Any

from . import _dtype as D
from ._device import device as Device
from ._pickle import storage_bytes, storage_from_bytes
from ._pt_zip import invalid, load_pt, save_pt
from ._unpickler import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

FileLike = str | os.PathLike | IO[bytes]
MapLocation = None | str | Device | dict | Callable[[Any, str], Any]

# PyTorch's legacy (non-zip) torch.save begins with a pickled magic number: PROTO n, LONG1 10 bytes.
_TORCH_LEGACY_MAGIC = b"\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little")


def _name_of(f: FileLike) -> str:
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"


def _sniff(head: bytes, name: str) -> str:
    """The format of a file that starts with ``head`` (Note [Format by content])."""
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "pt"
    if head[:4] == b"MEGA":
        return "mega"
    if len(head) > 8 and head[8:9] == b"{" and 2 <= int.from_bytes(head[:8], "little") < 1 << 32:
        return "safetensors"
    if head[:1] == b"\x80":  # a pickle opcode: PyTorch's legacy format begins with a pickled magic number
        what = "in PyTorch's legacy format" if head[2:14] == _TORCH_LEGACY_MAGIC else "a bare pickle, as in"
        raise RuntimeError(
            f"tp.load: {name} is {what} (the legacy format: torch.save before 1.6, or with "
            "_use_new_zipfile_serialization=False), which TensorPlay does not support: load it in PyTorch "
            "and torch.save it again (the zip format), or save it as .safetensors"
        )
    if not head:
        raise invalid(name, "the file is empty")
    raise invalid(
        name, f"it starts with {head[:8]!r}, which is neither a .pt zip, a .safetensors nor a .mega file"
    )


# ---- map_location -----------------------------------------------------------------------------------------
def _placement(map_location: MapLocation) -> Callable[[Any, str], Any]:
    """``map_location`` as one function (base tensor, saved device string) -> base tensor, like PyTorch."""
    if map_location is None:
        return lambda t, loc: t if loc == "cpu" else t.to(loc)
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda t, loc: t if target.type == "cpu" else t.to(target)
    if isinstance(map_location, dict):
        table = {str(k): str(Device(v)) for k, v in map_location.items()}
        return lambda t, loc: (lambda dst: t if dst == "cpu" else t.to(dst))(table.get(loc, loc))
    if callable(map_location):

        def call(t: Any, loc: str) -> Any:
            out = map_location(t, loc)
            return t if out is None else out  # PyTorch: None means "leave it where it is"

        return call
    raise TypeError(
        "tp.load: map_location must be None, a str, a tp.device, a dict or a callable, "
        f"got {type(map_location).__name__}"
    )


# ---- .safetensors -----------------------------------------------------------------------------------------
# safetensors' header names for our dtypes (its file format), and back.
_ST_CODE = {
    "bool": "BOOL",
    "uint8": "U8",
    "int8": "I8",
    "int16": "I16",
    "int32": "I32",
    "int64": "I64",
    "float16": "F16",
    "bfloat16": "BF16",
    "float32": "F32",
    "float64": "F64",
    "complex64": "C64",
}
_ST_DTYPE = {code: name for name, code in _ST_CODE.items()}


def _safetensors() -> Any:
    try:
        import safetensors
    except ImportError:
        raise ImportError(
            "tp.save/tp.load of .safetensors files needs the 'safetensors' package: "
            "pip install safetensors (or pip install tensorplay-p10[safetensors])"
        ) from None
    return safetensors


def _save_safetensors(obj: Any, path: str) -> None:
    from ._tensor import Tensor

    st = _safetensors()
    if not isinstance(obj, dict) or not all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()
    ):
        raise TypeError(
            "tp.save: a .safetensors file holds a flat dict of str -> Tensor only (got "
            f"{type(obj).__name__}); use a .pt file for nested objects"
        )
    dense: dict[str, Any] = {}
    seen: dict[tuple[int, int], str] = {}
    for k, v in obj.items():
        if v.dtype._name not in _ST_CODE:
            raise TypeError(f"tp.save: tensor {k!r} has dtype {v.dtype}, which safetensors cannot hold")
        # Like safetensors.torch.save_file, refuse tensors that share memory: the format has no aliasing.
        if v.numel() and v.device.type == "cpu":
            span = (v.data_ptr(), v.data_ptr() + v.numel() * v.dtype.itemsize)
            for other_span, other in seen.items():
                if span[0] < other_span[1] and other_span[0] < span[1]:
                    raise RuntimeError(
                        f"tp.save: tensors {other!r} and {k!r} share memory, which .safetensors cannot "
                        "represent; save a .clone() of one of them (or use a .pt file)"
                    )
            seen[span] = k
        dense[k] = v.detach().cpu().contiguous()
    if hasattr(st, "TensorSpec"):  # safetensors >= 0.8: pointers into our buffers, no copy
        specs = {
            k: st.TensorSpec(
                dtype=v.dtype._name, shape=list(v.shape), data_ptr=v.data_ptr(), data_len=v.nbytes
            )
            for k, v in dense.items()
        }
    else:  # older releases take the raw bytes
        specs = {
            k: {
                "dtype": _ST_CODE[v.dtype._name],
                "shape": list(v.shape),
                "data": storage_bytes(v)[: v.nbytes],
            }
            for k, v in dense.items()
        }
    st.serialize_file(specs, path)  # `dense` keeps every pointed-at buffer alive until here


def _load_safetensors(data: bytes, path: str, place: Callable[[Any, str], Any]) -> dict[str, Any]:
    st = _safetensors()
    try:
        entries = st.deserialize(data)
    except Exception as e:  # safetensors raises its own SafetensorError (and others) on a bad header
        raise RuntimeError(
            f"tp.load: {path} is not a valid .safetensors file (truncated or corrupted?): {e}"
        ) from e
    out: dict[str, Any] = {}
    for name, spec in entries:
        code = spec["dtype"]
        if code not in _ST_DTYPE:
            raise RuntimeError(
                f"tp.load: tensor {name!r} in {path} has safetensors dtype {code}, which "
                "TensorPlay does not have"
            )
        dtype = getattr(D, _ST_DTYPE[code])
        shape = [int(s) for s in spec["shape"]]
        base = storage_from_bytes(spec["data"], dtype)
        if base.numel() != math.prod(shape):
            raise RuntimeError(
                f"tp.load: tensor {name!r} in {path} has {base.numel()} elements for shape {shape}"
            )
        out[name] = place(base.reshape(shape), "cpu")
    return out


# ---- .mega (the backend is in _mega.py) -----------------------------------------------------------------
def _save_mega(obj: Any, path: str) -> None:
    from ._mega import save_mega
    from ._tensor import Tensor

    if not isinstance(obj, dict) or not all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()
    ):
        raise TypeError(
            f"tp.save: a .mega file holds a flat dict of str -> Tensor only (got {type(obj).__name__})"
        )
    save_mega(obj, path)


def _load_mega(path: str, map_location: MapLocation) -> dict[str, Any]:
    from ._mega import load_mega

    place = _placement(map_location)
    return {k: place(v, "cpu") for k, v in load_mega(path).items()}


# ---- the public pair ------------------------------------------------------------------------------------
def save(obj: Any, f: FileLike) -> None:
    """Save ``obj`` to ``f``: a ``.safetensors`` or ``.mega`` name picks that format, anything else ``.pt``.

    A ``.pt`` file (PyTorch's zip layout, readable by ``torch.load``) takes any picklable object; tensors,
    dtypes, devices and sizes are written with PyTorch's names, views and tied tensors share one storage.
    What ``load``'s default ``weights_only=True`` reads back is tensors, numbers, strings, bytes, None, bools,
    complex numbers, slices, dtypes, devices, sizes and (nested) lists, tuples, sets, dicts and OrderedDicts
    of them. ``.safetensors`` and ``.mega`` take a flat ``{str: Tensor}`` dict.

    Example:
        >>> import tempfile, os, tensorplay_p10 as tp
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> tp.save({"w": tp.ones(2, 2, dtype=tp.bfloat16)}, path)
        >>> tp.load(path)["w"].dtype
        tensorplay.bfloat16
    """
    if isinstance(f, (str, os.PathLike)):
        suffix = os.path.splitext(os.fspath(f))[1].lower()
        if suffix == ".safetensors":
            return _save_safetensors(obj, os.fspath(f))
        if suffix == ".mega":
            return _save_mega(obj, os.fspath(f))
    elif not hasattr(f, "write"):
        raise TypeError(f"tp.save: f must be a path or a binary file-like object, got {type(f).__name__}")
    save_pt(obj, f)


def load(f: FileLike, map_location: MapLocation = None, weights_only: bool = True) -> Any:
    """Load a checkpoint, its format told by its first bytes whatever its name (Note [Format by content]).

    ``map_location`` places the tensors, as in PyTorch: ``None`` (where they were saved), a device or its
    name, a dict from saved device names to new ones, or a callable ``(tensor, saved_device) -> tensor``.
    ``weights_only=True`` (the default) admits only tensors, containers and plain values and raises
    ``pickle.UnpicklingError`` naming anything else (extend it with :func:`add_safe_globals`);
    ``weights_only=False`` runs Python's unpickler, which can run code: use it only for files you trust. A
    truncated or corrupted file raises ``RuntimeError``.
    """
    if not isinstance(weights_only, bool):
        raise TypeError(f"tp.load: weights_only must be a bool, got {type(weights_only).__name__}")
    name = _name_of(f)
    place = _placement(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            fmt = _sniff(fh.read(16), name)
            if fmt == "pt":
                return load_pt(fh, name, place, weights_only)
        if fmt == "safetensors":
            with open(f, "rb") as fh:
                return _load_safetensors(fh.read(), name, place)
        return _load_mega(os.fspath(f), map_location)
    if not hasattr(f, "read"):
        raise TypeError(f"tp.load: f must be a path or a binary file-like object, got {type(f).__name__}")
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())  # the zip reader seeks
    start = f.tell()
    head = f.read(16)
    f.seek(start)
    fmt = _sniff(head, name)
    if fmt == "pt":
        return load_pt(f, name, place, weights_only)
    if fmt == "safetensors":
        return _load_safetensors(f.read(), name, place)
    raise ValueError("tp.load: a .mega file loads from a path (megatensors reads it by file descriptor)")
