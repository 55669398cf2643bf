"""Device selection for ``tp.cuda``: turning ``None``, ``0``, ``"cuda:1"`` or ``tp.device`` into an index.

Where it sits: every ``tp.cuda`` function that takes ``device=`` resolves it here, the PyTorch way: ``None``
(or ``cuda`` without an index) is the current device.

Example:
    >>> from tensorplay_p10.cuda._device import index_of
    >>> index_of(3)
    3
"""

from __future__ import annotations

from typing import Any

from .. import _C
from .._device import device as Device

_cu = _C._cuda


def index_of(device: Any, optional: bool = True) -> int:
    """The CUDA ordinal ``device`` names; the current device for ``None`` or an index-less ``cuda``."""
    if device is None and optional:
        return _cu.current_device()
    if isinstance(device, bool):  # bool is an int subclass: refuse it, as PyTorch does
        raise ValueError(f"Expected a cuda device, but got: {device}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = Device(device)
    if isinstance(device, Device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return _cu.current_device() if device.index is None else device.index
    raise ValueError(f"Expected a cuda device (an int, a string or a tp.device), but got: {device!r}")
