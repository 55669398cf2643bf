// ops_reduce_sums.cpp — the CUDA kernels for sum.out, mean.out, nansum, nanmean, prod, prod.int_out, all, any
// and count_nonzero.
//
// Where it sits: the CUDA twins of kernels/reduce.cpp. Each asks the CPU op on meta tensors (ops_meta.h) for the
// checks, the result's shape and dtype, then reduces through reduce.h (Note [Reduce layout]); the arithmetic is
// tensorplay_p10/cuda_kernels/reduce_sums.cu. The out= forms compute the plain result and hand it to the CPU's
// own copy_to_out (loop/reduce.h), which is device-agnostic: same dtype check, same resize rule, and a dispatched
// copy_ that runs on the device.
#include "cuda/ops_meta.h"
#include "cuda/reduce.h"
#include "loop/reduce.h"

namespace tp::p10::cuda {

using Dims = std::optional<std::vector<int64_t>>;
using DType = std::optional<ScalarType>;
constexpr const char *kModule = "reduce_sums.cu";

static Tensor sum_out(const Tensor &self, Dims dim, bool keepdim, DType dtype, const Tensor &out) {
  return copy_to_out("sum", call_op<Tensor>(TP_OP("sum"), self, dim, keepdim, dtype ? dtype : DType(out.dtype())),
                     out);
}
static Tensor mean_out(const Tensor &self, Dims dim, bool keepdim, DType dtype, const Tensor &out) {
  return copy_to_out("mean", call_op<Tensor>(TP_OP("mean"), self, dim, keepdim, dtype), out);
}

// nansum / nanmean: the input is cast to the result dtype first (as on the CPU). Integers hold no NaN, so an
// integer nansum is the plain sum.
static Tensor nansum(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("nansum"), meta_like(self), dim, keepdim, dtype);
  if (!is_floating(m.dtype()) && !is_complex(m.dtype())) return call_op<Tensor>(TP_OP("sum"), self, dim, keepdim, dtype);
  return reduce_new("nansum", m, self, dim, m.dtype(), kModule, "nansum", 0.0, 0);
}
static Tensor nanmean(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("nanmean"), meta_like(self), dim, keepdim, dtype);
  return reduce_new("nanmean", m, self, dim, m.dtype(), kModule, "nansum", 0.0, 1);
}

static Tensor prod(const Tensor &self, std::optional<int64_t> dim, bool keepdim, DType dtype) {
  const Tensor m = call_op<Tensor>(TP_OP("prod"), meta_like(self), dim, keepdim, dtype);
  return reduce_new("prod", m, self, dim ? Dims(std::vector<int64_t>{*dim}) : Dims(), m.dtype(), kModule, "prod");
}
static Tensor prod_out(const Tensor &self, int64_t dim, bool keepdim, DType dtype, const Tensor &out) {
  return copy_to_out("prod", prod(self, dim, keepdim, dtype ? dtype : DType(out.dtype())), out);
}

// all / any read the input in its own dtype and write one byte per result (bool, or uint8 for uint8 input).
static Tensor all(const Tensor &self, Dims dim, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("all"), meta_like(self), dim, keepdim);
  return reduce_new("all", m, self, dim, self.dtype(), kModule, "all_any", 0.0, 1);
}
static Tensor any(const Tensor &self, Dims dim, bool keepdim) {
  const Tensor m = call_op<Tensor>(TP_OP("any"), meta_like(self), dim, keepdim);
  return reduce_new("any", m, self, dim, self.dtype(), kModule, "all_any", 0.0, 0);
}
static Tensor count_nonzero(const Tensor &self, Dims dim) {
  const Tensor m = call_op<Tensor>(TP_OP("count_nonzero"), meta_like(self), dim);
  return reduce_new("count_nonzero", m, self, dim, self.dtype(), kModule, "count_nonzero");
}

TP_LIBRARY(cuda_reduce_sums) {
  TP_IMPL(lib, "sum.out", CUDA, sum_out);
  TP_IMPL(lib, "mean.out", CUDA, mean_out);
  TP_IMPL(lib, "nansum", CUDA, nansum);
  TP_IMPL(lib, "nanmean", CUDA, nanmean);
  TP_IMPL(lib, "prod", CUDA, prod);
  TP_IMPL(lib, "prod.int_out", CUDA, prod_out);
  TP_IMPL(lib, "all", CUDA, all);
  TP_IMPL(lib, "any", CUDA, any);
  TP_IMPL(lib, "count_nonzero", CUDA, count_nonzero);
}

}  // namespace tp::p10::cuda
