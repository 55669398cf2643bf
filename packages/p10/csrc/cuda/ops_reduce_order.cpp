// ops_reduce_order.cpp — the CUDA kernels for max, min (all elements, and .dim with indices), amax, amin,
// aminmax, argmax and argmin.
//
// Where it sits: the CUDA twins of the first half of kernels/reduce_order.cpp (median, mode and quantile are
// not here). The CPU op on meta tensors (ops_meta.h) checks the call — an empty reduced dim raises there, as on
// the CPU — and gives the results' shapes; reduce.h lays out and launches; the arithmetic, NaN propagation and
// the first-index rule are tensorplay_p10/cuda_kernels/reduce_order.cu (Note [NaN and first index on the
// device]).
#include "cuda/ops_meta.h"
#include "cuda/reduce.h"

namespace tp::p10::cuda {

using Dims = std::optional<std::vector<int64_t>>;
constexpr const char *kModule = "reduce_order.cu";

static Dims one_dim(std::optional<int64_t> d) { return d ? Dims(std::vector<int64_t>{*d}) : Dims(); }

static Tensor max(const Tensor &self) {
  const Tensor m = call_op<Tensor>(TP_OP("max"), meta_like(self));
  return reduce_new("max", m, self, Dims(), self.dtype(), kModule, "amax");
}
static Tensor min(const Tensor &self) {
  const Tensor m = call_op<Tensor>(TP_OP("min"), meta_like(self));
  return reduce_new("min", m, self, Dims(), self.dtype(), kModule, "amin");
}
static Tensor amax(const Tensor &self, Dims dim, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("amax"), meta_like(self), dim, keepdim);
  return reduce_new("amax", m, self, dim, self.dtype(), kModule, "amax");
}
static Tensor amin(const Tensor &self, Dims dim, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("amin"), meta_like(self), dim, keepdim);
  return reduce_new("amin", m, self, dim, self.dtype(), kModule, "amin");
}
static std::tuple<Tensor, Tensor> aminmax(const Tensor &self, std::optional<int64_t> dim, bool keepdim) {
  const auto [lo, hi] = call_op<std::tuple<Tensor, Tensor>>(TP_OP("aminmax"), meta_like(self), dim, keepdim);
  return {reduce_new("aminmax", lo, self, one_dim(dim), self.dtype(), kModule, "amin"),
          reduce_new("aminmax", hi, self, one_dim(dim), self.dtype(), kModule, "amax")};
}

// (values, indices) along one dim; `values` skipped (null) for argmax/argmin.
static std::tuple<Tensor, Tensor> arg_reduce(const char *op, const char *base, const Tensor &values_meta,
                                             const Tensor &indices_meta, const Tensor &self,
                                             std::optional<int64_t> dim) {
  const int dev = common_device(op, {self}, false);
  check_real(op, self.dtype());
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor values = values_meta.defined() ? empty_tensor(values_meta.sizes(), values_meta.dtype(), device) : Tensor();
  Tensor indices = empty_tensor(indices_meta.sizes(), ScalarType::Int64, device);
  if (indices.numel() == 0) return {values, indices};
  const ReduceLayout L = reduce_layout(self, reduced_dims(self.dim(), one_dim(dim)), self.dtype());
  run_reduce(dev, kModule, base, L, values.defined() ? values.data_ptr() : nullptr, indices.data_ptr(), 0.0, 0);
  return {values, indices};
}

static std::tuple<Tensor, Tensor> max_dim(const Tensor &self, int64_t dim, bool keepdim) {
  const auto [v, i] = call_op<std::tuple<Tensor, Tensor>>(TP_OP("max.dim"), meta_like(self), dim, keepdim);
  return arg_reduce("max", "argmax", v, i, self, dim);
}
static std::tuple<Tensor, Tensor> min_dim(const Tensor &self, int64_t dim, bool keepdim) {
  const auto [v, i] = call_op<std::tuple<Tensor, Tensor>>(TP_OP("min.dim"), meta_like(self), dim, keepdim);
  return arg_reduce("min", "argmin", v, i, self, dim);
}
static Tensor argmax(const Tensor &self, std::optional<int64_t> dim, bool keepdim) {
  const Tensor i = call_op<Tensor>(TP_OP("argmax"), meta_like(self), dim, keepdim);
  return std::get<1>(arg_reduce("argmax", "argmax", Tensor(), i, self, dim));
}
static Tensor argmin(const Tensor &self, std::optional<int64_t> dim, bool keepdim) {
  const Tensor i = call_op<Tensor>(TP_OP("argmin"), meta_like(self), dim, keepdim);
  return std::get<1>(arg_reduce("argmin", "argmin", Tensor(), i, self, dim));
}

TP_LIBRARY(cuda_reduce_order) {
  TP_IMPL(lib, "max", CUDA, max);
  TP_IMPL(lib, "max.dim", CUDA, max_dim);
  TP_IMPL(lib, "min", CUDA, min);
  TP_IMPL(lib, "min.dim", CUDA, min_dim);
  TP_IMPL(lib, "amax", CUDA, amax);
  TP_IMPL(lib, "amin", CUDA, amin);
  TP_IMPL(lib, "aminmax", CUDA, aminmax);
  TP_IMPL(lib, "argmax", CUDA, argmax);
  TP_IMPL(lib, "argmin", CUDA, argmin);
}

}  // namespace tp::p10::cuda
