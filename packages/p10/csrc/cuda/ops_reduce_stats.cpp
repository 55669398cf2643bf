// ops_reduce_stats.cpp — the CUDA kernels for var, std, var_mean, std_mean (each in its three forms:
// .correction, .dim and plain), logsumexp, norm and norm.str.
//
// Where it sits: the CUDA twins of kernels/reduce_stats.cpp. The CPU op on meta tensors (ops_meta.h) checks the
// call and gives the results' shapes and dtypes; reduce.h lays out and launches; the arithmetic is
// tensorplay_p10/cuda_kernels/reduce_stats.cu (Note [Welford on the device], Note [Online logsumexp]).
#include <cmath>

#include "cuda/ops_meta.h"
#include "cuda/reduce.h"

namespace tp::p10::cuda {

using Dims = std::optional<std::vector<int64_t>>;
using Corr = std::optional<Scalar>;
using Pair = std::tuple<Tensor, Tensor>;
constexpr const char *kModule = "reduce_stats.cu";

// var (and std with `take_sqrt`) of `self` over `dim`; the mean as well when `mean_meta` is defined.
static Pair var_cuda(const char *op, const Tensor &var_meta, const Tensor &mean_meta, const Tensor &self,
                     const Dims &dim, double correction, bool take_sqrt) {
  const int dev = common_device(op, {self}, false);
  check_real(op, self.dtype());
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor var = empty_tensor(var_meta.sizes(), var_meta.dtype(), device);
  Tensor mean = mean_meta.defined() ? empty_tensor(mean_meta.sizes(), mean_meta.dtype(), device) : Tensor();
  if (var.numel() == 0) return {var, mean};
  const int mode = (take_sqrt ? 1 : 0) | (mean.defined() ? 2 : 0);
  run_reduce(dev, kModule, "var", reduce_layout(self, reduced_dims(self.dim(), dim), self.dtype()), var.data_ptr(),
             mean.defined() ? mean.data_ptr() : nullptr, correction, mode);
  return {var, mean};
}

static double corr_of(const Corr &c) { return c ? c->to_double() : 1.0; }
static double corr_of(bool unbiased) { return unbiased ? 1.0 : 0.0; }

static Tensor var_corr(const Tensor &self, Dims dim, Corr correction, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("var.correction"), meta_like(self), dim, correction, keepdim);
  return std::get<0>(var_cuda("var", m, Tensor(), self, dim, corr_of(correction), false));
}
static Tensor var_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("var.dim"), meta_like(self), dim, unbiased, keepdim);
  return std::get<0>(var_cuda("var", m, Tensor(), self, dim, corr_of(unbiased), false));
}
static Tensor var_all(const Tensor &self, bool unbiased) {
  const Tensor m = call_op<Tensor>(TP_OP("var"), meta_like(self), unbiased);
  return std::get<0>(var_cuda("var", m, Tensor(), self, Dims(), corr_of(unbiased), false));
}
static Tensor std_corr(const Tensor &self, Dims dim, Corr correction, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("std.correction"), meta_like(self), dim, correction, keepdim);
  return std::get<0>(var_cuda("std", m, Tensor(), self, dim, corr_of(correction), true));
}
static Tensor std_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("std.dim"), meta_like(self), dim, unbiased, keepdim);
  return std::get<0>(var_cuda("std", m, Tensor(), self, dim, corr_of(unbiased), true));
}
static Tensor std_all(const Tensor &self, bool unbiased) {
  const Tensor m = call_op<Tensor>(TP_OP("std"), meta_like(self), unbiased);
  return std::get<0>(var_cuda("std", m, Tensor(), self, Dims(), corr_of(unbiased), true));
}
static Pair var_mean_corr(const Tensor &self, Dims dim, Corr correction, bool keepdim) {
  const auto [v, m] = call_op<Pair>(TP_OP("var_mean.correction"), meta_like(self), dim, correction, keepdim);
  return var_cuda("var_mean", v, m, self, dim, corr_of(correction), false);
}
static Pair var_mean_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  const auto [v, m] = call_op<Pair>(TP_OP("var_mean.dim"), meta_like(self), dim, unbiased, keepdim);
  return var_cuda("var_mean", v, m, self, dim, corr_of(unbiased), false);
}
static Pair var_mean_all(const Tensor &self, bool unbiased) {
  const auto [v, m] = call_op<Pair>(TP_OP("var_mean"), meta_like(self), unbiased);
  return var_cuda("var_mean", v, m, self, Dims(), corr_of(unbiased), false);
}
static Pair std_mean_corr(const Tensor &self, Dims dim, Corr correction, bool keepdim) {
  const auto [v, m] = call_op<Pair>(TP_OP("std_mean.correction"), meta_like(self), dim, correction, keepdim);
  return var_cuda("std_mean", v, m, self, dim, corr_of(correction), true);
}
static Pair std_mean_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  const auto [v, m] = call_op<Pair>(TP_OP("std_mean.dim"), meta_like(self), dim, unbiased, keepdim);
  return var_cuda("std_mean", v, m, self, dim, corr_of(unbiased), true);
}
static Pair std_mean_all(const Tensor &self, bool unbiased) {
  const auto [v, m] = call_op<Pair>(TP_OP("std_mean"), meta_like(self), unbiased);
  return var_cuda("std_mean", v, m, self, Dims(), corr_of(unbiased), true);
}

