// view.cpp — ops that return a view: new sizes/strides/offset over the same storage, no data moved.
//
// Where it sits: registered as AnyBackend kernels (one kernel serves cpu, cuda, meta and user backends) since
// they only touch metadata (STYLE.md rule 3: all stride arithmetic lives here and in loop/). Every view shares
// its base's storage and version counter (core/tensor.cpp: make_view).
#include <algorithm>
#include <numeric>

#include "dispatch/kernel_box.h"

namespace tp::p10 {

static Tensor as_strided(const Tensor &self, std::vector<int64_t> size, std::vector<int64_t> stride,
                         std::optional<int64_t> storage_offset) {
  TP_CHECK(size.size() == stride.size(), Runtime, "as_strided: mismatch in length of strides and shape (",
           size.size(), " vs ", stride.size(), ")");
  int64_t offset = storage_offset.value_or(self.storage_offset());
  TP_CHECK(offset >= 0, Runtime, "as_strided: Tensor: invalid storage offset ", offset);
  for (size_t d = 0; d < size.size(); ++d) {
    TP_CHECK(size[d] >= 0, Runtime, "as_strided: negative size ", size[d], " in ", shape_str(size));
    TP_CHECK(stride[d] >= 0, Runtime, "as_strided: negative strides are not supported, got ", shape_str(stride));
  }
  // Checked arithmetic (Note [Storage size]): an extent that wraps would pass the bounds check and read anywhere.
  int64_t itemsize = self.impl()->itemsize();
  size_t needed = storage_nbytes(size, stride, itemsize, offset);
  TP_CHECK(needed <= self->storage->nbytes, Runtime, "as_strided: setStorage: sizes ", shape_str(size),
           ", strides ", shape_str(stride), ", storage offset ", offset, ", and itemsize ", itemsize,
           " requiring a storage size of ", needed, " are out of bounds for storage of size ",
           self->storage->nbytes);
  return make_view(self, size, stride, offset);
}

// Resolve one -1 in a requested shape against numel; RuntimeError naming the op otherwise.
static Shape infer_size(const std::vector<int64_t> &shape, int64_t numel, const char *op) {
  Shape out(shape.begin(), shape.end());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TP_CHECK(infer < 0, Runtime, op, ": only one dimension can be inferred");
      infer = int64_t(i);
    } else {
      TP_CHECK(out[i] >= 0, Runtime, op, ": invalid shape dimension ", out[i]);
      // A product that wraps could match numel by accident ([2**62 + 1, 4] is 4 modulo 2**64).
      TP_CHECK(!__builtin_mul_overflow(known, out[i], &known), Runtime, op, ": shape '", shape_str(shape),
               "' is invalid for input of size ", numel);
    }
  }
  if (infer >= 0) {
    TP_CHECK(known != 0 && numel % known == 0, Runtime, op, ": shape '", shape_str(shape),
             "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    TP_CHECK(known == numel, Runtime, op, ": shape '", shape_str(shape), "' is invalid for input of size ", numel);
  }
  return out;
}

// Note [View compatibility]
//   A reshape is a view when every group of old dims that merges into (or splits from) new dims is itself
//   contiguous in memory. Walk old and new dims from the innermost, matching products of sizes; inside each
//   matched chunk the old dims must chain (stride[d] == stride[d+1] * size[d+1]). Returns false if not.
static bool compute_view_strides(const Shape &old_sizes, const Shape &old_strides, const Shape &new_sizes,
                                 Shape &new_strides) {
  new_strides.assign(new_sizes.size(), 0);
  int64_t numel = shape_numel(old_sizes);
  if (numel == 0 || old_sizes.empty()) { new_strides = contiguous_strides(new_sizes); return true; }
  int64_t view_d = int64_t(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) { chunk_base_stride = old_strides[d - 1]; tensor_numel = 1; view_numel = 1; }
    }
  }
  return view_d == -1;
}

