// ops_scan.cpp — the CUDA kernels for cumsum, cumsum.out, cumprod, cummax, cummin and logcumsumexp along any dim.
//
// Where it sits: the CUDA twins of kernels/scan.cpp; the arithmetic is tensorplay_p10/cuda_kernels/scan.cu. The
// CPU op on meta tensors (ops_meta.h) checks the call and gives the result dtype (int64 for integer cumsum,
// dtype= when given). The input, contiguous in that dtype, is seen as [outer, n, inner] with n the scanned dim:
//   - inner == 1: short rows (<= kWarpRow) one warp per row; longer rows cut into chunks, one block per chunk,
//     a single pass with decoupled look-back;
//   - inner > 1 with enough (outer, inner) lines to fill the device: one thread per line;
//   - fewer lines, but >= 1024 of them and inner >= 32 (x.cumsum(0) of a [8192, 8192] matrix): each line cut
//     into segments, a thread per (segment, line), two passes (scan.cu, Note [Segmented column scan]);
//   - otherwise (few long lines, e.g. x.cumsum(0) of a [1e6, 4] tensor) the scanned dim is moved last by a
//     contiguous copy, scanned as rows, and the result copied back into the output's layout.
#include <algorithm>
#include <cstdint>

#include "cuda/ops_meta.h"
#include "cuda/reduce.h"
#include "loop/reduce.h"

