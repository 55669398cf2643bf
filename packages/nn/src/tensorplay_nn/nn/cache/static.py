"""`StaticCache`: a key/value cache with buffers of a fixed length, allocated once per layer."""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .base import Cache, check_continues, check_key_value, grow_slots


class StaticCache(Cache):
    """A cache whose per-layer buffers `[B, H, max_seq_len, D]` are allocated on the first write.

    Each `update` copies the new block at the layer's cursor and returns views of the filled prefix
    `[:, :, :S]` (no concatenation, so decoding allocates nothing per step). The buffers take the dtype and
    device of the first key/value written.

    Args:
        max_seq_len: capacity in positions; `ValueError` if it is not positive. Writing past it raises
            `RuntimeError`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import StaticCache
        >>> cache = StaticCache(8)
        >>> k, v = cache.update(tp.ones(1, 2, 3, 4), tp.ones(1, 2, 3, 4))
        >>> tuple(k.shape), tuple(cache.key_cache[0].shape)
        ((1, 2, 3, 4), (1, 2, 8, 4))
    """

    def __init__(self, max_seq_len: int) -> None:
        if not isinstance(max_seq_len, int) or isinstance(max_seq_len, bool) or max_seq_len <= 0:
            raise ValueError(f"StaticCache: max_seq_len must be a positive int, got {max_seq_len!r}")
        self.max_seq_len = max_seq_len
        self.key_cache: list[Tensor | None] = []
        self.value_cache: list[Tensor | None] = []
        self._lengths: list[int] = []

    def update(self, key: Tensor, value: Tensor, layer_idx: int = 0) -> tuple[Tensor, Tensor]:
        """Write `key`/`value` `[B, H, T, D]` at the cursor of `layer_idx`; return the `[:, :, :S]` views."""
        check_key_value("StaticCache", key, value, layer_idx)
        for slots in (self.key_cache, self.value_cache):
            grow_slots(slots, layer_idx)
        while len(self._lengths) <= layer_idx:
            self._lengths.append(0)
        if self.key_cache[layer_idx] is None:
            b, h, _, dk = key.shape
            dv = value.shape[3]
            self.key_cache[layer_idx] = tp.zeros(
                b, h, self.max_seq_len, dk, dtype=key.dtype, device=key.device
            )
            self.value_cache[layer_idx] = tp.zeros(
                b, h, self.max_seq_len, dv, dtype=value.dtype, device=value.device
            )
        key_buf, value_buf = self.key_cache[layer_idx], self.value_cache[layer_idx]
        check_continues("StaticCache", key_buf, key, "keys", layer_idx)
        check_continues("StaticCache", value_buf, value, "values", layer_idx)
        start, t = self._lengths[layer_idx], int(key.shape[2])
        if start + t > self.max_seq_len:
            raise RuntimeError(
                f"StaticCache.update: layer {layer_idx} holds {start} positions, cannot add {t} more "
                f"(max_seq_len={self.max_seq_len})"
            )
        key_buf[:, :, start : start + t] = key
        value_buf[:, :, start : start + t] = value
        self._lengths[layer_idx] = start + t
        return key_buf[:, :, : start + t], value_buf[:, :, : start + t]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Positions written to `layer_idx` (0 if it was never written)."""
        return self._lengths[layer_idx] if layer_idx < len(self._lengths) else 0

    def reset(self) -> None:
        """Drop every layer's buffers and cursor."""
        self.key_cache.clear()
        self.value_cache.clear()
        self._lengths.clear()

    def __len__(self) -> int:
        return len(self.key_cache)

    def __repr__(self) -> str:
        return f"StaticCache(max_seq_len={self.max_seq_len}, layers={len(self)})"
