"""Finding the CUDA libraries at run time: NVRTC from the NVIDIA wheels (or the system), the kernel sources.

Where it sits: below ``_nvrtc.py`` and ``_compiler.py``. The driver (``libcuda.so.1``) is loaded by P10's C++
(``csrc/cuda/driver.cpp``), since it comes with the NVIDIA driver and is never a wheel; NVRTC is a wheel:

- ``nvidia-cuda-nvrtc`` (CUDA 13): ``site-packages/nvidia/cu13/lib/libnvrtc.so.13``
- ``nvidia-cuda-nvrtc-cu12`` (CUDA 12): ``site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12``

``find_nvrtc()`` asks ``importlib.metadata`` where those wheels put their files, then the CUDA toolkit
directories of the system. ``TP_NVRTC_LIBRARY`` overrides the search. The search helpers
(``libraries_in_wheels``, ``libraries_on_system``, ``first_present``) also find cuBLAS (``_cublas.py``).

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


def libraries_on_system(stem: str, pattern: re.Pattern[str]) -> list[str]:
    """``lib<stem>.so*`` under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda, then the loader's own search."""
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    found = [
        str(p)
        for r in roots
        if r
        for p in sorted(Path(r, "lib64").glob(f"lib{stem}.so*"))
        if pattern.search(p.name)
    ]
    name = ctypes.util.find_library(stem)
    return found + ([name] if name else [])


def first_present(candidates: list[str]) -> str | None:
    """The first candidate that exists (a bare soname counts: the dynamic loader resolves it)."""
    return next((c for c in candidates if os.path.sep not in c or os.path.exists(c)), None)


def _from_wheels() -> list[str]:
    return libraries_in_wheels(NVRTC_WHEELS, _LIB)


def _from_system() -> list[str]:
    return libraries_on_system("nvrtc", _LIB)


def find_nvrtc() -> str:
    """Path (or soname) of the NVRTC library to load; RuntimeError saying how to install it if absent."""
    env = os.environ.get("TP_NVRTC_LIBRARY")
    if env:
        return env
    found = first_present(_from_wheels() + _from_system())
    if found:
        return found
    raise RuntimeError(
        "NVRTC (the CUDA run-time compiler) was not found: TensorPlay compiles its CUDA kernels with it. "
        "Install it with `pip install tensorplay-p10[cuda]` (the nvidia-cuda-nvrtc wheel), or point "
        "TP_NVRTC_LIBRARY at a libnvrtc.so."
    )
