"""Compiling the package's ``.cu`` kernels with NVRTC on first use, and caching the binaries on disk.

Where it sits: P10's C++ asks for a module (``binary.cu``) the first time one of its kernels runs on a device;
``module_image`` answers with a binary the driver can load (``csrc/cuda/launch.cpp`` loads it).

Note [Kernel cache]
    A module is compiled for the device's exact architecture (``sm_90`` CUBIN on an H100/H200): no JIT step at
    load time, and it works even when NVRTC is newer than the driver (a newer NVRTC writes PTX of an ISA the
    driver may reject). When NVRTC does not know the device's architecture (a GPU newer than the NVRTC), the
    module is compiled to PTX for the newest architecture NVRTC knows, and the driver finishes the job.
    Binaries are cached in ``$TP_CUDA_CACHE`` (default ``~/.cache/tensorplay/cuda-kernels``) under a key that
    hashes the source, every header beside it, the options, the target and the NVRTC version: a learner who
    edits ``binary.cu`` (or ``common.cuh``) and re-runs gets a fresh compile; nothing stale is ever loaded.
    Files are written to a temporary name and renamed, so concurrent processes never read half a file.

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
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
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


def _include_dirs(module: str) -> list[Path]:
    own = _source_path(module).parent
    return [own] if own == _loader.KERNEL_DIR else [own, _loader.KERNEL_DIR]


def _options(target: str, module: str) -> list[str]:
    includes = [f"--include-path={d}" for d in _include_dirs(module)]
    return [*OPTIONS, *includes, f"--gpu-architecture={target}"]


def cache_key(module: str, target: str, version: tuple[int, int]) -> str:
    """Note [Kernel cache]: the hash of everything that decides the binary."""
    h = hashlib.sha256()
    h.update(_source_path(module).read_bytes())
    for d in _include_dirs(module):
        for header in sorted(d.glob("*.cuh")):
            h.update(header.name.encode() + b"\0" + header.read_bytes())
    h.update("\0".join([*OPTIONS, target, f"nvrtc-{version[0]}.{version[1]}"]).encode())
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


def module_image(module: str, major: int, minor: int) -> bytes:
    """The loadable binary of ``module`` for a device of compute capability ``major.minor`` (disk-cached)."""
    lib = nvrtc()
    target, cubin = choose_target(major, minor, lib.supported_archs())
    return _cached_image(module, target, cubin)


def module_ptx(module: str, arch: int) -> bytes:
    """``module`` as PTX for ``compute_<arch>``, disk-cached as module_image's binaries are (no GPU needed:
    the CUDA emulator's stand-in driver reads kernel entries and parameters from it)."""
    return _cached_image(module, f"compute_{arch}", cubin=False)


def _cached_image(module: str, target: str, cubin: bool) -> bytes:
    """Note [Kernel cache]: the cached binary of ``module`` for ``target``, compiled on a miss."""
    lib = nvrtc()
    stem = Path(module).name.rsplit(".", 1)[0]
    path = (
        cache_dir()
        / f"{stem}-{target}-{cache_key(module, target, lib.version)}.{'cubin' if cubin else 'ptx'}"
    )
    try:
        return path.read_bytes()
    except OSError:
        pass
    image = lib.compile(
        _source_path(module).read_text(), Path(module).name, _options(target, module), cubin=cubin
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home still works, just without the cache
    return image


def compile_ptx(module: str, arch: int = 80) -> bytes:
    """Compile ``module`` to PTX for ``compute_<arch>`` (no cache, no GPU needed): what the CI test runs."""
    source = _source_path(module).read_text()
    return nvrtc().compile(source, Path(module).name, _options(f"compute_{arch}", module), cubin=False)


def warm_up(major: int, minor: int) -> None:
    """Compile every module for one architecture in parallel threads (NVRTC releases the GIL under ctypes)."""
    threads = [
        threading.Thread(target=module_image, args=(p.name, major, minor)) for p in _loader.kernel_sources()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
