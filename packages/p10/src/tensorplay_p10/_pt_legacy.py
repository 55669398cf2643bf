"""Reading TensorPlay's first ``.pt`` format (a JSON manifest in a zip), so old checkpoints still load.

Where it sits: ``_pt_zip.load_pt`` calls :func:`load_legacy` for a zip holding ``manifest.json``. Nothing
writes this format any more (``tp.save`` writes PyTorch's layout, ``_pt_zip.py``).

Note [The old .pt manifest]
    A zip with ``manifest.json`` and one member ``storages/<i>`` per buffer (raw little-endian bytes). The
    manifest is ``{"format": "tensorplay.pt", "version": 1, "storages": [{"dtype", "nbytes"}],
    "root": node}``, a node being a JSON number, string, bool, null or list, or a one-key object:
    ``{"tensor": {storage, dtype, size, stride, offset, requires_grad, device}}``, ``{"tuple": [...]}``,
    ``{"dict": [[k, v], ...]}``, ``{"odict": [[k, v], ...]}``, ``{"float": "nan"|"inf"|"-inf"}``,
    ``{"complex": [re, im]}`` or ``{"dtype": name}``. It holds no pickle; every index, size and view is
    checked before a tensor is made.
"""

from __future__ import annotations

import json
import zipfile
from collections import OrderedDict
from typing import Any

from . import _dtype as D
from ._pickle import check_view, storage_from_bytes, view_of
from ._pt_pickle import BadCheckpoint
from ._pt_zip import check_member

_FORMAT, _VERSION = "tensorplay.pt", 1
_READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError)


def _dtype(name: Any) -> D.dtype:
    dt = getattr(D, name, None) if isinstance(name, str) else None
    if not isinstance(dt, D.dtype):
        raise BadCheckpoint(f"unknown dtype {name!r}")
    return dt


class _Reader:
    """Rebuilds the object tree from a checked manifest and the zip's storage members."""

    def __init__(self, z: zipfile.ZipFile, specs: list, place: Any) -> None:
        self.z, self.specs, self.place = z, specs, place
        self.bases: dict[tuple[int, str], Any] = {}  # (storage, device) -> base tensor, shared by views

    def base(self, number: Any, device: str) -> Any:
        if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number < len(self.specs):
            raise BadCheckpoint(f"a tensor names storage {number!r} of {len(self.specs)}")
        if (number, device) in self.bases:
            return self.bases[(number, device)]
        spec = self.specs[number]
        if not isinstance(spec, dict):
            raise BadCheckpoint(f"storage {number} has no description")
        dtype = _dtype(spec.get("dtype"))
        try:
            info = self.z.getinfo(f"storages/{number}")
        except KeyError:
            raise BadCheckpoint(f"storage {number} is missing") from None
        nbytes = spec.get("nbytes")
        if type(nbytes) is not int or info.file_size != nbytes:  # checked before the member is read
            raise BadCheckpoint(f"storage {number} holds {info.file_size} bytes, expected {nbytes!r}")
        check_member(self.z, info, nbytes)  # Note [A zip bomb costs no memory]
        try:
            data = self.z.read(info)
        except _READ_ERRORS as e:  # CRC mismatch, short read
            raise BadCheckpoint(f"storage {number}: {e}") from e
        try:
            base = self.place(storage_from_bytes(data, dtype), device)
        except RuntimeError as e:  # not a whole number of elements
            raise BadCheckpoint(str(e)) from None
        self.bases[(number, device)] = base
        return base

    def tensor(self, spec: Any) -> Any:
        if not isinstance(spec, dict):
            raise BadCheckpoint("a tensor entry is not an object")
        size, stride, offset = spec.get("size"), spec.get("stride"), spec.get("offset")
        if (
            not all(isinstance(v, list) and all(type(i) is int for i in v) for v in (size, stride))
            or type(offset) is not int
        ):
            raise BadCheckpoint(f"bad tensor view {size!r}, {stride!r}, {offset!r}")
        device = spec.get("device", "cpu")
        if not isinstance(device, str):
            raise BadCheckpoint(f"bad device {device!r}")
        base = self.base(spec.get("storage"), device)
        if spec.get("dtype") != base.dtype._name:
            raise BadCheckpoint(f"tensor dtype {spec.get('dtype')!r} differs from its storage's")
        try:
            check_view(base.numel(), size, stride, offset, "a tensor", base.dtype.itemsize)
        except RuntimeError as e:
            raise BadCheckpoint(str(e)) from None
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
            raise BadCheckpoint(f"unexpected manifest entry {str(n)[:80]}")
        ((tag, v),) = n.items()
        if tag == "tensor":
            return self.tensor(v)
        if tag == "tuple" and isinstance(v, list):
            return tuple(self.node(x) for x in v)
        if tag in ("dict", "odict") and isinstance(v, list):
            if not all(isinstance(p, list) and len(p) == 2 for p in v):
                raise BadCheckpoint("a dict entry is not a [key, value] pair")
            pairs = [(self.node(k), self.node(x)) for k, x in v]
            try:
                return OrderedDict(pairs) if tag == "odict" else dict(pairs)
            except TypeError as e:  # an unhashable key
                raise BadCheckpoint(f"bad dict key: {e}") from None
        if tag == "float" and v in ("nan", "inf", "-inf"):
            return float(v)
        if tag == "complex" and isinstance(v, list) and len(v) == 2:
            re, im = (self.node(x) for x in v)
            return complex(re, im)
        if tag == "dtype":
            return _dtype(v)
        raise BadCheckpoint(f"unknown manifest entry {tag!r}")


def load_legacy(z: zipfile.ZipFile, name: str, place: Any) -> Any:
    """The object in an old TensorPlay ``.pt`` zip (Note [The old .pt manifest]); BadCheckpoint if bad."""
    info = z.getinfo("manifest.json")
    if info.file_size > 64 * max(z.start_dir, 1):  # a manifest describes data present in the file
        raise BadCheckpoint(f"manifest.json claims {info.file_size} bytes")
    try:
        manifest = json.loads(z.read(info))
    except (*_READ_ERRORS, RecursionError) as e:
        raise BadCheckpoint(f"manifest.json: {e}") from e
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        raise BadCheckpoint("manifest.json does not describe a TensorPlay checkpoint")
    if manifest.get("version") != _VERSION:
        raise BadCheckpoint(f"manifest version {manifest.get('version')!r}; this TensorPlay reads version 1")
    specs = manifest.get("storages")
    if not isinstance(specs, list):
        raise BadCheckpoint("the manifest has no storage list")
    try:
        return _Reader(z, specs, place).node(manifest.get("root"))
    except RecursionError:  # a manifest nested deeper than any saved object could be
        raise BadCheckpoint("the manifest is nested too deeply") from None
