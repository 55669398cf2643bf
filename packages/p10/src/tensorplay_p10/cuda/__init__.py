"""``tp.cuda``: NVIDIA GPUs — devices, streams and events, memory, and the run-time kernel compiler.

TensorPlay needs no CUDA toolkit: P10 loads the driver (``libcuda.so.1``) when CUDA is first used, and
compiles its kernels (``tensorplay_p10/cuda_kernels/*.cu``) with NVRTC for the GPU it finds, caching the
binaries on disk (``_compiler.py``, Note [Kernel cache]). ``pip install tensorplay[cuda]`` adds NVRTC from
PyPI. Without a driver ``is_available()`` is False and CUDA calls raise a RuntimeError that says why.

What runs on the GPU today: tensors on ``cuda:N`` (``.to("cuda")``, ``.cuda()``, ``.cpu()``,
``pin_memory()``), copies and casts, ``fill_`` and the factories, ``add``/``sub``/``mul``/``div`` with
broadcasting and type promotion, and ``sum``; the random ops on a Philox generator per device
(``random.py``; ``tp.Generator(device="cuda")`` for streams of your own) and CUDA graphs with private memory
pools (``graphs.py``). Other ops raise NotImplementedError naming the op and the CUDA key (``tp.ops.list()``
shows which ops have CUDA kernels). ``docs/cuda.md`` walks the whole path.

Example (the last two lines need a GPU):
    >>> import tensorplay_p10 as tp
    >>> isinstance(tp.cuda.is_available(), bool)
    True
    >>> x = tp.arange(6.0).cuda()  # doctest: +SKIP
    >>> (x * 2 + 1).sum().item()  # doctest: +SKIP
    36.0
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .. import _C
from . import _compiler, _cublas, _cusolver
from . import random as _random
from ._device import index_of
from .graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables
from .memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import Event, Stream, current_stream, default_stream, set_stream, stream

_cu = _C._cuda


class OutOfMemoryError(RuntimeError):
    """A CUDA allocation failed even after the caching allocator released its cached blocks.

    The message gives the request and the device's allocated / reserved / free figures (Note [Caching
    allocator] in csrc/cuda/caching_allocator.h).
    """


_cu._set_oom_class(OutOfMemoryError)  # the C++ OutOfMemoryError is raised as this class

# The C++ side asks this for a module's binary the first time one of its kernels runs (Note [Kernel cache]).
_cu._set_module_provider(_compiler.module_image)
_cublas.register()  # where the C++ side finds cuBLAS for the first GEMM
_cusolver.register()  # and cuSOLVER for the first factorisation (tp.linalg)


def is_available() -> bool:
    """True when the CUDA driver loads and reports at least one GPU. Never raises."""
    return _cu._is_available()


def unavailable_reason() -> str:
    """Why ``is_available()`` is False ("" when it is True): the driver's absence, no device, …."""
    return _cu._unavailable_reason()


def device_count() -> int:
    """The number of visible GPUs (0 without a driver)."""
    return _cu.device_count()


def current_device() -> int:
    """The index of the current device of this thread (0 until ``set_device``)."""
    return _cu.current_device()


def set_device(device: Any) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or a ``tp.device``) the current device of this thread."""
    _cu.set_device(index_of(device, optional=False))


@contextmanager
def _device_scope(idx: int) -> Iterator[None]:
    prev = _cu.current_device()
    _cu.set_device(idx)
    try:
        yield
    finally:
        _cu.set_device(prev)


class device:
    """Context manager: run the block with ``device`` current. ``None`` or -1 changes nothing."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else index_of(device, optional=False)
        self._scope: Any = None

    def __enter__(self) -> None:
        if self.idx >= 0:
            self._scope = _device_scope(self.idx)
            self._scope.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self._scope is not None:
            self._scope.__exit__(*exc)
            self._scope = None


def synchronize(device: Any = None) -> None:
    """Wait until all work queued on ``device`` (all its streams) has finished.

    Not allowed while a CUDA graph is being captured (RuntimeError): the capture would be invalidated.
    """
    _cu._check_not_capturing("tp.cuda.synchronize()")
    _cu.synchronize(index_of(device))


@dataclass(frozen=True)
class _CudaDeviceProperties:
    """What ``get_device_properties`` returns (PyTorch's field names; clock rates in kHz)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    max_threads_per_block: int
    max_threads_per_multi_processor: int
    warp_size: int
    regs_per_multiprocessor: int
    L2_cache_size: int
    shared_memory_per_block: int
    shared_memory_per_multiprocessor: int
    is_integrated: int
    clock_rate: int
    memory_clock_rate: int
    memory_bus_width: int
    pci_bus_id: int
    pci_device_id: int

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1 << 20)}MB, "
            f"multi_processor_count={self.multi_processor_count}, "
            f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)"
        )


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """Name, compute capability, memory and multiprocessor figures of ``device``."""
    return _CudaDeviceProperties(**_cu._device_properties(index_of(device)))


def get_device_name(device: Any = None) -> str:
    """The GPU's marketing name, e.g. ``'NVIDIA H200'``."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The compute capability ``(major, minor)``: ``(9, 0)`` on an H100/H200."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def driver_version() -> int:
    """The CUDA version the driver supports, as 1000 * major + 10 * minor (13000 = CUDA 13.0)."""
    return _cu._driver_version()


def is_initialized() -> bool:
    """True once CUDA can be used (the driver loads lazily on the first call that needs it)."""
    return is_available()


def __getattr__(name: str) -> Any:
    # default_generators is made on first use: it needs the device count, so the driver (PEP 562).
    if name == "default_generators":
        return _random._default_generators()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CUDAGraph",
    "Event",
    "OutOfMemoryError",
    "Stream",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "driver_version",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "get_rng_state_all",
    "graph",
    "graph_pool_handle",
    "initial_seed",
    "is_current_stream_capturing",
    "is_available",
    "is_initialized",
    "make_graphed_callables",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
    "unavailable_reason",
]
