// index_common.cpp — the shared host side of the CUDA indexing ops (index_common.h).
#include "cuda/index_common.h"

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "cuda/strided32.h"
#include "kernels/index_helpers.h"

namespace tp::p10::cuda {

static CUdeviceptr dptr(const Tensor &t) { return reinterpret_cast<CUdeviceptr>(t.data_ptr()); }

namespace {
// The pool behind IndexErrorFlag: records of kRecordSlots (flag, value) slots of mapped pinned host memory,
// carved from chunks of kChunkRecords records; a flag of more slots gets its own allocation. Never freed
// (a few KB per process).
constexpr int kRecordSlots = 16, kChunkRecords = 64;
constexpr size_t kRecordBytes = size_t(kRecordSlots) * 16;
constexpr unsigned kHostAllocPortable = 0x01, kHostAllocDeviceMap = 0x02;  // CU_MEMHOSTALLOC_*
struct FlagPool {
  std::mutex mu;
  std::vector<int64_t *> free;
  std::vector<std::pair<int, CUevent>> events;  // (device, event): fence()'s, never destroyed
};
FlagPool &flag_pool() {
  static FlagPool *p = new FlagPool();
  return *p;
}
int64_t *mapped_alloc(size_t bytes) {
  void *p = nullptr;
  TP_CU(cuMemHostAlloc, &p, bytes, kHostAllocPortable | kHostAllocDeviceMap);
  return static_cast<int64_t *>(p);
}
int64_t *take_record(int slots) {
  if (slots > kRecordSlots) return mapped_alloc(size_t(slots) * 16);
  FlagPool &pool = flag_pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.free.empty()) {
    char *chunk = reinterpret_cast<char *>(mapped_alloc(kRecordBytes * kChunkRecords));
    for (int k = kChunkRecords; k-- > 0;) pool.free.push_back(reinterpret_cast<int64_t *>(chunk + k * kRecordBytes));
  }
  int64_t *r = pool.free.back();
  pool.free.pop_back();
  return r;
}
CUevent take_event(int device) {  // with the device's context current
  {
    std::lock_guard<std::mutex> lock(flag_pool().mu);
    auto &ev = flag_pool().events;
    for (size_t k = ev.size(); k-- > 0;)
      if (ev[k].first == device) {
        CUevent e = ev[k].second;
        ev.erase(ev.begin() + std::ptrdiff_t(k));
        return e;
      }
  }
  constexpr unsigned kDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING: the cheapest event to record and wait on
  CUevent e = nullptr;
  TP_CU(cuEventCreate, &e, kDisableTiming);
  return e;
}
void give_record(int64_t *r, int slots) {
  if (slots > kRecordSlots) {
    driver().cuMemFreeHost(r);
    return;
  }
  std::lock_guard<std::mutex> lock(flag_pool().mu);
  flag_pool().free.push_back(r);
}
}  // namespace

IndexErrorFlag::IndexErrorFlag(int device, int slots) : device_(device), slots_(slots) {
  DeviceGuard guard(device);  // a context for the allocation and the device pointer
  host_ = take_record(slots);
  for (int k = 0; k < 2 * slots; ++k) reinterpret_cast<volatile int64_t *>(host_)[k] = 0;
  CUdeviceptr d = 0;
  try {
    TP_CU(cuMemHostGetDevicePointer, &d, host_, 0);
  } catch (...) {
    give_record(host_, slots);
    throw;
  }
  device_ptr_ = d;
}

IndexErrorFlag::~IndexErrorFlag() {
  // Not read: a launch may still write the slots; wait before they can go to another op (errors ignored: a
  // destructor must not throw, and the stream's error surfaces at the next call).
  try {
    if (!waited_) {
      DeviceGuard guard(device_);
      if (event_) driver().cuEventSynchronize(event_);
      else driver().cuStreamSynchronize(stream_for(device_).handle);
    }
    give_record(host_, slots_);
    if (event_) {
      std::lock_guard<std::mutex> lock(flag_pool().mu);
      flag_pool().events.emplace_back(device_, event_);
    }
  } catch (...) {  // the record (and event) leaked rather than risked
  }
}

