"""Finding the CUDA libraries at run time: NVRTC from the NVIDIA wheels (or the system), the kernel sources.

Where it sits: below ``_nvrtc.py`` and ``_compiler.py``. The driver (``libcuda.so.1``) is loaded by P10's C++
(``csrc/cuda/driver.cpp``), since it comes with the NVIDIA driver and is never a wheel; NVRTC is a wheel:

- ``nvidia-cuda-nvrtc`` (CUDA 13): ``site-packages/nvidia/cu13/lib/libnvrtc.so.13``
- ``nvidia-cuda-nvrtc-cu12`` (CUDA 12): ``site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12``

``find_nvrtc()`` asks ``importlib.metadata`` where those wheels put their files, then the CUDA toolkit
directories of the system (``system_library_dirs``). ``TP_NVRTC_LIBRARY`` overrides the search. The
search helpers (``libraries_in_wheels``, ``libraries_on_system``, ``first_present``) also find cuBLAS
(``_cublas.py``) and cuSOLVER (``_cusolver.py``), which also reads a library's own dependencies
(``needed_libraries``) to load them first (``load_order``).

Example:
    >>> from tensorplay_p10.cuda import _loader
    >>> names = [p.name for p in _loader.kernel_sources()]
    >>> "binary.cu" in names and "copy.cu" in names
    True
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import os
import re
import struct
from collections.abc import Callable
from pathlib import Path

# The wheels that ship libnvrtc, newest CUDA major first (see pyproject's [cuda] extras).
NVRTC_WHEELS = ("nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12")
_LIB = re.compile(r"libnvrtc\.so(\.\d+)*$")  # not libnvrtc-builtins, not libnvrtc.alt

KERNEL_DIR = Path(__file__).resolve().parent.parent / "cuda_kernels"


def kernel_sources() -> list[Path]:
    """The ``.cu`` files shipped in ``tensorplay_p10/cuda_kernels`` (one kernel family each)."""
    return sorted(KERNEL_DIR.glob("*.cu"))


def libraries_in_wheels(wheels: tuple[str, ...], pattern: re.Pattern[str]) -> list[str]:
    """Files named like ``pattern`` that the installed NVIDIA wheels ``wheels`` ship (none when absent)."""
    found = []
    for dist in wheels:
        try:
            files = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        found += [str(f.locate()) for f in files if pattern.search(f.name)]
    return found


def system_library_dirs() -> list[Path]:
    """The CUDA toolkit's library folders: ``lib64`` and ``targets/*/lib`` of $CUDA_HOME, $CUDA_PATH and
    /usr/local/cuda, then of every /usr/local/cuda-<version>, newest version first."""

    def version(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.name))

    roots = [Path(r) for r in (os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")) if r]
    roots += [Path("/usr/local/cuda")] + sorted(Path("/usr/local").glob("cuda-*"), key=version, reverse=True)
    dirs: list[Path] = []
    for r in roots:
        for d in [r / "lib64", *sorted(r.glob("targets/*/lib"))]:
            if d.is_dir() and d.resolve() not in [x.resolve() for x in dirs]:
                dirs.append(d)
    return dirs


def libraries_on_system(stem: str, pattern: re.Pattern[str]) -> list[str]:
    """``lib<stem>.so*`` in the CUDA toolkit's folders (``system_library_dirs``), then the loader's search."""
    found = [
        str(p)
        for d in system_library_dirs()
        for p in sorted(d.glob(f"lib{stem}.so*"))
        if pattern.search(p.name)
    ]
    name = ctypes.util.find_library(stem)
    return found + ([name] if name else [])


def first_present(candidates: list[str]) -> str | None:
    """The first candidate that exists (a bare soname counts: the dynamic loader resolves it)."""
    return next((c for c in candidates if os.path.sep not in c or os.path.exists(c)), None)


def find_library(
    env: str, wheels: tuple[str, ...], pattern: re.Pattern[str], stem: str, system: bool, missing: str
) -> str:
    """Path (or soname) of an NVIDIA library: ``$env`` if set, else the first match of ``pattern`` in the
    wheels ``wheels``, then (when ``system``) in the CUDA toolkit folders and the loader's path; RuntimeError
    ``missing`` when none is there. The one search of _cublas.py and _cusolver.py."""
    override = os.environ.get(env)
    if override:
        return override
    candidates = libraries_in_wheels(wheels, pattern)
    if system:
        candidates += libraries_on_system(stem, pattern)
    found = first_present(candidates)
    if found:
        return found
    raise RuntimeError(missing)


_SHARED = re.compile(r"\.so(\.\d+)*$")


def wheel_library_dirs(wheels: tuple[str, ...]) -> list[Path]:
    """The folders holding the shared libraries of the installed NVIDIA wheels ``wheels``, in that order."""
    dirs: list[Path] = []
    for d in (Path(p).parent for p in libraries_in_wheels(wheels, _SHARED)):
        if d not in dirs:
            dirs.append(d)
    return dirs


# Note [Reading DT_NEEDED]
#   A library from a wheel or a toolkit folder finds its own dependencies through its RUNPATH ($ORIGIN in the
#   wheels) or the loader's search path; a copy elsewhere may find none (cuSOLVER needs cuBLAS, cuBLASLt,
#   cuSPARSE and nvJitLink). The dynamic loader matches an already loaded library by its soname, so loading
#   each dependency by path first makes the library's own load succeed. Which ones it needs is written in the
#   file: the DT_NEEDED entries of its dynamic section, names into its dynamic string table. Only the program
#   headers, the dynamic section and that table are read (libcusolver is hundreds of megabytes).
def needed_libraries(path: str | os.PathLike[str]) -> list[str]:
    """The sonames a shared library names as DT_NEEDED (its direct dependencies), in file order; [] when
    ``path`` is not a readable 64-bit little-endian ELF file (Note [Reading DT_NEEDED])."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return []
            (phoff,) = struct.unpack_from("<Q", head, 32)  # e_phoff
            phentsize, phnum = struct.unpack_from("<HH", head, 54)  # e_phentsize, e_phnum
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            loads, dynamic = [], None
            for i in range(phnum):  # Elf64_Phdr: type, flags, offset, vaddr, paddr, filesz, memsz, align
                ptype, _, off, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
                if ptype == 1:  # PT_LOAD: maps [vaddr, vaddr + filesz) from the file at `off`
                    loads.append((vaddr, filesz, off))
                elif ptype == 2:  # PT_DYNAMIC
                    dynamic = (off, filesz)
            if dynamic is None:
                return []
            f.seek(dynamic[0])
            raw = f.read(dynamic[1])
            needed, strtab, strsz = [], None, 0
            for i in range(len(raw) // 16):  # Elf64_Dyn: tag, value
                tag, val = struct.unpack_from("<qQ", raw, i * 16)
                if tag == 0:  # DT_NULL
                    break
                if tag == 1:  # DT_NEEDED: an offset into the string table
                    needed.append(val)
                elif tag == 5:  # DT_STRTAB: an address
                    strtab = val
                elif tag == 10:  # DT_STRSZ
                    strsz = val
            where = [
                off + strtab - va
                for va, size, off in loads
                if strtab is not None and va <= strtab < va + size
            ]
            if not where:
                return []
            f.seek(where[0])
            strings = f.read(strsz)
        return [strings[o : strings.index(b"\0", o)].decode() for o in needed if o < len(strings)]
    except (OSError, struct.error, ValueError):  # ValueError: an unterminated or undecodable name
        return []


def load_order(path: str, find: Callable[[str], str | None]) -> list[str]:
    """The files to load, dependencies first, so that ``path`` loads wherever its dependencies are: every
    DT_NEEDED soname of ``path`` (and of theirs) that ``find(soname)`` locates, then ``path`` itself. Sonames
    ``find`` does not locate (the C library, or a missing one that the final load will name) are left to the
    dynamic loader."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(p: str) -> None:
        if p in seen:
            return
        seen.add(p)
        for soname in needed_libraries(p):
            dep = find(soname)
            if dep is not None:
                visit(dep)
        order.append(p)

    visit(path)
    return order


def find_nvrtc(wheels: tuple[str, ...] = NVRTC_WHEELS, system: bool = True) -> str:
    """Path (or soname) of the NVRTC library to load; RuntimeError saying how to install it if absent.

    ``wheels`` and ``system`` narrow the search (tests use them to simulate a machine without NVRTC).
    """
    return find_library(
        "TP_NVRTC_LIBRARY",
        wheels,
        _LIB,
        "nvrtc",
        system,
        "NVRTC (the CUDA run-time compiler) was not found: TensorPlay compiles its CUDA kernels with it. "
        "Install it with `pip install tensorplay-p10[cuda]` (the nvidia-cuda-nvrtc wheel), or point "
        "TP_NVRTC_LIBRARY at a libnvrtc.so.",
    )
