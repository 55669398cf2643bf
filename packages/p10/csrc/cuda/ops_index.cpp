// ops_index.cpp — CUDA kernels for gather, scatter_ (.src, .value, reduce="add"/"multiply"), scatter_add_,
// scatter_reduce_.two (sum, prod, mean, amax, amin; include_self), index_select, index_add_, index_copy_,
// index_fill_.int_Scalar, take and put_.
//
// Where it sits: the CUDA twin of kernels/index.cpp; the arithmetic is index.cu's gather and scatter kernels
// (cuda/index_common.h launches them). Each op first runs the CPU op on meta copies of its arguments
// (cuda/ops_meta.h): every shape, dtype and argument check, with the CPU's messages. The index range check
// happens on the device (Note [Device index checks] in index.cu) and is raised after the launch. The
// functional forms (scatter, index_add, ...) are Composites in kernels/index.cpp (clone, then these).
// take is a Composite on the CPU too, but its Composite checks indices on the host, so CUDA has its own.
#include "cuda/index_common.h"

namespace tp::p10::cuda {

namespace {
Device cuda_device(int dev) { return Device{DeviceType::CUDA, int8_t(dev)}; }

// self[.. index[p] ..] (reduce)= src[p] along dim d (Note [Restriding]); `check` the index range (then raise
// IndexError naming `op`) or trust it (kNoCheck: an earlier launch of the same call checked it).
void scatter_along(const char *op, int dev, const Tensor &self, int64_t d, const Tensor &index, const Tensor &src,
                   ScatterReduce reduce, IndexCheck check) {
  if (index.numel() == 0) return;
  const int64_t size = self.dim() ? self.size(d) : 1, step = self.dim() ? self.stride(d) : 0;
  const Tensor dst = self.dim() ? restride(self, index.sizes(), d) : self;
  const Tensor source = src.dim() ? make_view(src, index.sizes(), src.strides(), src.storage_offset()) : src;
  if (check == kNoCheck) {
    launch_scatter(dev, dst, index, source, size, step, kNoCheck, reduce, nullptr, op);
    return;
  }
  IndexErrorFlag err(dev);
  launch_scatter(dev, dst, index, source, size, step, check, reduce, err.ptr(), op);
  err.raise_if_set(op, d, size);
}

// A 0-d tensor holding `value` in `dtype` on `device`, viewed with `shape` and stride 0: a scatter's source.
Tensor value_source(const Scalar &value, ScalarType dtype, Device device, const Shape &shape) {
  Tensor v = call_op<Tensor>(TP_OP("full"), std::vector<int64_t>{}, value, std::optional<ScalarType>(dtype),
                             std::optional<Device>(device));
  return make_view(v, shape, Shape(shape.size(), 0), v.storage_offset());
}

// A 1-D index along dim d, as int64, viewed and expanded to `shape` (kernels/index.cpp spread_index).
Tensor spread_index(const Tensor &index, const Shape &shape, int64_t d) {
  const Tensor idx = as_int64(index);
  Shape view_shape(shape.size(), 1);
  if (!shape.empty()) view_shape[size_t(d)] = idx.numel();
  return call_op<Tensor>(TP_OP("expand"), call_op<Tensor>(TP_OP("reshape"), idx, view_shape), shape);
}

// out = index_select(self, d, index) for a contiguous self: whole rows of `inner` elements, a team of threads
// per row (Note [Row gathers] in index.cu), moved in units of the widest of 16, 8, 4, 2, 1 bytes (at least one
// element) that divides a row and aligns both pointers. A large result checks the indices first (Note [Check
// first] in index_common.h).
void select_rows(int dev, const Tensor &out, const Tensor &self, int64_t d, const Tensor &index) {
  const int64_t index_stride = index.dim() ? index.stride(0) : int64_t(0);
  IndexErrorFlag err(dev);
  void *e = check_first(dev, out.numel() * int64_t(out->itemsize()), index, self.size(d), kNonNegative, err);
  launch_select_rows(dev, out, self, d, index, index_stride, kNonNegative, e);
  err.raise_if_set("index_select", d, self.size(d));
}

ScatterReduce legacy_reduce(const std::optional<std::string> &reduce) {
  if (!reduce) return ScatterReduce::None;
  return *reduce == "add" ? ScatterReduce::Sum : ScatterReduce::Prod;  // the meta call accepted it
}
}  // namespace

static Tensor gather(const Tensor &self, int64_t dim, const Tensor &index, bool sparse_grad) {
  const Tensor m = call_op<Tensor>(TP_OP("gather"), meta_like(self), dim, meta_like(index), sparse_grad);
  const int dev = common_device("gather", {self, index}, false);
  DeviceGuard guard(dev);
  Tensor out = empty_as_meta(m, cuda_device(dev));
  if (out.numel() == 0) return out;
  const int64_t d = wrap_dim(dim, self.dim(), "gather");
  const int64_t size = self.dim() ? self.size(d) : 1, step = self.dim() ? self.stride(d) : 0;
  const Tensor src = self.dim() ? restride(self, index.sizes(), d) : self;
  IndexErrorFlag err(dev);
  // Note [Check first] in index_common.h; a gather moves its out and its int64 index
  void *e = check_first(dev, out.numel() * int64_t(out->itemsize() + 8), index, size, kNonNegative, err);
  launch_gather(dev, out, src, index, size, step, kNonNegative, e, "gather");
  err.raise_if_set("gather", d, size);
  return out;
}

static Tensor scatter_src_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src,
                           std::optional<std::string> reduce) {
  call_op<Tensor>(TP_OP("scatter_.src"), meta_like(self), dim, meta_like(index), meta_like(src), reduce);
  const int dev = common_device("scatter_", {self, index, src}, false);
  DeviceGuard guard(dev);
  self.bump_version();
  scatter_along("scatter_", dev, self, wrap_dim(dim, self.dim(), "scatter_"), index, src, legacy_reduce(reduce),
                kNonNegative);
  return self;
}

