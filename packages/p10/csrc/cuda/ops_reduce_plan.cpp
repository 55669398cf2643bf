// ops_reduce_plan.cpp — reduce_layout() and run_reduce() of reduce.h: how a CUDA reduction is laid out and
// launched.
//
// Where it sits: shared by ops_reduce_sums.cpp, ops_reduce_order.cpp and ops_reduce_stats.cpp; the kernels it
// launches are reduce_common.cuh's loops instantiated per op (reduce_sums.cu, reduce_order.cu, reduce_stats.cu).
#include <algorithm>
#include <cstdint>

#include "cuda/reduce.h"

namespace tp::p10::cuda {

// The blocks per SM the column kernels' __launch_bounds__ guarantee (reduce_common.cuh, Note [One wave of
// blocks]): a split column reduction launches at most this many blocks per SM, so that all of them run at once.
constexpr int64_t kColsBlocksPerSm = 4;  // TP_RED_COLS_BLOCKS_PER_SM: blocks of 32 x 8 threads
// A split row reduction launches one wave of the row kernel at hand: as many blocks as the driver says are
// resident (resident_blocks_per_sm; __launch_bounds__ guarantees at least TP_RED_INNER_BLOCKS_PER_SM = 2 of 512
// threads). amax of a 64M-element vector: 2 x 132 = 264 blocks (48 registers), each thread 4 loads in flight.

std::vector<bool> reduced_dims(int64_t nd, const std::optional<std::vector<int64_t>> &dim) {
  std::vector<bool> reduced(size_t(nd), !dim || dim->empty());
  if (dim && nd > 0)
    for (int64_t d : *dim) reduced[size_t(wrap_dim(d, nd, "reduce"))] = true;
  return reduced;
}

namespace {
struct Dim {
  int64_t size, stride;
  bool reduced;
};

// Row-major contiguity of dims (outermost first), size-1 dims already dropped.
bool contiguous(const std::vector<Dim> &dims) {
  int64_t expect = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k].stride != expect) return false;
    expect *= dims[k].size;
  }
  return true;
}
}  // namespace

ReduceLayout reduce_layout(const Tensor &self, const std::vector<bool> &reduced, ScalarType dtype) {
  if (self.dtype() != dtype) return reduce_layout(contiguous_as(self, dtype), reduced, dtype);
  ReduceLayout L;
  std::vector<Dim> dims, kept_first;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (reduced[size_t(d)]) L.red *= self.size(d);
    if (self.size(d) != 1) dims.push_back({self.size(d), self.stride(d), bool(reduced[size_t(d)])});
  }
  for (const Dim &d : dims)
    if (!d.reduced) kept_first.push_back(d);
  for (const Dim &d : dims)
    if (d.reduced) kept_first.push_back(d);
  int64_t kept = 1;
  for (const Dim &d : dims)
    if (!d.reduced) kept *= d.size;
  L.outer = kept;
  L.x = self;
  if (self.numel() == 0 || contiguous(kept_first)) return L;  // inner = 1, as it is (never read when empty)
  if (contiguous(dims)) {
    // Reduced dims adjacent? Then [kept before, reduced, kept after].
    size_t first = dims.size(), last = 0;
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k].reduced) { first = std::min(first, k); last = k; }
    bool adjacent = true;
    for (size_t k = first; k <= last && k < dims.size(); ++k) adjacent = adjacent && dims[k].reduced;
    if (adjacent) {
      L.outer = L.inner = 1;
      for (size_t k = 0; k < first; ++k) L.outer *= dims[k].size;
      for (size_t k = last + 1; k < dims.size(); ++k) L.inner *= dims[k].size;
      return L;
    }
  }
  Shape sizes, strides;
  for (const Dim &d : kept_first) { sizes.push_back(d.size); strides.push_back(d.stride); }
  L.x = contiguous_as(make_view(self, sizes, strides, self.storage_offset()), dtype);
  return L;
}