// Integer inputs are taken in the result dtype (the default float dtype), as on the CPU.
static Tensor logsumexp(const Tensor &self, std::vector<int64_t> dim, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("logsumexp"), meta_like(self), dim, keepdim);
  return reduce_new("logsumexp", m, self, Dims(dim), m.dtype(), kModule, "logsumexp");
}

// reduce_stats.cu's NormOp modes.
static int norm_mode(double p) {
  if (p == 2) return 0;
  if (p == 1) return 1;
  if (p == INFINITY) return 2;
  if (p == -INFINITY) return 3;
  if (p == 0) return 4;
  return 5;
}
static Tensor norm(const Tensor &self, std::optional<Scalar> p, Dims dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("norm"), meta_like(self), p, dim, keepdim, dtype);
  const double pv = p ? p->to_double() : 2.0;
  return reduce_new("norm", m, self, dim, dtype.value_or(self.dtype()), kModule, "norm", pv, norm_mode(pv));
}
static Tensor norm_str(const Tensor &self, std::string p, Dims dim, bool keepdim, std::optional<ScalarType> dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("norm.str"), meta_like(self), p, dim, keepdim, dtype);
  return reduce_new("norm", m, self, dim, dtype.value_or(self.dtype()), kModule, "norm", 2.0, 0);
}

TP_LIBRARY(cuda_reduce_stats) {
  TP_IMPL(lib, "var.correction", CUDA, var_corr);
  TP_IMPL(lib, "var.dim", CUDA, var_dim);
  TP_IMPL(lib, "var", CUDA, var_all);
  TP_IMPL(lib, "std.correction", CUDA, std_corr);
  TP_IMPL(lib, "std.dim", CUDA, std_dim);
  TP_IMPL(lib, "std", CUDA, std_all);
  TP_IMPL(lib, "var_mean.correction", CUDA, var_mean_corr);
  TP_IMPL(lib, "var_mean.dim", CUDA, var_mean_dim);
  TP_IMPL(lib, "var_mean", CUDA, var_mean_all);
  TP_IMPL(lib, "std_mean.correction", CUDA, std_mean_corr);
  TP_IMPL(lib, "std_mean.dim", CUDA, std_mean_dim);
  TP_IMPL(lib, "std_mean", CUDA, std_mean_all);
  TP_IMPL(lib, "logsumexp", CUDA, logsumexp);
  TP_IMPL(lib, "norm", CUDA, norm);
  TP_IMPL(lib, "norm.str", CUDA, norm_str);
}

}  // namespace tp::p10::cuda