static Tensor scatter_value_(const Tensor &self, int64_t dim, const Tensor &index, const Scalar &value,
                             std::optional<std::string> reduce) {
  call_op<Tensor>(TP_OP("scatter_.value"), meta_like(self), dim, meta_like(index), value, reduce);
  const int dev = common_device("scatter_", {self, index}, false);
  DeviceGuard guard(dev);
  check_real("scatter_", self.dtype());
  self.bump_version();
  if (index.numel() == 0) return self;
  const Tensor src = value_source(value, self.dtype(), cuda_device(dev), index.sizes());
  scatter_along("scatter_", dev, self, wrap_dim(dim, self.dim(), "scatter_"), index, src, legacy_reduce(reduce),
                kNonNegative);
  return self;
}

static Tensor scatter_add_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src) {
  call_op<Tensor>(TP_OP("scatter_add_"), meta_like(self), dim, meta_like(index), meta_like(src));
  const int dev = common_device("scatter_add_", {self, index, src}, false);
  DeviceGuard guard(dev);
  self.bump_version();
  scatter_along("scatter_add_", dev, self, wrap_dim(dim, self.dim(), "scatter_add_"), index, src,
                ScatterReduce::Sum, kNonNegative);
  return self;
}

// Note [CUDA scatter_reduce]
//   As on the CPU: include_self=False first resets every target to the reduction's identity (0 for sum and
//   mean, 1 for prod) or, for amax/amin, which have none, writes the sources plainly (whichever lands, the
//   maximum then comes out right). mean sums, counts the contributions per element with a second scatter into
//   an int64 tensor (starting at 1 with include_self, else 0), then divides (scatter_mean_<T>). The first
//   launch checks the index range; the later ones reuse the same, now known good, index.
static Tensor scatter_reduce_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src,
                              std::string reduce, bool include_self) {
  call_op<Tensor>(TP_OP("scatter_reduce_.two"), meta_like(self), dim, meta_like(index), meta_like(src), reduce,
                  include_self);
  const char *op = "scatter_reduce_";
  const int dev = common_device(op, {self, index, src}, false);
  DeviceGuard guard(dev);
  const Device device = cuda_device(dev);
  check_real(op, self.dtype());
  self.bump_version();
  if (index.numel() == 0) return self;
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const bool mean = reduce == "mean";
  const ScatterReduce r = reduce == "prod" ? ScatterReduce::Prod
                          : reduce == "amax" ? ScatterReduce::Max
                          : reduce == "amin" ? ScatterReduce::Min
                                             : ScatterReduce::Sum;  // sum, mean
  IndexCheck check = kNonNegative;
  if (!include_self) {
    if (r == ScatterReduce::Max || r == ScatterReduce::Min) {
      scatter_along(op, dev, self, d, index, src, ScatterReduce::None, check);
    } else {
      const Scalar identity = r == ScatterReduce::Prod ? Scalar(int64_t(1)) : Scalar(int64_t(0));
      scatter_along(op, dev, self, d, index, value_source(identity, self.dtype(), device, index.sizes()),
                    ScatterReduce::None, check);
    }
    check = kNoCheck;
  }
  scatter_along(op, dev, self, d, index, src, r, check);
  if (mean) {
    Tensor counts = call_op<Tensor>(TP_OP("full"), self.sizes(), Scalar(int64_t(include_self ? 1 : 0)),
                                    std::optional<ScalarType>(ScalarType::Int64), std::optional<Device>(device));
    scatter_along(op, dev, counts, d, index,
                  value_source(Scalar(int64_t(1)), ScalarType::Int64, device, index.sizes()), ScatterReduce::Sum,
                  kNoCheck);
    const KernelGeometry g = make_geometry(self.sizes(), {&self, &counts}, op);
    const int64_t n = self.numel();
    launch(kernel(dev, "index.cu", kname("scatter_mean", self.dtype())), elementwise_config(dev, n), stream_for(dev),
           n, g, self.data_ptr(), counts.data_ptr());
  }
  return self;
}