void IndexErrorFlag::fence() {
  DeviceGuard guard(device_);
  if (!event_) event_ = take_event(device_);
  TP_CU(cuEventRecord, event_, stream_for(device_).handle);
}

void *IndexErrorFlag::ptr(int slot) const {
  return reinterpret_cast<void *>(uintptr_t(device_ptr_ + 16ull * unsigned(slot)));
}

const volatile int64_t *IndexErrorFlag::settled() const {
  if (!waited_) {
    if (event_) TP_CU(cuEventSynchronize, event_);  // Note [Check first]
    else TP_CU(cuStreamSynchronize, stream_for(device_).handle);
    waited_ = true;
  }
  return host_;
}

std::vector<int64_t> read_int64(const Tensor &t, int64_t n) {
  std::vector<int64_t> host(size_t(std::max<int64_t>(n, 1)), 0);
  if (n == 0) return {};
  const Stream s = stream_for(t.device().index);
  TP_CU(cuMemcpyDtoHAsync, host.data(), dptr(t), size_t(n) * 8, s.handle);
  TP_CU(cuStreamSynchronize, s.handle);
  return host;
}

void IndexErrorFlag::raise_if_set(const char *op, const std::vector<int64_t> &dims,
                                  const std::vector<int64_t> &sizes) const {
  const volatile int64_t *h = settled();
  for (int k = 0; k < slots_; ++k)
    if (h[2 * k])
      fail(index_error_kind(op), op, "(): index ", int64_t(h[2 * k + 1]), " is out of bounds for dimension ",
           dims[size_t(k)], " with size ", sizes[size_t(k)]);  // the type: Note [Index error types]
}

bool IndexErrorFlag::any_set() const {
  const volatile int64_t *h = settled();
  for (int k = 0; k < slots_; ++k)
    if (h[2 * k]) return true;
  return false;
}

std::optional<int64_t> IndexErrorFlag::value() const {
  const volatile int64_t *h = settled();
  return h[0] ? std::optional<int64_t>(int64_t(h[1])) : std::nullopt;
}

Tensor restride(const Tensor &t, const Shape &sizes, int64_t d) {
  Shape strides(sizes.size(), 0);
  for (size_t k = 0; k < sizes.size(); ++k) strides[k] = int64_t(k) == d ? 0 : t.strides()[k];
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor as_int64(const Tensor &t) { return t.dtype() == ScalarType::Int64 ? t : contiguous_as(t, ScalarType::Int64); }

Tensor index_on(const Tensor &t, Device device) {
  if (!t.defined() || t.device() == device) return t;
  return call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(), std::optional<Device>(device), false);
}

void launch_gather(int dev, const Tensor &out, const Tensor &src, const Tensor &index, int64_t size, int64_t step,
                   IndexCheck check, void *err, const char *op) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const KernelGeometry g = make_geometry(out.sizes(), {&out, &src, &index}, op);
  const std::string bytes = std::to_string(out->itemsize());
  if (const std::optional<Strided32> fast = make_strided32(g, 3)) {  // Note [Fast strided offsets]
    // TP_GATHER_ILP (4) elements per thread at a time in index.cu's gather_fast
    launch(kernel(dev, "index.cu", "gather_fast_b" + bytes), elementwise_config(dev, n, 4), stream_for(dev),
           uint32_t(n), *fast, out.data_ptr(), src.data_ptr(), index.data_ptr(), size, step, int(check), err);
    return;
  }
  launch(kernel(dev, "index.cu", "gather_b" + bytes), elementwise_config(dev, n), stream_for(dev), n, g,
         out.data_ptr(), src.data_ptr(), index.data_ptr(), size, step, int(check), err);
}

int64_t row_unit(int64_t row_bytes, int64_t item, std::initializer_list<const void *> pointers, int64_t step_bytes) {
  int64_t unit = 16;
  auto fits = [&](int64_t u) {
    if (row_bytes % u || step_bytes % u) return false;
    for (const void *p : pointers)
      if (reinterpret_cast<uintptr_t>(p) % uintptr_t(u)) return false;
    return true;
  };
  while (unit > item && !fits(unit)) unit /= 2;
  return unit;
}

