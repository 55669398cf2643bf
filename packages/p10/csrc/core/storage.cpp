// storage.cpp — Storage lifetime and the CPU allocator.
#include "core/storage.h"

#include <cstdint>
#include <cstdlib>
#include <new>

#include "core/errors.h"

namespace tp::p10 {

// 64-byte alignment: a cache line, and enough for any vector load the kernels do.
// Note [Allocation failure]
//   A request the system cannot satisfy raises RuntimeError with PyTorch's wording, before any byte is written:
//   nothing here (or in the factories) touches the pages of a fresh buffer except the kernel that fills it, so a
//   huge request fails in aligned_alloc instead of being killed half-way through a memset. Sizes reach us already
//   checked (Note [Storage size] in tensor.h: at most INT64_MAX), so the rounding below cannot wrap; the guard is
//   for callers of the Allocator interface that skip Storage.
struct CPUAllocator final : Allocator {
  void *allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    void *p = nbytes <= SIZE_MAX - 63 ? std::aligned_alloc(64, (nbytes + 63) & ~size_t(63)) : nullptr;
    TP_CHECK(p != nullptr, Runtime, "DefaultCPUAllocator: not enough memory: you tried to allocate ", nbytes,
             " bytes.");
    return p;
  }
  void deallocate(void *p, size_t) override { std::free(p); }
};

static CPUAllocator g_cpu_allocator;
static Allocator *g_allocators[4] = {&g_cpu_allocator, nullptr, nullptr, nullptr};

Allocator *allocator_for(DeviceType t) { return g_allocators[int(t)]; }
void set_allocator(DeviceType t, Allocator *a) { g_allocators[int(t)] = a; }

Storage::~Storage() {
  if (external.fn) external.fn(external.ctx);
  else if (allocator && data) allocator->deallocate(data, nbytes);
}

Ref<Storage> Storage::allocate(size_t nbytes, Device device) {
  auto s = Ref<Storage>::make();
  s->nbytes = nbytes;
  s->device = device;
  if (device.is_meta()) return s;
  Allocator *a = allocator_for(device.type);
  TP_CHECK(a != nullptr, Runtime, "no allocator for device '", device_str(device),
           "': its backend is not available in this build");
  s->allocator = a;
  s->data = a->allocate_on(nbytes, device);
  return s;
}

Ref<Storage> Storage::wrap_external(void *data, size_t nbytes, Device device, ExternalDeleter d) {
  auto s = Ref<Storage>::make();
  s->data = data;
  s->nbytes = nbytes;
  s->device = device;
  s->external = d;
  return s;
}

}  // namespace tp::p10
