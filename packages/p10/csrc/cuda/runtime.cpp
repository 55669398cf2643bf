// runtime.cpp — primary contexts, the thread's current device and streams, device properties.
#include "cuda/runtime.h"

#include <memory>
#include <mutex>
#include <vector>

#include "core/errors.h"

namespace tp::p10::cuda {

namespace {
struct Devices {
  std::once_flag once;
  int count = 0;
  std::vector<CUcontext> contexts;  // primary contexts, retained on first use (never released: process-long)
  std::vector<std::unique_ptr<DeviceProperties>> props;
  std::mutex mu;
};
Devices &devices() {
  static Devices *d = new Devices();
  std::call_once(d->once, [] {
    Devices &s = *d;
    if (!cuda_available()) return;
    driver().cuDeviceGetCount(&s.count);
    s.contexts.assign(size_t(s.count), nullptr);
    s.props.resize(size_t(s.count));
  });
  return *d;
}

thread_local int t_current = 0;   // the thread's current device
thread_local int t_active = -1;   // the device whose context is current on this thread
thread_local std::vector<CUstream> t_streams;  // per device: the thread's current stream
}  // namespace

int device_count() { return devices().count; }

int resolve_index(int index, const char *what) {
  Devices &d = devices();
  if (d.count == 0) {
    driver();  // raises "CUDA is not available: <why>" when the driver failed to load
    fail(ErrorKind::Runtime, what, ": CUDA is not available: ", cuda_unavailable_reason());
  }
  if (index < 0) index = t_current;
  TP_CHECK(index < d.count, Runtime, what, ": CUDA error: invalid device ordinal ", index, " (", d.count,
           " device", d.count == 1 ? "" : "s", " visible)");
  return index;
}

Device resolve(Device d) {
  if (d.type != DeviceType::CUDA) return d;
  d.index = int8_t(resolve_index(d.index));
  return d;
}

int current_device() {
  resolve_index(-1, "current_device");  // raises when CUDA is unavailable
  return t_current;
}

void activate(int index) {
  if (t_active == index) return;
  Devices &d = devices();
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.contexts[size_t(index)]) {
      CUdevice dev;
      TP_CU(cuDeviceGet, &dev, index);
      TP_CU(cuDevicePrimaryCtxRetain, &d.contexts[size_t(index)], dev);
    }
    ctx = d.contexts[size_t(index)];
  }
  TP_CU(cuCtxSetCurrent, ctx);
  t_active = index;
}

void set_device(int index) {
  index = resolve_index(index, "set_device");
  activate(index);
  t_current = index;
}

DeviceGuard::DeviceGuard(int index) : saved_(t_current) {
  if (index != t_current) set_device(index);
  else activate(index);
}
DeviceGuard::~DeviceGuard() {
  if (saved_ != t_current) {
    t_current = saved_;
    try { activate(saved_); } catch (...) {}  // a destructor must not throw; the next call re-activates
  }
}

const DeviceProperties &properties(int index) {
  index = resolve_index(index, "get_device_properties");
  Devices &d = devices();
  std::lock_guard<std::mutex> lock(d.mu);
  auto &slot = d.props[size_t(index)];
  if (!slot) {
    const DriverApi &api = driver();
    CUdevice dev;
    TP_CU(cuDeviceGet, &dev, index);
    auto p = std::make_unique<DeviceProperties>();
    char name[256] = {0};
    TP_CU(cuDeviceGetName, name, int(sizeof(name)) - 1, dev);
    p->name = name;
    auto attr = [&](int a) {
      int v = 0;
      check(api.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
      return v;
    };
    p->major = attr(kComputeCapabilityMajor);
    p->minor = attr(kComputeCapabilityMinor);
    p->multi_processor_count = attr(kMultiprocessorCount);
    p->max_threads_per_block = attr(kMaxThreadsPerBlock);
    p->warp_size = attr(kWarpSize);
    p->max_threads_per_multi_processor = attr(kMaxThreadsPerMultiprocessor);
    p->regs_per_multiprocessor = attr(kMaxRegistersPerMultiprocessor);
    p->l2_cache_size = attr(kL2CacheSize);
    p->shared_memory_per_block = attr(kMaxSharedMemoryPerBlock);
    p->shared_memory_per_multiprocessor = attr(kMaxSharedMemoryPerMultiprocessor);
    p->is_integrated = attr(kIntegrated);
    p->clock_rate_khz = attr(kClockRate);
    p->memory_clock_rate_khz = attr(kMemoryClockRate);
    p->memory_bus_width = attr(kGlobalMemoryBusWidth);
    p->pci_bus_id = attr(kPciBusId);
    p->pci_device_id = attr(kPciDeviceId);
    TP_CU(cuDeviceTotalMem, &p->total_memory, dev);
    slot = std::move(p);
  }
  return *slot;
}

Stream current_stream(int index) {
  index = resolve_index(index, "current_stream");
  if (size_t(index) >= t_streams.size()) return Stream{index, nullptr};
  return Stream{index, t_streams[size_t(index)]};
}

void set_current_stream(Stream s) {
  int index = resolve_index(s.device, "set_stream");
  if (t_streams.size() <= size_t(index)) t_streams.resize(size_t(index) + 1, nullptr);
  t_streams[size_t(index)] = s.handle;
}

void synchronize(int index) {
  DeviceGuard g(resolve_index(index, "synchronize"));
  TP_CU(cuCtxSynchronize);
}

}  // namespace tp::p10::cuda
