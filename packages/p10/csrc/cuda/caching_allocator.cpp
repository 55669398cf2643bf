// caching_allocator.cpp — Note [Caching allocator] in caching_allocator.h.
#include "cuda/caching_allocator.h"

#include <cstddef>
#include <cstdio>

namespace tp::p10::cuda {

namespace {
size_t round_size(size_t n) { return n < CachingAllocator::kMinBlock ? CachingAllocator::kMinBlock : (n + 511) & ~size_t(511); }

size_t segment_size(size_t n) {
  if (n <= CachingAllocator::kSmallSize) return CachingAllocator::kSmallBuffer;
  if (n < CachingAllocator::kMinLargeAlloc) return CachingAllocator::kLargeBuffer;
  return (n + CachingAllocator::kRoundLarge - 1) / CachingAllocator::kRoundLarge * CachingAllocator::kRoundLarge;
}

std::string gib(size_t bytes) {
  char buf[64];
  if (bytes >= (size_t(1) << 30)) std::snprintf(buf, sizeof(buf), "%.2f GiB", double(bytes) / double(1 << 30));
  else std::snprintf(buf, sizeof(buf), "%.2f MiB", double(bytes) / double(1 << 20));
  return buf;
}
}  // namespace

CachingAllocator::~CachingAllocator() = default;  // process-long; segments go back with the context

CachingAllocator::DeviceState &CachingAllocator::dev(int device) {
  if (devices_.size() <= size_t(device)) devices_.resize(size_t(device) + 1);
  return devices_[size_t(device)];
}

CachingAllocator::Block *CachingAllocator::find_free(Pool &pool, size_t size, uintptr_t stream) {
  Block key{0, stream, size, nullptr, false};
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block *b = *it;
  pool.erase(it);
  return b;
}

void *CachingAllocator::malloc(size_t bytes, int device, uintptr_t stream) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  if (routes_.empty()) process_events();  // Note [Graph private pools]: no event queries during a capture
  const size_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  DeviceState &d = dev(device);
  PrivatePool *pp = nullptr;
  for (const Route &r : routes_)
    if (r.device == device && r.stream == stream) { pp = r.pool; break; }
  Pool &pool = pp ? (small ? pp->small : pp->large) : (small ? d.small : d.large);
  Block *b = find_free(pool, size, stream);
  if (!b) {
    const size_t seg = segment_size(size);
    void *p = raw_->alloc(seg, device);
    if (!p && routes_.empty()) {  // Note [Caching allocator]: release the cache and try once more
      release_cached(device);
      d.stats.num_alloc_retries += 1;
      p = raw_->alloc(seg, device);
    }
    if (!p) {
      d.stats.num_ooms += 1;
      raise_oom(device, bytes);
    }
    b = new Block{device, stream, seg, static_cast<char *>(p), small};
    b->pool = pp;
    d.stats.reserved_bytes.add(int64_t(seg));
    d.stats.segment.add(1);
    if (pp) pp->reserved += int64_t(seg), pp->segments += 1;
  }
  const size_t rest = b->size - size;
  if ((small && rest >= kMinBlock) || (!small && rest > kSmallSize)) {  // split: the tail stays free
    Block *tail = new Block{device, stream, rest, b->ptr + size, small};
    tail->pool = b->pool;
    tail->prev = b;
    tail->next = b->next;
    if (b->next) b->next->prev = tail;
    b->next = tail;
    b->size = size;
    pool.insert(tail);
  }
  b->allocated = true;
  b->requested = bytes;
  active_[b->ptr] = b;
  if (b->pool) b->pool->allocated += int64_t(b->size);
  d.stats.allocated_bytes.add(int64_t(b->size));
  d.stats.active_bytes.add(int64_t(b->size));
  d.stats.requested_bytes.add(int64_t(bytes));
  d.stats.allocation.add(1);
  d.stats.active.add(1);
  return b->ptr;
}

