"""Finding cuSOLVER at run time: the ``nvidia-cusolver`` wheel (or the system's), for tp.linalg on CUDA.

Where it sits: beside ``_cublas.py`` and ``_loader.py``, whose search helpers it shares. The C++ side
(``csrc/cuda/cusolver.cpp``) dlopens the library the first time a factorisation runs on a GPU, asking
``libraries()`` for the files to load through the locator registered by ``register()`` (called by
``tensorplay_p10.cuda`` at import):

- ``nvidia-cusolver`` (CUDA 13): ``site-packages/nvidia/cu13/lib/libcusolver.so.12`` (the library's own major
  version is 12 on CUDA 13)
- ``nvidia-cusolver-cu12`` (CUDA 12): ``site-packages/nvidia/cusolver/lib/libcusolver.so.11``

then the CUDA toolkit folders of the system (``/usr/local/cuda/lib64``, ``/usr/local/cuda-*/targets/*/lib``).
``TP_CUSOLVER_LIBRARY`` overrides the search. libcusolver needs libcublas, libcublasLt, libcusparse and
libnvJitLink: ``libraries()`` puts every one it finds (beside libcusolver, in the NVIDIA wheels, in the
toolkit folders) before it, so that the load works wherever they are (Note [cuSOLVER dependencies] in
cusolver.h).

Example (no GPU needed):
    >>> from tensorplay_p10.cuda import _cusolver
    >>> _cusolver.CUSOLVER_WHEELS[0]
    'nvidia-cusolver'
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import _C
from . import _loader

# The wheels that ship libcusolver, newest CUDA major first (pyproject's `cuda` and `cuda12` extras).
CUSOLVER_WHEELS = ("nvidia-cusolver", "nvidia-cusolver-cu12")
# The wheels that ship what libcusolver needs (nvidia-cusolver depends on them, so pip installs them with it).
DEPENDENCY_WHEELS = (
    "nvidia-cublas",
    "nvidia-cusparse",
    "nvidia-nvjitlink",
    "nvidia-cublas-cu12",
    "nvidia-cusparse-cu12",
    "nvidia-nvjitlink-cu12",
)
_LIB = re.compile(r"libcusolver\.so(\.\d+)*$")  # not libcusolverMg

INSTALL_HINT = (
    "Install it with `pip install tensorplay-p10[cuda]` (the nvidia-cusolver wheel; nvidia-cusolver-cu12 for "
    "CUDA 12 drivers), or point TP_CUSOLVER_LIBRARY at a libcusolver.so."
)


def find_cusolver(wheels: tuple[str, ...] = CUSOLVER_WHEELS, system: bool = True) -> str:
    """Path (or soname) of the cuSOLVER library to load; RuntimeError naming the wheel to install if absent.

    ``wheels`` and ``system`` narrow the search (tests use them to simulate a machine without cuSOLVER).
    """
    return _loader.find_library(
        "TP_CUSOLVER_LIBRARY",
        wheels,
        _LIB,
        "cusolver",
        system,
        "cuSOLVER (NVIDIA's dense solvers, for tp.linalg on CUDA) was not found. " + INSTALL_HINT,
    )


def dependency_dirs(path: str) -> list[Path]:
    """Where libcusolver's dependencies are looked for: its own folder, the NVIDIA wheels' library folders,
    then the CUDA toolkit's."""
    dirs = [Path(path).parent] if os.path.sep in path else []
    for d in _loader.wheel_library_dirs(CUSOLVER_WHEELS + DEPENDENCY_WHEELS) + _loader.system_library_dirs():
        if d not in dirs:
            dirs.append(d)
    return dirs


def libraries(path: str | None = None) -> list[str]:
    """The files to load for cuSOLVER at ``path`` (``find_cusolver()`` when None): each dependency found in
    ``dependency_dirs`` (and theirs), dependencies first, then ``path`` itself (``_loader.load_order``)."""
    path = find_cusolver() if path is None else path
    dirs = dependency_dirs(path)

    def find(soname: str) -> str | None:
        return next((str(d / soname) for d in dirs if (d / soname).is_file()), None)

    return _loader.load_order(path, find)


def load(path: str) -> int:
    """Load cuSOLVER from ``path`` (with its dependencies) apart from the process-wide copy and return its
    version (120004 = 12.0.4); RuntimeError naming the path and the wheel when it cannot be. Needs no GPU."""
    return _C._cuda._load_cusolver(libraries(path))


def version() -> int:
    """The version of the process-wide cuSOLVER, loading it if needed (RuntimeError when it cannot be)."""
    return _C._cuda._cusolver_version()


def register() -> None:
    """Tell the C++ side where to find cuSOLVER when the first factorisation runs."""
    _C._cuda._set_cusolver_locator(libraries)
