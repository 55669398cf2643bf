// ops_order_stats.cpp — CUDA kernels for median, nanmedian (whole tensor and .dim), mode, quantile and
// nanquantile (tensor q and .scalar), all on top of the row sort of ops_sort.cpp.
//
// Where it sits: the CUDA twin of the order statistics in kernels/reduce_order.cpp; the lookups are
// tensorplay_p10/cuda_kernels/order_stats.cu. Each op asks the CPU op on meta tensors for its checks and its
// result's shape (cuda/ops_meta.h), brings the data to rows (the reduced dim last, contiguous; the whole tensor
// as one row when there is no dim), sorts every row by (value, index) with NaNs last — the order the CPU's
// nth_element / sort choices follow — and reads each statistic off the sorted row.
#include <cmath>

#include "cuda/ops_meta.h"
#include "cuda/sort.h"

namespace tp::p10::cuda {

namespace {
// The rows of `self` for a reduction over `dim` (all dims when none): contiguous, the row length in `len`.
Tensor reduction_rows(const Tensor &self, std::optional<int64_t> dim, int64_t &len, const char *op) {
  if (!dim || self.dim() == 0) {
    len = self.numel();
    const Tensor x = self.is_contiguous() ? self : contiguous_as(self, self.dtype());
    return make_view(x, {len}, {1}, x.storage_offset());
  }
  const int64_t d = wrap_dim(*dim, self.dim(), op);
  len = self.size(d);
  return rows_of(self, d);
}

// Copies the flat per-row results `flat` ([numel]) into `result` (any layout, same numel, same dtype).
void write_rows(const Tensor &result, const Tensor &flat) {
  if (result.numel() == 0) return;
  device_copy(result, make_view(flat, result.sizes(), contiguous_strides(result.sizes()), flat.storage_offset()));
}

// Sorted rows of x (ascending, NaN last), in new [rows * len] tensors.
std::tuple<Tensor, Tensor> sort_all(const Tensor &x, int64_t rows, int64_t len) {
  Tensor v = empty_tensor({rows * len}, x.dtype(), x.device()), i = empty_tensor({rows * len}, ScalarType::Int64, x.device());
  sort_rows(x, rows, len, false, len, v, i);
  return {v, i};
}

unsigned grid_for(int dev, int64_t n) { return elementwise_config(dev, n).grid; }

// median / nanmedian: values into `values`; indices into `indices` when it is defined.
void median_into(const char *op, const Tensor &self, std::optional<int64_t> dim, bool ignore_nan,
                 const Tensor &values, const Tensor &indices) {
  int64_t len = 0;
  const Tensor x = reduction_rows(self, dim, len, op);
  const int64_t rows = values.numel();
  if (rows == 0) return;
  const int dev = self.device().index;
  if (len == 0) {  // median() of an empty tensor: NaN, as on the CPU (0 for integers: NaN cast to them)
    call_op<Tensor>(TP_OP("fill_"), values, is_floating(self.dtype()) ? Scalar(NAN) : Scalar(int64_t(0)));
    return;
  }
  auto [sv, si] = sort_all(x, rows, len);
  Tensor ov = empty_tensor({rows}, self.dtype(), self.device());
  Tensor oi = indices.defined() ? empty_tensor({rows}, ScalarType::Int64, self.device()) : Tensor();
  launch(kernel(dev, "order_stats.cu", kname("median_pick", self.dtype())), LaunchConfig{grid_for(dev, rows), 256, 0},
         stream_for(dev), rows, len, int(ignore_nan), sv.data_ptr(), si.data_ptr(), ov.data_ptr(),
         oi.defined() ? oi.data_ptr() : static_cast<void *>(nullptr));
  write_rows(values, ov);
  if (indices.defined()) write_rows(indices, oi);
}

Tensor median_all(const char *op, const Tensor &self, bool ignore_nan) {
  const Tensor m = call_op<Tensor>(require_op(ignore_nan ? "nanmedian" : "median"), meta_like(self));
  check_real(op, self.dtype());
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  Tensor values = empty_as_meta(m, self.device());
  median_into(op, self, std::nullopt, ignore_nan, values, Tensor());
  return values;
}

std::tuple<Tensor, Tensor> median_dim(const char *op, const Tensor &self, int64_t dim, bool keepdim,
                                      bool ignore_nan) {
  auto [mv, mi] = call_op<std::tuple<Tensor, Tensor>>(require_op(ignore_nan ? "nanmedian.dim" : "median.dim"),
                                                       meta_like(self), dim, keepdim);
  check_real(op, self.dtype());
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  Tensor values = empty_as_meta(mv, self.device()), indices = empty_as_meta(mi, self.device());
  median_into(op, self, dim, ignore_nan, values, indices);
  return {values, indices};
}
}  // namespace

static Tensor median(const Tensor &self) { return median_all("median", self, false); }
static Tensor nanmedian(const Tensor &self) { return median_all("nanmedian", self, true); }
static std::tuple<Tensor, Tensor> median_dim_op(const Tensor &self, int64_t dim, bool keepdim) {
  return median_dim("median", self, dim, keepdim, false);
}
static std::tuple<Tensor, Tensor> nanmedian_dim_op(const Tensor &self, int64_t dim, bool keepdim) {
  return median_dim("nanmedian", self, dim, keepdim, true);
}

static std::tuple<Tensor, Tensor> mode(const Tensor &self, int64_t dim, bool keepdim) {
  auto [mv, mi] = call_op<std::tuple<Tensor, Tensor>>(TP_OP("mode"), meta_like(self), dim, keepdim);
  check_real("mode", self.dtype());
  const int dev = common_device("mode", {self}, false);
  DeviceGuard guard(dev);
  Tensor values = empty_as_meta(mv, self.device()), indices = empty_as_meta(mi, self.device());
  int64_t len = 0;
  const Tensor x = reduction_rows(self, dim, len, "mode");
  const int64_t rows = values.numel();
  if (rows == 0) return {values, indices};
  auto [sv, si] = sort_all(x, rows, len);
  Tensor ov = empty_tensor({rows}, self.dtype(), self.device()), oi = empty_tensor({rows}, ScalarType::Int64, self.device());
  launch(kernel(dev, "order_stats.cu", kname("mode_rows", self.dtype())), LaunchConfig{grid_for(dev, rows), 128, 0},
         stream_for(dev), rows, len, sv.data_ptr(), si.data_ptr(), ov.data_ptr(), oi.data_ptr());
  write_rows(values, ov);
  write_rows(indices, oi);
  return {values, indices};
}

namespace {
// Note [Quantile q values]: the q values are checked on the host (the CPU op's message), which for a device
// q means one small download, as PyTorch's own check does; the kernel then reads them as float64 on the device.
const char *const kInterpolations[] = {"linear", "lower", "higher", "midpoint", "nearest"};

Tensor quantile_cuda(const char *op, const Tensor &meta, const Tensor &self, const std::vector<double> &qs,
                     std::optional<int64_t> dim, const std::string &interpolation, bool ignore_nan) {
  check_real(op, self.dtype());
  for (double q : qs) TP_CHECK(q >= 0 && q <= 1, Runtime, op, "() q values must be in the range [0, 1]");
  const int dev = self.device().index;
  Tensor out = empty_as_meta(meta, self.device());
  if (out.numel() == 0) return out;
  int interp = 0;
  while (interpolation != kInterpolations[interp]) ++interp;  // the meta call has checked the name
  int64_t len = 0;
  const Tensor x = reduction_rows(self, dim, len, op);
  const int64_t nq = int64_t(qs.size()), rows = out.numel() / nq;
  auto [sv, si] = sort_all(x, rows, len);
  Tensor qh = empty_tensor({nq}, ScalarType::Float64, Device{});
  std::copy(qs.begin(), qs.end(), qh.data<double>());
  const Tensor qd = to_device(qh, self.device());
  Tensor flat = empty_tensor({nq * rows}, self.dtype(), self.device());
  launch(kernel(dev, "order_stats.cu", kname("quantile_rows", self.dtype())),
         LaunchConfig{grid_for(dev, nq * rows), 256, 0}, stream_for(dev), rows, len, sv.data_ptr(), nq,
         qd.data_ptr(), int(ignore_nan), interp, flat.data_ptr());
  write_rows(out, flat);  // [nq, rows] in order is the result's [nq, *out_shape]
  return out;
}

Tensor quantile_tensor(const char *op, const char *meta_op, const Tensor &self, const Tensor &q,
                       std::optional<int64_t> dim, bool keepdim, const std::string &interpolation, bool ignore_nan) {
  const Tensor m = call_op<Tensor>(require_op(meta_op), meta_like(self), meta_like(q), dim, keepdim, interpolation);
  const int dev = common_device(op, {self, q}, true);
  DeviceGuard guard(dev);
  Tensor qh = empty_tensor(q.sizes(), ScalarType::Float64, Device{});  // contiguous, on the host
  call_op<Tensor>(TP_OP("copy_"), qh, q, false);
  const double *p = qh.data<double>();
  return quantile_cuda(op, m, self, std::vector<double>(p, p + qh.numel()), dim, interpolation, ignore_nan);
}

Tensor quantile_scalar_impl(const char *op, const char *meta_op, const Tensor &self, double q,
                            std::optional<int64_t> dim, bool keepdim, const std::string &interpolation,
                            bool ignore_nan) {
  const Tensor m = call_op<Tensor>(require_op(meta_op), meta_like(self), q, dim, keepdim, interpolation);
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  return quantile_cuda(op, m, self, {q}, dim, interpolation, ignore_nan);
}
}  // namespace

static Tensor quantile(const Tensor &self, const Tensor &q, std::optional<int64_t> dim, bool keepdim,
                       std::string interpolation) {
  return quantile_tensor("quantile", "quantile", self, q, dim, keepdim, interpolation, false);
}
static Tensor nanquantile(const Tensor &self, const Tensor &q, std::optional<int64_t> dim, bool keepdim,
                          std::string interpolation) {
  return quantile_tensor("nanquantile", "nanquantile", self, q, dim, keepdim, interpolation, true);
}
static Tensor quantile_scalar(const Tensor &self, double q, std::optional<int64_t> dim, bool keepdim,
                              std::string interpolation) {
  return quantile_scalar_impl("quantile", "quantile.scalar", self, q, dim, keepdim, interpolation, false);
}
static Tensor nanquantile_scalar(const Tensor &self, double q, std::optional<int64_t> dim, bool keepdim,
                                 std::string interpolation) {
  return quantile_scalar_impl("nanquantile", "nanquantile.scalar", self, q, dim, keepdim, interpolation, true);
}

TP_LIBRARY(cuda_order_stats) {
  TP_IMPL(lib, "median", CUDA, median);
  TP_IMPL(lib, "nanmedian", CUDA, nanmedian);
  TP_IMPL(lib, "median.dim", CUDA, median_dim_op);
  TP_IMPL(lib, "nanmedian.dim", CUDA, nanmedian_dim_op);
  TP_IMPL(lib, "mode", CUDA, mode);
  TP_IMPL(lib, "quantile", CUDA, quantile);
  TP_IMPL(lib, "nanquantile", CUDA, nanquantile);
  TP_IMPL(lib, "quantile.scalar", CUDA, quantile_scalar);
  TP_IMPL(lib, "nanquantile.scalar", CUDA, nanquantile_scalar);
}

}  // namespace tp::p10::cuda