static Tensor view(const Tensor &self, std::vector<int64_t> size) {
  Shape shape = infer_size(size, self.numel(), "view");
  Shape strides;
  TP_CHECK(compute_view_strides(self.sizes(), self.strides(), shape, strides), Runtime,
           "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
           "two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, strides, self.storage_offset());
}

// reshape: a view when possible (Note [View compatibility]), otherwise a contiguous copy.
static Tensor reshape(const Tensor &self, std::vector<int64_t> size) {
  Shape shape = infer_size(size, self.numel(), "reshape");
  Shape strides;
  if (compute_view_strides(self.sizes(), self.strides(), shape, strides)) return call_op(TP_OP("view"), self, shape);
  return call_op(TP_OP("view"), call_op(TP_OP("contiguous"), self), shape);
}

static Tensor transpose(const Tensor &self, int64_t dim0, int64_t dim1) {
  int64_t a = wrap_dim(dim0, self.dim(), "transpose"), b = wrap_dim(dim1, self.dim(), "transpose");
  if (self.dim() == 0) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  Shape sz = self.sizes(), st = self.strides();
  std::swap(sz[a], sz[b]);
  std::swap(st[a], st[b]);
  return make_view(self, sz, st, self.storage_offset());
}

static Tensor t(const Tensor &self) {
  TP_CHECK(self.dim() <= 2, Runtime, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.dim() < 2 ? make_view(self, self.sizes(), self.strides(), self.storage_offset()) : transpose(self, 0, 1);
}

static Tensor permute(const Tensor &self, std::vector<int64_t> dims) {
  int64_t n = self.dim();
  TP_CHECK(int64_t(dims.size()) == n, Runtime, "permute(sparse_coo): number of dimensions in the tensor input does "
           "not match the length of the desired ordering of dimensions i.e. input.dim() = ", n,
           " is not equal to len(dims) = ", dims.size());
  Shape sz(n), st(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    TP_CHECK(!seen[d], Runtime, "permute(): duplicate dims are not allowed: ", shape_str(dims));
    seen[d] = true;
    sz[i] = self.sizes()[d];
    st[i] = self.strides()[d];
  }
  return make_view(self, sz, st, self.storage_offset());
}

static Tensor expand(const Tensor &self, std::vector<int64_t> size) {
  int64_t n = int64_t(size.size()), nd = self.dim();
  TP_CHECK(n >= nd, Runtime, "expand: the number of sizes provided (", n, ") must be greater or equal to the "
           "number of dimensions in the tensor (", nd, ")");
  Shape sz(n), st(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t d = i - (n - nd);
    int64_t cur = d >= 0 ? self.sizes()[d] : 1;
    int64_t want = size[i];
    if (want == -1) {
      TP_CHECK(d >= 0, Runtime, "expand: -1 is not allowed in a leading, non-existing dimension ", i);
      want = cur;
    }
    TP_CHECK(cur == want || cur == 1, Runtime, "The expanded size of the tensor (", want,
             ") must match the existing size (", cur, ") at non-singleton dimension ", i, ".  Target sizes: ",
             shape_str(size), ".  Tensor sizes: ", shape_str(self.sizes()));
    TP_CHECK(want >= 0, Runtime, "expand: invalid size ", want, " in ", shape_str(size));
    sz[i] = want;
    st[i] = (d >= 0 && cur == want) ? self.strides()[d] : 0;
  }
  return make_view(self, sz, st, self.storage_offset());
}

static Tensor squeeze(const Tensor &self, std::optional<std::vector<int64_t>> dims) {
  std::vector<bool> drop(self.dim(), false);
  if (!dims) {
    for (int64_t d = 0; d < self.dim(); ++d) drop[d] = self.sizes()[d] == 1;
  } else {
    for (int64_t d : *dims) {
      int64_t w = wrap_dim(d, self.dim(), "squeeze");
      if (self.dim() > 0 && self.sizes()[w] == 1) drop[w] = true;
    }
  }
  Shape sz, st;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!drop[d]) { sz.push_back(self.sizes()[d]); st.push_back(self.strides()[d]); }
  return make_view(self, sz, st, self.storage_offset());
}

static Tensor unsqueeze(const Tensor &self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  Shape sz = self.sizes(), st = self.strides();
  int64_t stride = d < self.dim() ? sz[d] * st[d] : 1;
  sz.insert(sz.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return make_view(self, sz, st, self.storage_offset());
}

// The view behind basic slicing: dim `dim` restricted to start:end:step (PyTorch clamps start/end).
static Tensor slice(const Tensor &self, int64_t dim, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt,
                    int64_t step) {
  TP_CHECK(self.dim() > 0, Index, "slice() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim(), "slice");
  TP_CHECK(step > 0, Value, "slice step must be positive, got ", step);
  int64_t size = self.sizes()[d];
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape sz = self.sizes(), st = self.strides();
  sz[d] = (end - start + step - 1) / step;
  st[d] *= step;
  return make_view(self, sz, st, self.storage_offset() + start * self.strides()[d]);
}

static Tensor narrow(const Tensor &self, int64_t dim, int64_t start, int64_t length) {
  TP_CHECK(self.dim() > 0, Runtime, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim(), "narrow");
  int64_t size = self.sizes()[d];
  TP_CHECK(start >= -size && start <= size, Index, "narrow(): start (", start, ") is out of bounds for dimension ",
           d, " of size ", size);
  if (start < 0) start += size;
  TP_CHECK(length >= 0 && start + length <= size, Runtime, "narrow(): start (", start, ") + length (", length,
           ") exceeds dimension size (", size, ").");
  return slice(self, d, start, start + length, 1);
}

static Tensor select(const Tensor &self, int64_t dim, int64_t index) {
  TP_CHECK(self.dim() > 0, Index, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim(), "select");
  int64_t size = self.sizes()[d];
  TP_CHECK(index >= -size && index < size, Index, "select(): index ", index, " out of range for tensor of size ",
           shape_str(self.sizes()), " at dimension ", d);
  if (index < 0) index += size;
  Shape sz = self.sizes(), st = self.strides();
  int64_t offset = self.storage_offset() + index * st[d];
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return make_view(self, sz, st, offset);
}

// unfold(dim, size, step): a new last dim of `size` elements, windows `step` apart along `dim`.
static Tensor unfold(const Tensor &self, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = wrap_dim(dimension, self.dim(), "unfold");
  int64_t len = self.dim() == 0 ? 1 : self.sizes()[d];
  TP_CHECK(size <= len, Runtime, "maximum size for tensor at dimension ", d, " is ", len, " but size is ", size);
  TP_CHECK(step > 0, Runtime, "step is ", step, " but must be > 0");
  TP_CHECK(size >= 0, Runtime, "size is ", size, " but must be >= 0");
  Shape sz = self.sizes(), st = self.strides();
  if (self.dim() == 0) return make_view(self, {size}, {1}, self.storage_offset());
  int64_t base_stride = st[d];
  sz[d] = (len - size) / step + 1;
  st[d] = step * base_stride;
  sz.push_back(size);
  st.push_back(base_stride);
  return make_view(self, sz, st, self.storage_offset());
}

static Tensor diagonal(const Tensor &self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t a = wrap_dim(dim1, self.dim(), "diagonal"), b = wrap_dim(dim2, self.dim(), "diagonal");
  TP_CHECK(a != b, Runtime, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t off = self.storage_offset(), len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self.sizes()[a], self.sizes()[b] - offset), 0);
    if (len > 0) off += offset * self.strides()[b];
  } else {
    len = std::max<int64_t>(std::min(self.sizes()[a] + offset, self.sizes()[b]), 0);
    if (len > 0) off -= offset * self.strides()[a];
  }
  Shape sz, st;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != a && d != b) { sz.push_back(self.sizes()[d]); st.push_back(self.strides()[d]); }
  sz.push_back(len);
  st.push_back(self.strides()[a] + self.strides()[b]);
  return make_view(self, sz, st, off);
}

