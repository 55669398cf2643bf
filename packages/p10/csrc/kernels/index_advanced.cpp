// index_advanced.cpp — indexing with tensors: `x[idx]` / `x[mask]` (op `index`), `x[idx] = v` (`index_put_`),
// the masked ops (masked_fill, masked_select, masked_scatter) and nonzero / argwhere.
//
// Where it sits: tensorplay_p10/_indexing.py turns a Python subscript into basic views plus one `index` /
// `index_put_` call with a list of index tensors aligned to dims (None where a dim is not indexed). The kernels
// reduce every advanced index to ONE tensor of element offsets (Note [Advanced indexing]) and then move elements
// with the gather/scatter loop shape of index.cpp.
#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "kernels/index_helpers.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

Tensor cast_to(const Tensor &t, ScalarType dtype);

// Row-major coordinates of the true/nonzero elements of `self`: [count, ndim] int64.
static Tensor nonzero(const Tensor &self) {
  TP_CHECK(!self.device().is_meta(), NotImplemented, "nonzero(): the output size depends on the data, which meta "
           "tensors do not have");
  Tensor c = call_op(TP_OP("contiguous"), self);
  int64_t n = c.numel(), nd = c.dim(), count = 0;
  std::vector<uint8_t> hit(size_t(n), 0);
  TP_DISPATCH_ALL(c.dtype(), "nonzero", [&]<typename T>() {
    const T *p = c.data<T>();
    for (int64_t i = 0; i < n; ++i) count += hit[i] = cast_value<bool>(p[i]);
  });
  Tensor out = empty_tensor({count, nd}, ScalarType::Int64, self.device());
  int64_t *o = out.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (!hit[i]) continue;
    for (int64_t d = nd - 1, rem = i; d >= 0; --d) { o[d] = rem % c.sizes()[d]; rem /= c.sizes()[d]; }
    o += nd;
  }
  return out;
}

// Note [Advanced indexing]
//   x[i0, :, i2] with index tensors: (1) bool masks become the long indices of their true elements; (2) the index
//   tensors broadcast to one shape B; (3) if the indexed dims are not next to each other, they are moved to the
//   front (PyTorch's rule for where the B dims land); (4) offsets = sum_k index_k * stride_k — one int64 tensor
//   of element offsets into x; (5) the result has shape before + B + after, and x viewed with stride 0 across the
//   B dims (restrided) plus the offsets gives every element. Negative indices count from the end.
struct Prepared {
  Tensor self;      // possibly permuted so the indexed dims are one block
  Tensor offsets;   // int64, expanded to `shape` (element offsets to add to `restrided`)
  Tensor restrided; // self with the result's shape and stride 0 on the B dims
  Shape shape;      // the indexing result's shape
};

static Prepared prepare(const Tensor &self_in, const std::vector<Tensor> &indices_in, const char *op) {
  // (1) masks -> long indices, one per mask dim
  std::vector<Tensor> indices;
  for (const Tensor &t : indices_in) {
    if (t.defined() && (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8)) {
      int64_t at = int64_t(indices.size());
      TP_CHECK(at + t.dim() <= self_in.dim(), Index, op, "(): too many indices for tensor of dimension ", self_in.dim());
      for (int64_t k = 0; k < t.dim(); ++k)
        TP_CHECK(t.sizes()[k] == self_in.sizes()[at + k], Index, "The shape of the mask ", shape_str(t.sizes()),
                 " at index ", k, " does not match the shape of the indexed tensor ", shape_str(self_in.sizes()),
                 " at index ", at + k);
      Tensor nz = nonzero(t);
      for (int64_t k = 0; k < t.dim(); ++k) indices.push_back(call_op(TP_OP("select"), nz, int64_t(1), k));
      if (t.dim() == 0) fail(ErrorKind::NotImplemented, op, "(): indexing with a 0-d boolean tensor is not supported");
    } else {
      TP_CHECK(!t.defined() || is_integral(t.dtype(), false), Index,
               "tensors used as indices must be long, int, byte or bool tensors, got ", scalar_type_name(t.dtype()));
      indices.push_back(t);
    }
  }
  TP_CHECK(int64_t(indices.size()) <= self_in.dim(), Index, op, "(): too many indices for tensor of dimension ",
           self_in.dim(), " (got ", indices.size(), ")");
  indices.resize(self_in.dim());
  // (3) move the indexed dims next to each other (to the front) if they are not already adjacent
  std::vector<int64_t> indexed;
  for (int64_t d = 0; d < self_in.dim(); ++d)
    if (indices[d].defined()) indexed.push_back(d);
  TP_CHECK(!indexed.empty(), Runtime, op, "(): expected at least one index tensor");
  bool adjacent = indexed.back() - indexed.front() + 1 == int64_t(indexed.size());
  Tensor self = self_in;
  if (!adjacent) {
    std::vector<int64_t> perm = indexed;
    for (int64_t d = 0; d < self_in.dim(); ++d)
      if (!indices[d].defined()) perm.push_back(d);
    self = call_op(TP_OP("permute"), self_in, perm);
    std::vector<Tensor> moved;
    for (int64_t d : perm) moved.push_back(indices[d]);
    indices = moved;
  }
  int64_t start = adjacent ? indexed.front() : 0, k = int64_t(indexed.size());
  // (2) + (4): broadcast and combine into element offsets
  Shape b;
  for (int64_t j = 0; j < k; ++j) b = broadcast_shapes(b, indices[start + j].sizes(), op);
  Tensor offsets;
  for (int64_t j = 0; j < k; ++j) {
    int64_t d = start + j;
    Tensor idx = wrap_negative(indices[d], self.sizes()[d], op, d);
    Tensor scaled = call_op(TP_OP("mul"), idx, call_op(TP_OP("scalar_tensor"), Scalar(self.strides()[d]),
                                                      std::optional<ScalarType>(ScalarType::Int64), std::optional<Device>()));
    offsets = offsets.defined() ? call_op(TP_OP("add"), offsets, scaled, Scalar(int64_t(1))) : scaled;
  }
  offsets = call_op(TP_OP("expand"), offsets, b);
  // (5) the result's shape, the restrided self and the offsets laid out over it
  Shape shape(self.sizes().begin(), self.sizes().begin() + start), strides(self.strides().begin(), self.strides().begin() + start);
  Shape off_view(start, 1);
  shape.insert(shape.end(), b.begin(), b.end());
  strides.insert(strides.end(), b.size(), 0);
  off_view.insert(off_view.end(), b.begin(), b.end());
  for (int64_t d = start + k; d < self.dim(); ++d) {
    shape.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
    off_view.push_back(1);
  }
  Prepared p;
  p.self = self;
  p.shape = shape;
  p.restrided = make_view(self, shape, strides, self.storage_offset());
  p.offsets = call_op(TP_OP("expand"), call_op(TP_OP("reshape"), offsets, off_view), shape);
  return p;
}

