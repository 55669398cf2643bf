// index.cpp — gather and scatter along a dim, and the ops built on them: index_select, index_add_/copy_/fill_,
// take, take_along_dim, put_.
//
// Where it sits: every op here reads or writes `self` at positions given by an integer tensor. They all use one
// trick (Note [Restriding]) so the ordinary loop helper does the walking and the kernels only add the index.
#include <atomic>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "kernels/index_helpers.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Note [Restriding]
//   gather(self, dim, index): out[p] = self[p with coordinate `dim` replaced by index[p]]. View `self` with the
//   index's sizes and stride 0 along `dim` (restride), and walk (out, restrided self, index) with the loop helper:
//   at each position the restrided pointer is already right in every dim but `dim`, so the kernel adds
//   index * stride(dim). Scatter is the mirror image (the restrided `self` is written). No kernel does any other
//   stride arithmetic (STYLE.md rule 3).
static Tensor restride(const Tensor &t, const Shape &sizes, int64_t dim) {
  Shape strides(sizes.size(), 0);
  for (size_t d = 0; d < sizes.size(); ++d) strides[d] = int64_t(d) == dim ? 0 : t.strides()[d];
  return make_view(t, sizes, strides, t.storage_offset());
}

// index must be int64, the same rank as self (or both <= 1-D), and no larger than self outside `dim`.
static void check_gather_shapes(const char *op, const Tensor &self, int64_t dim, const Tensor &index,
                                const Tensor *src) {
  TP_CHECK(index.dtype() == ScalarType::Int64, Runtime, op, "(): Expected dtype int64 for index, got ",
           scalar_type_name(index.dtype()));
  TP_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), Runtime, op,
           "(): Index tensor must have the same number of dimensions as ", src ? "self tensor" : "input tensor");
  if (src)
    TP_CHECK(src->dim() == index.dim() || (index.dim() <= 1 && src->dim() <= 1), Runtime, op,
             "(): Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d == dim) continue;
    TP_CHECK(index.sizes()[d] <= (self.dim() ? self.sizes()[d] : 1), Runtime, op, "(): Size does not match at "
             "dimension ", d, " expected index ", shape_str(index.sizes()), " to be no larger than self ",
             shape_str(self.sizes()), " apart from dimension ", dim);
    if (src)
      TP_CHECK(index.sizes()[d] <= (src->dim() ? src->sizes()[d] : 1), Runtime, op, "(): Expected index ", shape_str(index.sizes()),
               " to be no larger than src ", shape_str(src->sizes()), " apart from dimension ", dim);
  }
}

static Tensor gather(const Tensor &self, int64_t dim, const Tensor &index, bool sparse_grad) {
  (void)sparse_grad;  // a hint for sparse gradients, which TensorPlay does not have
  int64_t d = wrap_dim(dim, self.dim(), "gather");
  check_gather_shapes("gather", self, d, index, nullptr);
  Tensor out = empty_tensor(index.sizes(), self.dtype(), self.device());
  if (out.numel() == 0 || self.device().is_meta()) return out;
  int64_t size = self.dim() ? self.sizes()[d] : 1;
  check_index_range(index, size, d, "gather", /*allow_negative=*/false);
  Tensor src = self.dim() ? restride(self, index.sizes(), d) : self;
  int64_t step = (self.dim() ? self.strides()[d] : 0) * self.impl()->itemsize();
  TensorIterator it(raw_iter_config("gather", self.dtype()), out, {src, index});
  dispatch_by_size(self.impl()->itemsize(), [&]<typename T>() {
    it.for_each([step](char **p, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = *reinterpret_cast<const int64_t *>(p[2] + i * s[2]);
        *reinterpret_cast<T *>(p[0] + i * s[0]) = *reinterpret_cast<const T *>(p[1] + i * s[1] + k * step);
      }
    });
  });
  return out;
}

// Note [Scatter reductions]
//   scatter_ writes src[p] (or a value) to self[.. index[p] ..]; with `reduce` it combines instead. Repeated
//   indices make writes collide, so these loops run on one thread (for_each_serial) — the result then matches
//   PyTorch's CPU kernels, which also apply duplicates in iteration order.
enum class Reduce { None, Sum, Prod, Mean, Max, Min };

static Reduce parse_reduce(const std::string &r, const char *op, bool legacy) {
  if (legacy) {  // scatter_(..., reduce="add"|"multiply")
    if (r == "add") return Reduce::Sum;
    if (r == "multiply") return Reduce::Prod;
    fail(ErrorKind::Runtime, op, "(): reduce argument must be either add or multiply, got ", r);
  }
  if (r == "sum") return Reduce::Sum;
  if (r == "prod") return Reduce::Prod;
  if (r == "mean") return Reduce::Mean;
  if (r == "amax") return Reduce::Max;
  if (r == "amin") return Reduce::Min;
  fail(ErrorKind::Runtime, op, "(): reduce argument must be either sum, prod, mean, amax or amin, got ", r);
}

