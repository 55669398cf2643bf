// sort.cpp — sorting and searching: sort, argsort, msort, topk, kthvalue, unique, unique_consecutive,
// searchsorted, bucketize, histc, bincount.
//
// Where it sits: sort-like ops move the sorted dim last and make the data contiguous, so each row is a plain
// array (Note [Rows]); rows are sorted independently, split across threads. Searching and counting ops read
// contiguous copies. Outputs go back to the caller's dim with a view.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "kernels/sort.h"
#include "loop/parallel.h"

namespace tp::p10 {

Tensor cast_to(const Tensor &t, ScalarType dtype);

// Note [Rows]
//   For an op along `dim`, movedim(dim -> last) + contiguous gives `rows` arrays of `len` elements; results are
//   computed in that layout and moved back with the inverse movedim (a view of the result).
struct Rows {
  Tensor data;  // contiguous, `dim` last
  int64_t rows, len, dim;
};
static Rows as_rows(const Tensor &self, int64_t dim, const char *op) {
  int64_t d = wrap_dim(dim, self.dim(), op);
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < self.dim(); ++k) if (k != d) perm.push_back(k);
  if (self.dim()) perm.push_back(d);
  Tensor moved = self.dim() ? call_op(TP_OP("permute"), self, perm) : self;
  Tensor data = call_op(TP_OP("contiguous"), moved);
  int64_t len = self.dim() ? self.sizes()[d] : 1;
  return {data, len ? data.numel() / len : 0, len, d};
}
// Undo as_rows' movedim on a result laid out as rows (same shape as the rows tensor, last dim maybe resized).
static Tensor from_rows(const Tensor &t, int64_t d, int64_t ndim) {
  if (ndim == 0) return t;
  std::vector<int64_t> perm(ndim);
  for (int64_t k = 0, src = 0; k < ndim; ++k) perm[k] = k == d ? ndim - 1 : src++;
  return call_op(TP_OP("permute"), t, perm);
}

// Ascending order with NaN after everything (descending: NaN first), as PyTorch sorts.
template <typename T> static bool less_nan_last(T a, T b) {
  if constexpr (is_complex_dtype<T>) {
    return false;  // complex numbers have no order: callers reject them before sorting
  } else if constexpr (std::is_floating_point_v<opmath_t<T>>) {
    auto x = opmath_t<T>(a), y = opmath_t<T>(b);
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  } else {
    return a < b;
  }
}

// Sort each row's indices (stable); the rows tensor gives values and int64 indices in the rows layout.
static std::tuple<Tensor, Tensor> sort_rows(const Rows &r, bool descending, int64_t keep) {
  Shape shape = r.data.sizes();
  if (!shape.empty()) shape.back() = keep;
  Tensor values = empty_tensor(shape, r.data.dtype(), r.data.device());
  Tensor indices = empty_tensor(shape, ScalarType::Int64, r.data.device());
  if (r.data.device().is_meta() || values.numel() == 0) return {values, indices};
  TP_CHECK(!is_complex(r.data.dtype()), Runtime, "sort(): complex tensors cannot be ordered");
  TP_DISPATCH_ALL(r.data.dtype(), "sort", [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      const T *src = r.data.data<T>();
      T *vo = values.data<T>();
      int64_t *io = indices.data<int64_t>();
      parallel_for(0, r.rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r.len, 1)), [&](int64_t b, int64_t e) {
        std::vector<int64_t> order(r.len);
        for (int64_t row = b; row < e; ++row) {
          const T *x = src + row * r.len;
          std::iota(order.begin(), order.end(), 0);
          // descending is the mirror of ascending-with-NaN-largest, so NaN comes first; stable either way
          auto cmp = [&](int64_t i, int64_t j) {
            return descending ? less_nan_last(x[j], x[i]) : less_nan_last(x[i], x[j]);
          };
          if (keep < r.len) std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int64_t i, int64_t j) {
            return cmp(i, j) || (!cmp(j, i) && i < j);  // ties by position: deterministic
          });
          else std::stable_sort(order.begin(), order.end(), cmp);
          for (int64_t k = 0; k < keep; ++k) {
            vo[row * keep + k] = x[order[k]];
            io[row * keep + k] = order[k];
          }
        }
      });
    }
  });
  return {values, indices};
}

