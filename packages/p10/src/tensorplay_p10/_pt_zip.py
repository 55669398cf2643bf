"""The ``.pt`` container: PyTorch's zip layout, written and read with every member checked before use.

Where it sits: ``serialization.py`` calls :func:`save_pt` / :func:`load_pt`; the pickle inside is
``_pt_pickle.py``'s business (what it means) and ``_unpickler.py``'s (how it is read safely).

Note [The .pt zip layout]
    As ``torch.save`` (2.x) writes it, all members stored (not compressed) under one folder (``archive/``)::

        archive/data.pkl                 the object, pickle protocol 2 (Note [Torch names in data.pkl])
        archive/.format_version          b"1"
        archive/.storage_alignment       b"64"
        archive/byteorder                b"little"
        archive/data/<key>               each storage's raw bytes, once per buffer
        archive/version                  b"3\\n"
        archive/.data/serialization_id   an id of this file (40 digits)

    Each member's bytes start at a multiple of 64 from the start of the file, padded by a ``FB`` extra field
    in its local header as PyTorch pads them, so a reader can map them straight into aligned memory. The
    folder name is free: a reader takes it from the first member (``torch.save("model.pt")`` writes
    ``model/``).

Note [A zip bomb costs no memory]
    A zip member declares its size, and a storage's size is known from the pickle (numel × itemsize) before
    the member is read, so a member whose declared size differs is refused before anything is allocated. A
    stored member must occupy as many bytes as it declares, a deflated one can inflate at most 1032 times
    (deflate's limit) and must fit before the central directory; other compression methods are refused. The
    read then goes straight into the tensor's buffer in bounded chunks, and Python's zip reader stops at the
    declared size and checks the CRC, so a member that lies about its size is caught, not followed.
"""

from __future__ import annotations

import ctypes
import io
import os
import sys
import uuid
import zipfile
import zlib
from typing import IO, Any

from . import _dtype as D
from ._pt_pickle import BadCheckpoint, StorageIn, StorageType, TorchPickler
from ._unpickler import FullUnpickler, WeightsUnpickler

_ALIGN = 64
_CHUNK = 1 << 24  # bytes per read or write of a storage member
_DEFLATE_MAX_RATIO = 1032
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,
    OSError,
    EOFError,
    ValueError,
    zlib.error,
)


def invalid(name: str, why: str) -> RuntimeError:
    """The error for a file that is not a checkpoint we can read (the one message all readers share)."""
    return RuntimeError(f"tp.load: {name} is not a valid checkpoint (truncated or corrupted?): {why}")


# ---- writing --------------------------------------------------------------------------------------------
def _buffer(t: Any) -> memoryview:
    """The whole buffer under the CPU tensor ``t``, without a copy."""
    n = t._storage_nbytes()
    if not n:
        return memoryview(b"")
    return memoryview((ctypes.c_char * n).from_address(t._storage_data_ptr())).cast("B")