void CachingAllocator::free(void *p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = active_.find(p);
  if (it == active_.end()) return;  // not ours (cannot happen through Storage); ignore rather than crash
  Block *b = it->second;
  active_.erase(it);
  DeviceState &d = dev(b->device);
  d.stats.allocated_bytes.add(-int64_t(b->size));
  d.stats.requested_bytes.add(-int64_t(b->requested));
  d.stats.allocation.add(-1);
  if (b->pool) b->pool->allocated -= int64_t(b->size);
  if (!b->stream_uses.empty()) {  // used on other streams: reuse waits for their work (record_stream)
    if (!routes_.empty()) deferred_.push_back(b);  // Note [Graph private pools]: no events during a capture
    else record_free_events(b);
    return;
  }
  free_block(b);
}

void CachingAllocator::record_free_events(Block *b) {
  for (uintptr_t s : b->stream_uses) {
    pending_.emplace_back(raw_->record_event(b->device, s), b);
    b->pending_events += 1;
  }
  b->stream_uses.clear();
}

CachingAllocator::Pool &CachingAllocator::pool_of(Block *b) {
  if (b->pool) return b->small ? b->pool->small : b->pool->large;
  DeviceState &d = dev(b->device);
  return b->small ? d.small : d.large;
}

void CachingAllocator::free_block(Block *b) {
  DeviceState &d = dev(b->device);
  Pool &pool = pool_of(b);
  d.stats.active_bytes.add(-int64_t(b->size));
  d.stats.active.add(-1);
  b->allocated = false;
  b->requested = 0;
  // Merge with free neighbours (a neighbour waiting on events is still "allocated").
  if (b->prev && !b->prev->allocated) {
    Block *p = b->prev;
    pool.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (b->next && !b->next->allocated) {
    Block *n = b->next;
    pool.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  pool.insert(b);
  // The last blocks of a released graph pool go back as soon as their segment is whole again.
  if (b->pool && b->pool->use_count == 0) release_private(b->device, b->pool->id, b->pool);
}

void CachingAllocator::process_events() {
  for (size_t i = 0; i < pending_.size();) {
    auto [event, b] = pending_[i];
    if (!raw_->event_done(event)) { ++i; continue; }
    raw_->destroy_event(event);
    pending_[i] = pending_.back();
    pending_.pop_back();
    if (--b->pending_events == 0) free_block(b);
  }
}

void CachingAllocator::release_cached(int device) {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (device >= 0 && int(i) != device) continue;
    DeviceState &d = devices_[i];
    for (Pool *pool : {&d.small, &d.large}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block *b = *it;
        if (b->prev || b->next) { ++it; continue; }  // part of a segment still in use
        raw_->free(b->ptr, b->device);
        d.stats.reserved_bytes.add(-int64_t(b->size));
        d.stats.segment.add(-1);
        it = pool->erase(it);
        delete b;
      }
    }
  }
  std::vector<PrivatePool *> unused;  // pools of graphs already reset
  for (auto &[key, pp] : private_pools_)
    if ((device < 0 || key.first == device) && pp->use_count == 0) unused.push_back(pp);
  for (PrivatePool *pp : unused) release_private(pp->device, pp->id, pp);
}

void CachingAllocator::release_private(int device, PoolId id, PrivatePool *pp) {
  DeviceState &d = dev(device);
  for (Pool *pool : {&pp->small, &pp->large}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block *b = *it;
      if (b->prev || b->next) { ++it; continue; }
      raw_->free(b->ptr, b->device);
      d.stats.reserved_bytes.add(-int64_t(b->size));
      d.stats.segment.add(-1);
      pp->reserved -= int64_t(b->size);
      pp->segments -= 1;
      it = pool->erase(it);
      delete b;
    }
  }
  if (pp->segments == 0 && pp->use_count == 0) {
    private_pools_.erase({device, id});
    delete pp;
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  TP_CHECK(routes_.empty(), Runtime, "tp.cuda.empty_cache() is not allowed while a CUDA graph is being captured "
           "(Note [Graph private pools]: it would free memory and query events during the capture)");
  process_events();
  release_cached(-1);
}