static std::tuple<Tensor, Tensor> sort(const Tensor &self, int64_t dim, bool descending, std::optional<bool> stable) {
  (void)stable;  // every sort here is stable
  Rows r = as_rows(self, dim, "sort");
  auto [v, i] = sort_rows(r, descending, r.len);
  return {from_rows(v, r.dim, self.dim()), from_rows(i, r.dim, self.dim())};
}

// Composite: through the dispatcher (not the CPU sort above), so a CUDA tensor reaches the CUDA sort.
static Tensor argsort(const Tensor &self, int64_t dim, bool descending, bool stable) {
  return std::get<1>(call_op<std::tuple<Tensor, Tensor>>(TP_OP("sort"), self, dim, descending,
                                                         std::optional<bool>(stable)));
}

static Tensor msort(const Tensor &self) { return std::get<0>(call_op<std::tuple<Tensor, Tensor>>(
    TP_OP("sort"), self, int64_t(0), false, std::optional<bool>())); }

static std::tuple<Tensor, Tensor> topk(const Tensor &self, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;  // results are always in order
  int64_t len = self.dim() ? self.sizes()[wrap_dim(dim, self.dim(), "topk")] : 1;
  TP_CHECK(k >= 0 && k <= len, Runtime, "selected index k out of range (k=", k, ", dimension size ", len, ")");
  Rows r = as_rows(self, dim, "topk");
  auto [v, i] = sort_rows(r, largest, k);
  return {from_rows(v, r.dim, self.dim()), from_rows(i, r.dim, self.dim())};
}

static std::tuple<Tensor, Tensor> kthvalue(const Tensor &self, int64_t k, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, self.dim(), "kthvalue");
  int64_t len = self.dim() ? self.sizes()[d] : 1;
  TP_CHECK(k >= 1 && k <= len, Runtime, "kthvalue(): selected number k out of range for dimension ", d,
           " (k=", k, ", size ", len, ")");
  if (self.dim() == 0) {  // a 0-d tensor is its own first value, at index 0 (as in PyTorch)
    Tensor zero = call_op<Tensor>(TP_OP("full"), Shape{}, Scalar(int64_t(0)),
                                  std::optional<ScalarType>(ScalarType::Int64), std::optional<Device>(self.device()));
    return {call_op<Tensor>(TP_OP("clone"), self), zero};
  }
  Rows r = as_rows(self, dim, "kthvalue");
  auto [v, i] = sort_rows(r, false, k);
  Tensor values = call_op(TP_OP("select"), v, int64_t(-1), k - 1), indices = call_op(TP_OP("select"), i, int64_t(-1), k - 1);
  if (keepdim && self.dim()) {
    values = call_op(TP_OP("unsqueeze"), values, d);
    indices = call_op(TP_OP("unsqueeze"), indices, d);
  }
  return {values, indices};
}

// `dim` moved to the front (to_front) and back (from_front), through permute (kernels/sort.h).
Tensor move_dim(const Tensor &t, int64_t from, int64_t to) {
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < t.dim(); ++k) if (k != from) perm.push_back(k);
  perm.insert(perm.begin() + to, from);
  return call_op(TP_OP("permute"), t, perm);
}