RowLaunch row_launch(int dev, int64_t rows, int64_t units, int per_thread) {
  RowLaunch r;  // up to a warp: the next power of two >= units; wider: until lanes * per_thread covers the row
  while (r.lanes < 256 && (r.lanes < 32 ? r.lanes < units : r.lanes * int64_t(per_thread) < units)) r.lanes *= 2;
  r.config = elementwise_config(dev, rows * r.lanes);  // 256 / lanes rows per 256-thread block
  return r;
}

void launch_select_rows(int dev, const Tensor &out, const Tensor &self, int64_t d, const Tensor &index,
                        int64_t index_stride, IndexCheck check, void *err) {
  int64_t inner = 1;
  for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
  const int64_t item = self->itemsize();
  const int64_t unit = row_unit(inner * item, item, {self.data_ptr(), out.data_ptr()}, 0);
  const int64_t units = inner * item / unit, rows = out.numel() / inner;
  const RowLaunch rl = row_launch(dev, rows, units, 8);
  launch(kernel(dev, "index.cu", "select_rows_b" + std::to_string(unit)), rl.config, stream_for(dev), rows,
         int(units), index.numel(), self.size(d), out.data_ptr(), self.data_ptr(), index.data_ptr(), index_stride,
         rl.lanes, int(check), err);
}

void launch_scatter(int dev, const Tensor &dst, const Tensor &index, const Tensor &src, int64_t size, int64_t step,
                    IndexCheck check, ScatterReduce reduce, void *err, const char *op) {
  const int64_t n = index.numel();
  if (n == 0) return;
  check_real(op, dst.dtype());
  const KernelGeometry g = make_geometry(index.sizes(), {&dst, &index, &src}, op);
  if (const std::optional<Strided32> fast = make_strided32(g, 3)) {  // Note [Fast strided offsets]
    launch(kernel(dev, "index.cu", kname("scatter_fast", dst.dtype())), elementwise_config(dev, n), stream_for(dev),
           uint32_t(n), *fast, dst.data_ptr(), index.data_ptr(), src.data_ptr(), size, step, int(check), int(reduce),
           err);
    return;
  }
  launch(kernel(dev, "index.cu", kname("scatter", dst.dtype())), elementwise_config(dev, n), stream_for(dev), n, g,
         dst.data_ptr(), index.data_ptr(), src.data_ptr(), size, step, int(check), int(reduce), err);
}

int64_t exclusive_scan_int64(int dev, const Tensor &data, int64_t n, void *err) {
  Tensor total = empty_tensor({1}, ScalarType::Int64, data.device());
  launch(kernel(dev, "index.cu", "exclusive_scan_int64"), LaunchConfig{1, 1024, 0}, stream_for(dev), n,
         data.data_ptr(), total.data_ptr(), err);
  return read_int64(total, 1)[0];
}

void launch_index_check(int dev, const Tensor &idx, int64_t size, IndexCheck check, IndexErrorFlag &err) {
  const int64_t n = idx.numel();
  if (n > 0 && (idx.is_contiguous() || idx.dim() == 1)) {  // evenly spaced indices
    const int64_t stride = idx.dim() == 1 ? idx.stride(0) : 1;
    launch(kernel(dev, "index.cu", "index_check_flat"), elementwise_config(dev, n, 4), stream_for(dev), n,
           idx.data_ptr(), stride, size, int(check), err.ptr());
  } else if (n > 0) {
    const KernelGeometry g = make_geometry(idx.sizes(), {&idx, &idx}, "index check");
    launch(kernel(dev, "index.cu", "index_wrap"), elementwise_config(dev, n), stream_for(dev), n, g, nullptr,
           idx.data_ptr(), size, int(check), err.ptr());
  }
  err.fence();
}

void *check_first(int dev, int64_t bytes, const Tensor &index, int64_t size, IndexCheck check, IndexErrorFlag &err) {
  if (bytes > 0 && bytes < kCheckFirstBytes) return err.ptr();
  launch_index_check(dev, index, size, check, err);
  return nullptr;  // the main kernel skips bad indices without recording them
}

