"""Finding cuBLAS at run time: the ``nvidia-cublas`` wheel (or the system's), for P10's GEMMs on CUDA.

Where it sits: beside ``_loader.py`` (which finds NVRTC the same way). The C++ side (``csrc/cuda/cublas.cpp``)
dlopens the library the first time a matrix product runs on a GPU, asking ``find_cublas()`` for its path
through the locator registered by ``register()`` (called by ``tensorplay_p10.cuda`` at import):

- ``nvidia-cublas`` (CUDA 13): ``site-packages/nvidia/cu13/lib/libcublas.so.13``
- ``nvidia-cublas-cu12`` (CUDA 12): ``site-packages/nvidia/cublas/lib/libcublas.so.12``

then the CUDA toolkit directories of the system. ``TP_CUBLAS_LIBRARY`` overrides the search.

Example (no GPU needed):
    >>> from tensorplay_p10.cuda import _cublas
    >>> _cublas.CUBLAS_WHEELS[0]
    'nvidia-cublas'
"""

from __future__ import annotations

import re

from .. import _C
from . import _loader

# The wheels that ship libcublas, newest CUDA major first (pyproject's `cuda` and `cuda12` extras).
CUBLAS_WHEELS = ("nvidia-cublas", "nvidia-cublas-cu12")
_LIB = re.compile(r"libcublas\.so(\.\d+)*$")  # not libcublasLt

INSTALL_HINT = (
    "Install it with `pip install tensorplay-p10[cuda]` (the nvidia-cublas wheel; nvidia-cublas-cu12 for "
    "CUDA 12 drivers), or point TP_CUBLAS_LIBRARY at a libcublas.so."
)


def find_cublas(wheels: tuple[str, ...] = CUBLAS_WHEELS, system: bool = True) -> str:
    """Path (or soname) of the cuBLAS library to load; RuntimeError naming the wheel to install if absent.

    ``wheels`` and ``system`` narrow the search (tests use them to simulate a machine without cuBLAS).
    """
    return _loader.find_library(
        "TP_CUBLAS_LIBRARY",
        wheels,
        _LIB,
        "cublas",
        system,
        f"cuBLAS (NVIDIA's GEMM library, for matrix products on CUDA) was not found. {INSTALL_HINT}",
    )


def load(path: str) -> int:
    """Load cuBLAS from ``path`` apart from the process-wide copy and return its version (130100 = 13.1.0);
    RuntimeError naming the path and the wheel when it cannot be loaded. Needs no GPU."""
    return _C._cuda._load_cublas(path)


def version() -> int:
    """The version of the process-wide cuBLAS, loading it if needed (RuntimeError when it cannot be)."""
    return _C._cuda._cublas_version()


def register() -> None:
    """Tell the C++ side where to find cuBLAS when the first GEMM runs."""
    _C._cuda._set_cublas_locator(find_cublas)