// self[.. index[p] ..] (op)= src[p] for every position p of index. `counts` (mean) counts writes per element.
static void scatter_loop(const char *op, const Tensor &self, int64_t d, const Tensor &index, const Tensor &src,
                         Reduce reduce, const Tensor &counts) {
  if (index.numel() == 0 || self.device().is_meta()) return;
  int64_t size = self.dim() ? self.sizes()[d] : 1;
  check_index_range(index, size, d, op, /*allow_negative=*/false);
  Tensor dst = self.dim() ? restride(self, index.sizes(), d) : self;
  Tensor source = src.dim() ? make_view(src, index.sizes(), src.strides(), src.storage_offset()) : src;
  int64_t step = (self.dim() ? self.strides()[d] : 0) * self.impl()->itemsize();
  TensorIterator it(raw_iter_config(op, self.dtype()), dst, {index, source});
  Tensor cnt = counts.defined() ? restride(counts, index.sizes(), d) : Tensor();
  int64_t cnt_step = counts.defined() ? counts.strides()[d] * 8 : 0;
  TP_DISPATCH_ALL(self.dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    it.for_each_serial([&](char **p, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = *reinterpret_cast<const int64_t *>(p[1] + i * s[1]);
        T &x = *reinterpret_cast<T *>(p[0] + i * s[0] + k * step);
        T v = *reinterpret_cast<const T *>(p[2] + i * s[2]);
        if constexpr (std::is_same_v<T, bool>) {
          x = reduce == Reduce::None ? v : reduce == Reduce::Prod || reduce == Reduce::Min ? (x && v) : (x || v);
        } else if constexpr (is_complex_dtype<T>) {
          x = reduce == Reduce::None ? v : reduce == Reduce::Prod ? T(x * v) : T(x + v);
        } else {
          switch (reduce) {
            case Reduce::None: x = v; break;
            case Reduce::Sum: case Reduce::Mean: x = T(M(x) + M(v)); break;
            case Reduce::Prod: x = T(M(x) * M(v)); break;
            case Reduce::Max: x = (M(v) > M(x) || M(v) != M(v)) ? v : x; break;
            case Reduce::Min: x = (M(v) < M(x) || M(v) != M(v)) ? v : x; break;
          }
        }
      }
    });
  });
  if (cnt.defined()) {  // one more write per position: count them (index positions map 1:1 onto cnt's walk)
    TensorIterator ic(raw_iter_config(op, ScalarType::Int64), cnt, {index});
    ic.for_each_serial([&](char **p, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = *reinterpret_cast<const int64_t *>(p[1] + i * s[1]);
        ++*reinterpret_cast<int64_t *>(p[0] + i * s[0] + k * cnt_step);
      }
    });
  }
}

static Tensor scatter_src_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src,
                           std::optional<std::string> reduce) {
  int64_t d = wrap_dim(dim, self.dim(), "scatter_");
  check_gather_shapes("scatter_", self, d, index, &src);
  TP_CHECK(src.dtype() == self.dtype(), Runtime, "scatter_(): Expected self.dtype to be equal to src.dtype");
  self.bump_version();
  scatter_loop("scatter_", self, d, index, src, reduce ? parse_reduce(*reduce, "scatter_", true) : Reduce::None,
               Tensor());
  return self;
}

static Tensor scatter_value_(const Tensor &self, int64_t dim, const Tensor &index, const Scalar &value,
                             std::optional<std::string> reduce) {
  int64_t d = wrap_dim(dim, self.dim(), "scatter_");
  check_gather_shapes("scatter_", self, d, index, nullptr);
  Tensor v = call_op(TP_OP("full"), std::vector<int64_t>{}, value, std::optional<ScalarType>(self.dtype()),
                     std::optional<Device>(self.device()));
  Tensor src = make_view(v, index.sizes(), Shape(index.dim(), 0), 0);
  self.bump_version();
  scatter_loop("scatter_", self, d, index, src, reduce ? parse_reduce(*reduce, "scatter_", true) : Reduce::None,
               Tensor());
  return self;
}

static Tensor scatter_add_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src) {
  return scatter_src_(self, dim, index, src, std::string("add"));
}