// Note [unique]
//   unique works on "rows": the flattened tensor is rows of one element (dim None), otherwise the slices along
//   `dim` (moved to the front and flattened) are the rows. Rows are sorted lexicographically (stable), equal
//   neighbours are merged — `==` per element, so every NaN stays distinct, as in PyTorch — and the inverse and
//   counts fall out of the same walk. unique_consecutive skips the sort.
static std::tuple<Tensor, Tensor, Tensor> unique_rows(const Tensor &self, std::optional<int64_t> dim, bool sort_first,
                                                      const char *op) {
  TP_CHECK(!self.device().is_meta(), NotImplemented, op, "(): the output size depends on the data, which meta "
           "tensors do not have");
  int64_t d = dim ? wrap_dim(*dim, self.dim(), op) : 0;
  Tensor front = dim ? call_op(TP_OP("contiguous"), move_dim(self, d, 0))
                     : call_op(TP_OP("reshape"), call_op(TP_OP("contiguous"), self), std::vector<int64_t>{-1});
  int64_t n = dim ? (self.dim() ? self.sizes()[d] : 1) : self.numel();
  int64_t width = n ? front.numel() / n : 0;
  std::vector<int64_t> order(n), group_of(n);
  std::vector<int64_t> firsts, counts;
  std::iota(order.begin(), order.end(), 0);
  TP_CHECK(!is_complex(self.dtype()) || !sort_first, Runtime, op, "(): complex tensors cannot be sorted");
  TP_DISPATCH_ALL(self.dtype(), op, [&]<typename T>() {
    const T *x = front.data<T>();
    auto row_less = [&](int64_t i, int64_t j) {
      for (int64_t k = 0; k < width; ++k) {
        if (less_nan_last(x[i * width + k], x[j * width + k])) return true;
        if (less_nan_last(x[j * width + k], x[i * width + k])) return false;
      }
      return false;
    };
    auto row_equal = [&](int64_t i, int64_t j) {
      for (int64_t k = 0; k < width; ++k)
        if (!(x[i * width + k] == x[j * width + k])) return false;
      return true;
    };
    if constexpr (!is_complex_dtype<T>)
      if (sort_first) std::stable_sort(order.begin(), order.end(), row_less);
    for (int64_t p = 0; p < n; ++p) {
      if (p == 0 || !row_equal(order[p - 1], order[p])) {
        firsts.push_back(order[p]);
        counts.push_back(0);
      }
      ++counts.back();
      group_of[order[p]] = int64_t(firsts.size()) - 1;
    }
  });
  int64_t u = int64_t(firsts.size());
  Tensor picks = empty_tensor({u}, ScalarType::Int64, Device{});
  std::copy(firsts.begin(), firsts.end(), picks.data<int64_t>());
  Tensor values = call_op(TP_OP("index_select"), front, int64_t(0), picks);
  if (dim) values = move_dim(values, 0, d);
  Tensor inverse = empty_tensor(dim ? Shape{n} : self.sizes(), ScalarType::Int64, Device{});
  std::copy(group_of.begin(), group_of.end(), inverse.data<int64_t>());
  Tensor count = empty_tensor({u}, ScalarType::Int64, Device{});
  std::copy(counts.begin(), counts.end(), count.data<int64_t>());
  return {call_op(TP_OP("contiguous"), values), inverse, count};
}

// The op always returns all three; Python's tp.unique hands back the ones asked for (as PyTorch does).
static std::tuple<Tensor, Tensor, Tensor> unique(const Tensor &self, bool sorted, bool return_inverse,
                                                 bool return_counts, std::optional<int64_t> dim) {
  (void)sorted, (void)return_inverse, (void)return_counts;  // CPU unique is always sorted; all outputs are cheap
  return unique_rows(self, dim, true, "unique");
}
static std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor &self, bool return_inverse,
                                                             bool return_counts, std::optional<int64_t> dim) {
  (void)return_inverse, (void)return_counts;
  return unique_rows(self, dim, false, "unique_consecutive");
}

// searchsorted: for each value, the insertion point in its row of `sorted_sequence` (side "left": first i with
// seq[i] >= v; "right": first i with seq[i] > v). A 1-D sequence serves every value; otherwise leading dims match.
static Tensor searchsorted(const Tensor &seq, const Tensor &values, bool out_int32, bool right,
                          std::optional<std::string> side, std::optional<Tensor> sorter) {
  if (side) {
    TP_CHECK(*side == "left" || *side == "right", Runtime, "searchsorted(): side can only be 'left' or 'right' but "
             "got ", *side);
    TP_CHECK(!(right && *side == "left"), Runtime, "searchsorted(): side and right can't be set to opposites, got "
             "side of left while right was True");
    right = *side == "right";
  }
  TP_CHECK(seq.dim() >= 1, Runtime, "searchsorted(): boundaries tensor should have at least 1 dimension");
  bool shared = seq.dim() == 1;
  if (!shared) {
    TP_CHECK(seq.dim() == values.dim() &&
                 std::equal(seq.sizes().begin(), seq.sizes().end() - 1, values.sizes().begin()),
             Runtime, "searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
             "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
             shape_str(seq.sizes()), " and input value tensor ", shape_str(values.sizes()));
  }
  ScalarType out_t = out_int32 ? ScalarType::Int32 : ScalarType::Int64;
  Tensor out = empty_tensor(values.sizes(), ScalarType::Int64, values.device());
  if (values.device().is_meta() || seq.device().is_meta() || out.numel() == 0)
    return out_int32 ? cast_to(out, out_t) : out;
  Tensor s = sorter ? call_op(TP_OP("gather"), seq, int64_t(-1), *sorter, false) : seq;
  ScalarType common = promote_types(s.dtype(), values.dtype());
  Tensor sc = call_op(TP_OP("contiguous"), s.dtype() == common ? s : cast_to(s, common));
  Tensor vc = call_op(TP_OP("contiguous"), values.dtype() == common ? values : cast_to(values, common));
  int64_t m = sc.sizes().back(), per_row = values.dim() ? values.sizes().back() : 1;
  int64_t *o = out.data<int64_t>();
  TP_DISPATCH_ALL(common, "searchsorted", [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      const T *sp = sc.data<T>(), *vp = vc.data<T>();
      for (int64_t i = 0; i < vc.numel(); ++i) {
        const T *row = sp + (shared ? 0 : (i / per_row) * m);
        auto cmp = [](T a, T b) { return less_nan_last(a, b); };
        const T *pos = right ? std::upper_bound(row, row + m, vp[i], cmp) : std::lower_bound(row, row + m, vp[i], cmp);
        o[i] = pos - row;
      }
    } else {
      fail(ErrorKind::Runtime, "searchsorted(): complex values cannot be ordered");
    }
  });
  return out_int32 ? cast_to(out, out_t) : out;
}