// ---- several views at once ---------------------------------------------------------------------------------------
// Note [One op for all the pieces]
//   split/chunk/unbind return many views of one tensor. As separate narrow/select calls, autograd would record a
//   node per piece, each scattering its piece's gradient into a zero tensor of the whole's size: backward of n
//   pieces would cost O(n * whole). As one op, autograd records one node whose backward is a single cat/stack
//   of the pieces' gradients (tensorplay_tpx formulas/shape.py), as PyTorch's SplitBackward/UnbindBackward do.
static std::vector<Tensor> split_with_sizes(const Tensor &self, std::vector<int64_t> split_sizes, int64_t dim) {
  TP_CHECK(self.dim() > 0, Runtime, "split_with_sizes expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, self.dim(), "split_with_sizes");
  int64_t size = self.sizes()[d], total = 0;
  for (int64_t s : split_sizes) {
    TP_CHECK(s >= 0, Runtime, "split_with_sizes expects split_sizes have only non-negative entries, but got "
             "split_sizes=", shape_str(split_sizes));
    total += s;
  }
  TP_CHECK(total == size, Runtime, "split_with_sizes expects split_sizes to sum exactly to ", size,
           " (input tensor's size at dimension ", dim, "), but got split_sizes=", shape_str(split_sizes));
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(slice(self, d, start, start + s, 1));
    start += s;
  }
  return out;
}

