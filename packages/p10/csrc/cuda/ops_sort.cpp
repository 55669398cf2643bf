// ops_sort.cpp — CUDA kernels for sort, topk and kthvalue, and the row sort (sort.h) the other sort-family ops
// build on. argsort and msort are Composite ops over sort, so they run here too.
//
// Where it sits: the CUDA twin of kernels/sort.cpp; the arithmetic is tensorplay_p10/cuda_kernels/sort.cu and
// sort_radix.cu. The CPU op, asked on meta tensors (cuda/ops_meta.h), checks each call (dim, k) with its own
// messages; the data then goes to rows (the dim last, contiguous) and comes back with the same permuted view the
// CPU returns, so results have the CPU's shapes and strides. Rows of at most kBitonicMax elements are sorted one
// per block in shared memory: by a bitonic network, or from kRadixRowsMin elements with keys of at most 32 bits
// by a radix sort (Note [Block radix sort of a row] in sort_radix.cu). Longer rows go through the one-sweep
// radix sort (Note [One-sweep radix sort]; from 2^30 elements the older segmented radix sort, Note [Segmented
// radix sort] in sort.cu), except when only the first k <= kSelectMax are kept (topk, kthvalue): a radix select
// per row then finds them without sorting the row (Note [topk by radix select]).
#include "cuda/sort.h"

#include <algorithm>
#include <string>

#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

namespace {
constexpr int64_t kBitonicMax = 4096;  // sort.cu's bitonic keeps indices as u16 and 10 bytes per element
constexpr int64_t kRadixRowsMin = 256;  // shorter rows: the bitonic network is as short as 4 radix passes
constexpr int64_t kRadixTile = 4096;   // sort.cu's kTile
constexpr int64_t kSelectMax = 1024;   // sort.cu's kSelectMax: the largest k topk_select keeps in shared memory
constexpr unsigned kSelectThreads = 512;
constexpr unsigned kRadixThreads = 256;
constexpr int64_t kScanTile = 4096;  // sort.cu's kScanTile
constexpr unsigned kScanThreads = 1024;
constexpr int64_t kOnesweepTile = 4096;  // sort_radix.cu's kOsTile
constexpr unsigned kOnesweepThreads = 256;  // sort_radix.cu's kOsThreads
constexpr int64_t kOnesweepMax = int64_t(1) << 30;  // its payloads are u32 and its look-back counts 30 bits

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The permutation that moves `d` last, and its inverse as used by from_rows.
std::vector<int64_t> last_perm(int64_t nd, int64_t d) {
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < nd; ++k)
    if (k != d) perm.push_back(k);
  if (nd) perm.push_back(d);
  return perm;
}
// Undo dim_last on a result in the rows layout (its last dim possibly resized): the view the CPU returns.
Tensor from_rows(const Tensor &t, int64_t d, int64_t nd) {
  if (nd == 0) return t;
  std::vector<int64_t> perm(static_cast<size_t>(nd));
  for (int64_t k = 0, src = 0; k < nd; ++k) perm[size_t(k)] = k == d ? nd - 1 : src++;
  return call_op<Tensor>(TP_OP("permute"), t, perm);
}