// scatter_reduce_: include_self=False starts each written element from the first value written to it.
static Tensor scatter_reduce_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src,
                              std::string reduce, bool include_self) {
  int64_t d = wrap_dim(dim, self.dim(), "scatter_reduce_");
  check_gather_shapes("scatter_reduce_", self, d, index, &src);
  TP_CHECK(src.dtype() == self.dtype(), Runtime, "scatter_reduce_(): Expected self.dtype to be equal to src.dtype");
  Reduce r = parse_reduce(reduce, "scatter_reduce_", false);
  self.bump_version();
  if (self.device().is_meta() || index.numel() == 0) return self;
  Tensor counts;
  if (r == Reduce::Mean) counts = call_op(TP_OP("full"), self.sizes(), Scalar(int64_t(include_self ? 1 : 0)),
                                          std::optional<ScalarType>(ScalarType::Int64), std::optional<Device>(self.device()));
  if (!include_self) {  // reset the targets to the reduction's identity, then every write counts
    Scalar identity = r == Reduce::Prod ? Scalar(int64_t(1)) : Scalar(int64_t(0));
    Tensor marker = call_op(TP_OP("full"), std::vector<int64_t>{}, identity, std::optional<ScalarType>(self.dtype()),
                            std::optional<Device>(self.device()));
    Tensor ident_src = make_view(marker, index.sizes(), Shape(index.dim(), 0), 0);
    if (r == Reduce::Max || r == Reduce::Min) {
      // amax/amin have no finite identity: the first write wins, so scatter the sources plainly first.
      scatter_loop("scatter_reduce_", self, d, index, src, Reduce::None, Tensor());
    } else {
      scatter_loop("scatter_reduce_", self, d, index, ident_src, Reduce::None, Tensor());
    }
  }
  scatter_loop("scatter_reduce_", self, d, index, src, r, counts);
  if (r == Reduce::Mean) {  // divide by the number of contributions; integers round down, as in PyTorch
    TensorIterator it(raw_iter_config("scatter_reduce_", self.dtype()), self, {counts});
    TP_DISPATCH_ALL(self.dtype(), "scatter_reduce_", [&]<typename T>() {
      using M = opmath_t<T>;
      it.for_each([](char **p, const int64_t *s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t c = *reinterpret_cast<const int64_t *>(p[1] + i * s[1]);
          T &x = *reinterpret_cast<T *>(p[0] + i * s[0]);
          if (c <= 1) continue;
          if constexpr (std::is_same_v<T, bool>) continue;
          else if constexpr (std::is_integral_v<T>) x = T(x >= 0 ? x / c : -((-x + c - 1) / c));
          else x = T(M(x) / M(double(c)));
        }
      });
    });
  }
  return self;
}

// Functional forms: clone, then the in-place op.
static Tensor scatter_src(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src,
                          std::optional<std::string> reduce) {
  return call_op(TP_OP("scatter_.src"), call_op(TP_OP("clone"), self), dim, index, src, reduce);
}
static Tensor scatter_value(const Tensor &self, int64_t dim, const Tensor &index, const Scalar &value,
                            std::optional<std::string> reduce) {
  return call_op(TP_OP("scatter_.value"), call_op(TP_OP("clone"), self), dim, index, value, reduce);
}
static Tensor scatter_add(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src) {
  return call_op(TP_OP("scatter_add_"), call_op(TP_OP("clone"), self), dim, index, src);
}
static Tensor scatter_reduce(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &src,
                             std::string reduce, bool include_self) {
  return call_op(TP_OP("scatter_reduce_.two"), call_op(TP_OP("clone"), self), dim, index, src, reduce, include_self);
}

// A 1-D index along dim `d`, viewed and expanded to `shape` (what index_select & co. gather/scatter with).
static Tensor spread_index(const Tensor &index, const Shape &shape, int64_t d, const char *op) {
  TP_CHECK(index.dim() <= 1, Index, op, "(): Index is supposed to be a vector, got ", index.dim(), " dims");
  TP_CHECK(is_integral(index.dtype(), false), Index, op, "(): Expected dtype int32/int64 for index, got ",
           scalar_type_name(index.dtype()));
  Tensor idx = index.dtype() == ScalarType::Int64 ? index : cast_to(index, ScalarType::Int64);
  Shape view_shape(shape.size(), 1);
  if (!shape.empty()) view_shape[d] = idx.numel();
  return call_op(TP_OP("expand"), call_op(TP_OP("reshape"), idx, view_shape), shape);
}