// Equal pieces of `split_size` (the last may be smaller); a size-0 dim gives one empty piece, as in PyTorch.
static std::vector<Tensor> split(const Tensor &self, int64_t split_size, int64_t dim) {
  TP_CHECK(self.dim() > 0, Runtime, "split expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, self.dim(), "split");
  int64_t size = self.sizes()[d];
  TP_CHECK(split_size > 0 || (split_size == 0 && size == 0), Runtime,
           "split expects split_size be non-negative, but got split_size=", split_size);
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < size; start += split_size) sizes.push_back(std::min(split_size, size - start));
  if (sizes.empty()) sizes.push_back(0);
  return call_op<std::vector<Tensor>>(TP_OP("split_with_sizes"), self, sizes, d);  // dispatched: recorded once
}

static std::vector<Tensor> unbind(const Tensor &self, int64_t dim) {
  TP_CHECK(self.dim() > 0, Index, "Dimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, self.dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(size_t(self.sizes()[d]));
  for (int64_t i = 0; i < self.sizes()[d]; ++i) out.push_back(select(self, d, i));
  return out;
}

// Point `self` at `source`'s storage and geometry (PyTorch's set_(Tensor source)). The two share memory from now
// on, but `self` is not recorded as a view of `source` (as in PyTorch: `p.data = t` must leave p a leaf), and it
// keeps its own version counter, bumped, since every value it showed may have changed.
static Tensor set_source(const Tensor &self, const Tensor &source) {
  TP_CHECK(self.dtype() == source.dtype(), Runtime, "set_: could not set a tensor of dtype ",
           scalar_type_name(self.dtype()), " to a tensor of dtype ", scalar_type_name(source.dtype()));
  TP_CHECK(self.device() == source.device(), Runtime, "set_: the source is on ", device_str(source.device()),
           " but the tensor is on ", device_str(self.device()));
  TensorImpl *impl = self.impl();
  impl->storage = source->storage;
  impl->view_base = Ref<TensorImpl>();
  impl->set_geometry(source.sizes(), source.strides(), source.storage_offset());
  self.bump_version();
  return self;
}

// A new tensor object over the same data, outside any autograd graph (tpx gives it requires_grad=False).
static Tensor alias(const Tensor &self) { return make_view(self, self.sizes(), self.strides(), self.storage_offset()); }

TP_LIBRARY(view) {
  lib.def("as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)");
  lib.def("view(Tensor(a) self, int[] size) -> Tensor(a)");
  lib.def("reshape(Tensor(a) self, int[] shape) -> Tensor(a)");
  lib.def("transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)");
  lib.def("t(Tensor(a) self) -> Tensor(a)");
  lib.def("permute(Tensor(a) self, int[] dims) -> Tensor(a)");
  lib.def("expand(Tensor(a) self, int[] size) -> Tensor(a)");
  lib.def("squeeze(Tensor(a) self, int[]? dim=None) -> Tensor(a)");
  lib.def("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)");
  lib.def("slice(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)");
  lib.def("narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)");
  lib.def("select(Tensor(a) self, int dim, int index) -> Tensor(a)");
  lib.def("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)");
  lib.def("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)");
  lib.def("alias(Tensor(a) self) -> Tensor(a)");
  lib.def("set_.source_Tensor(Tensor(a!) self, Tensor(b) source) -> Tensor(a!)");
  lib.def("split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]");
  lib.def("split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]");
  lib.def("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]");
  TP_IMPL(lib, "as_strided", AnyBackend, as_strided);
  TP_IMPL(lib, "view", AnyBackend, view);
  TP_IMPL(lib, "reshape", Composite, reshape);
  TP_IMPL(lib, "transpose", AnyBackend, transpose);
  TP_IMPL(lib, "t", AnyBackend, t);
  TP_IMPL(lib, "permute", AnyBackend, permute);
  TP_IMPL(lib, "expand", AnyBackend, expand);
  TP_IMPL(lib, "squeeze", AnyBackend, squeeze);
  TP_IMPL(lib, "unsqueeze", AnyBackend, unsqueeze);
  TP_IMPL(lib, "slice", AnyBackend, slice);
  TP_IMPL(lib, "narrow", AnyBackend, narrow);
  TP_IMPL(lib, "select", AnyBackend, select);
  TP_IMPL(lib, "unfold", AnyBackend, unfold);
  TP_IMPL(lib, "diagonal", AnyBackend, diagonal);
  TP_IMPL(lib, "alias", AnyBackend, alias);
  TP_IMPL(lib, "set_.source_Tensor", AnyBackend, set_source);
  TP_IMPL(lib, "split_with_sizes", AnyBackend, split_with_sizes);
  TP_IMPL(lib, "split.Tensor", Composite, split);  // sizes, then split_with_sizes: one recorded node
  TP_IMPL(lib, "unbind.int", AnyBackend, unbind);
}

}  // namespace tp::p10