// The one-sweep radix sort of rows * len < 2^30 elements (Note [One-sweep radix sort] in sort_radix.cu):
// one histogram launch, then one launch per pass over the key's bytes and the row number's bytes.
void onesweep_rows(const Tensor &x, int64_t rows, int64_t len, bool descending, int64_t keep,
                   const Tensor &values, const Tensor &indices) {
  const int dev = x.device().index;
  const Stream stream = stream_for(dev);
  const ScalarType t = x.dtype();
  const Device device = x.device();
  const int64_t n = rows * len;
  const int64_t key_size = t == ScalarType::Int64 || t == ScalarType::Float64 ? 8 : 4;
  const int key_bytes = int(x->itemsize());
  int row_bytes = 0;
  for (uint64_t m = uint64_t(rows - 1); m; m >>= 8) ++row_bytes;
  const int npasses = key_bytes + row_bytes;
  const int64_t ntiles = ceil_div(n, kOnesweepTile);
  // Scratch, u32 words, all zero: every pass's histogram, tile counter and tiles' look-back status words.
  const int64_t words = npasses * 256 + npasses + npasses * ntiles * 256;
  Tensor scratch = int_zeros(dev, {words});
  uint32_t *hist = static_cast<uint32_t *>(scratch.data_ptr());
  uint32_t *counters = hist + npasses * 256, *status = counters + npasses;
  Tensor keys[2], pay[2];  // ping-pong buffers between passes; the first pass reads x, the last writes values
  for (int b = 0; npasses > 1 && b < 2; ++b) {
    keys[b] = empty_tensor({n * key_size}, ScalarType::UInt8, device);
    pay[b] = empty_tensor({n}, ScalarType::Int32, device);
  }
  const auto ptr = [&](const Tensor *buf, int b) {
    return npasses > 1 ? buf[b].data_ptr() : static_cast<void *>(nullptr);
  };
  const uint32_t n32 = uint32_t(n), len32 = uint32_t(len), keep32 = uint32_t(keep);
  const int sms = properties(dev).multi_processor_count;
  // 4 elements a thread (sort_radix.cu's kHistUnroll), up to 8 blocks an SM: the device's full thread count
  const unsigned hist_grid = unsigned(std::min<int64_t>(ceil_div(n, kOnesweepThreads * 4), int64_t(sms) * 8));
  launch(kernel(dev, "sort_radix.cu", kname("onesweep_hist", t)), LaunchConfig{hist_grid, kOnesweepThreads, 0},
         stream, n32, len32, key_bytes, npasses, int(descending), x.data_ptr(), hist);
  CUfunction pass = kernel(dev, "sort_radix.cu", kname("onesweep_pass", t));
  for (int p = 0; p < npasses; ++p) {
    const int by_row = p >= key_bytes, shift = 8 * (by_row ? p - key_bytes : p);
    launch(pass, LaunchConfig{unsigned(ntiles), kOnesweepThreads, 0}, stream, n32, len32, keep32, shift, by_row,
           int(p == 0), int(p == npasses - 1), int(descending), x.data_ptr(), ptr(keys, p & 1), ptr(pay, p & 1),
           ptr(keys, (p + 1) & 1), ptr(pay, (p + 1) & 1), values.data_ptr(), indices.data_ptr(), hist + p * 256,
           status + int64_t(p) * ntiles * 256, counters + p);
  }
}
}  // namespace

