// ops_reduce.cpp — the CUDA kernel for sum (over all dims or a list of dims, keepdim, dtype=).
//
// Where it sits: the CUDA twin of sum in kernels/reduce.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// reduce.cu. Every sum is brought to one shape first: the kept dims move to the front and the reduced dims to
// the back (a permuted view, made contiguous when it is not already), so the kernels always sum the rows of a
// contiguous [rows, cols] matrix. A single long row (x.sum()) runs on the whole grid in two passes; many rows
// run one block each. Note [Result dtypes]: integers and bool sum to int64, floats to themselves (PyTorch).
#include <algorithm>
#include <numeric>

#include "cuda/ops_common.h"

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

TP_LIBRARY(cuda_reduce) { TP_IMPL(lib, "sum", CUDA, sum); }

}  // namespace tp::p10::cuda
