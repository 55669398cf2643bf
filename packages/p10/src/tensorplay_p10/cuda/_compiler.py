"""Compiling the package's ``.cu`` kernels with NVRTC on first use, and caching the binaries on disk.

Where it sits: P10's C++ asks for a module (``binary.cu``) the first time one of its kernels runs on a device;
``module_image`` answers with a binary the driver can load (``csrc/cuda/launch.cpp`` loads it).

Note [Kernel cache]
    A module is compiled for the device's exact architecture (``sm_90`` CUBIN on an H100/H200): no JIT step at
    load time, and it works even when NVRTC is newer than the driver (a newer NVRTC writes PTX of an ISA the
    driver may reject). When NVRTC does not know the device's architecture (a GPU newer than the NVRTC), the
    module is compiled to PTX for the newest architecture NVRTC knows, and the driver finishes the job.
    Binaries are cached in ``$TP_CUDA_CACHE`` (default ``~/.cache/tensorplay/cuda-kernels``) under a key that
    hashes the source, every header beside it (``.cuh`` and ``.h``), the options, the target, the NVRTC
    version and, for a template module, its list of name expressions: a learner who edits ``binary.cu`` (or
    ``common.cuh``) and re-runs gets a fresh compile; nothing stale is ever loaded. A template module's
    lowered names are cached beside its binary (``.names``, one per line). Files are written to a temporary
    name and renamed, so concurrent processes never read half a file.

Note [Template modules]
    A module of kernel templates (``unary_float.cu``) is compiled with the name expressions its host code
    registered (``_C._cuda._template_modules()``; Note [Template kernels] in csrc/cuda/launch.h), and
    ``module_image`` then answers ``(image, lowered names)``: the C++ finds each kernel by the mangled name
    NVRTC gave its expression.

Note [Kernels of other pillars]
    A module is a file name in P10's ``cuda_kernels/`` — or an absolute path to another package's own ``.cu``
    (NN's fused optimizers reach this through the C ABI's ``cuda_launch``). Such a file is compiled the same
    way, with its own directory and P10's on the include path (so it may ``#include "common.cuh"``), and its
    key also hashes the headers beside it.

Example (needs NVRTC, not a GPU):
    >>> from tensorplay_p10.cuda import _compiler
    >>> ptx = _compiler.compile_ptx("reduce_sums.cu", arch=80)  # doctest: +SKIP
    >>> b".entry sum_cols_float32" in ptx  # doctest: +SKIP
    True
    >>> image, lowered = _compiler.module_image("unary_float.cu", 9, 0, ["unary_contig<Exp, float32>"])
    ... # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from . import _loader
from ._nvrtc import Nvrtc

# Every compile gets these; the target architecture is added per device.
OPTIONS = ("--std=c++17",)

_lock = threading.Lock()
_nvrtc: Nvrtc | None = None


def nvrtc() -> Nvrtc:
    """The process's NVRTC, loaded on first use (RuntimeError saying how to install it when missing)."""
    global _nvrtc
    with _lock:
        if _nvrtc is None:
            _nvrtc = Nvrtc()
        return _nvrtc


