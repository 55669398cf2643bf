// ops_reduce.cpp — the CUDA kernels for sum (over all dims or a list of dims, keepdim, dtype=) and mean.
//
// Where it sits: the CUDA twin of sum in kernels/reduce.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// reduce.cu. Every sum is brought to one shape first: the kept dims move to the front and the reduced dims to
// the back (a permuted view, made contiguous when it is not already), so the kernels always sum the rows of a
// contiguous [rows, cols] matrix. A single long row (x.sum()) runs on the whole grid in two passes; many rows
// run one block each. Note [Result dtypes]: integers and bool sum to int64, floats to themselves (PyTorch).
#include <algorithm>
#include <numeric>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "kernels/binary_common.h"

namespace tp::p10::cuda {

static ScalarType acc_dtype(ScalarType t) {
  if (t == ScalarType::Float64) return ScalarType::Float64;
  return is_floating(t) ? ScalarType::Float32 : ScalarType::Int64;
}

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
  Shape out_shape, kept_sizes, perm_sizes, perm_strides;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[size_t(d)]) {
      if (keepdim) out_shape.push_back(1);
      cols *= self.size(d);
    } else {
      out_shape.push_back(self.size(d));
      rows *= self.size(d);
      perm_sizes.push_back(self.size(d));
      perm_strides.push_back(self.stride(d));
    }
  }
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[size_t(d)]) { perm_sizes.push_back(self.size(d)); perm_strides.push_back(self.stride(d)); }
  if (shape_numel(out_shape) == 0) return empty_tensor(out_shape, out_t, device);
  if (cols == 0) return call_op<Tensor>(TP_OP("fill_"), empty_tensor(out_shape, out_t, device), Scalar(int64_t(0)));
  // [rows, cols], contiguous, in the dtype the sum is taken in.
  Tensor x = make_view(self, perm_sizes, perm_strides, self.storage_offset());
  if (!x.is_contiguous() || x.dtype() != in_t) x = contiguous_as(x, in_t);
  Tensor flat = empty_tensor({rows}, kernel_out, device);
  const Stream stream = stream_for(dev);
  const int sms = properties(dev).multi_processor_count;
  if (rows < sms && cols >= 65536) {
    // Few long rows: each row gets the whole grid in two passes (sum_partial, then sum_final).
    const LaunchConfig c = elementwise_config(dev, cols, 8, 512);
    const unsigned nparts = std::min<unsigned>(c.grid, 1024);
    Tensor partial = empty_tensor({int64_t(nparts)}, acc_dtype(in_t), device);
    CUfunction part = kernel(dev, "reduce.cu", kname("sum_partial", in_t));
    CUfunction fin = kernel(dev, "reduce.cu", kname("sum_final", in_t));
    for (int64_t r = 0; r < rows; ++r) {
      const char *row = static_cast<const char *>(x.data_ptr()) + r * cols * x->itemsize();
      launch(part, LaunchConfig{nparts, 512, 0}, stream, int64_t(cols), partial.data_ptr(), row);
      launch(fin, LaunchConfig{1, 1024, 0}, stream, int(nparts),
             static_cast<char *>(flat.data_ptr()) + r * flat->itemsize(), partial.data_ptr());
    }
  } else {
    // One block per row; short rows get a smaller block (a multiple of 32, for the warp shuffles).
    unsigned block = 32;
    while (block < 256 && int64_t(block) < cols) block *= 2;
    const unsigned grid = unsigned(std::min<int64_t>(rows, int64_t(sms) * 32));
    launch(kernel(dev, "reduce.cu", kname("sum_rows", in_t)), LaunchConfig{grid, block, 0}, stream, rows, cols,
           flat.data_ptr(), x.data_ptr());
  }
  Tensor shaped = make_view(flat, out_shape, contiguous_strides(out_shape), 0);
  if (kernel_out == out_t) return shaped;
  Tensor result = empty_tensor(out_shape, out_t, device);
  device_copy(result, shaped);
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