static Tensor index(const Tensor &self, std::vector<Tensor> indices) {
  TP_CHECK(!self.device().is_meta(), NotImplemented, "index(): tensor indices on meta tensors are not supported");
  Prepared p = prepare(self, indices, "index");
  Tensor out = empty_tensor(p.shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  int64_t item = self.impl()->itemsize();
  TensorIterator it(raw_iter_config("index", self.dtype()), out, {p.restrided, p.offsets});
  dispatch_by_size(item, [&]<typename T>() {
    it.for_each([item](char **q, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = *reinterpret_cast<const int64_t *>(q[2] + i * s[2]);
        *reinterpret_cast<T *>(q[0] + i * s[0]) = *reinterpret_cast<const T *>(q[1] + i * s[1] + off * item);
      }
    });
  });
  return out;
}

static Tensor index_put_(const Tensor &self, std::vector<Tensor> indices, const Tensor &values, bool accumulate) {
  self.bump_version();
  if (self.device().is_meta()) return self;
  Prepared p = prepare(self, indices, "index_put_");
  TP_CHECK(is_expandable_to(values.sizes(), p.shape), Runtime, "shape mismatch: value tensor of shape ", shape_str(values.sizes()),
           " cannot be broadcast to indexing result of shape ", shape_str(p.shape));
  if (shape_numel(p.shape) == 0) return self;
  Tensor v = call_op(TP_OP("expand"), values.dtype() == self.dtype() ? values : cast_to(values, self.dtype()), p.shape);
  TensorIterator it(raw_iter_config("index_put_", self.dtype()), p.restrided, {p.offsets, v});
  int64_t item = self.impl()->itemsize();
  auto body = [&]<typename T>(auto combine) {
    return [item, combine](char **q, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = *reinterpret_cast<const int64_t *>(q[1] + i * s[1]);
        T &x = *reinterpret_cast<T *>(q[0] + i * s[0] + off * item);
        x = combine(x, *reinterpret_cast<const T *>(q[2] + i * s[2]));
      }
    };
  };
  if (accumulate) {  // repeated indices add up: one thread, in order
    TP_DISPATCH_ALL(self.dtype(), "index_put_", [&]<typename T>() {
      using M = opmath_t<T>;
      it.for_each_serial(body.template operator()<T>([](T a, T b) -> T {
        if constexpr (std::is_same_v<T, bool>) return a || b;
        else return T(M(a) + M(b));
      }));
    });
  } else {
    dispatch_by_size(item, [&]<typename T>() {
      it.for_each_serial(body.template operator()<T>([](T, T b) -> T { return b; }));
    });
  }
  return self;
}

static Tensor index_put(const Tensor &self, std::vector<Tensor> indices, const Tensor &values, bool accumulate) {
  return call_op(TP_OP("index_put_"), call_op(TP_OP("clone"), self), indices, values, accumulate);
}