namespace tp::p10::cuda {

namespace {
constexpr const char *kModule = "scan.cu";
constexpr int64_t kChunk = 4096;         // scan.cu: 256 threads x TP_SCAN_ITEMS (16) elements
constexpr int64_t kChunkIndexed = 2048;  // cummax/cummin (16-byte states): 256 x TP_SCAN_ITEMS_INDEXED (8)
constexpr unsigned kScanThreads = 256;  // TP_SCAN_THREADS
constexpr int64_t kMinLines = 16384;    // fewer (outer, inner) lines than this: transpose and scan rows
constexpr int64_t kWarpRow = 256;       // rows this short: one warp per row (scan.cu's _warps_ kernels)
// The segmented column scan (scan.cu, Note [Segmented column scan]) instead of the transpose: inner >= a warp's
// 32 adjacent columns (coalesced) and >= kSegMinLines lines; at most kSegMaxSegs segments (each thread folds the
// totals of the segments before its own) of >= kSegMinRows elements, about 2 waves of threads.
constexpr int64_t kSegMinInner = 32;
constexpr int64_t kSegMinLines = 1024;
constexpr int64_t kSegMaxSegs = 64;
constexpr int64_t kSegMinRows = 16;

// One thread per (outer, inner) line, walking the scanned dim.
void scan_lines(int dev, const std::string &base, const Tensor &x, int64_t outer, int64_t n, int64_t inner,
                void *out0, void *out1) {
  const LaunchConfig c = elementwise_config(dev, outer * inner);
  launch(kernel(dev, kModule, kname((base + "_cols").c_str(), x.dtype())), c, stream_for(dev), outer, n, inner,
         static_cast<char *>(out0), static_cast<char *>(out1), x.data_ptr());
}

// Segments per line for the segmented column scan of `lines` lines of n elements; < 2: not used.
int64_t segment_count(int dev, int64_t lines, int64_t n, int64_t inner) {
  if (inner < kSegMinInner || lines < kSegMinLines) return 1;
  const int64_t target = 2 * properties(dev).multi_processor_count * 2048;  // threads: 2 waves of 2048 per SM
  const int64_t segs = std::min({(target + lines - 1) / lines, kSegMaxSegs, n / kSegMinRows});
  if (segs < 2) return 1;
  const int64_t per = (n + segs - 1) / segs;
  return (n + per - 1) / per;  // no empty segment at the end
}

// Scan x, contiguous [outer, n, inner], along n in `segs` segments per line: two passes (Note [Segmented column
// scan]) through a workspace of one state per (segment, line).
void scan_segments(int dev, const std::string &base, const Tensor &x, int64_t outer, int64_t n, int64_t inner,
                   int64_t segs, void *out0, void *out1) {
  const int64_t lines = outer * inner;
  const Tensor ws = empty_tensor({lines * segs * kStateBytes}, ScalarType::UInt8, x.device());
  const LaunchConfig c = elementwise_config(dev, lines * segs);
  const Stream stream = stream_for(dev);
  launch(kernel(dev, kModule, kname((base + "_segtotals").c_str(), x.dtype())), c, stream, outer, n, inner, segs,
         ws.data_ptr(), x.data_ptr());
  launch(kernel(dev, kModule, kname((base + "_segs").c_str(), x.dtype())), c, stream, outer, n, inner, segs,
         static_cast<char *>(out0), static_cast<char *>(out1), static_cast<const void *>(ws.data_ptr()),
         x.data_ptr());
}

// Scan the `rows` contiguous rows of `n` elements of x into out0 (and out1), all contiguous: one block per chunk
// (kChunk elements, kChunkIndexed with indices), decoupled look-back (scan.cu, Note [Decoupled look-back]).
void scan_rows(int dev, const std::string &base, const Tensor &x, int64_t rows, int64_t n, void *out0, void *out1) {
  if (n <= kWarpRow) {
    const LaunchConfig c = elementwise_config(dev, rows * 32);  // 32 threads (a warp) per row
    launch(kernel(dev, kModule, kname((base + "_warps").c_str(), x.dtype())), c, stream_for(dev), rows, n,
           static_cast<char *>(out0), static_cast<char *>(out1), x.data_ptr());
    return;
  }
  const int64_t chunk = out1 ? kChunkIndexed : kChunk;  // out1: cummax/cummin's indices
  const int64_t nchunks = (n + chunk - 1) / chunk, blocks = rows * nchunks;
  if (blocks > int64_t(INT32_MAX)) {
    scan_lines(dev, base, x, rows, n, 1, out0, out1);
    return;
  }
  // The ticket counter (an int64) and two ints per chunk (a flag, or a packed 64-bit status word: Note [Packed
  // status words]), zeroed; then the chunks' aggregates and inclusive totals (kStateBytes each, never read
  // before written).
  Tensor ctrl = int_zeros(dev, {2 + 2 * blocks});
  Tensor states = empty_tensor({2 * blocks * kStateBytes}, ScalarType::UInt8, x.device());
  char *agg = static_cast<char *>(states.data_ptr()), *incl = agg + blocks * kStateBytes;
  launch(kernel(dev, kModule, kname((base + "_rows").c_str(), x.dtype())), LaunchConfig{unsigned(blocks), kScanThreads, 0},
         stream_for(dev), n, nchunks, static_cast<char *>(out0), static_cast<char *>(out1),
         static_cast<int *>(ctrl.data_ptr()), static_cast<void *>(agg), static_cast<void *>(incl), x.data_ptr());
}

// `self` scanned along `dim` in dtype `rt` with kernels `<base>_*`: the values (and, for cummax/cummin, the
// int64 indices), new contiguous tensors of self's shape.
std::tuple<Tensor, Tensor> scan_cuda(const char *op, const char *base, const Tensor &self, int64_t dim,
                                     ScalarType rt, bool with_indices) {
  const int dev = common_device(op, {self}, false);
  check_real(op, self.dtype());
  check_real(op, rt);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor values = empty_tensor(self.sizes(), rt, device);
  Tensor indices = with_indices ? empty_tensor(self.sizes(), ScalarType::Int64, device) : Tensor();
  if (self.numel() == 0) return {values, indices};
  const int64_t nd = self.dim(), d = nd ? wrap_dim(dim, nd, op) : 0;
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t i = 0; i < nd; ++i) (i < d ? outer : i == d ? n : inner) *= self.size(i);
  Tensor x = self.is_contiguous() && self.dtype() == rt ? self : contiguous_as(self, rt);
  void *i_ptr = with_indices ? indices.data_ptr() : nullptr;
  const std::string b(base);
  if (inner == 1) {
    scan_rows(dev, b, x, outer, n, values.data_ptr(), i_ptr);
  } else if (outer * inner >= kMinLines || n == 1) {
    scan_lines(dev, b, x, outer, n, inner, values.data_ptr(), i_ptr);
  } else if (const int64_t segs = segment_count(dev, outer * inner, n, inner); segs > 1) {
    scan_segments(dev, b, x, outer, n, inner, segs, values.data_ptr(), i_ptr);
  } else {
    // The scanned dim last: a permuted view, copied contiguous; scanned as rows; copied back.
    Shape sizes, strides;
    for (int64_t i = 0; i < nd; ++i)
      if (i != d) { sizes.push_back(self.size(i)); strides.push_back(x.stride(i)); }
    sizes.push_back(self.size(d));
    strides.push_back(x.stride(d));
    const Tensor xt = contiguous_as(make_view(x, sizes, strides, x.storage_offset()), rt);
    const Tensor vt = empty_tensor(sizes, rt, device);
    const Tensor it = with_indices ? empty_tensor(sizes, ScalarType::Int64, device) : Tensor();
    scan_rows(dev, b, xt, outer * inner, n, vt.data_ptr(), with_indices ? it.data_ptr() : nullptr);
    auto permuted = [&](const Tensor &t) {
      Shape st;
      for (int64_t i = 0; i < nd; ++i)
        if (i != d) st.push_back(t.stride(i));
      st.push_back(t.stride(d));
      return make_view(t, sizes, st, t.storage_offset());
    };
    device_copy(permuted(values), vt);
    if (with_indices) device_copy(permuted(indices), it);
  }
  return {values, indices};
}
}  // namespace