static Tensor index_select(const Tensor &self, int64_t dim, const Tensor &index) {
  int64_t d = wrap_dim(dim, self.dim(), "index_select");
  TP_CHECK(self.dim() > 0 || index.numel() == 1, Index, "index_select(): Index to scalar can have only 1 value, got ",
           index.numel(), " value(s)");
  Shape shape = self.sizes();
  if (!shape.empty()) shape[d] = index.numel();
  Tensor idx = spread_index(index, shape, d, "index_select");
  if (self.dim() == 0) {
    check_index_range(idx, 1, 0, "index_select", false);
    return call_op(TP_OP("clone"), self);
  }
  check_index_range(index, self.sizes()[d], d, "index_select", false);  // so the message names index_select
  return gather(self, d, idx, false);
}

static Tensor index_add_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &source,
                         const Scalar &alpha) {
  int64_t d = wrap_dim(dim, self.dim(), "index_add_");
  TP_CHECK(source.dim() == self.dim() || (self.dim() <= 1 && source.dim() <= 1), Index,
           "index_add_(): source and self must have the same number of dimensions");
  TP_CHECK(index.numel() == (source.dim() ? source.sizes()[d] : 1), Index, "index_add_(): Number of indices (",
           index.numel(), ") should be equal to source.size(dim) (", source.dim() ? source.sizes()[d] : 1, ")");
  Tensor src = alpha.to_double() == 1 ? source : call_op(TP_OP("mul"), source, call_op(TP_OP("scalar_tensor"), alpha,
                                                  std::optional<ScalarType>(), std::optional<Device>()));
  src = src.dtype() == self.dtype() ? src : cast_to(src, self.dtype());
  Tensor idx = spread_index(index, source.sizes(), d, "index_add_");
  check_index_range(index, self.dim() ? self.sizes()[d] : 1, d, "index_add_", false);  // Note [Index error types]
  return scatter_src_(self, d, idx, src, std::string("add"));
}

static Tensor index_copy_(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &source) {
  int64_t d = wrap_dim(dim, self.dim(), "index_copy_");
  TP_CHECK(index.numel() == (source.dim() ? source.sizes()[d] : 1), Index, "index_copy_(): Number of indices (",
           index.numel(), ") should be equal to source.size(dim) (", source.dim() ? source.sizes()[d] : 1, ")");
  Tensor src = source.dtype() == self.dtype() ? source : cast_to(source, self.dtype());
  Tensor idx = spread_index(index, source.sizes(), d, "index_copy_");
  check_index_range(index, self.dim() ? self.sizes()[d] : 1, d, "index_copy_", false);  // Note [Index error types]
  return scatter_src_(self, d, idx, src, std::nullopt);
}

static Tensor index_fill_(const Tensor &self, int64_t dim, const Tensor &index, const Scalar &value) {
  int64_t d = wrap_dim(dim, self.dim(), "index_fill_");
  Shape shape = self.sizes();
  if (!shape.empty()) shape[d] = index.numel();
  Tensor idx = spread_index(index, shape, d, "index_fill_");
  return scatter_value_(self, d, wrap_negative(idx, self.dim() ? self.sizes()[d] : 1), value, std::nullopt);
}

static Tensor index_add(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &source,
                        const Scalar &alpha) {
  return call_op(TP_OP("index_add_"), call_op(TP_OP("clone"), self), dim, index, source, alpha);
}
static Tensor index_copy(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &source) {
  return call_op(TP_OP("index_copy_"), call_op(TP_OP("clone"), self), dim, index, source);
}
static Tensor index_fill(const Tensor &self, int64_t dim, const Tensor &index, const Scalar &value) {
  return call_op(TP_OP("index_fill_.int_Scalar"), call_op(TP_OP("clone"), self), dim, index, value);
}

// take: self as a flat list, read at `index` (negative indices count from the end), result shaped like index.
static Tensor take(const Tensor &self, const Tensor &index) {
  Tensor flat = call_op(TP_OP("reshape"), self, std::vector<int64_t>{-1});
  TP_CHECK(is_integral(index.dtype(), false), Index, "take(): Expected a long tensor for index, but got ",
           scalar_type_name(index.dtype()));
  Tensor idx = wrap_negative(index.dtype() == ScalarType::Int64 ? index : cast_to(index, ScalarType::Int64),
                             flat.numel(), "take");
  Tensor out = call_op(TP_OP("gather"), flat, int64_t(0), call_op(TP_OP("reshape"), idx, std::vector<int64_t>{-1}), false);
  return call_op(TP_OP("view"), out, index.sizes());
}