static Tensor index_select(const Tensor &self, int64_t dim, const Tensor &index) {
  const Tensor m = call_op<Tensor>(TP_OP("index_select"), meta_like(self), dim, meta_like(index));
  const int dev = common_device("index_select", {self, index}, false);
  DeviceGuard guard(dev);
  Tensor out = empty_as_meta(m, cuda_device(dev));
  if (out.numel() == 0) return out;
  const int64_t d = wrap_dim(dim, self.dim(), "index_select");
  const int64_t size = self.dim() ? self.size(d) : 1, step = self.dim() ? self.stride(d) : 0;
  int64_t inner = 1;
  for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
  if (self.dim() > 0 && self.is_contiguous() && inner < (int64_t(1) << 31)) {  // whole rows (the embedding lookup)
    select_rows(dev, out, self, d, as_int64(index));
    return out;
  }
  const Tensor idx = self.dim() ? spread_index(index, out.sizes(), d)
                                : call_op<Tensor>(TP_OP("reshape"), as_int64(index), Shape{});
  const Tensor src = self.dim() ? restride(self, out.sizes(), d) : self;
  IndexErrorFlag err(dev);
  launch_gather(dev, out, src, idx, size, step, kNonNegative, err.ptr(), "index_select");
  err.raise_if_set("index_select", d, size);
  return out;
}

static Tensor index_add_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &source,
                         const Scalar &alpha) {
  call_op<Tensor>(TP_OP("index_add_"), meta_like(self), dim, meta_like(index), meta_like(source), alpha);
  const int dev = common_device("index_add_", {self, index, source}, false);
  DeviceGuard guard(dev);
  self.bump_version();
  const int64_t d = wrap_dim(dim, self.dim(), "index_add_");
  Tensor src = source;
  if (alpha.to_double() != 1)
    src = call_op<Tensor>(TP_OP("mul"), source, call_op<Tensor>(TP_OP("scalar_tensor"), alpha,
                                                                std::optional<ScalarType>(), std::optional<Device>()));
  if (src.dtype() != self.dtype()) src = contiguous_as(src, self.dtype());
  scatter_along("index_add_", dev, self, d, spread_index(index, source.sizes(), d), src, ScatterReduce::Sum,
                kNonNegative);
  return self;
}

static Tensor index_copy_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &source) {
  call_op<Tensor>(TP_OP("index_copy_"), meta_like(self), dim, meta_like(index), meta_like(source));
  const int dev = common_device("index_copy_", {self, index, source}, false);
  DeviceGuard guard(dev);
  self.bump_version();
  const int64_t d = wrap_dim(dim, self.dim(), "index_copy_");
  const Tensor src = source.dtype() == self.dtype() ? source : contiguous_as(source, self.dtype());
  scatter_along("index_copy_", dev, self, d, spread_index(index, source.sizes(), d), src, ScatterReduce::None,
                kNonNegative);
  return self;
}

