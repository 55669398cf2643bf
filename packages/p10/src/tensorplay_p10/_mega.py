"""``.mega`` files for ``tp.save`` / ``tp.load``, through the ``megatensors`` package's C++ backend.

Where it sits: ``serialization.py`` calls :func:`save_mega` / :func:`load_mega` for paths ending in ``.mega``.
megatensors' Python loaders speak PyTorch or Paddle tensors; its C++ extension (``megatensors.cpp``) is
framework-neutral: ``write_file`` lays out the self-describing MEGA header and payload from byte regions of a
source file, ``parse_metadata_fd`` reads the tensor table back, and ``decode_payload_fd`` copies (and checks
the checksum of, and decompresses when needed) one tensor's payload straight into a buffer we own.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zlib
from typing import Any

from . import _dtype as D
from ._pickle import storage_bytes

# MEGA's dtype names for ours (the ones both sides have).
_MEGA_CODE = {
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
}
_MEGA_DTYPE = {code: name for name, code in _MEGA_CODE.items()}
_CRC32 = 1  # MEGA checksum_type for a little-endian CRC32 in the first 4 of 32 bytes


def _backend() -> Any:
    try:
        from megatensors import cpp
    except ImportError:
        raise ImportError(
            "tp.save/tp.load of .mega files needs the 'megatensors' package: pip install megatensors"
        ) from None
    return cpp


def save_mega(tensors: dict[str, Any], path: str, alignment: int = 64) -> None:
    """Write a flat ``{str: Tensor}`` dict as a MEGA file, each payload with a CRC32 the reader verifies."""
    cpp = _backend()
    for name, t in tensors.items():
        if t.dtype._name not in _MEGA_CODE:
            raise TypeError(f"tp.save: tensor {name!r} has dtype {t.dtype}, which a .mega file cannot hold")
    with tempfile.TemporaryDirectory(prefix="tensorplay-mega-") as tmp:
        payload = os.path.join(tmp, "payload.bin")
        descriptors, offset = [], 0
        with open(payload, "wb") as fh:
            for name, t in tensors.items():
                dense = t.detach().cpu().contiguous()
                data = storage_bytes(dense)[dense.storage_offset() * dense.itemsize :][: dense.nbytes]
                fh.write(data)
                descriptors.append(
                    {
                        "name": name,
                        "shape": list(dense.shape),
                        "logical_dtype": _MEGA_CODE[dense.dtype._name],
                        "storage_format": "raw_dense",
                        "payload_offset": offset,
                        "logical_nbytes": len(data),
                        "stored_nbytes": len(data),
                        "src_filename": payload,
                        "src_offset": offset,
                        "checksum_type": _CRC32,
                        "checksum": zlib.crc32(data).to_bytes(4, "little").ljust(32, b"\0"),
                    }
                )
                offset += len(data)
        metadata = {
            "general.architecture": "tensorplay",
            "general.alignment": alignment,
            "mega.layout.tensor_order": "original",
            "mega.tensor_info.format": "self_describing",
            "tensorplay.byteorder": sys.byteorder,
        }
        cpp.write_file(path, descriptors, metadata, alignment)


def load_mega(path: str) -> dict[str, Any]:
    """Read every tensor of a MEGA file (raw or encoded payloads, checksums verified) as CPU tensors."""
    from ._factories import empty

    cpp = _backend()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        try:
            parsed = cpp.parse_metadata_fd(fd, path, size)
        except Exception as e:  # the backend raises its own errors on a bad header
            raise RuntimeError(
                f"tp.load: {path!r} is not a valid .mega file (truncated or corrupted?): {e}"
            ) from None
        header = int(parsed["header_length"])
        out: dict[str, Any] = {}
        for record in parsed["tensor_records"]:
            name, _, code, shape, offset, logical, stored, flags, codec, shuffle, ck_type, ck, fmt, _ = record
            if code not in _MEGA_DTYPE:
                raise RuntimeError(
                    f"tp.load: tensor {name!r} in {path!r} has MEGA dtype {code}, which TensorPlay "
                    "does not have"
                )
            if fmt != "raw_dense":
                raise RuntimeError(
                    f"tp.load: tensor {name!r} in {path!r} is stored as {fmt!r}; TensorPlay reads "
                    "raw_dense MEGA tensors"
                )
            t = empty(*[int(s) for s in shape], dtype=getattr(D, _MEGA_DTYPE[code]))
            if logical != t.nbytes or header + offset + stored > size:
                raise RuntimeError(
                    f"tp.load: {path!r} is not a valid .mega file (truncated or corrupted?): tensor "
                    f"{name!r} does not fit"
                )
            if logical:
                try:
                    cpp.decode_payload_fd(
                        fd,
                        path,
                        name,
                        header + offset,
                        stored,
                        logical,
                        flags,
                        codec,
                        shuffle,
                        ck_type,
                        bytes(ck),
                        t.data_ptr(),
                        False,
                    )
                except Exception as e:
                    raise RuntimeError(f"tp.load: {path!r}: tensor {name!r} is corrupted: {e}") from None
            out[str(name)] = t
        return out
    finally:
        os.close(fd)