void run_reduce(int dev, const char *module, const char *base, const ReduceLayout &L, void *out0, void *out1,
                double p, int mode) {
  const int64_t nout = L.out_numel();
  if (nout == 0) return;
  const ScalarType t = L.x.dtype();
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const Stream stream = stream_for(dev);
  const int64_t sms = properties(dev).multi_processor_count;
  const std::string b(base);
  const void *in = L.x.data_ptr();
  char *o0 = static_cast<char *>(out0), *o1 = static_cast<char *>(out1);
  int splits = 1;
  Tensor ws;
  if (L.inner == 1) {
    // Rows: a block per row; a few long rows are split so that the grid still fills the device.
    const int64_t rows = L.outer, cols = L.red;
    unsigned block = 32;
    while (block < 512 && int64_t(block) * 4 < cols) block *= 2;
    // A few long rows are split, rows * splits blocks making at most one wave of this kernel (Note [One wave of
    // blocks]; rounded down, so no block waits for a second wave), each split >= 8192 long.
    const CUfunction f = kernel(dev, module, kname((b + "_inner").c_str(), t));
    if (cols >= 32768) {
      const int64_t wave = resident_blocks_per_sm(f, block) * sms;
      if (rows < wave) splits = int(std::clamp<int64_t>(wave / rows, 1, std::min<int64_t>(1024, cols / 8192)));
    }
    if (splits > 1) ws = empty_tensor({nout * splits * kStateBytes}, ScalarType::UInt8, device);
    void *w = splits > 1 ? ws.data_ptr() : nullptr;
    const unsigned grid = unsigned(splits > 1 ? rows : std::min<int64_t>(rows, sms * 32));
    launch_2d(f, grid, unsigned(splits), block, 1, stream, rows, cols, splits, o0, o1, w, in, p, mode);
  } else {
    // Columns: 32 threads across adjacent columns per block, each thread 1 column or (colsv) one 16-byte vector
    // of them; a long reduced range is split when there are few column tiles, into at most one wave of resident
    // blocks (Note [One wave of blocks]) and splits of >= 32 rows (4 per row of threads).
    const int64_t item = L.x->itemsize(), vec = 16 / item;
    const bool vectorised = (item == 2 || item == 4 || item == 8) && L.inner % vec == 0 &&
                            reinterpret_cast<uintptr_t>(L.x.data_ptr()) % 16 == 0;
    const int64_t per_tile = 32 * (vectorised ? vec : 1), tiles = L.outer * ((L.inner + per_tile - 1) / per_tile);
    const int64_t slots = kColsBlocksPerSm * sms;
    if (tiles < slots && L.red >= 256)
      splits = int(std::clamp<int64_t>(slots / tiles, 1, std::min<int64_t>(1024, L.red / 32)));
    if (splits > 1) ws = empty_tensor({nout * splits * kStateBytes}, ScalarType::UInt8, device);
    void *w = splits > 1 ? ws.data_ptr() : nullptr;
    const unsigned grid = unsigned(std::min<int64_t>(tiles, sms * 32));
    launch_2d(kernel(dev, module, kname((b + (vectorised ? "_colsv" : "_cols")).c_str(), t)), grid,
              unsigned(splits), 32, 8, stream, L.outer, L.red, L.inner, splits, o0, o1, w, in, p, mode);
  }
  if (splits > 1) {
    const unsigned grid = unsigned(std::min<int64_t>((nout + 7) / 8, sms * 32));
    launch_2d(kernel(dev, module, kname((b + "_final").c_str(), t)), grid, 1, 256, 1, stream, nout, splits, o0,
              o1, static_cast<const void *>(ws.data_ptr()), p, mode);
  }
}

Tensor reduce_new(const char *op, const Tensor &meta, const Tensor &self, const std::optional<std::vector<int64_t>> &dim,
                  ScalarType in_t, const char *module, const char *base, double p, int mode) {
  const int dev = common_device(op, {self}, false);
  check_real(op, self.dtype());
  check_real(op, in_t);
  DeviceGuard guard(dev);
  Tensor out = empty_tensor(meta.sizes(), meta.dtype(), Device{DeviceType::CUDA, int8_t(dev)});
  if (out.numel() == 0) return out;
  run_reduce(dev, module, base, reduce_layout(self, reduced_dims(self.dim(), dim), in_t), out.data_ptr(), nullptr,
             p, mode);
  return out;
}

}  // namespace tp::p10::cuda