static Tensor index_fill_(const Tensor &self, int64_t dim, const Tensor &index, const Scalar &value) {
  call_op<Tensor>(TP_OP("index_fill_.int_Scalar"), meta_like(self), dim, meta_like(index), value);
  const int dev = common_device("index_fill_", {self, index}, false);
  DeviceGuard guard(dev);
  check_real("index_fill_", self.dtype());
  self.bump_version();
  const int64_t d = wrap_dim(dim, self.dim(), "index_fill_");
  Shape shape = self.sizes();
  if (!shape.empty()) shape[size_t(d)] = index.numel();
  if (shape_numel(shape) == 0) return self;
  const Tensor idx = spread_index(index, shape, d);
  scatter_along("index_fill_", dev, self, d, idx, value_source(value, self.dtype(), cuda_device(dev), shape),
                ScatterReduce::None, kWrapNegative);
  return self;
}

// take: self as a flat list read at `index` (negatives count from the end); the result has index's shape.
static Tensor take(const Tensor &self, const Tensor &index) {
  const Tensor m = call_op<Tensor>(TP_OP("take"), meta_like(self), meta_like(index));
  const int dev = common_device("take", {self, index}, false);
  DeviceGuard guard(dev);
  Tensor out = empty_tensor(m.sizes(), self.dtype(), cuda_device(dev));
  if (out.numel() == 0) return out;
  const Tensor flat = call_op<Tensor>(TP_OP("reshape"), self, std::vector<int64_t>{-1});
  const Tensor src = make_view(flat, index.sizes(), Shape(size_t(index.dim()), 0), flat.storage_offset());
  IndexErrorFlag err(dev);
  launch_gather(dev, out, src, as_int64(index), flat.numel(), flat.numel() ? flat.stride(0) : 1, kWrapNegative,
                err.ptr(), "take");
  err.raise_if_set("take", 0, flat.numel());
  return out;
}

// put_: the flat self written at `index` from `source`; accumulate adds (duplicates included, atomically).
static Tensor put_(const Tensor &self, const Tensor &index, const Tensor &source, bool accumulate) {
  call_op<Tensor>(TP_OP("put_"), meta_like(self), meta_like(index), meta_like(source), accumulate);
  const int dev = common_device("put_", {self, index, source}, false);
  DeviceGuard guard(dev);
  if (!self.is_contiguous()) {  // write into a contiguous copy, then back through self's layout
    const Tensor tmp = contiguous_as(self, self.dtype());
    put_(tmp, index, source, accumulate);
    self.bump_version();
    device_copy(self, tmp);
    return self;
  }
  self.bump_version();
  if (index.numel() == 0) return self;
  const int64_t n = self.numel();
  const Tensor idx = call_op<Tensor>(TP_OP("reshape"), as_int64(index), std::vector<int64_t>{-1});
  const Tensor src = call_op<Tensor>(TP_OP("reshape"), source.dtype() == self.dtype() ? source
                                                       : contiguous_as(source, self.dtype()), std::vector<int64_t>{-1});
  const Tensor dst = make_view(self, {idx.numel()}, {0}, self.storage_offset());
  IndexErrorFlag err(dev);
  launch_scatter(dev, dst, idx, src, n, 1, kWrapNegative, accumulate ? ScatterReduce::Sum : ScatterReduce::None,
                 err.ptr(), "put_");
  err.raise_if_set("put_", 0, n);
  return self;
}

TP_LIBRARY(cuda_index) {
  TP_IMPL(lib, "gather", CUDA, gather);
  TP_IMPL(lib, "scatter_.src", CUDA, scatter_src_);
  TP_IMPL(lib, "scatter_.value", CUDA, scatter_value_);
  TP_IMPL(lib, "scatter_add_", CUDA, scatter_add_);
  TP_IMPL(lib, "scatter_reduce_.two", CUDA, scatter_reduce_);
  TP_IMPL(lib, "index_select", CUDA, index_select);
  TP_IMPL(lib, "index_add_", CUDA, index_add_);
  TP_IMPL(lib, "index_copy_", CUDA, index_copy_);
  TP_IMPL(lib, "index_fill_.int_Scalar", CUDA, index_fill_);
  TP_IMPL(lib, "take", CUDA, take);
  TP_IMPL(lib, "put_", CUDA, put_);
}

}  // namespace tp::p10::cuda
