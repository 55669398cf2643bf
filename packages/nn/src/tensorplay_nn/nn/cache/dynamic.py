"""`DynamicCache`: the default key/value cache, which grows by concatenation along the sequence axis."""

from __future__ import annotations

from collections.abc import Iterator

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .base import Cache, KeyValue, check_continues, check_key_value, grow_slots


class DynamicCache(Cache):
    """A cache that appends each layer's new keys and values along dim 2 (no size limit).

    `key_cache[i]` is `[B, H, S, Dk]` and `value_cache[i]` is `[B, H, S, Dv]` after `S` positions. The first
    `update` of a layer stores and returns the very tensors passed in (no copy); later ones return
    `cat([old, new], dim=2)`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import DynamicCache
        >>> cache = DynamicCache()
        >>> k, v = cache.update(tp.zeros(1, 2, 3, 4), tp.zeros(1, 2, 3, 4), layer_idx=0)
        >>> k, v = cache.update(tp.ones(1, 2, 1, 4), tp.ones(1, 2, 1, 4), layer_idx=0)
        >>> tuple(k.shape), cache.get_seq_length(0)
        ((1, 2, 4, 4), 4)
    """

    def __init__(self) -> None:
        self.key_cache: list[Tensor | None] = []
        self.value_cache: list[Tensor | None] = []

    def update(self, key: Tensor, value: Tensor, layer_idx: int = 0) -> tuple[Tensor, Tensor]:
        """Append `key`/`value` `[B, H, T, D]` to `layer_idx`; return its full `[B, H, S, D]` pair."""
        check_key_value("DynamicCache", key, value, layer_idx)
        grow_slots(self.key_cache, layer_idx)
        grow_slots(self.value_cache, layer_idx)
        old_k, old_v = self.key_cache[layer_idx], self.value_cache[layer_idx]
        if old_k is None:
            self.key_cache[layer_idx], self.value_cache[layer_idx] = key, value
        else:
            check_continues("DynamicCache", old_k, key, "keys", layer_idx)
            check_continues("DynamicCache", old_v, value, "values", layer_idx)
            self.key_cache[layer_idx] = tp.cat([old_k, key], 2)
            self.value_cache[layer_idx] = tp.cat([old_v, value], 2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Positions stored for `layer_idx` (0 if it was never written)."""
        if layer_idx >= len(self.key_cache) or self.key_cache[layer_idx] is None:
            return 0
        return int(self.key_cache[layer_idx].shape[2])

    def reset(self) -> None:
        """Drop every layer."""
        self.key_cache.clear()
        self.value_cache.clear()

    def __len__(self) -> int:
        return len(self.key_cache)

    def __iter__(self) -> Iterator[KeyValue]:
        for key, value in zip(self.key_cache, self.value_cache, strict=True):
            yield KeyValue(key, value)

    def __repr__(self) -> str:
        return f"DynamicCache(layers={len(self)}, seq_length={self.get_seq_length(0)})"