static Tensor argwhere(const Tensor &self) { return call_op(TP_OP("nonzero"), self); }

static void check_mask(const Tensor &mask, const char *op) {
  TP_CHECK(mask.dtype() == ScalarType::Bool, Runtime, op, " only supports boolean masks, but got mask with dtype ",
           scalar_type_name(mask.dtype()));
}

static Tensor masked_fill_(const Tensor &self, const Tensor &mask, const Tensor &value) {
  check_mask(mask, "masked_fill_");
  TP_CHECK(value.dim() == 0, Runtime, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
           value.dim(), " dimension(s).");
  self.bump_version();
  Tensor v = cast_to(value, self.dtype());
  TensorIterator it(raw_iter_config("masked_fill_", self.dtype()), self, {mask});
  if (it.is_meta()) return self;
  dispatch_by_size(self.impl()->itemsize(), [&]<typename T>() {
    const T fill = *v.data<T>();
    it.for_each([fill](char **q, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        if (*reinterpret_cast<const bool *>(q[1] + i * s[1])) *reinterpret_cast<T *>(q[0] + i * s[0]) = fill;
    });
  });
  return self;
}

static Tensor masked_fill(const Tensor &self, const Tensor &mask, const Tensor &value) {
  Shape b = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  return call_op(TP_OP("masked_fill_.Tensor"), call_op(TP_OP("clone"), call_op(TP_OP("expand"), self, b)), mask, value);
}

// masked_select: the elements where mask is true, in row-major order of the broadcast shape, as a 1-D tensor.
static Tensor masked_select(const Tensor &self, const Tensor &mask) {
  check_mask(mask, "masked_select");
  Shape b = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  if (b.empty()) b = {1};  // 0-d operands: select from a 1-element view (the result is 1-d either way)
  std::vector<Tensor> m{call_op(TP_OP("expand"), mask, b)};
  return call_op(TP_OP("index.Tensor"), call_op(TP_OP("expand"), self, b), m);
}

// masked_scatter_: the true positions of mask (row-major) take source's elements in order.
static Tensor masked_scatter_(const Tensor &self, const Tensor &mask, const Tensor &source) {
  check_mask(mask, "masked_scatter_");
  TP_CHECK(source.dtype() == self.dtype(), Runtime, "masked_scatter_: expected self and source to have same dtypes "
           "but got ", scalar_type_name(self.dtype()), " and ", scalar_type_name(source.dtype()));
  Tensor m = call_op(TP_OP("expand"), mask, self.sizes());
  self.bump_version();
  if (self.device().is_meta()) return self;
  Tensor nz = nonzero(m);
  int64_t count = nz.sizes()[0];
  TP_CHECK(source.numel() >= count, Runtime, "masked_scatter: expected source to have at least ", count,
           " elements, but got ", source.numel());
  if (count == 0) return self;
  Tensor flat = call_op(TP_OP("narrow"), call_op(TP_OP("reshape"), source, std::vector<int64_t>{-1}), int64_t(0),
                        int64_t(0), count);
  std::vector<Tensor> idx;
  for (int64_t d = 0; d < self.dim(); ++d) idx.push_back(call_op(TP_OP("select"), nz, int64_t(1), d));
  if (self.dim() == 0) return call_op(TP_OP("copy_"), self, call_op(TP_OP("reshape"), flat, std::vector<int64_t>{}), false);
  return index_put_(self, idx, flat, false);
}

static Tensor masked_scatter(const Tensor &self, const Tensor &mask, const Tensor &source) {
  return call_op(TP_OP("masked_scatter_"), call_op(TP_OP("clone"), self), mask, source);
}

TP_LIBRARY(index_advanced) {
  lib.def("nonzero(Tensor self) -> Tensor");
  lib.def("argwhere(Tensor self) -> Tensor");
  lib.def("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  lib.def("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)");
  lib.def("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor");
  lib.def("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)");
  lib.def("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor");
  lib.def("masked_select(Tensor self, Tensor mask) -> Tensor");
  lib.def("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)");
  lib.def("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<nonzero>(lib, "nonzero", key, __LINE__);
    impl_typed<index>(lib, "index.Tensor", key, __LINE__);
    impl_typed<index_put_>(lib, "index_put_", key, __LINE__);
    impl_typed<masked_fill_>(lib, "masked_fill_.Tensor", key, __LINE__);
    impl_typed<masked_scatter_>(lib, "masked_scatter_", key, __LINE__);
  }
  TP_IMPL(lib, "argwhere", Composite, argwhere);
  TP_IMPL(lib, "index_put", Composite, index_put);
  TP_IMPL(lib, "masked_fill.Tensor", Composite, masked_fill);
  TP_IMPL(lib, "masked_select", Composite, masked_select);
  TP_IMPL(lib, "masked_scatter", Composite, masked_scatter);
}

}  // namespace tp::p10