static Tensor run_index_wrap(const Tensor &index, int64_t size, int64_t dim, const char *op, IndexCheck check,
                             bool keep) {
  const int dev = index.device().index;
  DeviceGuard guard(dev);
  const Tensor idx = as_int64(index);
  Tensor out = keep ? empty_tensor(idx.sizes(), ScalarType::Int64, idx.device()) : Tensor();
  const int64_t n = idx.numel();
  if (n == 0) return out;
  IndexErrorFlag err(dev);
  if (keep) {
    const KernelGeometry g = make_geometry(idx.sizes(), {&out, &idx}, op);
    launch(kernel(dev, "index.cu", "index_wrap"), elementwise_config(dev, n), stream_for(dev), n, g,
           out.data_ptr(), idx.data_ptr(), size, int(check), err.ptr());
  } else {
    launch_index_check(dev, idx, size, check, err);
  }
  err.raise_if_set(op, dim, size);
  return out;
}

void check_index_range_cuda(const Tensor &index, int64_t size, int64_t dim, const char *op, bool allow_negative) {
  run_index_wrap(index, size, dim, op, allow_negative ? kWrapNegative : kNonNegative, false);
}

Tensor wrap_negative_cuda(const Tensor &index, int64_t size, const char *op, int64_t dim) {
  return run_index_wrap(index, size, dim, op, kWrapNegative, true);
}

// Note [Nonzero passes]
//   nonzero's size depends on the data, so it takes three launches and one read-back: (1) nonzero_count
//   counts the true elements of each block's chunk of 4096 (16 per thread, one 16-byte load); (2) exclusive_scan_int64 turns the counts into
//   each block's first output row, and the total — the one number the host must read (a synchronising copy)
//   to allocate the result; (3) nonzero_write recounts its chunk, scans within the block and writes the
//   coordinates of each hit in row-major order. The input is first made a contiguous bool tensor (x != 0,
//   so NaN counts as true, as on the CPU).
Tensor nonzero_cuda(const Tensor &self) {
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  const int64_t n = self.numel(), nd = self.dim();
  check_real("nonzero", self.dtype());
  if (n == 0) return empty_tensor({0, nd}, ScalarType::Int64, self.device());
  TP_CHECK(nd <= kMaxDims, NotImplemented, "nonzero: CUDA supports at most ", kMaxDims, " dims, got ", nd);
  const Tensor x = self.dtype() == ScalarType::Bool && self.is_contiguous() ? self : contiguous_as(self, ScalarType::Bool);
  constexpr unsigned kThreads = 256, kItems = 16;  // index.cu's TP_NZ_ITEMS
  const int64_t chunk = int64_t(kThreads) * kItems, blocks = (n + chunk - 1) / chunk;
  Tensor starts = empty_tensor({blocks}, ScalarType::Int64, self.device());
  const Stream s = stream_for(dev);
  launch(kernel(dev, "index.cu", "nonzero_count"), LaunchConfig{unsigned(blocks), kThreads, 0}, s, n, x.data_ptr(),
         starts.data_ptr());
  const int64_t count = exclusive_scan_int64(dev, starts, blocks, nullptr);
  Tensor out = empty_tensor({count, nd}, ScalarType::Int64, self.device());
  if (count == 0 || nd == 0) return out;
  KernelGeometry dims;
  dims.ndim = int32_t(nd);
  for (int64_t d = 0; d < nd; ++d) dims.sizes[d] = self.size(d);
  const std::optional<Strided32> fast = make_strided32(dims, 0);  // 32-bit coordinates when n < 2^31
  launch(kernel(dev, "index.cu", "nonzero_write"), LaunchConfig{unsigned(blocks), kThreads, 0}, s, n, x.data_ptr(),
         starts.data_ptr(), out.data_ptr(), dims, fast.value_or(Strided32{}), int(fast.has_value()));
  return out;
}

}  // namespace tp::p10::cuda