Tensor dim_last(const Tensor &self, int64_t d) {
  if (self.dim() == 0) return self;
  Shape sizes, strides;
  for (int64_t i : last_perm(self.dim(), d)) {
    sizes.push_back(self.size(i));
    strides.push_back(self.stride(i));
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor rows_of(const Tensor &self, int64_t d) {
  Tensor x = dim_last(self, d);
  return x.is_contiguous() ? x : contiguous_as(x, x.dtype());
}

Tensor to_host(const Tensor &t) {
  Tensor h = empty_tensor(t.sizes(), t.dtype(), Device{});
  call_op<Tensor>(TP_OP("copy_"), h, t, false);
  return h;
}
Tensor to_device(const Tensor &host, Device device) {
  Tensor d = empty_tensor(host.sizes(), host.dtype(), device);
  call_op<Tensor>(TP_OP("copy_"), d, host, false);
  return d;
}

void scan_int64(const Tensor &data, bool inclusive) {
  const int64_t n = data.numel();
  if (n == 0) return;
  const int dev = data.device().index;
  const Stream stream = stream_for(dev);
  const int64_t ntiles = ceil_div(n, kScanTile);
  Tensor sums = empty_tensor({ntiles}, ScalarType::Int64, data.device());
  launch(kernel(dev, "sort.cu", "scan_tile_sums"), LaunchConfig{unsigned(ntiles), kScanThreads, 0}, stream, n,
         data.data_ptr(), sums.data_ptr());
  launch(kernel(dev, "sort.cu", "scan_sums"), LaunchConfig{1, kScanThreads, 0}, stream, ntiles, sums.data_ptr());
  launch(kernel(dev, "sort.cu", "scan_tiles"), LaunchConfig{unsigned(ntiles), kScanThreads, 0}, stream, n,
         data.data_ptr(), sums.data_ptr(), int(inclusive));
}

void sort_rows(const Tensor &x, int64_t rows, int64_t len, bool descending, int64_t keep, const Tensor &values,
               const Tensor &indices) {
  if (rows == 0 || keep == 0) return;
  const int dev = x.device().index;
  const Stream stream = stream_for(dev);
  const ScalarType t = x.dtype();
  const int sms = properties(dev).multi_processor_count;
  const int64_t key_size = t == ScalarType::Int64 || t == ScalarType::Float64 ? 8 : 4;
  if (len > kRadixRowsMin && len <= kBitonicMax && key_size == 4) {
    // one block per row, a radix sort in shared memory (Note [Block radix sort of a row] in sort_radix.cu):
    // 256 threads of N items each, N the smallest of 2, 4, 8, 16 that holds the row
    int items = 2;
    while (int64_t(kOnesweepThreads) * items < len) items *= 2;
    const unsigned grid = unsigned(std::min<int64_t>(rows, int64_t(sms) * 16));
    const std::string name = "radix_rows" + std::to_string(items);
    launch(kernel(dev, "sort_radix.cu", kname(name.c_str(), t)), LaunchConfig{grid, kOnesweepThreads, 0}, stream,
           rows, len, keep, int(descending), x.data_ptr(), values.data_ptr(), indices.data_ptr());
    return;
  }
  if (len <= kBitonicMax) {
    int npow2 = 1;
    while (npow2 < len) npow2 <<= 1;
    const unsigned block = unsigned(std::clamp(npow2 / 2, 32, 512));
    const unsigned grid = unsigned(std::min<int64_t>(rows, int64_t(sms) * 16));
    const unsigned shared = unsigned(npow2) * 10u;  // u64 key + u16 index per element
    launch(kernel(dev, "sort.cu", kname("bitonic", t)), LaunchConfig{grid, block, shared}, stream, rows, len, keep,
           npow2, int(descending), x.data_ptr(), values.data_ptr(), indices.data_ptr());
    return;
  }
  if (keep <= kSelectMax && len < (int64_t(1) << 31) && (rows * 8 >= sms || len <= (int64_t(1) << 20))) {
    // topk / kthvalue of long rows: a radix select per row (Note [topk by radix select]), when there are rows
    // enough to fill the device or a row is short enough for one block to read it a few times. Long rows get
    // two blocks an SM, so that the rows being read (264 x 128 KB for float32 rows of 32000) stay in the L2
    // cache between a block's reads of its row.
    const int64_t per_sm = len * int64_t(x->itemsize()) <= (int64_t(64) << 10) ? 4 : 2;
    const unsigned grid = unsigned(std::min<int64_t>(rows, int64_t(sms) * per_sm));
    launch(kernel(dev, "sort.cu", kname("topk_select", t)), LaunchConfig{grid, kSelectThreads, 0}, stream, rows,
           len, keep, int(descending), x.data_ptr(), values.data_ptr(), indices.data_ptr());
    return;
  }
  const int64_t n = rows * len;
  if (n < kOnesweepMax) {
    onesweep_rows(x, rows, len, descending, keep, values, indices);
    return;
  }
  // Larger inputs: the segmented LSD radix sort, the key's bytes, then the row number's bytes (Note [Segmented
  // radix sort]), with int64 payloads and a histogram and scan per pass.
  const int key_bytes = int(x->itemsize());
  int row_bytes = 0;
  for (uint64_t m = uint64_t(rows - 1); m; m >>= 8) ++row_bytes;
  const Device device = x.device();
  Tensor keys[2] = {empty_tensor({n * key_size}, ScalarType::UInt8, device),
                    empty_tensor({n * key_size}, ScalarType::UInt8, device)};
  Tensor pay[2] = {empty_tensor({n}, ScalarType::Int64, device), empty_tensor({n}, ScalarType::Int64, device)};
  const int64_t ntiles = ceil_div(n, kRadixTile);
  Tensor counts = empty_tensor({256 * ntiles}, ScalarType::Int64, device);
  const LaunchConfig flat = elementwise_config(dev, n);
  launch(kernel(dev, "sort.cu", kname("radix_init", t)), flat, stream, n, int(descending), x.data_ptr(),
         keys[0].data_ptr(), pay[0].data_ptr());
  const char *kw = key_size == 8 ? "k64" : "k32";
  CUfunction hist = kernel(dev, "sort.cu", std::string("radix_hist_") + kw);
  CUfunction scatter = kernel(dev, "sort.cu", std::string("radix_scatter_") + kw);
  int cur = 0;
  for (int p = 0; p < key_bytes + row_bytes; ++p) {
    const int by_row = p >= key_bytes, shift = 8 * (by_row ? p - key_bytes : p);
    launch(hist, LaunchConfig{unsigned(ntiles), kRadixThreads, 0}, stream, n, len, shift, by_row,
           keys[cur].data_ptr(), pay[cur].data_ptr(), counts.data_ptr(), ntiles);
    scan_int64(counts, false);
    launch(scatter, LaunchConfig{unsigned(ntiles), kRadixThreads, 0}, stream, n, len, shift, by_row,
           keys[cur].data_ptr(), pay[cur].data_ptr(), keys[1 - cur].data_ptr(), pay[1 - cur].data_ptr(),
           counts.data_ptr(), ntiles);
    cur = 1 - cur;
  }
  launch(kernel(dev, "sort.cu", kname("radix_gather", t)), flat, stream, n, len, keep, pay[cur].data_ptr(),
         x.data_ptr(), values.data_ptr(), indices.data_ptr());
}

namespace {
// Sorts `self` along `dim` and keeps the first `keep` (all when keep < 0) of each row, in the rows layout:
// shape self's with dim moved last and resized to keep, contiguous. `d` returns the wrapped dim.
std::tuple<Tensor, Tensor> sorted_rows(const char *op, const Tensor &self, int64_t dim, bool descending,
                                       int64_t keep, int64_t &d) {
  check_real(op, self.dtype());
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  const int64_t nd = self.dim();
  d = nd ? wrap_dim(dim, nd, op) : 0;
  const int64_t len = nd ? self.size(d) : 1;
  if (keep < 0) keep = len;
  const Tensor x = rows_of(self, d);
  Shape shape = x.sizes();
  if (!shape.empty()) shape.back() = keep;
  Tensor values = empty_tensor(shape, self.dtype(), self.device());
  Tensor indices = empty_tensor(shape, ScalarType::Int64, self.device());
  const int64_t rows = len ? x.numel() / len : 0;
  if (values.numel()) sort_rows(x, rows, len, descending, keep, values, indices);
  return {values, indices};
}
}  // namespace

static std::tuple<Tensor, Tensor> sort(const Tensor &self, int64_t dim, bool descending, std::optional<bool> stable) {
  call_op<std::tuple<Tensor, Tensor>>(TP_OP("sort"), meta_like(self), dim, descending, stable);  // the checks
  int64_t d = 0;
  auto [v, i] = sorted_rows("sort", self, dim, descending, -1, d);  // always stable, as on the CPU
  return {from_rows(v, d, self.dim()), from_rows(i, d, self.dim())};
}

static std::tuple<Tensor, Tensor> topk(const Tensor &self, int64_t k, int64_t dim, bool largest, bool sorted) {
  call_op<std::tuple<Tensor, Tensor>>(TP_OP("topk"), meta_like(self), k, dim, largest, sorted);
  int64_t d = 0;
  auto [v, i] = sorted_rows("topk", self, dim, largest, k, d);  // always in order, ties by index (the CPU's)
  return {from_rows(v, d, self.dim()), from_rows(i, d, self.dim())};
}

static std::tuple<Tensor, Tensor> kthvalue(const Tensor &self, int64_t k, int64_t dim, bool keepdim) {
  call_op<std::tuple<Tensor, Tensor>>(TP_OP("kthvalue"), meta_like(self), k, dim, keepdim);
  int64_t d = 0;
  auto [v, i] = sorted_rows("kthvalue", self, dim, false, k, d);
  if (self.dim() == 0) return {v, i};  // its own first value, at index 0
  Tensor values = call_op<Tensor>(TP_OP("select"), v, int64_t(-1), k - 1);
  Tensor indices = call_op<Tensor>(TP_OP("select"), i, int64_t(-1), k - 1);
  if (keepdim) {
    values = call_op<Tensor>(TP_OP("unsqueeze"), values, d);
    indices = call_op<Tensor>(TP_OP("unsqueeze"), indices, d);
  }
  return {values, indices};
}

TP_LIBRARY(cuda_sort) {
  TP_IMPL(lib, "sort", CUDA, sort);
  TP_IMPL(lib, "topk", CUDA, topk);
  TP_IMPL(lib, "kthvalue", CUDA, kthvalue);
}

}  // namespace tp::p10::cuda