def cache_dir() -> Path:
    env = os.environ.get("TP_CUDA_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tensorplay" / "cuda-kernels"


def _source_path(module: str) -> Path:
    """P10's ``cuda_kernels/<module>``, or ``module`` itself when it is an absolute path (Note [Kernels of
    other pillars])."""
    path = Path(module) if os.path.isabs(module) else _loader.KERNEL_DIR / module
    if not path.is_file():
        where = "" if os.path.isabs(module) else f" in {_loader.KERNEL_DIR}"
        raise RuntimeError(f"no CUDA kernel source {module}{where}")
    return path


def template_names(module: str) -> list[str]:
    """The name expressions P10's C++ registered for ``module`` (Note [Template modules]); [] for an
    ``extern "C"`` module."""
    from .. import _C

    return list(_C._cuda._template_modules().get(Path(module).name, []))


def _include_dirs(module: str) -> list[Path]:
    own = _source_path(module).parent
    return [own] if own == _loader.KERNEL_DIR else [own, _loader.KERNEL_DIR]


def _options(target: str, module: str) -> list[str]:
    includes = [f"--include-path={d}" for d in _include_dirs(module)]
    return [*OPTIONS, *includes, f"--gpu-architecture={target}"]


def cache_key(module: str, target: str, version: tuple[int, int], names: Sequence[str] = ()) -> str:
    """Note [Kernel cache]: the hash of everything that decides the binary."""
    h = hashlib.sha256()
    h.update(_source_path(module).read_bytes())
    for d in _include_dirs(module):
        for header in sorted([*d.glob("*.cuh"), *d.glob("*.h")]):
            h.update(header.name.encode() + b"\0" + header.read_bytes())
    h.update("\0".join([*OPTIONS, target, f"nvrtc-{version[0]}.{version[1]}", *names]).encode())
    return h.hexdigest()[:32]


def choose_target(major: int, minor: int, supported: list[int]) -> tuple[str, bool]:
    """(``sm_XY``, CUBIN) for a device NVRTC knows, else (``compute_XY``, PTX) of the newest it knows."""
    arch = major * 10 + minor
    if arch in supported:
        return f"sm_{arch}", True
    older = [a for a in supported if a <= arch]
    if not older:
        raise RuntimeError(f"NVRTC {supported} cannot compile for compute capability {major}.{minor}")
    return f"compute_{max(older)}", False


def module_image(
    module: str, major: int, minor: int, names: Sequence[str] = ()
) -> bytes | tuple[bytes, list[str]]:
    """The loadable binary of ``module`` for a device of compute capability ``major.minor`` (disk-cached);
    with name expressions (a template module), ``(binary, lowered names)``."""
    lib = nvrtc()
    target, cubin = choose_target(major, minor, lib.supported_archs())
    image, lowered = _cached_image(module, target, cubin, tuple(names))
    return (image, lowered) if names else image


def module_ptx(module: str, arch: int, names: Sequence[str] = ()) -> bytes | tuple[bytes, list[str]]:
    """``module`` as PTX for ``compute_<arch>``, disk-cached as module_image's binaries are (no GPU needed:
    the CUDA emulator's stand-in driver reads kernel entries and parameters from it); with name
    expressions, ``(PTX, lowered names)``."""
    image, lowered = _cached_image(module, f"compute_{arch}", False, tuple(names))
    return (image, lowered) if names else image


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _cached_image(module: str, target: str, cubin: bool, names: tuple[str, ...]) -> tuple[bytes, list[str]]:
    """Note [Kernel cache]: the cached binary of ``module`` for ``target`` and its lowered names, compiled
    on a miss."""
    lib = nvrtc()
    stem = Path(module).name.rsplit(".", 1)[0]
    key = cache_key(module, target, lib.version, names)
    path = cache_dir() / f"{stem}-{target}-{key}.{'cubin' if cubin else 'ptx'}"
    names_path = path.with_name(path.name + ".names")
    try:
        lowered = names_path.read_text().splitlines() if names else []
        if len(lowered) == len(names):
            return path.read_bytes(), lowered
    except OSError:
        pass
    image, lowered = lib.compile_templates(
        _source_path(module).read_text(), Path(module).name, _options(target, module), cubin, names
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if names:  # the names first: an image is only read back beside its names
            _write(names_path, "".join(f"{n}\n" for n in lowered).encode())
        _write(path, image)
    except OSError:
        pass  # a read-only home still works, just without the cache
    return image, lowered


def compile_ptx(module: str, arch: int = 80, names: Sequence[str] | None = None) -> bytes:
    """Compile ``module`` to PTX for ``compute_<arch>`` (no cache, no GPU needed): what the CI test runs.
    A template module is compiled with its registered name expressions unless ``names`` are given."""
    source = _source_path(module).read_text()
    names = template_names(module) if names is None else names
    options = _options(f"compute_{arch}", module)
    return nvrtc().compile_templates(source, Path(module).name, options, False, names)[0]


def warm_up(major: int, minor: int) -> None:
    """Compile every module for one architecture in parallel threads (NVRTC releases the GIL under ctypes)."""
    threads = [
        threading.Thread(target=module_image, args=(p.name, major, minor, template_names(p.name)))
        for p in _loader.kernel_sources()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
