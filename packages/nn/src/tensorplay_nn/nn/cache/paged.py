"""`PagedCache`: a key/value cache that files positions in fixed-size pages (blocks), as vLLM's PagedAttention
does, and finds them again through a per-row block table.

Where it sits: beside the other caches in nn/cache/ (the `Cache` protocol is in base.py); attention mixers
call `update` and attend over the gathered `[B, H, S, D]` it returns, or call `attend`, which hands the pages
and the block table to the P10 op `paged_attention` (packages/p10/csrc/kernels/paged_attention.cpp) without
gathering them.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .base import Cache, check_key_value, grow_slots

__all__ = ["PagedCache"]


class PagedCache(Cache):
    """A cache whose positions live in pages of `block_size` slots, addressed by a block table.

    Per layer `i`, with `B` rows and `bpr` blocks per row::

        key_pools[i]    [B * bpr, block_size, H, Dk]    (page id, slot in page, head, channel)
        value_pools[i]  [B * bpr, block_size, H, Dv]
        block_tables[i] int64 [B, bpr]                  row b owns page ids b*bpr ... b*bpr + bpr - 1

    Position `p` of row `b` sits in page `block_tables[i][b, p // block_size]` at slot `p % block_size`.
    `update` scatters the new block there (int64 index assignment) and returns the row's positions gathered
    back into a contiguous `[B, H, S, D]`, so any attention can read it. Capacity grows on demand: when a
    write needs more pages per row, the pools are re-allocated with exactly enough pages (`ceil(S /
    block_size)` per row) and the old pages copied over. The pools take the dtype and device of the first
    key/value written.

    Args:
        block_size: slots per page; `ValueError` if it is not positive.
        num_blocks: the most pages one row may use (None: unbounded); a write that would need more raises
            `RuntimeError` and leaves the cache unchanged.

    The batch size is fixed by the first write (of any layer); a write with another batch is a `ValueError`
    until `reset`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import PagedCache
        >>> cache = PagedCache(block_size=4)
        >>> k, v = cache.update(tp.ones(2, 3, 6, 8), tp.ones(2, 3, 6, 8))
        >>> tuple(k.shape), tuple(cache.key_pools[0].shape), cache.block_tables[0].tolist()
        ((2, 3, 6, 8), (4, 4, 3, 8), [[0, 1], [2, 3]])
    """

    def __init__(self, block_size: int = 16, num_blocks: int | None = None) -> None:
        if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0:
            raise ValueError(f"PagedCache: block_size must be a positive int, got {block_size!r}")
        if num_blocks is not None and (
            not isinstance(num_blocks, int) or isinstance(num_blocks, bool) or num_blocks <= 0
        ):
            raise ValueError(f"PagedCache: num_blocks must be a positive int or None, got {num_blocks!r}")
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.key_pools: list[Tensor | None] = []
        self.value_pools: list[Tensor | None] = []
        self.block_tables: list[Tensor | None] = []
        self._lengths: list[int] = []
        self._batch: int | None = None

    def update(self, key: Tensor, value: Tensor, layer_idx: int = 0) -> tuple[Tensor, Tensor]:
        """Scatter `key`/`value` `[B, H, T, D]` into the pages of `layer_idx`; return its `[B, H, S, D]`."""
        check_key_value("PagedCache", key, value, layer_idx)
        b, h, t, dk = (int(s) for s in key.shape)
        dv = int(value.shape[3])
        if self._batch is not None and b != self._batch:
            raise ValueError(
                f"PagedCache.update: the batch size is fixed at {self._batch} by the first write, got key "
                f"{tuple(key.shape)} for layer {layer_idx} (reset() to start over)"
            )
        for slots in (self.key_pools, self.value_pools, self.block_tables):
            grow_slots(slots, layer_idx)
        while len(self._lengths) <= layer_idx:
            self._lengths.append(0)
        pool = self.key_pools[layer_idx]
        if pool is not None:
            held_k = (int(pool.shape[2]), int(pool.shape[3]))
            held_v = (int(self.value_pools[layer_idx].shape[2]), int(self.value_pools[layer_idx].shape[3]))
            if (h, dk) != held_k or (h, dv) != held_v:
                raise ValueError(
                    f"PagedCache.update: layer {layer_idx} holds {held_k[0]} heads of key width {held_k[1]} "
                    f"and value width {held_v[1]}, cannot append key {tuple(key.shape)} and value "
                    f"{tuple(value.shape)} (heads and widths must match)"
                )
        start = self._lengths[layer_idx]
        end = start + t
        needed = -(-end // self.block_size)
        if self.num_blocks is not None and needed > self.num_blocks:
            raise RuntimeError(
                f"PagedCache.update: layer {layer_idx} holds {start} positions, adding {t} needs {needed} "
                f"blocks per row of {self.block_size} (num_blocks={self.num_blocks})"
            )
        self._batch = b
        if pool is None or needed > int(self.block_tables[layer_idx].shape[1]):
            self._grow(layer_idx, b, needed, key, value)
        table = self.block_tables[layer_idx]
        if t > 0:
            # Page [B, T] and slot [T] of each new (row, position); they broadcast against key's [B, T, H, D].
            positions = tp.arange(start, end, dtype=tp.int64, device=key.device)
            pages, slots = table[:, positions // self.block_size], positions % self.block_size
            self.key_pools[layer_idx][pages, slots] = key.transpose(1, 2)
            self.value_pools[layer_idx][pages, slots] = value.transpose(1, 2)
        self._lengths[layer_idx] = end
        return self._gather(self.key_pools[layer_idx], table, end), self._gather(
            self.value_pools[layer_idx], table, end
        )

    def _grow(self, layer_idx: int, batch: int, blocks: int, key: Tensor, value: Tensor) -> None:
        """Re-allocate layer `layer_idx`'s pools with `blocks` pages per row, keeping the written pages."""
        size = self.block_size
        new_k = tp.zeros(batch * blocks, size, key.shape[1], key.shape[3], dtype=key.dtype, device=key.device)
        new_v = tp.zeros(
            batch * blocks, size, value.shape[1], value.shape[3], dtype=value.dtype, device=value.device
        )
        old_k, old_v = self.key_pools[layer_idx], self.value_pools[layer_idx]
        if old_k is not None:
            # Row b's pages move from ids b*old ... to b*blocks ...; their order within the row is kept.
            old = int(self.block_tables[layer_idx].shape[1])
            new_k.view(batch, blocks, *new_k.shape[1:])[:, :old] = old_k.view(batch, old, *old_k.shape[1:])
            new_v.view(batch, blocks, *new_v.shape[1:])[:, :old] = old_v.view(batch, old, *old_v.shape[1:])
        self.key_pools[layer_idx], self.value_pools[layer_idx] = new_k, new_v
        self.block_tables[layer_idx] = tp.arange(batch * blocks, dtype=tp.int64, device=key.device).view(
            batch, blocks
        )

    def _gather(self, pool: Tensor, table: Tensor, length: int) -> Tensor:
        """The first `length` positions of every row, read through `table`, as a contiguous `[B, H, S, D]`."""
        b, size, heads = int(table.shape[0]), self.block_size, int(pool.shape[2])
        used = -(-length // size)
        # Flat slot (page * block_size + slot) of every (row, position) [B, 1, S] and the heads [1, H, 1]:
        # indexing the pool as [pages * block_size, H, D] with both broadcasts straight to [B, H, S, D], one
        # copy (gathering whole pages, then moving heads first, would be two).
        offsets = tp.arange(size, dtype=tp.int64, device=table.device)
        flat = (table[:, :used, None] * size + offsets).reshape(b, 1, used * size)[:, :, :length]
        head_ids = tp.arange(heads, dtype=tp.int64, device=table.device).view(1, heads, 1)
        return pool.view(-1, heads, pool.shape[3])[flat, head_ids]

    def attend(self, query: Tensor, layer_idx: int = 0, scale: float | None = None) -> Tensor:
        """Attention of `query` `[B, Hq, T, D]` over the pages of `layer_idx`, without gathering them.

        The `T` queries are the last `T` positions written to the layer (call `update` first), masked
        bottom-right causally: query `i` sees the positions `<= S - T + i`. `Hq` may be a multiple of the
        cached heads (GQA). Computed by the P10 op `tensorplay.paged_attention` over `key_pools[layer_idx]`,
        `value_pools[layer_idx]` and `block_tables[layer_idx]`, which reads the pages where they lie (no
        gathered copy per step); equals `scaled_dot_product_attention` over what `update` returned, with the
        bottom-right causal mask. `scale` defaults to `D^-1/2`. Returns `[B, Hq, T, Dv]`.

        Example::

            >>> import tensorplay as tp
            >>> from tensorplay.nn.cache import PagedCache
            >>> cache = PagedCache(block_size=4)
            >>> k, v = cache.update(tp.randn(1, 2, 6, 8), tp.randn(1, 2, 6, 8))
            >>> q = tp.randn(1, 4, 1, 8)  # the query of position 5, 4 heads over 2 kv heads
            >>> out = cache.attend(q)
            >>> ref = tp.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            >>> tuple(out.shape), bool((out - ref).abs().max() < 1e-5)
            ((1, 4, 1, 8), True)
        """
        if layer_idx >= len(self.key_pools) or self.key_pools[layer_idx] is None:
            raise RuntimeError(
                f"PagedCache.attend: layer {layer_idx} has not been written (call update first)"
            )
        length = self._lengths[layer_idx]
        b = int(self.block_tables[layer_idx].shape[0])
        seq_lens = tp.full((b,), length, dtype=tp.int64, device=query.device)
        return tp.paged_attention(
            query,
            self.key_pools[layer_idx],
            self.value_pools[layer_idx],
            self.block_tables[layer_idx],
            seq_lens,
            scale=scale,
        )

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Positions written to `layer_idx` (0 if it was never written)."""
        return self._lengths[layer_idx] if layer_idx < len(self._lengths) else 0

    def reset(self) -> None:
        """Drop every layer's pools, block table and length, and the fixed batch size."""
        self.key_pools.clear()
        self.value_pools.clear()
        self.block_tables.clear()
        self._lengths.clear()
        self._batch = None

    def __len__(self) -> int:
        return len(self.key_pools)

    def __repr__(self) -> str:
        return f"PagedCache(block_size={self.block_size}, num_blocks={self.num_blocks}, layers={len(self)})"
