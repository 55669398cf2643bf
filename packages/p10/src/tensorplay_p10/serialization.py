"""``tp.save`` / ``tp.load``: checkpoints on disk, the format chosen by the file's extension.

Where it sits: plain Python over P10's tensors; ``_pickle.py`` supplies the storage helpers (raw bytes of a
buffer, a buffer from bytes, checked views), so pickles and checkpoints agree on what a tensor is.

Formats:
- ``.pt`` / ``.pth`` (and any file-like object): TensorPlay's own zip (Note [The .pt format]).
- ``.safetensors``: through the ``safetensors`` package; a flat ``{str: Tensor}`` dict, readable by PyTorch's
  ``safetensors.torch.load_file`` and the other way round.
- ``.mega``: through the ``megatensors`` package's C++ backend when it is installed (``_mega.py``).

Note [The .pt format]
    A zip (stored, not compressed) holding ``manifest.json`` and one member ``storages/<i>`` per distinct
    buffer, the buffer's raw little-endian bytes. The manifest is data only: ``{"format": "tensorplay.pt",
    "version": 1, "storages": [{"dtype", "nbytes"}], "root": node}``, where a node is a JSON number, string,
    bool or null, a JSON list (a Python list), or a one-key object naming what it stands for: ``{"tensor":
    {storage, dtype, size, stride, offset, requires_grad, device}}``, ``{"tuple": [...]}``,
    ``{"dict": [[k, v], ...]}``, ``{"odict": [[k, v], ...]}``, ``{"float": "nan"|"inf"|"-inf"}``,
    ``{"complex": [re, im]}``, ``{"dtype": name}``. Tensors
    on one buffer point at one storage entry, so views and tied weights come back sharing memory. Loading
    never runs code from the file: there is no pickle in it, and every index, size and view is checked
    against the data actually present before any tensor is made (zip's CRC catches flipped bytes).

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

import json
import math
import os
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

from . import _dtype as D
from ._device import device as Device
from ._pickle import check_view, storage_bytes, storage_from_bytes, view_of

FileLike = str | os.PathLike | IO[bytes]
MapLocation = None | str | Device | dict | Callable[[Any, str], Any]

_FORMAT, _VERSION = "tensorplay.pt", 1
_SUFFIXES = (".pt", ".pth", ".safetensors", ".mega")


def _dtype_by_name(name: Any, what: str) -> D.dtype:
    dt = getattr(D, name, None) if isinstance(name, str) else None
    if not isinstance(dt, D.dtype):
        raise RuntimeError(f"{what}: unknown dtype {name!r}")
    return dt


def _format_of(f: FileLike, op: str) -> str:
    """The format for ``f``: by the path's extension; file-like objects are always ``.pt``."""
    if not isinstance(f, (str, os.PathLike)):
        if not (hasattr(f, "write") or hasattr(f, "read")):
            raise TypeError(f"{op}: f must be a path or a binary file-like object, got {type(f).__name__}")
        return ".pt"
    suffix = os.path.splitext(os.fspath(f))[1].lower()
    if suffix not in _SUFFIXES:
        raise ValueError(
            f"{op}: cannot tell the format of {os.fspath(f)!r} from its extension {suffix!r}; supported "
            f"extensions are {', '.join(_SUFFIXES)}"
        )
    return ".pt" if suffix == ".pth" else suffix


