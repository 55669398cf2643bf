// ops_index_advanced.cpp — CUDA kernels for indexing with tensors: index.Tensor (`x[idx]`, `x[mask]`),
// index_put_ (`x[idx] = v`, accumulate=True with atomics), nonzero, masked_fill_.Tensor and masked_scatter_.
//
// Where it sits: the CUDA twin of kernels/index_advanced.cpp, with the same plan (Note [Advanced indexing]
// there): bool masks become long indices (nonzero, Note [Nonzero passes] in index_common.cpp), the index
// tensors broadcast and combine into one int64 tensor of element offsets — here on the device, by
// index.cu's index_offsets, which also wraps negative indices and checks the range (Note [Device index
// checks]) — and index.cu's gather / scatter move the elements. argwhere, index_put, masked_fill,
// masked_select and masked_scatter are Composites in kernels/index_advanced.cpp and reach these.
// Index tensors on the CPU are moved to the device first, as PyTorch allows for indexing.
#include "cuda/index_common.h"

#include <numeric>

namespace tp::p10::cuda {

namespace {
struct Prepared {
  Tensor restrided;  // self with the result's shape and stride 0 on the broadcast index dims
  Tensor offsets;    // int64 element offsets, expanded to `shape`
  Shape shape;       // the indexing result's shape
  Tensor flat;       // the offsets before the expand: contiguous, one per broadcast index position
  int64_t start = 0; // where the broadcast index dims sit in `shape`
  int64_t nb = 0;    // how many they are
  Shape strides;     // the (permuted) self's strides of the indexed dims: every offset is a sum of multiples
};

// kernels/index_advanced.cpp prepare(), with the offsets computed (and checked) on the device.
Prepared prepare(const Tensor &self_in, const std::vector<Tensor> &indices_in, const char *op, int dev) {
  const Device device{DeviceType::CUDA, int8_t(dev)};
  // (1) masks -> long indices, one per mask dim
  std::vector<Tensor> indices;
  for (const Tensor &given : indices_in) {
    const Tensor t = index_on(given, device);
    if (t.defined() && (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8)) {
      const int64_t at = int64_t(indices.size());
      TP_CHECK(at + t.dim() <= self_in.dim(), Index, op, "(): too many indices for tensor of dimension ", self_in.dim());
      for (int64_t k = 0; k < t.dim(); ++k)
        TP_CHECK(t.size(k) == self_in.size(at + k), Index, "The shape of the mask ", shape_str(t.sizes()),
                 " at index ", k, " does not match the shape of the indexed tensor ", shape_str(self_in.sizes()),
                 " at index ", at + k);
      if (t.dim() == 0) fail(ErrorKind::NotImplemented, op, "(): indexing with a 0-d boolean tensor is not supported");
      const Tensor nz = nonzero_cuda(t);
      for (int64_t k = 0; k < t.dim(); ++k) indices.push_back(call_op<Tensor>(TP_OP("select"), nz, int64_t(1), k));
    } else {
      TP_CHECK(!t.defined() || is_integral(t.dtype(), false), Index,
               "tensors used as indices must be long, int, byte or bool tensors, got ", scalar_type_name(t.dtype()));
      indices.push_back(t);
    }
  }
  TP_CHECK(int64_t(indices.size()) <= self_in.dim(), Index, op, "(): too many indices for tensor of dimension ",
           self_in.dim(), " (got ", indices.size(), ")");
  indices.resize(size_t(self_in.dim()));
  // (3) the indexed dims next to each other (to the front) if they are not already adjacent
  std::vector<int64_t> indexed;
  for (int64_t d = 0; d < self_in.dim(); ++d)
    if (indices[size_t(d)].defined()) indexed.push_back(d);
  TP_CHECK(!indexed.empty(), Runtime, op, "(): expected at least one index tensor");
  const bool adjacent = indexed.back() - indexed.front() + 1 == int64_t(indexed.size());
  Tensor self = self_in;
  if (!adjacent) {
    std::vector<int64_t> perm = indexed;
    for (int64_t d = 0; d < self_in.dim(); ++d)
      if (!indices[size_t(d)].defined()) perm.push_back(d);
    self = call_op<Tensor>(TP_OP("permute"), self_in, perm);
    std::vector<Tensor> moved;
    for (int64_t d : perm) moved.push_back(indices[size_t(d)]);
    indices = moved;
  }
  const int64_t start = adjacent ? indexed.front() : 0, k = int64_t(indexed.size());
  // (2) + (4): broadcast, then offsets = sum_j wrap(index_j) * stride_j, one launch per index tensor
  Shape b;
  for (int64_t j = 0; j < k; ++j) b = broadcast_shapes(b, indices[size_t(start + j)].sizes(), op);
  Tensor offsets = empty_tensor(b, ScalarType::Int64, device);
  if (offsets.numel() > 0) {
    IndexErrorFlag err(dev, int(k));
    std::vector<int64_t> dims, sizes;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t d = start + j;
      const Tensor idx = as_int64(indices[size_t(d)]);
      const KernelGeometry g = make_geometry(b, {&offsets, &idx}, op);
      const int64_t n = offsets.numel();
      launch(kernel(dev, "index.cu", "index_offsets"), elementwise_config(dev, n), stream_for(dev), n, g,
             offsets.data_ptr(), idx.data_ptr(), self.size(d), self.stride(d), int(j == 0), err.ptr(int(j)));
      dims.push_back(adjacent ? d : indexed[size_t(j)]);
      sizes.push_back(self.size(d));
    }
    err.raise_if_set(op, dims, sizes);
  }
  // (5) the result's shape, the restrided self and the offsets laid out over it
  Shape shape(self.sizes().begin(), self.sizes().begin() + start);
  Shape strides(self.strides().begin(), self.strides().begin() + start), off_view(size_t(start), 1);
  shape.insert(shape.end(), b.begin(), b.end());
  strides.insert(strides.end(), b.size(), 0);
  off_view.insert(off_view.end(), b.begin(), b.end());
  for (int64_t d = start + k; d < self.dim(); ++d) {
    shape.push_back(self.size(d));
    strides.push_back(self.stride(d));
    off_view.push_back(1);
  }
  Prepared p;
  p.shape = shape;
  p.restrided = make_view(self, shape, strides, self.storage_offset());
  p.offsets = call_op<Tensor>(TP_OP("expand"), call_op<Tensor>(TP_OP("reshape"), offsets, off_view), shape);
  p.flat = offsets;
  p.start = start;
  p.nb = int64_t(b.size());
  for (int64_t j = 0; j < k; ++j) p.strides.push_back(self.stride(start + j));
  return p;
}

int device_of(const char *op, const Tensor &self) {
  TP_CHECK(self.device().type == DeviceType::CUDA, Runtime, op, ": expected a CUDA tensor, got one on ",
           device_str(self.device()));
  return self.device().index;
}

static Tensor nonzero(const Tensor &self) { return nonzero_cuda(self); }

// x[idx] with the indices on the leading dims and the rest of x contiguous (x[idx] on dim 0 of a contiguous
// tensor, an embedding-style row pick): out row r is the contiguous block of `inner` elements at offset
// flat[r], index.cu gather_rows_b<U> (Note [Row gathers]). False when the layout is not of that form.
bool index_rows(int dev, const Tensor &out, const Prepared &p) {
  if (p.start != 0 || out.numel() == 0) return false;
  const Shape &st = p.restrided.strides();
  int64_t inner = 1;
  for (int64_t d = int64_t(p.shape.size()) - 1; d >= p.nb; --d) {  // the rest must be one contiguous block
    if (p.shape[size_t(d)] != 1 && st[size_t(d)] != inner) return false;
    inner *= p.shape[size_t(d)];
  }
  const int64_t item = out->itemsize();
  if (inner * item >= (int64_t(1) << 31)) return false;
  int64_t step = 0;  // every offset is a sum of multiples of these strides: their gcd in bytes bounds the unit
  for (int64_t s : p.strides) step = std::gcd(step, s * item);
  const int64_t unit = row_unit(inner * item, item, {out.data_ptr(), p.restrided.data_ptr()}, step);
  const int64_t per = unit / item, units = inner / per, rows = p.flat.numel();
  int shift = 0;
  while ((int64_t(1) << shift) < per) ++shift;
  const RowLaunch rl = row_launch(dev, rows, units, 8);
  launch(kernel(dev, "index.cu", "gather_rows_b" + std::to_string(unit)), rl.config, stream_for(dev), rows,
         int(units), out.data_ptr(), p.restrided.data_ptr(), p.flat.data_ptr(), shift, rl.lanes);
  return true;
}

// x[idx] with one integer index tensor, on dim 0 of a contiguous x (the embedding-style row pick): the rows
// of x at idx (negatives wrapped), out shaped idx.shape + x.shape[1:], by index_select's row kernel
// (launch_select_rows) reading idx directly, without prepare()'s offsets pass. A large result checks the
// indices first (Note [Check first] in index_common.h), a small one inside the row kernel. False when the
// call is not of that form.
bool index_dim0(int dev, const Tensor &self, const std::vector<Tensor> &indices, Tensor &out) {
  if (indices.size() != 1 || !indices[0].defined() || self.dim() == 0 || !self.is_contiguous()) return false;
  const ScalarType it = indices[0].dtype();
  if (!is_integral(it, false) || it == ScalarType::UInt8) return false;  // uint8 (and bool): a mask
  const int64_t size = self.size(0), item = self->itemsize();
  int64_t inner = 1;
  for (int64_t d = 1; d < self.dim(); ++d) inner *= self.size(d);
  if (inner * item >= (int64_t(1) << 31)) return false;
  // The indices as one evenly spaced int64 run: a 1-d int64 index as it is (any stride), others contiguous (a
  // cast or a copy only when they are not already).
  Tensor idx = as_int64(index_on(indices[0], self.device()));
  if (idx.dim() > 1 && !idx.is_contiguous()) idx = contiguous_as(idx, ScalarType::Int64);
  Shape shape = idx.sizes();
  shape.insert(shape.end(), self.sizes().begin() + 1, self.sizes().end());
  out = empty_tensor(shape, self.dtype(), self.device());
  if (idx.numel() == 0) return true;
  const int64_t stride = idx.dim() == 1 ? idx.stride(0) : 1;
  const Tensor flat = make_view(idx, {idx.numel()}, {stride}, idx.storage_offset());
  IndexErrorFlag err(dev);
  void *e = check_first(dev, out.numel() * item, flat, size, kWrapNegative, err);  // Note [Check first]
  if (out.numel()) launch_select_rows(dev, out, self, 0, flat, stride, kWrapNegative, e);
  err.raise_if_set("index", 0, size);
  return true;
}
}  // namespace

