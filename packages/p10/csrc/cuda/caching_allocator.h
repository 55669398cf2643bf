// caching_allocator.h — device memory for tensors: a caching allocator in the style of PyTorch's.
//
// Where it sits: Storage::allocate (core/storage.cpp) asks the CUDA Allocator (cuda/memory.cpp) for bytes;
// that one forwards here. cuMemAlloc and cuMemFree are slow (they synchronise the device), so freed blocks are
// kept and handed out again. The logic is written against a RawMemory interface, not the driver, so the unit
// tests drive it with host memory on machines without a GPU (tp.cuda._TestAllocator).
//
// Note [Caching allocator]
//   - Sizes are rounded up to 512 bytes. Requests up to 1 MiB come from the small pool, carved out of 2 MiB
//     segments; larger ones from the large pool (segments of 20 MiB for requests under 10 MiB, otherwise the
//     request rounded up to 2 MiB).
//   - A free block is found best-fit among blocks of the same stream: work queued on one stream runs in order,
//     so a block freed on stream S may be reused at once by later work on S. Reuse on another stream needs
//     `record_stream` (below).
//   - A block larger than the request is split; the rest stays free (small pool: if >= 512 bytes; large pool:
//     if > 1 MiB). A freed block merges with free neighbours of its segment, so the segment can be whole again.
//   - When the device is out of memory, every cached segment that is entirely free is released and the request
//     retried once; if it still fails, OutOfMemoryError reports the request and the device's figures.
//   - record_stream(p, S): the block was used on stream S too. Freeing it then records an event on S, and the
//     block returns to its pool only once that event has completed (checked at the next malloc).
//
// Note [Graph private pools]
//   A CUDA graph replays the addresses it was captured with, so memory it used must not be handed to anyone
//   else while the graph lives. During a capture (begin_allocate_to_pool .. end_allocate_to_pool) every
//   allocation on the capturing (device, stream) comes from the graph's private pool: blocks and segments of
//   their own, never mixed with the general pools. Blocks freed later (during or after the capture) go back to
//   that pool, where only captures into the same pool (graphs sharing it: tp.cuda.graph_pool_handle()) can
//   reuse them. release_pool() drops one graph's use; at zero uses the pool's whole free segments go back to
//   the driver, and the rest as their last blocks are freed. While a capture is underway, events are neither
//   queried nor recorded (a global-mode capture forbids it): frees that need events wait until the last
//   capture ends, and empty_cache raises.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/errors.h"

namespace tp::p10::cuda {

// Raised when a request cannot be met even after releasing the cache; Python sees tp.cuda.OutOfMemoryError.
struct OutOfMemoryError : Error {
  explicit OutOfMemoryError(const std::string &msg) : Error(ErrorKind::Runtime, msg) {}
};

// Where segments come from: the driver (memory.cpp) or host memory (the tests).
struct RawMemory {
  virtual ~RawMemory() = default;
  virtual void *alloc(size_t bytes, int device) = 0;  // nullptr when out of memory
  virtual void free(void *p, int device) = 0;
  virtual void mem_info(int device, size_t *free_bytes, size_t *total_bytes) = 0;
  // Events for record_stream: recorded on `stream`; done() polls without blocking.
  virtual void *record_event(int device, uintptr_t stream) = 0;
  virtual bool event_done(void *event) = 0;
  virtual void destroy_event(void *event) = 0;
};

// PyTorch's counters (tp.cuda.memory_stats() names them "allocated_bytes.all.current" and so on).
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(int64_t n) {
    current += n;
    if (n > 0) allocated += n; else freed -= n;
    if (current > peak) peak = current;
  }
};
struct MemoryStats {
  Stat allocated_bytes, reserved_bytes, active_bytes, requested_bytes, allocation, segment, active;
  int64_t num_alloc_retries = 0, num_ooms = 0;
};

// A private pool's name: (graph id, 0) for a graph's own pool, (0, handle) for tp.cuda.graph_pool_handle().
using PoolId = std::pair<uint64_t, uint64_t>;
struct PoolStats {
  int64_t reserved_bytes = 0, allocated_bytes = 0, segments = 0, use_count = 0;
};

class CachingAllocator {
 public:
  static constexpr size_t kMinBlock = 512, kSmallSize = 1 << 20, kSmallBuffer = 2 << 20;
  static constexpr size_t kMinLargeAlloc = 10 << 20, kLargeBuffer = 20 << 20, kRoundLarge = 2 << 20;

  explicit CachingAllocator(RawMemory *raw) : raw_(raw) {}
  ~CachingAllocator();
  void *malloc(size_t bytes, int device, uintptr_t stream);
  void free(void *p);
  void record_stream(void *p, uintptr_t stream);
  void empty_cache();  // release every cached segment that is entirely free
  MemoryStats stats(int device);
  void reset_peak_stats(int device);
  void reset_accumulated_stats(int device);
  size_t block_size(void *p);  // the (rounded) size of an allocated block; 0 if p is not one

  // Note [Graph private pools].
  void begin_allocate_to_pool(int device, PoolId pool, uintptr_t stream);  // one more use of `pool`
  void end_allocate_to_pool(int device, PoolId pool);
  void release_pool(int device, PoolId pool);  // one use less; at none, its free memory goes back
  PoolStats pool_stats(int device, PoolId pool);
  bool capture_underway();

 private:
  struct PrivatePool;
  struct Block {
    int device;
    uintptr_t stream;
    size_t size;
    char *ptr;
    bool small;
    bool allocated = false;
    size_t requested = 0;
    Block *prev = nullptr, *next = nullptr;  // neighbours inside one segment
    std::vector<uintptr_t> stream_uses;      // record_stream
    int pending_events = 0;
    PrivatePool *pool = nullptr;             // Note [Graph private pools]; nullptr: the general pools
  };
  struct BlockLess {
    bool operator()(const Block *a, const Block *b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  using Pool = std::set<Block *, BlockLess>;
  struct DeviceState {
    Pool small, large;
    MemoryStats stats;
  };
  struct PrivatePool {
    int device;
    PoolId id;
    Pool small, large;
    int use_count = 0;
    int64_t reserved = 0, allocated = 0, segments = 0;
  };
  struct Route {  // allocations on (device, stream) go to pool
    int device;
    uintptr_t stream;
    PoolId id;
    PrivatePool *pool;
  };

  DeviceState &dev(int device);
  Block *find_free(Pool &pool, size_t size, uintptr_t stream);
  void free_block(Block *b);           // back into its pool, merged with free neighbours
  void release_cached(int device);     // free whole free segments of one device (device < 0: all)
  Pool &pool_of(Block *b);
  void release_private(int device, PoolId id, PrivatePool *pp);  // free its whole free segments; drop it if empty
  void record_free_events(Block *b);
  void process_events();
  [[noreturn]] void raise_oom(int device, size_t bytes);

  RawMemory *raw_;
  std::mutex mu_;
  std::vector<DeviceState> devices_;
  std::unordered_map<void *, Block *> active_;
  std::vector<std::pair<void *, Block *>> pending_;  // (event, block) waiting before reuse
  std::map<std::pair<int, PoolId>, PrivatePool *> private_pools_;  // (device, id)
  std::vector<Route> routes_;                                      // captures underway
  std::vector<Block *> deferred_;  // freed during a capture with record_stream uses: events after it
};

}  // namespace tp::p10::cuda
