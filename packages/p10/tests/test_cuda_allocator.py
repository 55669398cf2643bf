"""The CUDA caching allocator's logic (Note [Caching allocator]), driven over host memory without a GPU.

tp._C._cuda._TestAllocator is the same CachingAllocator class the GPU uses, with host memory of a fixed
capacity behind it and events that complete only when the test says so. Expected sizes are worked out here
from the rules (512-byte rounding, 2 MiB small segments, 20 MiB large segments under 10 MiB, 2 MiB rounding
above), not read back from the allocator.
"""

import pytest

import tensorplay_p10 as tp

KiB, MiB = 1 << 10, 1 << 20
Allocator = tp._C._cuda._TestAllocator


def stat(a, key: str) -> int:
    return a.stats()[key]


def test_sizes_round_to_512_bytes_and_small_requests_share_a_2mib_segment():
    a = Allocator(64 * MiB)
    p = a.malloc(1)
    q = a.malloc(513)
    assert a.block_size(p) == 512 and a.block_size(q) == 1024
    assert stat(a, "allocated_bytes.all.current") == 1536
    assert stat(a, "requested_bytes.all.current") == 514
    assert stat(a, "reserved_bytes.all.current") == 2 * MiB  # one small segment, split
    assert a.raw_segments == 1
    assert q == p + 512  # the split tail is handed out next: blocks are carved in order


def test_large_segment_sizes():
    a = Allocator(256 * MiB)
    a.malloc(5 * MiB)  # under 10 MiB: a 20 MiB segment
    assert stat(a, "reserved_bytes.all.current") == 20 * MiB
    a.malloc(12 * MiB + 1)  # fits in the segment's free 15 MiB tail: split again, no new memory
    assert stat(a, "reserved_bytes.all.current") == 20 * MiB and a.raw_segments == 1
    a.malloc(16 * MiB + 1)  # fits nowhere; 10 MiB or more: a segment of the request rounded up to 2 MiB
    assert stat(a, "reserved_bytes.all.current") == 20 * MiB + 18 * MiB
    assert a.raw_segments == 2


def test_freed_block_is_reused_without_new_memory():
    a = Allocator(64 * MiB)
    p = a.malloc(4 * KiB)
    a.free(p)
    assert stat(a, "allocated_bytes.all.current") == 0
    assert stat(a, "reserved_bytes.all.current") == 2 * MiB  # cached, not returned
    assert a.malloc(4 * KiB) == p
    assert a.raw_segments == 1


def test_best_fit_picks_the_smallest_block_that_fits():
    a = Allocator(64 * MiB)
    blocks = [a.malloc(n) for n in (8 * KiB, 1 * KiB, 4 * KiB, 1 * KiB)]
    a.free(blocks[0])  # an 8 KiB hole
    a.free(blocks[2])  # a 4 KiB hole
    assert a.malloc(3 * KiB) == blocks[2]


def test_neighbours_coalesce_and_empty_cache_releases_whole_segments():
    a = Allocator(64 * MiB)
    p, q, r = a.malloc(100 * KiB), a.malloc(200 * KiB), a.malloc(300 * KiB)
    a.free(q)
    a.free(p)  # merges with q's free block
    assert a.malloc(300 * KiB) == p  # 100 + 200 KiB, merged, fits a 300 KiB request exactly
    a.empty_cache()
    assert stat(a, "reserved_bytes.all.current") == 2 * MiB  # the segment is still in use
    a.free(p)
    a.free(r)  # everything free again: one whole block
    a.empty_cache()
    assert stat(a, "reserved_bytes.all.current") == 0 and a.raw_segments == 0 and a.raw_used == 0


def test_blocks_are_reused_only_on_their_own_stream():
    a = Allocator(64 * MiB)
    p = a.malloc(4 * KiB, stream=1)
    a.free(p)
    q = a.malloc(4 * KiB, stream=2)
    assert q != p and a.raw_segments == 2  # stream 2 got a segment of its own
    assert a.malloc(4 * KiB, stream=1) == p


def test_record_stream_delays_reuse_until_the_other_stream_is_done():
    a = Allocator(64 * MiB)
    p = a.malloc(4 * KiB, stream=1)
    a.record_stream(p, 2)
    a.free(p)
    assert stat(a, "allocated_bytes.all.current") == 0
    assert stat(a, "active.all.current") == 1  # still in use by stream 2's queued work
    q = a.malloc(4 * KiB, stream=1)
    assert q != p
    a.complete_events()  # stream 2 caught up
    a.free(q)
    assert a.malloc(4 * KiB, stream=1) in (p, q)
    assert stat(a, "active.all.current") == 1


def test_record_stream_on_unknown_memory_raises():
    a = Allocator(MiB)
    with pytest.raises(ValueError, match="record_stream: the tensor's memory was not allocated"):
        a.record_stream(12345, 1)


def test_out_of_memory_frees_the_cache_and_retries():
    a = Allocator(40 * MiB)
    p = a.malloc(5 * MiB)  # a 20 MiB segment
    a.free(p)  # cached
    q = a.malloc(30 * MiB)  # 30 MiB + 20 MiB cached > 40 MiB: release the cache, then it fits
    assert q != 0
    s = a.stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0
    assert s["reserved_bytes.all.current"] == 30 * MiB


def test_out_of_memory_error_reports_the_figures():
    a = Allocator(40 * MiB)
    a.malloc(12 * MiB)
    with pytest.raises(tp.cuda.OutOfMemoryError) as e:
        a.malloc(30 * MiB)
    msg = str(e.value)
    assert "CUDA out of memory. Tried to allocate 30.00 MiB" in msg
    assert "total capacity of 40.00 MiB of which 28.00 MiB is free" in msg
    assert f"allocated={12 * MiB} bytes, reserved={12 * MiB} bytes, free={28 * MiB} bytes" in msg
    assert isinstance(e.value, RuntimeError)
    assert a.stats()["num_ooms"] == 1


def test_peak_statistics_and_reset():
    a = Allocator(64 * MiB)
    p = a.malloc(MiB)
    q = a.malloc(MiB)
    a.free(p)
    a.free(q)
    s = a.stats()
    assert s["allocated_bytes.all.peak"] == 2 * MiB and s["allocated_bytes.all.current"] == 0
    assert s["allocation.all.allocated"] == 2 and s["allocation.all.freed"] == 2
    a.reset_peak_stats()
    assert a.stats()["allocated_bytes.all.peak"] == 0


def test_devices_have_separate_pools_and_statistics():
    a = Allocator(64 * MiB)
    p = a.malloc(4 * KiB, device=0)
    a.free(p)
    q = a.malloc(4 * KiB, device=1)
    assert q != p
    assert a.stats(1)["allocated_bytes.all.current"] == 4 * KiB
    assert a.stats(0)["allocated_bytes.all.current"] == 0


def test_zero_bytes_is_a_null_pointer():
    a = Allocator(MiB)
    assert a.malloc(0) == 0
    a.free(0)
    assert a.raw_segments == 0