def _write_member(z: zipfile.ZipFile, name: str, data: bytes | memoryview) -> None:
    """Write one stored member whose bytes start at a multiple of 64 (Note [The .pt zip layout])."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = len(data)
    zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT  # the rule zipfile itself applies
    header = 30 + len(name.encode("utf-8")) + (20 if zip64 else 0) + 4  # + the FB field's own 4 bytes
    pad = -(z.start_dir + header) % _ALIGN
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    with z.open(info, "w", force_zip64=zip64) as dest:
        for start in range(0, len(data), _CHUNK):
            dest.write(data[start : start + _CHUNK])


def save_pt(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    """Write ``obj`` as a PyTorch-layout ``.pt`` zip (Note [The .pt zip layout])."""
    pkl = io.BytesIO()
    pickler = TorchPickler(pkl)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        _write_member(z, "archive/data.pkl", pkl.getvalue())
        _write_member(z, "archive/.format_version", b"1")
        _write_member(z, "archive/.storage_alignment", str(_ALIGN).encode())
        _write_member(z, "archive/byteorder", sys.byteorder.encode())
        for s in pickler.storages:
            _write_member(z, f"archive/data/{s.key}", _buffer(s.tensor))
        _write_member(z, "archive/version", b"3\n")
        _write_member(z, "archive/.data/serialization_id", f"{uuid.uuid4().int % 10**40:040d}".encode())


# ---- reading ----------------------------------------------------------------------------------------------
def check_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, expected: int | None) -> None:
    """BadCheckpoint unless ``info`` can be read in bounded memory (Note [A zip bomb costs no memory])."""
    if expected is not None and info.file_size != expected:
        raise BadCheckpoint(
            f"member {info.filename} declares {info.file_size} bytes; the pickle says its storage holds "
            f"{expected}"
        )
    if info.flag_bits & 0x1:
        raise BadCheckpoint(f"member {info.filename} is encrypted")
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise BadCheckpoint(
                f"stored member {info.filename} declares {info.file_size} bytes but occupies "
                f"{info.compress_size}"
            )
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        if info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + 64:
            raise BadCheckpoint(
                f"member {info.filename} claims to inflate {info.compress_size} bytes to {info.file_size}, "
                "more than deflate can"
            )
    else:
        raise BadCheckpoint(
            f"member {info.filename} uses compression method {info.compress_type}, which is not supported "
            "(PyTorch checkpoints are stored uncompressed)"
        )
    if info.header_offset + 30 + len(info.filename) + info.compress_size > z.start_dir:
        raise BadCheckpoint(f"member {info.filename} runs past the end of the data")


def _read_into(z: zipfile.ZipFile, info: zipfile.ZipInfo, out: memoryview) -> None:
    """Fill ``out`` (exactly ``info.file_size`` bytes) from the member, in bounded chunks."""
    try:
        with z.open(info) as src:
            pos = 0
            while pos < len(out):
                chunk = src.read(min(_CHUNK, len(out) - pos))
                if not chunk:
                    raise BadCheckpoint(f"member {info.filename} ends after {pos} of {len(out)} bytes")
                out[pos : pos + len(chunk)] = chunk
                pos += len(chunk)
            if src.read(1):
                raise BadCheckpoint(f"member {info.filename} holds more than {len(out)} bytes")
    except _ZIP_ERRORS as e:  # a CRC mismatch, a short read, a bad local header
        raise BadCheckpoint(f"member {info.filename}: {type(e).__name__}: {e}") from e


def _small(z: zipfile.ZipFile, name: str, limit: int) -> bytes | None:
    """A small metadata member (None when absent), refused when it is larger than ``limit``."""
    try:
        info = z.getinfo(name)
    except KeyError:
        return None
    if info.file_size > limit:
        raise BadCheckpoint(f"member {name} is {info.file_size} bytes")
    check_member(z, info, None)
    out = bytearray(info.file_size)
    _read_into(z, info, memoryview(out))
    return bytes(out)


class _Storages:
    """``persistent_load`` for a ``.pt`` zip: checks a storage id and returns its lazy :class:`StorageIn`."""

    def __init__(self, z: zipfile.ZipFile, prefix: str, place: Any, swap: bool) -> None:
        self.z, self.prefix, self.place, self.swap = z, prefix, place, swap
        self.seen: dict[str, StorageIn] = {}

    def __call__(self, pid: Any) -> StorageIn:
        if not (isinstance(pid, tuple) and len(pid) == 5):
            raise BadCheckpoint(
                f"a storage id has {len(pid) if isinstance(pid, tuple) else '?'} fields, not 5"
            )
        _, kind, key, location, numel = pid
        if not isinstance(kind, StorageType) or type(key) is not str or type(location) is not str:
            raise BadCheckpoint(f"bad storage id {str(pid)[:120]}")
        if type(numel) is not int or numel < 0:
            raise BadCheckpoint(f"storage {key!r} has {numel!r} elements")
        if key in self.seen:
            s = self.seen[key]
            if s.dtype is not kind.dtype or s.numel != numel:
                raise BadCheckpoint(f"storage {key!r} is described twice, differently")
            return s
        try:
            info = self.z.getinfo(f"{self.prefix}data/{key}")
        except KeyError:
            raise BadCheckpoint(f"storage {key!r} is missing (no member {self.prefix}data/{key})") from None
        nbytes = numel * (kind.dtype.itemsize if kind.dtype else 1)
        check_member(self.z, info, nbytes)  # before anything is allocated

        def read(dtype: D.dtype) -> Any:
            from ._factories import empty

            if nbytes % dtype.itemsize:
                raise BadCheckpoint(f"storage {key!r} of {nbytes} bytes is not a whole number of {dtype}")
            base = empty(nbytes // dtype.itemsize, dtype=dtype)
            _read_into(self.z, info, _buffer(base))
            if self.swap and dtype.itemsize > 1:
                _byteswap(base)
            return self.place(base, location)

        self.seen[key] = s = StorageIn(key, kind.dtype, numel, read)
        return s


def _byteswap(base: Any) -> None:
    """Reverse each element's bytes in place (each half of a complex number on its own)."""
    import numpy as np

    unit = base.dtype.itemsize // (2 if base.dtype.is_complex else 1)
    np.frombuffer(_buffer(base), dtype=f"u{unit}").byteswap(inplace=True)


def _prefix(names: list[str]) -> str:
    """The folder every member lives in, as PyTorch's reader finds it (from the first member)."""
    if not names or "/" not in names[0]:
        raise BadCheckpoint("the zip's members are not in a folder, so it is not a PyTorch checkpoint")
    return names[0].split("/", 1)[0] + "/"


def load_pt(f: Any, name: str, place: Any, weights_only: bool) -> Any:
    """Read a ``.pt`` zip: PyTorch's layout, or TensorPlay's old manifest layout (read-only)."""
    try:
        z = zipfile.ZipFile(f, "r")
    except _ZIP_ERRORS as e:
        raise invalid(name, f"{type(e).__name__}: {e}") from e
    with z:
        try:
            names = z.namelist()
            if "manifest.json" in names:
                from ._pt_legacy import load_legacy

                return load_legacy(z, name, place)
            prefix = _prefix(names)
            if f"{prefix}data.pkl" not in names:
                if f"{prefix}constants.pkl" in names:
                    raise BadCheckpoint(
                        "it is a TorchScript archive (torch.jit.save), which TensorPlay cannot run"
                    )
                raise BadCheckpoint(f"it has no {prefix}data.pkl")
            order = _small(z, f"{prefix}byteorder", 16)
            if order not in (None, b"little", b"big"):
                raise BadCheckpoint(f"byteorder is {order!r}")
            swap = (order or sys.byteorder.encode()).decode() != sys.byteorder
            info = z.getinfo(f"{prefix}data.pkl")
            check_member(z, info, None)
            pkl = bytearray(info.file_size)
            _read_into(z, info, memoryview(pkl))
            storages = _Storages(z, prefix, place, swap)
            if weights_only:
                obj = WeightsUnpickler(bytes(pkl), storages, name).load()
            else:
                obj = FullUnpickler(io.BytesIO(pkl), storages).load()
            # A storage saved on its own (torch.save(t.untyped_storage())) comes back as a 1-d tensor of its
            # dtype (bytes for an untyped one): TensorPlay has no Python storage object to give.
            return obj.base(None) if isinstance(obj, StorageIn) else obj
        except BadCheckpoint as e:
            raise invalid(name, str(e)) from (e.__cause__ or e)
