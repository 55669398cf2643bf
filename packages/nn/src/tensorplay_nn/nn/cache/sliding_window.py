"""`SlidingWindowCache`: a key/value cache that keeps only the most recent `window_size` positions."""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .base import Cache, check_continues, check_key_value, grow_slots


class SlidingWindowCache(Cache):
    """A cache that retains the last `window_size` positions of each layer, oldest first.

    The first write keeps the whole block (even when it is longer than the window), so a prefill attends over
    all of its tokens; each later write concatenates and keeps the tail of `window_size` positions.
    `positions[i]` (int64 `[B, retained]`) holds the absolute position of every retained entry.
    `get_seq_length` counts the tokens **ever seen** (the next absolute position), `get_window_length` the
    retained ones.

    Args:
        window_size: positions kept per layer; `ValueError` if it is not positive.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import SlidingWindowCache
        >>> cache = SlidingWindowCache(2)
        >>> _ = cache.update(tp.zeros(1, 1, 3, 4), tp.zeros(1, 1, 3, 4))
        >>> _ = cache.update(tp.ones(1, 1, 1, 4), tp.ones(1, 1, 1, 4))
        >>> cache.get_seq_length(), cache.get_window_length(), cache.positions[0].tolist()
        (4, 2, [[2, 3]])
    """

    def __init__(self, window_size: int) -> None:
        if not isinstance(window_size, int) or isinstance(window_size, bool) or window_size <= 0:
            raise ValueError(f"SlidingWindowCache: window_size must be a positive int, got {window_size!r}")
        self.window_size = window_size
        self.key_cache: list[Tensor | None] = []
        self.value_cache: list[Tensor | None] = []
        self.positions: list[Tensor | None] = []
        self._seen: list[int] = []

    def update(self, key: Tensor, value: Tensor, layer_idx: int = 0) -> tuple[Tensor, Tensor]:
        """Append `key`/`value` `[B, H, T, D]` to `layer_idx`, trim to the window, return what is retained."""
        check_key_value("SlidingWindowCache", key, value, layer_idx)
        for slots in (self.key_cache, self.value_cache, self.positions):
            grow_slots(slots, layer_idx)
        while len(self._seen) <= layer_idx:
            self._seen.append(0)
        seen, b, t = self._seen[layer_idx], int(key.shape[0]), int(key.shape[2])
        new_pos = tp.arange(seen, seen + t, dtype=tp.int64, device=key.device).expand(b, t)
        old_k = self.key_cache[layer_idx]
        if old_k is None:
            # The first write keeps everything: a prefill longer than the window still sees all its tokens.
            k, v, pos = key, value, new_pos.contiguous()
        else:
            check_continues("SlidingWindowCache", old_k, key, "keys", layer_idx)
            check_continues("SlidingWindowCache", self.value_cache[layer_idx], value, "values", layer_idx)
            # A mixer that keys and values with one tensor (CompressedSparseAttention) keeps one copy of it.
            shared = value is key and self.value_cache[layer_idx] is old_k
            k = tp.cat([old_k, key], 2)
            v = k if shared else tp.cat([self.value_cache[layer_idx], value], 2)
            pos = tp.cat([self.positions[layer_idx], new_pos], 1)
            drop = int(k.shape[2]) - self.window_size
            if drop > 0:
                k, pos = k[:, :, drop:], pos[:, drop:]
                v = k if shared else v[:, :, drop:]
        self.key_cache[layer_idx], self.value_cache[layer_idx], self.positions[layer_idx] = k, v, pos
        self._seen[layer_idx] = seen + t
        return k, v

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Tokens ever written to `layer_idx`: the absolute position the next token takes."""
        return self._seen[layer_idx] if layer_idx < len(self._seen) else 0

    def get_window_length(self, layer_idx: int = 0) -> int:
        """Positions currently retained for `layer_idx`."""
        if layer_idx >= len(self.key_cache) or self.key_cache[layer_idx] is None:
            return 0
        return int(self.key_cache[layer_idx].shape[2])

    def reset(self) -> None:
        """Drop every layer, its positions and its counter."""
        self.key_cache.clear()
        self.value_cache.clear()
        self.positions.clear()
        self._seen.clear()

    def __len__(self) -> int:
        return len(self.key_cache)

    def __repr__(self) -> str:
        return f"SlidingWindowCache(window_size={self.window_size}, layers={len(self)})"
