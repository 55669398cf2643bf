"""The caching allocator's graph private pools (Note [Graph private pools]), over host memory, no GPU.

tp._C._cuda._TestAllocator is the CachingAllocator the GPU uses with host memory below it. A "capture" here is
begin_allocate_to_pool / end_allocate_to_pool on a (device, stream), exactly what CUDAGraph.capture_begin and
capture_end call: allocations on that stream go to the pool, frees go back to it, and its memory returns to
the driver only once no graph uses the pool and its segments are whole again.
"""

from __future__ import annotations

import pytest

import tensorplay_p10 as tp

Allocator = tp._C._cuda._TestAllocator
MiB = 1 << 20
CAPTURE = 5  # the capturing stream's handle
POOL = (0, 41)


def test_allocations_on_the_capturing_stream_come_from_the_pool():
    a = Allocator(64 * MiB)
    outside = a.malloc(1000)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)
    inside = a.malloc(1000, 0, CAPTURE)
    other = a.malloc(1000, 0, 9)  # another stream during the capture: the general pool
    st = a.pool_stats(POOL)
    assert st == {"reserved_bytes": 2 * MiB, "allocated_bytes": 1024, "segments": 1, "use_count": 1}
    a.end_allocate_to_pool(POOL)
    assert a.stats()["reserved_bytes.all.current"] == 3 * 2 * MiB  # the pool's segment counts in the total
    for p in (outside, inside, other):
        a.free(p)


def test_freed_blocks_stay_in_the_pool_until_it_is_released():
    a = Allocator(64 * MiB)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)
    p = a.malloc(4096, 0, CAPTURE)
    a.end_allocate_to_pool(POOL)
    a.free(p)
    q = a.malloc(4096, 0, CAPTURE)  # after the capture: the general pool, never the graph's memory
    assert q != p
    assert a.pool_stats(POOL)["segments"] == 1
    a.empty_cache()  # the pool is in use by its graph: empty_cache leaves it alone
    assert a.pool_stats(POOL)["reserved_bytes"] == 2 * MiB
    a.release_pool(POOL)  # the graph is reset: its whole free segments go back
    assert a.pool_stats(POOL)["segments"] == 0
    a.free(q)
    a.empty_cache()
    assert a.raw_segments == 0


def test_a_block_alive_after_reset_frees_its_segment_when_freed():
    a = Allocator(64 * MiB)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)
    p = a.malloc(4096, 0, CAPTURE)  # the graph's static output, still held by the user
    a.end_allocate_to_pool(POOL)
    a.release_pool(POOL)
    assert a.pool_stats(POOL)["segments"] == 1  # still in use
    a.free(p)
    assert a.pool_stats(POOL)["segments"] == 0
    assert a.raw_segments == 0


def test_two_captures_share_a_pool_and_reuse_its_freed_blocks():
    a = Allocator(64 * MiB)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)  # graph 1
    tmp = a.malloc(100_000, 0, CAPTURE)
    a.free(tmp)  # a temporary of graph 1, freed during its capture
    a.end_allocate_to_pool(POOL)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)  # graph 2, same pool
    again = a.malloc(100_000, 0, CAPTURE)
    a.end_allocate_to_pool(POOL)
    assert again == tmp
    assert a.pool_stats(POOL)["use_count"] == 2 and a.pool_stats(POOL)["segments"] == 1
    a.release_pool(POOL)
    assert a.pool_stats(POOL)["segments"] == 1  # graph 2 still uses it
    a.free(again)
    a.release_pool(POOL)
    assert a.pool_stats(POOL)["segments"] == 0 and a.raw_segments == 0


def test_empty_cache_during_a_capture_raises():
    a = Allocator(64 * MiB)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)
    with pytest.raises(RuntimeError, match="empty_cache.*being captured"):
        a.empty_cache()
    a.end_allocate_to_pool(POOL)
    a.empty_cache()


def test_record_stream_frees_wait_until_the_capture_ends():
    a = Allocator(64 * MiB)
    p = a.malloc(4096, 0, 0)
    a.record_stream(p, 7)
    a.begin_allocate_to_pool(POOL, 0, CAPTURE)
    a.free(p)  # needs an event on stream 7: not recorded during a capture
    a.end_allocate_to_pool(POOL)
    a.complete_events()
    q = a.malloc(4096, 0, 0)
    assert q == p  # the event was recorded at the end of the capture, completed, and the block reused