static Tensor cumsum(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("cumsum"), meta_like(self), dim, dtype);
  return std::get<0>(scan_cuda("cumsum", "cumsum", self, dim, m.dtype(), false));
}
static Tensor cumsum_out(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype, const Tensor &out) {
  return copy_to_out("cumsum", cumsum(self, dim, dtype ? dtype : std::optional<ScalarType>(out.dtype())), out);
}
static Tensor cumprod(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("cumprod"), meta_like(self), dim, dtype);
  return std::get<0>(scan_cuda("cumprod", "cumprod", self, dim, m.dtype(), false));
}
static std::tuple<Tensor, Tensor> cummax(const Tensor &self, int64_t dim) {
  call_op<std::tuple<Tensor, Tensor>>(TP_OP("cummax"), meta_like(self), dim);
  return scan_cuda("cummax", "cummax", self, dim, self.dtype(), true);
}
static std::tuple<Tensor, Tensor> cummin(const Tensor &self, int64_t dim) {
  call_op<std::tuple<Tensor, Tensor>>(TP_OP("cummin"), meta_like(self), dim);
  return scan_cuda("cummin", "cummin", self, dim, self.dtype(), true);
}
static Tensor logcumsumexp(const Tensor &self, int64_t dim) {
  const Tensor m = call_op<Tensor>(TP_OP("logcumsumexp"), meta_like(self), dim);
  return std::get<0>(scan_cuda("logcumsumexp", "logcumsumexp", self, dim, m.dtype(), false));
}

TP_LIBRARY(cuda_scan) {
  TP_IMPL(lib, "cumsum", CUDA, cumsum);
  TP_IMPL(lib, "cumsum.out", CUDA, cumsum_out);
  TP_IMPL(lib, "cumprod", CUDA, cumprod);
  TP_IMPL(lib, "cummax", CUDA, cummax);
  TP_IMPL(lib, "cummin", CUDA, cummin);
  TP_IMPL(lib, "logcumsumexp", CUDA, logcumsumexp);
}

}  // namespace tp::p10::cuda
