// memory.cpp — the CUDA allocators behind Storage: device memory through the caching allocator, and pinned
// host memory. Also canonical device names (`cuda` -> `cuda:<current>`) for core/tensor.cpp.
#include "cuda/memory.h"

#include <mutex>
#include <unordered_set>

#include "core/storage.h"

namespace tp::p10 {

// Declared in core/device.h: a tensor made for `cuda` lives on the current device, and says so (cuda:0).
Device resolve_cuda_device(Device d) { return cuda::resolve(d); }

namespace cuda {

namespace {
constexpr unsigned kEventDisableTiming = 0x2;

// Segments straight from the driver (Note [Caching allocator] says why they are cached above this).
struct DriverMemory final : RawMemory {
  void *alloc(size_t bytes, int device) override {
    DeviceGuard g(device);
    CUdeviceptr p = 0;
    // A new segment for a graph's private pool is allocated during capture, where GLOBAL capture mode forbids
    // cuMemAlloc: relax the mode for this call, as PyTorch does (the graph never frees it before a replay).
    int mode = kCaptureRelaxed;
    driver().cuThreadExchangeStreamCaptureMode(&mode);
    CUresult r = driver().cuMemAlloc(&p, bytes);
    driver().cuThreadExchangeStreamCaptureMode(&mode);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
    check(r, "cuMemAlloc");
    return reinterpret_cast<void *>(p);
  }
  void free(void *p, int device) override {
    DeviceGuard g(device);
    driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p));
  }
  void mem_info(int device, size_t *free_bytes, size_t *total_bytes) override {
    cuda::mem_get_info(device, free_bytes, total_bytes);
  }
  void *record_event(int device, uintptr_t stream) override {
    DeviceGuard g(device);
    CUevent e = nullptr;
    TP_CU(cuEventCreate, &e, kEventDisableTiming);
    TP_CU(cuEventRecord, e, reinterpret_cast<CUstream>(stream));
    return e;
  }
  bool event_done(void *event) override {
    return driver().cuEventQuery(static_cast<CUevent>(event)) != CUDA_ERROR_NOT_READY;
  }
  void destroy_event(void *event) override { driver().cuEventDestroy(static_cast<CUevent>(event)); }
};

// The Allocator interface Storage uses; each block remembers its device and stream.
struct CudaAllocator final : Allocator {
  void *allocate(size_t nbytes) override { return allocate_on(nbytes, Device{DeviceType::CUDA, -1}); }
  void *allocate_on(size_t nbytes, Device d) override {
    int index = resolve_index(d.index, "allocate");
    Stream s = current_stream(index);
    return device_allocator().malloc(nbytes, index, reinterpret_cast<uintptr_t>(s.handle));
  }
  void deallocate(void *p, size_t) override {
    try {
      device_allocator().free(p);
    } catch (...) {  // runs from Storage's destructor: never throw out of it
    }
  }
};

struct Pinned {
  std::mutex mu;
  std::unordered_set<const void *> blocks;
};
Pinned &pinned() {
  static Pinned *p = new Pinned();
  return *p;
}

// Installed at load time: a cuda:N Storage is allocated here (and fails with "CUDA is not available" when the
// driver is missing, at the first cuda tensor, not at import).
struct Install {
  Install() {
    static CudaAllocator a;
    set_allocator(DeviceType::CUDA, &a);
  }
} g_install;
}  // namespace

CachingAllocator &device_allocator() {
  static DriverMemory *raw = new DriverMemory();
  static CachingAllocator *a = new CachingAllocator(raw);  // never destroyed: tensors may outlive statics
  return *a;
}

void mem_get_info(int device, size_t *free_bytes, size_t *total_bytes) {
  DeviceGuard g(resolve_index(device, "mem_get_info"));
  TP_CU(cuMemGetInfo, free_bytes, total_bytes);
}

void *pinned_alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  activate(resolve_index(-1, "pin_memory"));
  void *p = nullptr;
  TP_CU(cuMemHostAlloc, &p, bytes, 0);
  std::lock_guard<std::mutex> lock(pinned().mu);
  pinned().blocks.insert(p);
  return p;
}

void pinned_free(void *p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lock(pinned().mu);
    pinned().blocks.erase(p);
  }
  driver().cuMemFreeHost(p);
}

bool is_pinned(const void *p) {
  std::lock_guard<std::mutex> lock(pinned().mu);
  return pinned().blocks.count(p) != 0;
}

}  // namespace cuda
}  // namespace tp::p10
