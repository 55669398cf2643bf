"""The `Cache` protocol every key/value cache implements, and the checks they share.

A cache files the keys and values of each attention layer under that layer's `layer_idx`, in the layout
`[B, heads, seq, D]` (the value width may differ from the key width). Layers are created lazily on first
write; slots below a written index that were never written hold `None`.
"""

from __future__ import annotations

from typing import NamedTuple

from tensorplay_p10 import Tensor


class KeyValue(NamedTuple):
    """One layer's cached pair, as yielded by iterating a `DynamicCache`."""

    key: Tensor
    value: Tensor


class Cache:
    """Abstract base of the key/value caches: `update`, `get_seq_length` and `reset`.

    Example::

        >>> from tensorplay.nn.cache import Cache, DynamicCache
        >>> isinstance(DynamicCache(), Cache)
        True
    """

    def update(self, key: Tensor, value: Tensor, layer_idx: int = 0) -> tuple[Tensor, Tensor]:
        """Store `key`/`value` `[B, H, T, D]` for `layer_idx`; return the layer's whole `[B, H, S, D]`."""
        raise NotImplementedError(f"{type(self).__name__}.update is not implemented")

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Number of positions seen by `layer_idx` so far (0 for a layer never written)."""
        raise NotImplementedError(f"{type(self).__name__}.get_seq_length is not implemented")

    def reset(self) -> None:
        """Forget everything, so the cache can serve a new sequence."""
        raise NotImplementedError(f"{type(self).__name__}.reset is not implemented")


def check_key_value(owner: str, key: Tensor, value: Tensor, layer_idx: int) -> None:
    """Raise a clear error for a pair that cannot be filed as `[B, H, T, D]` under `layer_idx`."""
    if not isinstance(layer_idx, int) or isinstance(layer_idx, bool) or layer_idx < 0:
        raise ValueError(f"{owner}.update: layer_idx must be a non-negative int, got {layer_idx!r}")
    if key.dim() != 4 or value.dim() != 4:
        raise ValueError(
            f"{owner}.update: key and value must be 4-D [B, heads, seq, D], got key {tuple(key.shape)} "
            f"and value {tuple(value.shape)}"
        )
    if tuple(key.shape[:3]) != tuple(value.shape[:3]):
        raise ValueError(
            f"{owner}.update: key {tuple(key.shape)} and value {tuple(value.shape)} must agree in "
            "batch, heads and seq"
        )


def grow_slots(slots: list, layer_idx: int) -> None:
    """Pad a per-layer list with `None` so that `slots[layer_idx]` exists (layers are created lazily)."""
    while len(slots) <= layer_idx:
        slots.append(None)


def check_continues(owner: str, old: Tensor, new: Tensor, name: str, layer_idx: int) -> None:
    """A later write must match the stored batch, heads and width of the layer (only seq may differ)."""
    old_shape, new_shape = tuple(old.shape), tuple(new.shape)
    if old_shape[:2] != new_shape[:2] or old_shape[3] != new_shape[3]:
        raise ValueError(
            f"{owner}.update: layer {layer_idx} holds {name} of shape {old_shape}, cannot append {new_shape} "
            "(batch, heads and width must match)"
        )