static Tensor index(const Tensor &self, std::vector<Tensor> indices) {
  const int dev = device_of("index", self);
  DeviceGuard guard(dev);
  if (Tensor out; index_dim0(dev, self, indices, out)) return out;
  const Prepared p = prepare(self, indices, "index", dev);
  Tensor out = empty_tensor(p.shape, self.dtype(), self.device());
  if (index_rows(dev, out, p)) return out;
  launch_gather(dev, out, p.restrided, p.offsets, 0, 1, kNoCheck, nullptr, "index");
  return out;
}

static Tensor index_put_(const Tensor &self, std::vector<Tensor> indices, const Tensor &values, bool accumulate) {
  const int dev = device_of("index_put_", self);
  DeviceGuard guard(dev);
  const Tensor vals = values.device().is_cpu() && values.dim() == 0 ? index_on(values, self.device()) : values;
  common_device("index_put_", {self, vals}, false);
  check_real("index_put_", self.dtype());
  self.bump_version();
  const Prepared p = prepare(self, indices, "index_put_", dev);
  TP_CHECK(is_expandable_to(vals.sizes(), p.shape), Runtime, "shape mismatch: value tensor of shape ",
           shape_str(vals.sizes()), " cannot be broadcast to indexing result of shape ", shape_str(p.shape));
  if (shape_numel(p.shape) == 0) return self;
  const Tensor v = call_op<Tensor>(TP_OP("expand"), vals.dtype() == self.dtype() ? vals : contiguous_as(vals, self.dtype()),
                                   p.shape);
  launch_scatter(dev, p.restrided, p.offsets, v, 0, 1, kNoCheck,
                 accumulate ? ScatterReduce::Sum : ScatterReduce::None, nullptr, "index_put_");
  return self;
}

