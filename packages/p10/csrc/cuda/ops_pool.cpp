// ops_pool.cpp — the CUDA kernels of sliding-window pooling: max_pool1d/2d/3d (with and without indices, and
// the .out forms) and avg_pool1d/2d/3d (count_include_pad, ceil_mode, divisor_override, and the .out forms).
//
// Where it sits: the CUDA twin of kernels/pool.cpp; the arithmetic is tensorplay_p10/cuda_kernels/pool.cu. The
// CPU op, asked on a meta tensor (cuda/ops_meta.h), checks the call with PyTorch's messages and gives the
// output shape (ceil_mode included); the window parameters are then read with kernels/pool.h's pool_param, as
// the CPU reads them. The out= forms compute, then copy into `out` with the CPU's pool_copy_out (its dtype
// check and resize rules; the copy is the dispatched, CUDA copy_). Backward is composed of other ops (tpx
// formulas/conv.py): scatter_add for max, a transposed convolution for avg.
#include <optional>

#include "cuda/ops_meta.h"
#include "cuda/pool.h"

namespace tp::p10::cuda {

namespace {

using Ints = std::vector<int64_t>;

// The window of a max or avg pool: sizes from the input and the meta result, parameters as the CPU reads them
// (stride [] means stride = kernel_size; avg pooling has no dilation).
PoolWindow sliding_window(const char *op, const Tensor &self, const Tensor &meta, int nsp, const Ints &k,
                          const Ints &s, const Ints &p, const Ints &d) {
  PoolWindow w = plane_window(self, meta, nsp);
  pool_param(op, "", k, nsp, 1, w.k);
  pool_param(op, "", s.empty() ? k : s, nsp, 1, w.s);
  pool_param(op, "", p, nsp, 0, w.p);
  if (!d.empty()) pool_param(op, "", d, nsp, 1, w.d);
  return w;
}

// Every index max_pool32_* computes fits in int32 with room to spare (Note [32-bit pooling indices] in pool.cu):
// the input, the output, and each dim's window arithmetic (o * s - p + k * d).
bool pool_fits_int32(const PoolWindow &w, int64_t in_numel, int64_t out_numel) {
  constexpr int64_t lim = int64_t(1) << 30;
  if (in_numel >= lim || out_numel >= lim) return false;
  for (int i = 0; i < 3; ++i)
    if (w.out[i] * w.s[i] + w.p[i] + w.k[i] * w.d[i] + w.in[i] >= lim) return false;
  return true;
}

// Max pooling after the meta call `meta` checked it: values, and indices when `want_indices`.
std::tuple<Tensor, Tensor> max_pool(const char *op, const Tensor &meta, const Tensor &self, int nsp, const Ints &k,
                                    const Ints &s, const Ints &p, const Ints &d, bool want_indices) {
  const int dev = pool_device(op, self);
  DeviceGuard guard(dev);
  // The CPU's meta call skips its dtype dispatch: the real dtypes but bool, as TP_DISPATCH_REAL.
  if (self.dtype() == ScalarType::Bool || is_complex(self.dtype())) throw_unsupported_dtype(op, self.dtype());
  Tensor out = empty_as_meta(meta, self.device());
  Tensor ind = want_indices ? empty_tensor(meta.sizes(), ScalarType::Int64, self.device()) : Tensor();
  if (out.numel() == 0) return {out, ind};
  const PoolWindow w = sliding_window(op, self, meta, nsp, k, s, p, d);
  const Tensor x = contiguous_planes(self);
  const int64_t total = out.numel();
  const char *base = pool_fits_int32(w, x.numel(), total) ? "max_pool32" : "max_pool";
  launch(kernel(dev, "pool.cu", kname(base, self.dtype())), elementwise_config(dev, total), stream_for(dev), total, w,
         out.data_ptr(), want_indices ? ind.data_ptr() : nullptr, x.data_ptr());
  return {out, ind};
}

Tensor avg_pool(const char *op, const Tensor &meta, const Tensor &self, int nsp, const Ints &k, const Ints &s,
                const Ints &p, bool count_include_pad, std::optional<int64_t> divisor) {
  const int dev = pool_device(op, self);
  DeviceGuard guard(dev);
  Tensor out = empty_as_meta(meta, self.device());  // the meta call refused the dtypes avg_pool does not take
  if (out.numel() == 0) return out;
  const PoolWindow w = sliding_window(op, self, meta, nsp, k, s, p, {});
  const Tensor x = contiguous_planes(self);
  const int64_t total = out.numel();
  launch(kernel(dev, "pool.cu", kname("avg_pool", self.dtype())), elementwise_config(dev, total), stream_for(dev),
         total, w, int(count_include_pad), int64_t(divisor.value_or(0)), out.data_ptr(), x.data_ptr());
  return out;
}

}  // namespace

// ---- the registered ops: each asks its own CPU op on meta first ---------------------------------------------
#define TP_MAX_POOL(D)                                                                                          \
  static Tensor max_pool##D##d(const Tensor &self, Ints k, Ints s, Ints p, Ints d, bool ceil_mode) {           \
    const Tensor m = call_op<Tensor>(TP_OP("max_pool" #D "d"), meta_like(self), k, s, p, d, ceil_mode);        \
    return std::get<0>(max_pool("max_pool" #D "d", m, self, D, k, s, p, d, false));                            \
  }                                                                                                             \
  static std::tuple<Tensor, Tensor> max_pool##D##d_with_indices(const Tensor &self, Ints k, Ints s, Ints p,     \
                                                                Ints d, bool ceil_mode) {                      \
    const auto m = call_op<std::tuple<Tensor, Tensor>>(TP_OP("max_pool" #D "d_with_indices"), meta_like(self), \
                                                       k, s, p, d, ceil_mode);                                 \
    return max_pool("max_pool" #D "d", std::get<0>(m), self, D, k, s, p, d, true);                             \
  }
TP_MAX_POOL(1)
TP_MAX_POOL(2)
TP_MAX_POOL(3)
#undef TP_MAX_POOL

#define TP_MAX_POOL_OUT(D)                                                                                      \
  static std::tuple<Tensor, Tensor> max_pool##D##d_with_indices_out(const Tensor &self, Ints k, Ints s, Ints p, \
                                                                    Ints d, bool ceil_mode, const Tensor &out, \
                                                                    const Tensor &ind) {                       \
    const char *op = "max_pool" #D "d_with_indices.out";                                                       \
    pool_device(op, self, out, ind);                                                                            \
    auto [v, i] = max_pool##D##d_with_indices(self, k, s, p, d, ceil_mode);                                     \
    return {pool_copy_out(op, v, out), pool_copy_out(op, i, ind)};                                              \
  }
TP_MAX_POOL_OUT(2)
TP_MAX_POOL_OUT(3)
#undef TP_MAX_POOL_OUT

static Tensor avg_pool1d(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode, bool count_include_pad) {
  const Tensor m = call_op<Tensor>(TP_OP("avg_pool1d"), meta_like(self), k, s, p, ceil_mode, count_include_pad);
  return avg_pool("avg_pool1d", m, self, 1, k, s, p, count_include_pad, std::nullopt);
}

#define TP_AVG_POOL(D)                                                                                          \
  static Tensor avg_pool##D##d(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode,                     \
                               bool count_include_pad, std::optional<int64_t> divisor_override) {              \
    const Tensor m = call_op<Tensor>(TP_OP("avg_pool" #D "d"), meta_like(self), k, s, p, ceil_mode,            \
                                     count_include_pad, divisor_override);                                     \
    return avg_pool("avg_pool" #D "d", m, self, D, k, s, p, count_include_pad, divisor_override);              \
  }                                                                                                             \
  static Tensor avg_pool##D##d_out(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode,                 \
                                   bool count_include_pad, std::optional<int64_t> divisor_override,            \
                                   const Tensor &out) {                                                        \
    pool_device("avg_pool" #D "d.out", self, out);                                                              \
    return pool_copy_out("avg_pool" #D "d.out",                                                                 \
                         avg_pool##D##d(self, k, s, p, ceil_mode, count_include_pad, divisor_override), out);  \
  }
TP_AVG_POOL(2)
TP_AVG_POOL(3)
#undef TP_AVG_POOL

TP_LIBRARY(cuda_pool) {
  TP_IMPL(lib, "max_pool1d", CUDA, max_pool1d);
  TP_IMPL(lib, "max_pool2d", CUDA, max_pool2d);
  TP_IMPL(lib, "max_pool3d", CUDA, max_pool3d);
  TP_IMPL(lib, "max_pool1d_with_indices", CUDA, max_pool1d_with_indices);
  TP_IMPL(lib, "max_pool2d_with_indices", CUDA, max_pool2d_with_indices);
  TP_IMPL(lib, "max_pool3d_with_indices", CUDA, max_pool3d_with_indices);
  TP_IMPL(lib, "max_pool2d_with_indices.out", CUDA, max_pool2d_with_indices_out);
  TP_IMPL(lib, "max_pool3d_with_indices.out", CUDA, max_pool3d_with_indices_out);
  TP_IMPL(lib, "avg_pool1d", CUDA, avg_pool1d);
  TP_IMPL(lib, "avg_pool2d", CUDA, avg_pool2d);
  TP_IMPL(lib, "avg_pool3d", CUDA, avg_pool3d);
  TP_IMPL(lib, "avg_pool2d.out", CUDA, avg_pool2d_out);
  TP_IMPL(lib, "avg_pool3d.out", CUDA, avg_pool3d_out);
}

}  // namespace tp::p10::cuda
