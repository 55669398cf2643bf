// runtime.h — devices, contexts, the current device and the current stream of each thread.
//
// Where it sits: above driver.h, below the allocator and the kernels. It follows the CUDA runtime's (and
// PyTorch's) model: each device has one primary context, shared by every thread; each thread has a current
// device (0 until set_device) and, per device, a current stream (the device's default stream until a
// `tp.cuda.stream(s)` block changes it). Ops run on the current stream of their tensors' device.
#pragma once
#include <string>

#include "core/device.h"
#include "cuda/driver.h"

namespace tp::p10::cuda {

int device_count();  // 0 when CUDA is unavailable; never throws
int current_device();
void set_device(int index);
// A tensor's device index: -1 ("cuda" with no index) means the current device. Throws for a bad ordinal.
int resolve_index(int index, const char *what = "cuda");
Device resolve(Device d);  // cuda -> cuda:<current>; other devices unchanged

// Make `index`'s primary context current on this thread (cheap when it already is).
void activate(int index);

// RAII: make `index` the current device for a scope (an op on cuda:1 while cuda:0 is current).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

 private:
  int saved_;
};

struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0, multi_processor_count = 0, max_threads_per_block = 0, warp_size = 0;
  int max_threads_per_multi_processor = 0, regs_per_multiprocessor = 0, l2_cache_size = 0;
  int shared_memory_per_block = 0, shared_memory_per_multiprocessor = 0, is_integrated = 0;
  int clock_rate_khz = 0, memory_clock_rate_khz = 0, memory_bus_width = 0, pci_bus_id = 0, pci_device_id = 0;
  size_t total_memory = 0;
};
const DeviceProperties &properties(int index);  // read once per device

// A stream of one device. A null handle is the device's default (legacy) stream.
struct Stream {
  int device = 0;
  CUstream handle = nullptr;
  bool operator==(const Stream &o) const { return device == o.device && handle == o.handle; }
};
Stream current_stream(int index);
void set_current_stream(Stream s);  // for this thread, on s.device
void synchronize(int index);        // wait for all work on the device

}  // namespace tp::p10::cuda