// take_along_dim: gather with the index broadcast against self outside `dim` (dim None: on the flat tensor).
static Tensor take_along_dim(const Tensor &self, const Tensor &indices, std::optional<int64_t> dim) {
  if (!dim) return take(self, indices);
  int64_t d = wrap_dim(*dim, self.dim(), "take_along_dim");
  TP_CHECK(indices.dim() == self.dim(), Runtime, "torch.take_along_dim(): input and indices should have the same "
           "number of dimensions, but got ", self.dim(), " dimensions for input, and ", indices.dim(),
           " dimensions for indices");
  Shape self_shape = self.sizes(), idx_shape = indices.sizes();
  self_shape[d] = 1;
  idx_shape[d] = 1;
  Shape b = broadcast_shapes(self_shape, idx_shape, "take_along_dim");
  Shape s = b, i = b;
  s[d] = self.sizes()[d];
  i[d] = indices.sizes()[d];
  return call_op(TP_OP("gather"), call_op(TP_OP("expand"), self, s), d, call_op(TP_OP("expand"), indices, i), false);
}

// put_: the flat self written at `index` from `source` (accumulate adds, duplicates included).
static Tensor put_(const Tensor &self, const Tensor &index, const Tensor &source, bool accumulate) {
  if (!self.is_contiguous()) {  // write into a contiguous copy, then back through self's layout
    Tensor tmp = call_op(TP_OP("contiguous"), self);
    put_(tmp, index, source, accumulate);
    call_op(TP_OP("copy_"), self, tmp, false);
    return self;
  }
  TP_CHECK(index.numel() == source.numel(), Runtime, "put_(): Expected source and index to have the same number of "
           "elements, but got source.numel() = ", source.numel(), ", index.numel() = ", index.numel());
  Tensor flat = call_op(TP_OP("view"), self, std::vector<int64_t>{-1});
  Tensor idx = wrap_negative(index.dtype() == ScalarType::Int64 ? index : cast_to(index, ScalarType::Int64),
                             flat.numel(), "put_");
  Tensor src = source.dtype() == self.dtype() ? source : cast_to(source, self.dtype());
  scatter_src_(flat, 0, call_op(TP_OP("reshape"), idx, std::vector<int64_t>{-1}),
               call_op(TP_OP("reshape"), src, std::vector<int64_t>{-1}),
               accumulate ? std::optional<std::string>("add") : std::nullopt);
  return self;
}

TP_LIBRARY(index) {
  lib.def("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor");
  lib.def("scatter.src(Tensor self, int dim, Tensor index, Tensor src, *, str? reduce=None) -> Tensor");
  lib.def("scatter.value(Tensor self, int dim, Tensor index, Scalar value, *, str? reduce=None) -> Tensor");
  lib.def("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str? reduce=None) -> Tensor(a!)");
  lib.def("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str? reduce=None) -> Tensor(a!)");
  lib.def("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor");
  lib.def("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)");
  lib.def("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor");
  lib.def("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor(a!)");
  lib.def("index_select(Tensor self, int dim, Tensor index) -> Tensor");
  lib.def("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor");
  lib.def("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)");
  lib.def("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor");
  lib.def("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)");
  lib.def("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor");
  lib.def("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)");
  lib.def("take(Tensor self, Tensor index) -> Tensor");
  lib.def("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor");
  lib.def("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<gather>(lib, "gather", key, __LINE__);
    impl_typed<scatter_src_>(lib, "scatter_.src", key, __LINE__);
    impl_typed<scatter_value_>(lib, "scatter_.value", key, __LINE__);
    impl_typed<scatter_add_>(lib, "scatter_add_", key, __LINE__);
    impl_typed<scatter_reduce_>(lib, "scatter_reduce_.two", key, __LINE__);
    impl_typed<index_select>(lib, "index_select", key, __LINE__);
    impl_typed<index_add_>(lib, "index_add_", key, __LINE__);
    impl_typed<index_copy_>(lib, "index_copy_", key, __LINE__);
    impl_typed<index_fill_>(lib, "index_fill_.int_Scalar", key, __LINE__);
    impl_typed<put_>(lib, "put_", key, __LINE__);
  }
  TP_IMPL(lib, "scatter.src", Composite, scatter_src);
  TP_IMPL(lib, "scatter.value", Composite, scatter_value);
  TP_IMPL(lib, "scatter_add", Composite, scatter_add);
  TP_IMPL(lib, "scatter_reduce.two", Composite, scatter_reduce);
  TP_IMPL(lib, "index_add", Composite, index_add);
  TP_IMPL(lib, "index_copy", Composite, index_copy);
  TP_IMPL(lib, "index_fill.int_Scalar", Composite, index_fill);
  TP_IMPL(lib, "take", Composite, take);
  TP_IMPL(lib, "take_along_dim", Composite, take_along_dim);
}

}  // namespace tp::p10