static Tensor masked_fill_(const Tensor &self, const Tensor &mask, const Tensor &value) {
  call_op<Tensor>(TP_OP("masked_fill_.Tensor"), meta_like(self), meta_like(mask), meta_like(value));
  const int dev = common_device("masked_fill_", {self, mask}, false);  // the mask is read on the device
  common_device("masked_fill_", {self, value}, true);                   // the value may be a CPU number
  DeviceGuard guard(dev);
  check_real("masked_fill_", self.dtype());
  self.bump_version();
  const int64_t n = self.numel();
  if (n == 0) return self;
  Tensor v = empty_tensor({}, self.dtype(), self.device());
  call_op<Tensor>(TP_OP("copy_"), v, value, false);  // cast, and upload a CPU value
  const KernelGeometry g = make_geometry(self.sizes(), {&self, &mask}, "masked_fill_");
  launch(kernel(dev, "index.cu", "masked_fill_b" + std::to_string(self->itemsize())), elementwise_config(dev, n),
         stream_for(dev), n, g, self.data_ptr(), mask.data_ptr(), v.data_ptr());
  return self;
}

// masked_scatter_: the true positions of mask (row-major) take source's elements in order: nonzero, then a
// plain index_put_ of source's first `count` elements.
static Tensor masked_scatter_(const Tensor &self, const Tensor &mask, const Tensor &source) {
  call_op<Tensor>(TP_OP("masked_scatter_"), meta_like(self), meta_like(mask), meta_like(source));
  const int dev = common_device("masked_scatter_", {self, mask, source}, false);
  DeviceGuard guard(dev);
  const Tensor m = call_op<Tensor>(TP_OP("expand"), mask, self.sizes());
  self.bump_version();
  const Tensor nz = nonzero_cuda(m);
  const int64_t count = nz.size(0);
  TP_CHECK(source.numel() >= count, Runtime, "masked_scatter: expected source to have at least ", count,
           " elements, but got ", source.numel());
  if (count == 0) return self;
  const Tensor flat = call_op<Tensor>(TP_OP("narrow"), call_op<Tensor>(TP_OP("reshape"), source, std::vector<int64_t>{-1}),
                                      int64_t(0), int64_t(0), count);
  if (self.dim() == 0) {
    device_copy(self, call_op<Tensor>(TP_OP("reshape"), flat, std::vector<int64_t>{}));
    return self;
  }
  std::vector<Tensor> idx;
  for (int64_t d = 0; d < self.dim(); ++d) idx.push_back(call_op<Tensor>(TP_OP("select"), nz, int64_t(1), d));
  return index_put_(self, idx, flat, false);
}

TP_LIBRARY(cuda_index_advanced) {
  TP_IMPL(lib, "nonzero", CUDA, nonzero);
  TP_IMPL(lib, "index.Tensor", CUDA, index);
  TP_IMPL(lib, "index_put_", CUDA, index_put_);
  TP_IMPL(lib, "masked_fill_.Tensor", CUDA, masked_fill_);
  TP_IMPL(lib, "masked_scatter_", CUDA, masked_scatter_);
}

}  // namespace tp::p10::cuda
