"""The CUDA random generators: one counter-based Philox4x32-10 generator per device.

Where it sits: ``tp.cuda.manual_seed``, ``get_rng_state`` … wrap ``csrc/cuda/philox.h``. A generator's state
is two numbers, (seed, offset): every random op on the device draws Philox blocks ``offset, offset + 1, …``
keyed by the seed, element ``i`` of its output taking its numbers from block ``offset + i // E`` (E = 4
floats or 2 doubles per block; Note [Philox streams] in ``cuda_kernels/philox.cuh``), and moves the offset
past them. So the same seed gives the same values whatever the GPU or launch shape, and the first ``n``
values of a larger draw equal a draw of ``n``. ``get_rng_state()`` is 16 bytes: the seed and the offset as
little-endian uint64. The streams are TensorPlay's own (not PyTorch's CUDA streams).

Like PyTorch's, these functions are safe to call without a GPU: seeding is then silently ignored.

Generators of your own: ``tp.Generator(device="cuda")`` is a (seed, offset) pair of its own, with the same
16-byte state; pass it as ``generator=`` to any CUDA random op and the op draws from it (and moves its offset)
instead of the device's default. Seeded like the default one, it gives the default one's values. Making one
needs no GPU (as in PyTorch); a generator for ``"cuda"`` serves any device, one for ``"cuda:1"`` only that
device. ``default_generators`` (``tp.cuda.default_generators``) holds each device's default generator.
They cannot be used while a CUDA graph captures (Note [Generators and graph capture] in
``csrc/cuda/philox.cpp``); captured code draws from the default generator.

Example (needs a GPU):
    >>> import tensorplay_p10 as tp
    >>> tp.cuda.manual_seed(0)  # doctest: +SKIP
    >>> a = tp.rand(3, device="cuda")  # doctest: +SKIP
    >>> tp.cuda.manual_seed(0)  # doctest: +SKIP
    >>> bool((tp.rand(3, device="cuda") == a).all())  # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import _C
from ._device import index_of

_cu = _C._cuda


def _available() -> bool:
    return _cu._is_available()


_defaults: tuple[Any, ...] = ()


def _default_generators() -> tuple[Any, ...]:
    """``tp.cuda.default_generators``: each device's default generator, ``()`` without CUDA (as PyTorch's)."""
    global _defaults
    if not _defaults and _available():
        _defaults = tuple(_cu._rng_default_generator(i) for i in range(_cu.device_count()))
    return _defaults


def manual_seed(seed: int) -> None:
    """Seed the current device's generator (offset back to 0). Ignored without CUDA."""
    if _available():
        _cu._rng_manual_seed(-1, int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed the generator of every device, including devices not used yet. Needs no GPU."""
    _cu._rng_manual_seed_all(int(seed))


def seed() -> None:
    """Seed the current device's generator from a non-deterministic source."""
    if _available():
        manual_seed(_C.Generator().seed())


def seed_all() -> None:
    """Seed every device's generator from one non-deterministic seed."""
    manual_seed_all(_C.Generator().seed())


def initial_seed() -> int:
    """The seed of the current device's generator."""
    return _cu._rng_initial_seed(-1)


def get_rng_state(device: Any = "cuda") -> Any:
    """The generator state of ``device`` as a uint8 CPU tensor of 16 bytes (seed, offset)."""
    return _cu._rng_get_state(index_of(device))


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Restore a state from :func:`get_rng_state`."""
    _cu._rng_set_state(index_of(device), new_state)


def get_rng_state_all() -> list[Any]:
    """The states of every device, in device order."""
    return [get_rng_state(i) for i in range(_cu.device_count())]


def set_rng_state_all(new_states: Iterable[Any]) -> None:
    """Restore the states of :func:`get_rng_state_all`."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
]