void CachingAllocator::begin_allocate_to_pool(int device, PoolId id, uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  PrivatePool *&pp = private_pools_[{device, id}];
  if (!pp) {
    pp = new PrivatePool();
    pp->device = device;
    pp->id = id;
  }
  pp->use_count += 1;
  routes_.push_back(Route{device, stream, id, pp});
}

void CachingAllocator::end_allocate_to_pool(int device, PoolId id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (routes_[i].device != device || routes_[i].id != id) continue;
    routes_.erase(routes_.begin() + std::ptrdiff_t(i));
    break;
  }
  if (!routes_.empty()) return;
  for (Block *b : deferred_) record_free_events(b);
  deferred_.clear();
}

void CachingAllocator::release_pool(int device, PoolId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = private_pools_.find({device, id});
  if (it == private_pools_.end()) return;
  PrivatePool *pp = it->second;
  if (pp->use_count > 0) pp->use_count -= 1;
  if (pp->use_count == 0) release_private(device, id, pp);
}

PoolStats CachingAllocator::pool_stats(int device, PoolId id) {
  std::lock_guard<std::mutex> lock(mu_);
  PoolStats st;
  auto it = private_pools_.find({device, id});
  if (it == private_pools_.end()) return st;
  st.reserved_bytes = it->second->reserved;
  st.allocated_bytes = it->second->allocated;
  st.segments = it->second->segments;
  st.use_count = it->second->use_count;
  return st;
}

bool CachingAllocator::capture_underway() {
  std::lock_guard<std::mutex> lock(mu_);
  return !routes_.empty();
}

void CachingAllocator::record_stream(void *p, uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = active_.find(p);
  TP_CHECK(it != active_.end(), Value, "record_stream: the tensor's memory was not allocated by the CUDA caching "
           "allocator");
  Block *b = it->second;
  if (stream == b->stream) return;  // its own stream orders the work already
  for (uintptr_t s : b->stream_uses) if (s == stream) return;
  b->stream_uses.push_back(stream);
}

[[noreturn]] void CachingAllocator::raise_oom(int device, size_t bytes) {
  size_t free_b = 0, total_b = 0;
  raw_->mem_info(device, &free_b, &total_b);
  const MemoryStats &s = dev(device).stats;
  const size_t allocated = size_t(s.allocated_bytes.current), reserved = size_t(s.reserved_bytes.current);
  throw OutOfMemoryError(str_cat(
      "CUDA out of memory. Tried to allocate ", gib(bytes), ". GPU ", device, " has a total capacity of ",
      gib(total_b), " of which ", gib(free_b), " is free. Of the allocated memory ", gib(allocated),
      " is allocated by TensorPlay, and ", gib(reserved - allocated),
      " is reserved by TensorPlay but unallocated (allocated=", allocated, " bytes, reserved=", reserved,
      " bytes, free=", free_b, " bytes)."));
}

MemoryStats CachingAllocator::stats(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  return dev(device).stats;
}

void CachingAllocator::reset_peak_stats(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats &s = dev(device).stats;
  for (Stat *st : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes, &s.requested_bytes, &s.allocation,
                   &s.segment, &s.active})
    st->peak = st->current;
}

void CachingAllocator::reset_accumulated_stats(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats &s = dev(device).stats;
  for (Stat *st : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes, &s.requested_bytes, &s.allocation,
                   &s.segment, &s.active})
    st->allocated = st->freed = 0;
  s.num_alloc_retries = s.num_ooms = 0;
}

size_t CachingAllocator::block_size(void *p) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = active_.find(p);
  return it == active_.end() ? 0 : it->second->size;
}

}  // namespace tp::p10::cuda
