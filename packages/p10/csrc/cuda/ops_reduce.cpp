// ops_reduce.cpp — the CUDA kernels for sum (over all dims or a list of dims, keepdim, dtype=) and mean.
//
// Where it sits: the CUDA twin of sum in kernels/reduce.cpp. sum runs through the generic reduction plan of
// reduce.h (Note [Reduce layout]): rows when the summed dims are innermost, columns (x.sum(0), the weight
// gradients' sums) read across adjacent columns, a long reduction split over one wave of blocks; the arithmetic
// is SumOp in tensorplay_p10/cuda_kernels/reduce_sums.cu. Note [Result dtypes]: integers and bool sum to int64,
// floats to themselves (PyTorch); 16-bit floats accumulate in float32.
#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "cuda/reduce.h"
#include "kernels/binary_common.h"

namespace tp::p10::cuda {

static Tensor sum(const Tensor &self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                  std::optional<ScalarType> dtype) {
  const int dev = common_device("sum", {self}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType in_t = dtype.value_or(self.dtype());
  check_real("sum", in_t);
  const ScalarType kernel_out = is_floating(in_t) ? in_t : ScalarType::Int64;
  const ScalarType out_t = dtype.value_or(kernel_out);
  // Which dims are summed: none given (or an empty list) means all of them, as in PyTorch.
  const int64_t nd = self.dim();
  std::vector<bool> reduced(size_t(nd), !dim || dim->empty());
  if (dim)
    for (int64_t d : *dim) {
      int64_t w = wrap_dim(d, nd, "sum");
      TP_CHECK(!reduced[size_t(w)] || dim->empty(), Runtime, "sum: dim ", w, " appears multiple times in the list of dims");
      reduced[size_t(w)] = true;
    }
  Shape out_shape;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[size_t(d)]) out_shape.push_back(self.size(d));
    else if (keepdim) out_shape.push_back(1);
  Tensor total = empty_tensor(out_shape, kernel_out, device);
  if (total.numel() == 0) return kernel_out == out_t ? total : empty_tensor(out_shape, out_t, device);
  // An empty reduced range writes SumOp's init(), 0.
  run_reduce(dev, "reduce_sums.cu", "sum", reduce_layout(self, reduced, in_t), total.data_ptr(), nullptr, 0.0, 0);
  if (kernel_out == out_t) return total;
  Tensor result = empty_tensor(out_shape, out_t, device);
  device_copy(result, total);
  return result;
}

// mean = sum / count, on the device. The CPU op, run on a meta copy, checks the arguments (an integer input
// without dtype= is refused, as in PyTorch) and gives the result's shape and dtype (ops_meta.h). The sum is taken
// in float32 for 16-bit floats, so the division sees the float32 total, then the result is cast once. An
// empty reduction divides 0 by 0: NaN, as PyTorch gives.
static Tensor mean(const Tensor &self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  const Tensor meta = call_op<Tensor>(TP_OP("mean"), meta_like(self), dim, keepdim, dtype);
  const int dev = common_device("mean", {self}, false);
  DeviceGuard guard(dev);
  const ScalarType out_t = meta.dtype();
  const ScalarType sum_t = out_t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  const Tensor total = sum(self, dim, keepdim, is_floating(out_t) ? sum_t : out_t);
  const int64_t count = total.numel() ? self.numel() / total.numel() : 0;
  Tensor r = call_op<Tensor>(TP_OP("div"), total, wrapped_scalar(Scalar(double(count))),
                             std::optional<std::string>());
  if (r.dtype() != out_t) r = call_op<Tensor>(TP_OP("to"), r, std::optional<ScalarType>(out_t),
                                               std::optional<Device>(), false);
  return r;
}

TP_LIBRARY(cuda_reduce) {
  TP_IMPL(lib, "sum", CUDA, sum);
  TP_IMPL(lib, "mean", CUDA, mean);
}

}  // namespace tp::p10::cuda
