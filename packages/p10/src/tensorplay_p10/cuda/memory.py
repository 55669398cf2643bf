"""Memory of the CUDA caching allocator: ``tp.cuda.memory_allocated``, ``memory_stats``, ``empty_cache`` ….

Where it sits: reads the counters of ``csrc/cuda/caching_allocator.cpp`` (Note [Caching allocator] there says
how blocks are cached, split and merged). "Allocated" is memory held by live tensors; "reserved" is what the
allocator holds from the driver, allocated or cached. Names and keys are PyTorch's.

Example (on a machine with a GPU):
    >>> import tensorplay as tp
    >>> x = tp.empty(1 << 20, device="cuda")  # doctest: +SKIP
    >>> tp.cuda.memory_allocated() >= 4 << 20  # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .. import _C
from ._device import index_of

_cu = _C._cuda


def memory_stats(device: Any = None) -> OrderedDict[str, int]:
    """The allocator's counters for ``device``, sorted by name (``"allocated_bytes.all.current"``, …)."""
    return OrderedDict(sorted(_cu._memory_stats(index_of(device)).items()))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by live tensors on ``device`` (block sizes, rounded up to 512 bytes)."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    """The peak of ``memory_allocated`` since the start or the last ``reset_peak_memory_stats``."""
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds from the driver on ``device``: allocated plus cached."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    """The peak of ``memory_reserved`` since the start or the last ``reset_peak_memory_stats``."""
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: Any = None) -> None:
    """Set every peak counter to its current value."""
    _cu._reset_peak_memory_stats(index_of(device))


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """Zero the running totals (``*.allocated``, ``*.freed``, ``num_alloc_retries``, ``num_ooms``)."""
    _cu._reset_accumulated_memory_stats(index_of(device))


def empty_cache() -> None:
    """Give every cached block that is a whole free segment back to the driver (tensors are untouched)."""
    _cu._empty_cache()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes of the device, as the driver sees them (other processes included)."""
    return _cu._mem_get_info(index_of(device))