# ---- .pt: writing ---------------------------------------------------------------------------------------
class _Writer:
    """Turns an object tree into manifest nodes, collecting each distinct buffer once."""

    def __init__(self) -> None:
        self.storages: list[Any] = []  # one tensor per buffer, whose storage bytes get written
        self.index: dict[int, int] = {}  # buffer address -> storage number

    def node(self, obj: Any, path: str) -> Any:
        from ._tensor import Tensor

        if isinstance(obj, Tensor):
            return {"tensor": self.tensor(obj, path)}
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, complex):
            return {"complex": [self.node(obj.real, path), self.node(obj.imag, path)]}
        if isinstance(obj, D.dtype):
            return {"dtype": obj._name}
        if isinstance(obj, (dict, OrderedDict)):
            tag = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {
                tag: [[self.node(k, f"{path} key"), self.node(v, f"{path}[{k!r}]")] for k, v in obj.items()]
            }
        if isinstance(obj, list):
            return [self.node(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        if type(obj) is tuple:
            return {"tuple": [self.node(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        raise TypeError(
            f"tp.save: cannot save {path} of type {type(obj).__name__}; the .pt format holds tensors, "
            "numbers, strings, None, bools, dtypes and (nested) lists, tuples, dicts and OrderedDicts of them"
        )

    def tensor(self, t: Any, path: str) -> dict:
        if t.device.type == "meta":
            raise RuntimeError(f"tp.save: {path} is a meta tensor and has no data to save")
        device = str(t.device)
        src = t.detach() if t.device.type == "cpu" else t.detach().contiguous().cpu()
        key = src._storage_data_ptr()
        if key and key in self.index and self.storages[self.index[key]].dtype is src.dtype:
            number = self.index[key]
        else:
            number = len(self.storages)
            self.storages.append(src)
            if key:
                self.index[key] = number
        return {
            "storage": number,
            "dtype": src.dtype._name,
            "size": list(src.shape),
            "stride": list(src.stride()),
            "offset": src.storage_offset(),
            "requires_grad": t.requires_grad,
            "device": device,
        }


def _save_pt(obj: Any, f: FileLike) -> None:
    w = _Writer()
    root = w.node(obj, "obj")
    manifest = {
        "format": _FORMAT,
        "version": _VERSION,
        "byteorder": "little",
        "storages": [{"dtype": s.dtype._name, "nbytes": s._storage_nbytes()} for s in w.storages],
        "root": root,
    }
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("manifest.json", json.dumps(manifest))
        for i, s in enumerate(w.storages):
            z.writestr(f"storages/{i}", storage_bytes(s))


# ---- .pt: reading ---------------------------------------------------------------------------------------
def _corrupt(name: str, why: str) -> RuntimeError:
    return RuntimeError(
        f"tp.load: {name} is not a valid TensorPlay .pt file (truncated or corrupted?): {why}"
    )


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


class _Reader:
    """Rebuilds the object tree from a checked manifest and the zip's storage members."""

    def __init__(self, z: zipfile.ZipFile, manifest: dict, name: str, place: Callable[[Any, str], Any]):
        self.z, self.name, self.place = z, name, place
        specs = manifest.get("storages")
        if not isinstance(specs, list):
            raise _corrupt(name, "the manifest has no storage list")
        self.specs = specs
        self.bases: dict[tuple[int, str], Any] = {}  # (storage, device) -> base tensor, shared by views

    def base(self, number: Any, device: str) -> Any:
        if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number < len(self.specs):
            raise _corrupt(self.name, f"a tensor names storage {number!r} of {len(self.specs)}")
        if (number, device) in self.bases:
            return self.bases[(number, device)]
        spec = self.specs[number]
        if not isinstance(spec, dict):
            raise _corrupt(self.name, f"storage {number} has no description")
        dtype = _dtype_by_name(spec.get("dtype"), f"tp.load: {self.name}")
        try:
            data = self.z.read(f"storages/{number}")
        except KeyError:
            raise _corrupt(self.name, f"storage {number} is missing") from None
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:  # CRC mismatch, short read
            raise _corrupt(self.name, f"storage {number}: {e}") from None
        if len(data) != spec.get("nbytes"):
            raise _corrupt(
                self.name, f"storage {number} holds {len(data)} bytes, expected {spec.get('nbytes')}"
            )
        base = self.place(storage_from_bytes(data, dtype), device)
        self.bases[(number, device)] = base
        return base

    def tensor(self, spec: Any) -> Any:
        if not isinstance(spec, dict):
            raise _corrupt(self.name, "a tensor entry is not an object")
        size, stride, offset = spec.get("size"), spec.get("stride"), spec.get("offset")
        ints = (size, stride)
        if (
            not all(isinstance(v, list) and all(type(i) is int for i in v) for v in ints)
            or type(offset) is not int
        ):
            raise _corrupt(self.name, f"bad tensor view {size!r}, {stride!r}, {offset!r}")
        device = spec.get("device", "cpu")
        if not isinstance(device, str):
            raise _corrupt(self.name, f"bad device {device!r}")
        base = self.base(spec.get("storage"), device)
        if spec.get("dtype") != base.dtype._name:
            raise _corrupt(self.name, f"tensor dtype {spec.get('dtype')!r} differs from its storage's")
        check_view(base.numel(), size, stride, offset, f"tp.load: {self.name}")
        t = view_of(base, size, stride, offset)
        if spec.get("requires_grad") is True:
            t.requires_grad_(True)
        return t

    def node(self, n: Any) -> Any:
        if n is None or isinstance(n, (bool, int, float, str)):
            return n
        if isinstance(n, list):
            return [self.node(v) for v in n]
        if not isinstance(n, dict) or len(n) != 1:
            raise _corrupt(self.name, f"unexpected manifest entry {str(n)[:80]}")
        ((tag, v),) = n.items()
        if tag == "tensor":
            return self.tensor(v)
        if tag == "tuple" and isinstance(v, list):
            return tuple(self.node(x) for x in v)
        if tag in ("dict", "odict") and isinstance(v, list):
            if not all(isinstance(p, list) and len(p) == 2 for p in v):
                raise _corrupt(self.name, "a dict entry is not a [key, value] pair")
            pairs = [(self.node(k), self.node(x)) for k, x in v]
            try:
                return OrderedDict(pairs) if tag == "odict" else dict(pairs)
            except TypeError as e:  # an unhashable key
                raise _corrupt(self.name, f"bad dict key: {e}") from None
        if tag == "float" and v in ("nan", "inf", "-inf"):
            return float(v)
        if tag == "complex" and isinstance(v, list) and len(v) == 2:
            re, im = (self.node(x) for x in v)
            return complex(re, im)
        if tag == "dtype":
            return _dtype_by_name(v, f"tp.load: {self.name}")
        raise _corrupt(self.name, f"unknown manifest entry {tag!r}")


def _load_pt(f: FileLike, map_location: MapLocation) -> Any:
    name = repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"
    place = _placement(map_location)
    try:
        z = zipfile.ZipFile(f, "r")
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise _corrupt(name, str(e)) from None
    with z:
        members = set(z.namelist())
        if "manifest.json" not in members:
            if any(m.endswith("data.pkl") for m in members):
                raise RuntimeError(
                    f"tp.load: {name} is a PyTorch pickle checkpoint; TensorPlay never unpickles files (that "
                    "could run code from them). Save it as .safetensors in PyTorch and load that."
                )
            raise _corrupt(name, "no manifest.json in the zip")
        try:
            manifest = json.loads(z.read("manifest.json"))
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, RecursionError) as e:
            raise _corrupt(name, f"manifest.json: {e}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            raise _corrupt(name, "manifest.json does not describe a TensorPlay checkpoint")
        if manifest.get("version") != _VERSION:
            raise RuntimeError(
                f"tp.load: {name} has format version {manifest.get('version')!r}; this "
                f"TensorPlay reads version {_VERSION}"
            )
        try:
            return _Reader(z, manifest, name, place).node(manifest.get("root"))
        except RecursionError:  # a manifest nested deeper than any saved object could be
            raise _corrupt(name, "the manifest is nested too deeply") from None


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


def _load_safetensors(path: str, map_location: MapLocation) -> dict[str, Any]:
    st = _safetensors()
    place = _placement(map_location)
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        entries = st.deserialize(data)
    except Exception as e:  # safetensors raises its own SafetensorError (and others) on a bad header
        raise RuntimeError(
            f"tp.load: {path!r} is not a valid .safetensors file (truncated or corrupted?): {e}"
        ) from None
    out: dict[str, Any] = {}
    for name, spec in entries:
        code = spec["dtype"]
        if code not in _ST_DTYPE:
            raise RuntimeError(
                f"tp.load: tensor {name!r} in {path!r} has safetensors dtype {code}, which "
                "TensorPlay does not have"
            )
        dtype = getattr(D, _ST_DTYPE[code])
        shape = [int(s) for s in spec["shape"]]
        base = storage_from_bytes(spec["data"], dtype)
        if base.numel() != math.prod(shape):
            raise RuntimeError(
                f"tp.load: tensor {name!r} in {path!r} has {base.numel()} elements for shape {shape}"
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
    """Save ``obj`` to ``f``; the format follows the extension (see the module docstring).

    ``.pt``/``.pth`` (and file-like objects) take nested lists/tuples/dicts/OrderedDicts of tensors, numbers,
    strings, None and bools, keeping views and shared storage; ``.safetensors`` and ``.mega`` take a flat
    ``{str: Tensor}`` dict. Any other extension raises ``ValueError``.

    Example:
        >>> import tempfile, os, tensorplay_p10 as tp
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> tp.save({"w": tp.ones(2, 2, dtype=tp.bfloat16)}, path)
        >>> tp.load(path)["w"].dtype
        tensorplay.bfloat16
    """
    fmt = _format_of(f, "tp.save")
    if fmt == ".pt":
        _save_pt(obj, f)
    elif fmt == ".safetensors":
        _save_safetensors(obj, os.fspath(f))  # type: ignore[arg-type]
    else:
        _save_mega(obj, os.fspath(f))  # type: ignore[arg-type]


def load(f: FileLike, map_location: MapLocation = None, weights_only: bool = True) -> Any:
    """Load what :func:`save` wrote; the format follows the extension (file-like objects are ``.pt``).

    ``map_location`` places the tensors, as in PyTorch: ``None`` (where they were saved), a device or its
    name, a dict from saved device names to new ones, or a callable ``(tensor, saved_device) -> tensor``.
    ``weights_only`` is accepted for PyTorch compatibility and changes nothing: every format here is data
    only, and loading never runs code from the file. A truncated or corrupted file raises ``RuntimeError``.
    """
    if not isinstance(weights_only, bool):
        raise TypeError(f"tp.load: weights_only must be a bool, got {type(weights_only).__name__}")
    fmt = _format_of(f, "tp.load")
    if fmt == ".pt":
        return _load_pt(f, map_location)
    if fmt == ".safetensors":
        return _load_safetensors(os.fspath(f), map_location)  # type: ignore[arg-type]
    return _load_mega(os.fspath(f), map_location)  # type: ignore[arg-type]
