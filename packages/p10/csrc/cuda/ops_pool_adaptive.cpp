// ops_pool_adaptive.cpp — the CUDA kernels of adaptive pooling: adaptive_avg_pool1d/2d/3d and
// adaptive_max_pool1d/2d/3d (values and indices), with their .out forms.
//
// Where it sits: the CUDA twin of kernels/pool_adaptive.cpp; the arithmetic is adaptive_*_pool in
// tensorplay_p10/cuda_kernels/pool.cu (Note [Adaptive windows]: the windows follow from the input and output
// sizes alone). The CPU op, asked on a meta tensor (cuda/ops_meta.h), checks the call and the dtype (floating
// only) and gives the output shape; the out= forms copy with the CPU's pool_copy_out. Backward (tpx
// formulas/conv.py) is scatter_add for the max and a product with the averaging matrices for the average.
#include "cuda/ops_meta.h"
#include "cuda/pool.h"

namespace tp::p10::cuda {

namespace {

using Ints = std::vector<int64_t>;

// The adaptive pool of `self` into the shape of the meta result `meta`: values, and indices for the max.
std::tuple<Tensor, Tensor> adaptive(const char *op, const Tensor &meta, const Tensor &self, int nsp, bool is_max) {
  const int dev = pool_device(op, self);
  DeviceGuard guard(dev);
  Tensor out = empty_as_meta(meta, self.device());
  Tensor ind = is_max ? empty_tensor(meta.sizes(), ScalarType::Int64, self.device()) : Tensor();
  if (out.numel() == 0) return {out, ind};  // an output size of 0 (the windows would divide by it)
  const PoolWindow w = plane_window(self, meta, nsp);
  const Tensor x = contiguous_planes(self);
  const int64_t total = out.numel();
  const LaunchConfig c = elementwise_config(dev, total);
  if (is_max)
    launch(kernel(dev, "pool.cu", kname("adaptive_max_pool", self.dtype())), c, stream_for(dev), total, w,
           out.data_ptr(), ind.data_ptr(), x.data_ptr());
  else
    launch(kernel(dev, "pool.cu", kname("adaptive_avg_pool", self.dtype())), c, stream_for(dev), total, w,
           out.data_ptr(), x.data_ptr());
  return {out, ind};
}

}  // namespace

#define TP_ADAPTIVE(D)                                                                                          \
  static Tensor adaptive_avg_pool##D##d(const Tensor &self, Ints size) {                                       \
    const Tensor m = call_op<Tensor>(TP_OP("adaptive_avg_pool" #D "d"), meta_like(self), size);                \
    return std::get<0>(adaptive("adaptive_avg_pool" #D "d", m, self, D, false));                               \
  }                                                                                                             \
  static std::tuple<Tensor, Tensor> adaptive_max_pool##D##d(const Tensor &self, Ints size) {                   \
    const auto m = call_op<std::tuple<Tensor, Tensor>>(TP_OP("adaptive_max_pool" #D "d"), meta_like(self), size); \
    return adaptive("adaptive_max_pool" #D "d", std::get<0>(m), self, D, true);                                \
  }
TP_ADAPTIVE(1)
TP_ADAPTIVE(2)
TP_ADAPTIVE(3)
#undef TP_ADAPTIVE

#define TP_ADAPTIVE_OUT(D)                                                                                      \
  static Tensor adaptive_avg_pool##D##d_out(const Tensor &self, Ints size, const Tensor &out) {                \
    pool_device("adaptive_avg_pool" #D "d.out", self, out);                                                     \
    return pool_copy_out("adaptive_avg_pool" #D "d.out", adaptive_avg_pool##D##d(self, size), out);             \
  }                                                                                                             \
  static std::tuple<Tensor, Tensor> adaptive_max_pool##D##d_out(const Tensor &self, Ints size, const Tensor &out, \
                                                                const Tensor &ind) {                           \
    const char *op = "adaptive_max_pool" #D "d.out";                                                            \
    pool_device(op, self, out, ind);                                                                            \
    auto [v, i] = adaptive_max_pool##D##d(self, size);                                                          \
    return {pool_copy_out(op, v, out), pool_copy_out(op, i, ind)};                                              \
  }
TP_ADAPTIVE_OUT(2)
TP_ADAPTIVE_OUT(3)
#undef TP_ADAPTIVE_OUT

TP_LIBRARY(cuda_pool_adaptive) {
  TP_IMPL(lib, "adaptive_avg_pool1d", CUDA, adaptive_avg_pool1d);
  TP_IMPL(lib, "adaptive_avg_pool2d", CUDA, adaptive_avg_pool2d);
  TP_IMPL(lib, "adaptive_avg_pool3d", CUDA, adaptive_avg_pool3d);
  TP_IMPL(lib, "adaptive_avg_pool2d.out", CUDA, adaptive_avg_pool2d_out);
  TP_IMPL(lib, "adaptive_avg_pool3d.out", CUDA, adaptive_avg_pool3d_out);
  TP_IMPL(lib, "adaptive_max_pool1d", CUDA, adaptive_max_pool1d);
  TP_IMPL(lib, "adaptive_max_pool2d", CUDA, adaptive_max_pool2d);
  TP_IMPL(lib, "adaptive_max_pool3d", CUDA, adaptive_max_pool3d);
  TP_IMPL(lib, "adaptive_max_pool2d.out", CUDA, adaptive_max_pool2d_out);
  TP_IMPL(lib, "adaptive_max_pool3d.out", CUDA, adaptive_max_pool3d_out);
}

}  // namespace tp::p10::cuda