static Tensor searchsorted_scalar(const Tensor &seq, const Scalar &value, bool out_int32, bool right,
                                  std::optional<std::string> side, std::optional<Tensor> sorter) {
  TP_CHECK(seq.dim() == 1, Runtime, "searchsorted(): input value can be a scalar only when boundaries tensor "
           "dimension is 1, but we got boundaries tensor dim(", seq.dim(), ")");
  // On the sequence's device: a CPU value beside a meta sequence would make the kernel read meta storage.
  Tensor v = call_op(TP_OP("scalar_tensor"), value, std::optional<ScalarType>(), std::optional<Device>(seq.device()));
  return searchsorted(seq, v, out_int32, right, side, sorter);
}

static Tensor bucketize(const Tensor &self, const Tensor &boundaries, bool out_int32, bool right) {
  TP_CHECK(boundaries.dim() == 1, Runtime, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  // Composite: through the dispatcher (not the CPU searchsorted above), so CUDA tensors reach the CUDA kernel.
  return call_op<Tensor>(TP_OP("searchsorted.Tensor"), boundaries, self, out_int32, right,
                         std::optional<std::string>(), std::optional<Tensor>());
}

// histc: `bins` equal-width bins over [min, max] (the data's range when min == max); values outside are
// ignored, a value equal to max lands in the last bin.
static Tensor histc(const Tensor &self, int64_t bins, const Scalar &min_s, const Scalar &max_s) {
  TP_CHECK(is_floating(self.dtype()), Runtime, "\"histogram_cpu\" not implemented for '",
           scalar_type_name(self.dtype()), "'");
  TP_CHECK(bins > 0, Runtime, "torch.histc(): bins must be > 0, but got ", bins);
  Tensor out = call_op(TP_OP("full"), std::vector<int64_t>{bins}, Scalar(0.0), std::optional<ScalarType>(self.dtype()),
                       std::optional<Device>(self.device()));
  if (self.device().is_meta()) return out;
  Tensor x = cast_to(call_op(TP_OP("contiguous"), self), ScalarType::Float64);
  const double *p = x.data<double>();
  double lo = min_s.to_double(), hi = max_s.to_double();
  TP_CHECK(std::isfinite(lo) && std::isfinite(hi), Runtime, "torch.histc(): range of [", lo, ", ", hi,
           "] is not finite");
  if (lo == hi && x.numel()) {
    lo = *std::min_element(p, p + x.numel());
    hi = *std::max_element(p, p + x.numel());
  }
  if (lo == hi) { lo -= 1; hi += 1; }
  TP_CHECK(lo < hi, Runtime, "torch.histc(): max must be larger than min");
  std::vector<double> counts(bins, 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (!(p[i] >= lo && p[i] <= hi)) continue;  // also skips NaN
    int64_t b = int64_t((p[i] - lo) * double(bins) / (hi - lo));
    counts[std::min(b, bins - 1)] += 1;
  }
  Tensor c = empty_tensor({bins}, ScalarType::Float64, Device{});
  std::copy(counts.begin(), counts.end(), c.data<double>());
  return call_op(TP_OP("copy_"), out, c, false);
}

// bincount: occurrences of each non-negative integer (weighted sums with `weights`).
static Tensor bincount(const Tensor &self, std::optional<Tensor> weights, int64_t minlength) {
  TP_CHECK(self.dim() == 1 && is_integral(self.dtype(), false), Runtime,
           "bincount only supports 1-d non-negative integral inputs, got dtype ", scalar_type_name(self.dtype()),
           " with ", self.dim(), " dims");
  TP_CHECK(minlength >= 0, Runtime, "minlength should be >= 0, got ", minlength);
  TP_CHECK(!weights || (weights->dim() == 1 && weights->numel() == self.numel()), Runtime,
           "weights should be 1-d and have the same length as input");
  TP_CHECK(!self.device().is_meta(), NotImplemented, "bincount(): the output size depends on the data");
  Tensor idx = cast_to(call_op(TP_OP("contiguous"), self), ScalarType::Int64);
  const int64_t *p = idx.data<int64_t>();
  int64_t len = minlength;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    TP_CHECK(p[i] >= 0, Runtime, "bincount only supports 1-d non-negative integral inputs, found ", p[i]);
    len = std::max(len, p[i] + 1);
  }
  if (!weights) {
    Tensor out = call_op(TP_OP("full"), std::vector<int64_t>{len}, Scalar(int64_t(0)),
                         std::optional<ScalarType>(ScalarType::Int64), std::optional<Device>(self.device()));
    int64_t *o = out.data<int64_t>();
    for (int64_t i = 0; i < idx.numel(); ++i) ++o[p[i]];
    return out;
  }
  // PyTorch: floating weights keep their dtype, others accumulate in float64
  ScalarType wt = is_floating(weights->dtype()) ? weights->dtype() : ScalarType::Float64;
  Tensor w = cast_to(call_op(TP_OP("contiguous"), *weights), ScalarType::Float64);
  std::vector<double> sums(len, 0.0);
  for (int64_t i = 0; i < idx.numel(); ++i) sums[p[i]] += w.data<double>()[i];
  Tensor acc = empty_tensor({len}, ScalarType::Float64, Device{});
  std::copy(sums.begin(), sums.end(), acc.data<double>());
  return wt == ScalarType::Float64 ? acc : cast_to(acc, wt);
}

TP_LIBRARY(sort) {
  lib.def("sort(Tensor self, int dim=-1, bool descending=False, *, bool? stable=None) -> (Tensor values, Tensor indices)");
  lib.def("argsort(Tensor self, int dim=-1, bool descending=False, *, bool stable=False) -> Tensor");
  lib.def("msort(Tensor self) -> Tensor");
  lib.def("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)");
  lib.def("kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<sort>(lib, "sort", key, __LINE__);
    impl_typed<topk>(lib, "topk", key, __LINE__);
    impl_typed<kthvalue>(lib, "kthvalue", key, __LINE__);
  }
  TP_IMPL(lib, "argsort", Composite, argsort);
  TP_IMPL(lib, "msort", Composite, msort);
  lib.def("unique(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False, int? dim=None) "
          "-> (Tensor values, Tensor inverse_indices, Tensor counts)");
  lib.def("unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) "
          "-> (Tensor values, Tensor inverse_indices, Tensor counts)");
  lib.def("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, "
          "str? side=None, Tensor? sorter=None) -> Tensor");
  lib.def("searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
          "str? side=None, Tensor? sorter=None) -> Tensor");
  lib.def("bucketize(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor");
  lib.def("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor");
  lib.def("bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<unique>(lib, "unique", key, __LINE__);
    impl_typed<unique_consecutive>(lib, "unique_consecutive", key, __LINE__);
    impl_typed<searchsorted>(lib, "searchsorted.Tensor", key, __LINE__);
    impl_typed<searchsorted_scalar>(lib, "searchsorted.Scalar", key, __LINE__);
    impl_typed<histc>(lib, "histc", key, __LINE__);
    impl_typed<bincount>(lib, "bincount", key, __LINE__);
  }
  TP_IMPL(lib, "bucketize", Composite, bucketize);
}

}  // namespace tp::p10
