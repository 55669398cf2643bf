// reduce_order.cpp — reductions that pick an element by order: max, min, amax, amin, aminmax, argmax, argmin,
// median, nanmedian, mode, quantile, nanquantile.
//
// Where it sits: beside reduce.cpp (sums) and reduce_stats.cpp (var, norm, ...); all run on the ReducePlan of
// loop/reduce.h. max/min/argmax are single passes that track (value, index); median, mode and quantile copy each
// row and order it (nth_element or sort), so they run one row per task.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/reduce.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

using Dims = std::optional<std::vector<int64_t>>;

static Dims one_dim(int64_t d) { return std::vector<int64_t>{d}; }
template <typename M> static bool is_nan(M v) { return v != v; }

// Note [NaN in max and min]
//   PyTorch's max/min propagate NaN: a NaN beats every number, and the first NaN (like the first maximum) is the
//   one whose index is returned. `better(a, b)` says b replaces the current best a; equal values never replace,
//   which keeps first occurrences, also when a long row is split over threads and merged in order.
template <typename M> struct Best {
  M v;
  int64_t i;
};
template <typename M, bool IsMax> static bool better(M a, M b) {
  if (is_nan(a)) return false;
  if (is_nan(b)) return true;
  return IsMax ? b > a : b < a;
}

// Run the (value, index) scan for max (IsMax) or min; write(o, Best) for each output.
template <typename T, bool IsMax, typename Write> static void arg_scan(const ReducePlan &p, const Write &write) {
  using M = opmath_t<T>;
  reduce_rows<T, Best<M>>(
      p, [](const T *x, int64_t n, int64_t s, int64_t first) {
        Best<M> b{M(x[0]), first};
        for (int64_t i = 1; i < n; ++i) {
          M v = M(x[i * s]);
          if (better<M, IsMax>(b.v, v)) b = {v, first + i};
        }
        return b;
      },
      [](Best<M> a, Best<M> b) { return better<M, IsMax>(a.v, b.v) ? b : a; }, write);
}

static void check_not_complex(const Tensor &self, const char *op) {
  TP_CHECK(!is_complex(self.dtype()), NotImplemented, op, "(): not implemented for complex input (",
           scalar_type_name(self.dtype()), ")");
}

// values only (max(), amax, ...) when `indices` is undefined; (values, indices) otherwise.
static void max_min_kernel(const ReducePlan &p, const Tensor &self, bool is_max, const Tensor &values,
                           const Tensor &indices) {
  TP_DISPATCH_ALL(self.dtype(), p.op, [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      T *v = values.defined() ? values.data<T>() : nullptr;
      int64_t *ix = indices.defined() ? indices.data<int64_t>() : nullptr;
      auto write = [&](int64_t o, Best<opmath_t<T>> b) {
        if (v) v[o] = cast_value<T>(b.v);
        if (ix) ix[o] = b.i;
      };
      if (is_max) arg_scan<T, true>(p, write);
      else arg_scan<T, false>(p, write);
    }
  });
}

// Values only (max(), amax, amin): no index to track. Contiguous rows of the native types use 16-byte vectors
// (GCC/Clang vector extensions: one SSE/NEON register, two of them in flight) for the running maxima and a
// separate lane mask for "saw a NaN", because the hardware max drops NaNs (Note [NaN in max and min]).
template <typename T, bool IsMax> static T contiguous_best(const T *x, int64_t n, bool &nan) {
  typedef T V __attribute__((vector_size(16)));
  using Mask = decltype(V{} > V{});
  constexpr int L = 16 / sizeof(T);
  V r0, r1;
  for (int j = 0; j < L; ++j) r0[j] = r1[j] = x[0];
  Mask nans{};
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    V a, b;
    std::memcpy(&a, x + i, sizeof(V));
    std::memcpy(&b, x + i + L, sizeof(V));
    nans |= (a != a) | (b != b);
    r0 = (IsMax ? a > r0 : a < r0) ? a : r0;
    r1 = (IsMax ? b > r1 : b < r1) ? b : r1;
  }
  T m = x[0];
  for (int j = 0; j < L; ++j) {
    nan |= nans[j] != 0;
    for (T e : {r0[j], r1[j]}) m = (IsMax ? e > m : e < m) ? e : m;
  }
  for (; i < n; ++i) {
    nan |= x[i] != x[i];
    m = (IsMax ? x[i] > m : x[i] < m) ? x[i] : m;
  }
  return m;
}

template <typename T, bool IsMax> static void value_scan(const ReducePlan &p, const Tensor &values) {
  using M = opmath_t<T>;
  T *v = values.data<T>();
  auto pick = [](M a, M b) { return (IsMax ? b > a : b < a) ? b : a; };
  reduce_rows<T, M>(
      p, [&](const T *x, int64_t n, int64_t s, int64_t) {
        bool nan = false;
        M r = M(x[0]);
        if constexpr (std::is_same_v<T, M> && !std::is_same_v<T, bool>) {
          if (s == 1) {
            r = contiguous_best<T, IsMax>(x, n, nan);
            return nan ? M(NAN) : r;
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          M e = M(x[i * s]);
          nan |= is_nan(e);
          r = pick(r, e);
        }
        return nan ? M(NAN) : r;
      },
      [&](M a, M b) { return is_nan(a) || is_nan(b) ? M(NAN) : pick(a, b); },
      [v](int64_t o, M m) { v[o] = cast_value<T>(m); });
}

static void value_kernel(const ReducePlan &p, const Tensor &self, bool is_max, const Tensor &values) {
  TP_DISPATCH_ALL(self.dtype(), p.op, [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      if (is_max) value_scan<T, true>(p, values);
      else value_scan<T, false>(p, values);
    }
  });
}

static Tensor max_all_impl(const Tensor &self, const char *op, bool is_max) {
  check_not_complex(self, op);
  check_nonempty_reduction(self, std::nullopt, op);
  ReducePlan p = make_reduce_plan(self, std::nullopt, false, op);
  Tensor v = p.new_output(self.dtype());
  value_kernel(p, self, is_max, v);
  return v;
}

static std::tuple<Tensor, Tensor> max_dim_impl(const Tensor &self, int64_t dim, bool keepdim, const char *op,
                                               bool is_max) {
  check_not_complex(self, op);
  check_nonempty_reduction(self, one_dim(dim), op);
  ReducePlan p = make_reduce_plan(self, one_dim(dim), keepdim, op, /*keep_order=*/true);
  Tensor v = p.new_output(self.dtype()), i = p.new_output(ScalarType::Int64);
  max_min_kernel(p, self, is_max, v, i);
  return {v, i};
}

static Tensor amax_impl(const Tensor &self, const Dims &dim, bool keepdim, const char *op, bool is_max) {
  check_not_complex(self, op);
  check_nonempty_reduction(self, dim, op);
  ReducePlan p = make_reduce_plan(self, dim, keepdim, op);
  Tensor v = p.new_output(self.dtype());
  value_kernel(p, self, is_max, v);
  return v;
}

static Tensor argmax_impl(const Tensor &self, std::optional<int64_t> dim, bool keepdim, const char *op,
                          bool is_max) {
  check_not_complex(self, op);
  check_nonempty_reduction(self, dim ? one_dim(*dim) : Dims(), op);
  // dim=None: the index into the flattened tensor; keepdim then keeps every dim as size 1.
  ReducePlan p = make_reduce_plan(self, dim ? one_dim(*dim) : Dims(), keepdim, op, /*keep_order=*/true);
  Tensor i = p.new_output(ScalarType::Int64);
  max_min_kernel(p, self, is_max, Tensor(), i);
  return i;
}

static Tensor max(const Tensor &self) { return max_all_impl(self, "max", true); }
static Tensor min(const Tensor &self) { return max_all_impl(self, "min", false); }
static std::tuple<Tensor, Tensor> max_dim(const Tensor &self, int64_t dim, bool keepdim) {
  return max_dim_impl(self, dim, keepdim, "max", true);
}
static std::tuple<Tensor, Tensor> min_dim(const Tensor &self, int64_t dim, bool keepdim) {
  return max_dim_impl(self, dim, keepdim, "min", false);
}
static Tensor amax(const Tensor &self, Dims dim, bool keepdim) { return amax_impl(self, dim, keepdim, "amax", true); }
static Tensor amin(const Tensor &self, Dims dim, bool keepdim) { return amax_impl(self, dim, keepdim, "amin", false); }
static std::tuple<Tensor, Tensor> aminmax(const Tensor &self, std::optional<int64_t> dim, bool keepdim) {
  Dims d = dim ? one_dim(*dim) : Dims();
  return {amax_impl(self, d, keepdim, "aminmax", false), amax_impl(self, d, keepdim, "aminmax", true)};
}
static Tensor argmax(const Tensor &self, std::optional<int64_t> dim, bool keepdim) {
  return argmax_impl(self, dim, keepdim, "argmax", true);
}
static Tensor argmin(const Tensor &self, std::optional<int64_t> dim, bool keepdim) {
  return argmax_impl(self, dim, keepdim, "argmin", false);
}

// ---- median, mode -------------------------------------------------------------------------------------------
// A row copied as (value, index) pairs, ordered by value then index so every choice below is deterministic.
template <typename M> using Pairs = std::vector<std::pair<M, int64_t>>;
template <typename T> static void load_pairs(Pairs<opmath_t<T>> &buf, const T *x, int64_t n, int64_t s, bool skip_nan) {
  buf.clear();
  for (int64_t i = 0; i < n; ++i) {
    opmath_t<T> v = opmath_t<T>(x[i * s]);
    if (!(skip_nan && is_nan(v))) buf.push_back({v, i});
  }
}

// median: the lower median (element (n-1)/2 in sorted order). A NaN anywhere makes the result NaN with that
// NaN's index (median); nanmedian ignores NaNs and gives NaN only for an all-NaN row.
template <typename T>
static void median_kernel(const ReducePlan &p, bool ignore_nan, const Tensor &values, const Tensor &indices) {
  using M = opmath_t<T>;
  T *v = values.data<T>();
  int64_t *ix = indices.defined() ? indices.data<int64_t>() : nullptr;
  for_each_row<T>(p, [&](int64_t o, const T *x, int64_t n, int64_t s) {
    thread_local Pairs<M> buf;
    int64_t first_nan = -1;
    for (int64_t i = 0; i < n && first_nan < 0; ++i)
      if (is_nan(M(x[i * s]))) first_nan = i;
    load_pairs<T>(buf, x, n, s, true);
    std::pair<M, int64_t> r;
    if (n == 0) r = {M(NAN), 0};
    else if (first_nan >= 0 && (!ignore_nan || buf.empty())) r = {M(x[first_nan * s]), first_nan};
    else {
      auto mid = buf.begin() + (int64_t(buf.size()) - 1) / 2;
      std::nth_element(buf.begin(), mid, buf.end());
      r = *mid;
    }
    v[o] = cast_value<T>(r.first);
    if (ix) ix[o] = r.second;
  });
}

static Tensor median_all_impl(const Tensor &self, const char *op, bool ignore_nan) {
  check_not_complex(self, op);
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, op, "(): \"", op, "\" not implemented for 'Bool'");
  ReducePlan p = make_reduce_plan(self, std::nullopt, false, op, true);
  Tensor v = p.new_output(self.dtype());
  TP_DISPATCH_REAL(self.dtype(), op, [&]<typename T>() { median_kernel<T>(p, ignore_nan, v, Tensor()); });
  return v;
}

static std::tuple<Tensor, Tensor> median_dim_impl(const Tensor &self, int64_t dim, bool keepdim, const char *op,
                                                  bool ignore_nan) {
  check_not_complex(self, op);
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, op, "(): \"", op, "\" not implemented for 'Bool'");
  check_nonempty_reduction(self, one_dim(dim), op);
  ReducePlan p = make_reduce_plan(self, one_dim(dim), keepdim, op, true);
  Tensor v = p.new_output(self.dtype()), i = p.new_output(ScalarType::Int64);
  TP_DISPATCH_REAL(self.dtype(), op, [&]<typename T>() { median_kernel<T>(p, ignore_nan, v, i); });
  return {v, i};
}

static Tensor median(const Tensor &self) { return median_all_impl(self, "median", false); }
static Tensor nanmedian(const Tensor &self) { return median_all_impl(self, "nanmedian", true); }
static std::tuple<Tensor, Tensor> median_dim(const Tensor &self, int64_t dim, bool keepdim) {
  return median_dim_impl(self, dim, keepdim, "median", false);
}
static std::tuple<Tensor, Tensor> nanmedian_dim(const Tensor &self, int64_t dim, bool keepdim) {
  return median_dim_impl(self, dim, keepdim, "nanmedian", true);
}

// mode: the most frequent value of each row, the smallest one on ties; its index is that value's last
// occurrence in the row (what PyTorch's CPU kernel returns).
static std::tuple<Tensor, Tensor> mode(const Tensor &self, int64_t dim, bool keepdim) {
  check_not_complex(self, "mode");
  check_nonempty_reduction(self, one_dim(dim), "mode");
  ReducePlan p = make_reduce_plan(self, one_dim(dim), keepdim, "mode", true);
  Tensor values = p.new_output(self.dtype()), indices = p.new_output(ScalarType::Int64);
  TP_DISPATCH_ALL(self.dtype(), "mode", [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      using M = opmath_t<T>;
      T *v = values.data<T>();
      int64_t *ix = indices.data<int64_t>();
      for_each_row<T>(p, [&](int64_t o, const T *x, int64_t n, int64_t s) {
        thread_local Pairs<M> buf;
        load_pairs<T>(buf, x, n, s, false);
        // NaNs sort last and count as equal to each other (PyTorch's answer for rows with NaN depends on
        // the order its sort leaves them in, so there is nothing to match there).
        auto less = [](const std::pair<M, int64_t> &a, const std::pair<M, int64_t> &b) {
          bool an = is_nan(a.first), bn = is_nan(b.first);
          if (an != bn) return bn;
          if (!an && a.first != b.first) return a.first < b.first;
          return a.second < b.second;
        };
        auto same = [](M a, M b) { return a == b || (is_nan(a) && is_nan(b)); };
        std::sort(buf.begin(), buf.end(), less);
        int64_t best_len = 0;
        std::pair<M, int64_t> best{};
        for (size_t i = 0; i < buf.size();) {
          size_t j = i;
          while (j < buf.size() && same(buf[j].first, buf[i].first)) ++j;
          if (int64_t(j - i) > best_len) { best_len = int64_t(j - i); best = buf[j - 1]; }
          i = j;
        }
        v[o] = cast_value<T>(best.first);
        ix[o] = best.second;
      });
    }
  });
  return {values, indices};
}

// ---- quantile -----------------------------------------------------------------------------------------------
// PyTorch's lerp, exact at both ends.
template <typename M> static M lerp(M a, M b, M w) { return w < M(0.5) ? a + w * (b - a) : b - (b - a) * (M(1) - w); }

static Tensor quantile_impl(const char *op, const Tensor &self, const std::vector<double> &qs, bool q_is_list,
                            std::optional<int64_t> dim, bool keepdim, const std::string &interp, bool ignore_nan) {
  TP_CHECK(self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float64, Runtime, op,
           "() input tensor must be either float or double dtype");
  TP_CHECK(self.numel() > 0, Runtime, op, "() input tensor must be non-empty");
  TP_CHECK(interp == "linear" || interp == "lower" || interp == "higher" || interp == "midpoint" ||
               interp == "nearest",
           Value, op, "() interpolation must be one of linear, lower, higher, midpoint or nearest. Got ", interp);
  for (double q : qs) TP_CHECK(q >= 0 && q <= 1, Runtime, op, "() q values must be in the range [0, 1]");
  ReducePlan p = make_reduce_plan(self, dim ? one_dim(*dim) : Dims(), keepdim, op, true);
  if (!dim && keepdim) p.out_shape.assign(std::max<int64_t>(self.dim(), 0), 1);
  Shape shape = p.out_shape;
  if (q_is_list) shape.insert(shape.begin(), int64_t(qs.size()));
  Tensor out = empty_tensor(shape, self.dtype(), self.device());
  TP_DISPATCH_FLOATING(self.dtype(), op, [&]<typename T>() {
    T *o = out.data<T>();
    for_each_row<T>(p, [&](int64_t row, const T *x, int64_t n, int64_t s) {
      thread_local std::vector<T> buf;
      buf.clear();
      bool has_nan = false;
      for (int64_t i = 0; i < n; ++i) {
        if (is_nan(x[i * s])) has_nan = true;
        else buf.push_back(x[i * s]);
      }
      std::sort(buf.begin(), buf.end());
      const int64_t m = int64_t(buf.size());
      for (size_t k = 0; k < qs.size(); ++k) {
        T r;
        if ((has_nan && !ignore_nan) || m == 0) {
          r = T(NAN);
        } else {
          double rank = qs[k] * double(m - 1);
          int64_t lo = int64_t(std::floor(rank)), hi = int64_t(std::ceil(rank));
          if (interp == "lower") r = buf[lo];
          else if (interp == "higher") r = buf[hi];
          else if (interp == "nearest") r = buf[int64_t(std::nearbyint(rank))];
          else if (interp == "midpoint") r = lerp<T>(buf[lo], buf[hi], T(0.5));
          else r = lerp<T>(buf[lo], buf[hi], T(rank - double(lo)));
        }
        o[int64_t(k) * p.out_numel + row] = r;
      }
    });
  });
  return out;
}

static Tensor quantile_scalar(const Tensor &self, double q, std::optional<int64_t> dim, bool keepdim,
                              std::string interpolation) {
  return quantile_impl("quantile", self, {q}, false, dim, keepdim, interpolation, false);
}
static Tensor nanquantile_scalar(const Tensor &self, double q, std::optional<int64_t> dim, bool keepdim,
                                 std::string interpolation) {
  return quantile_impl("nanquantile", self, {q}, false, dim, keepdim, interpolation, true);
}

static Tensor quantile_tensor_impl(const char *op, const Tensor &self, const Tensor &q, std::optional<int64_t> dim,
                                   bool keepdim, const std::string &interp, bool ignore_nan) {
  TP_CHECK(q.dim() <= 1, Runtime, op, "() q must be a scalar or 1D tensor");
  TP_CHECK(q.dtype() == self.dtype(), Runtime, op, "() q tensor must be same dtype as the input tensor");
  std::vector<double> qs(q.numel(), 0.5);
  if (!q.device().is_meta()) {
    Tensor qc = cast_to(q, ScalarType::Float64);
    for (int64_t i = 0; i < q.numel(); ++i) qs[i] = qc.data<double>()[i];
  }
  return quantile_impl(op, self, qs, q.dim() == 1, dim, keepdim, interp, ignore_nan);
}
static Tensor quantile(const Tensor &self, const Tensor &q, std::optional<int64_t> dim, bool keepdim,
                       std::string interpolation) {
  return quantile_tensor_impl("quantile", self, q, dim, keepdim, interpolation, false);
}
static Tensor nanquantile(const Tensor &self, const Tensor &q, std::optional<int64_t> dim, bool keepdim,
                          std::string interpolation) {
  return quantile_tensor_impl("nanquantile", self, q, dim, keepdim, interpolation, true);
}

TP_LIBRARY(reduce_order) {
  lib.def("max(Tensor self) -> Tensor");
  lib.def("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  lib.def("min(Tensor self) -> Tensor");
  lib.def("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  lib.def("amax(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor");
  lib.def("amin(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor");
  lib.def("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)");
  lib.def("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  lib.def("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  lib.def("median(Tensor self) -> Tensor");
  lib.def("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  lib.def("nanmedian(Tensor self) -> Tensor");
  lib.def("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  lib.def("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)");
  lib.def("quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation='linear') "
          "-> Tensor");
  lib.def("quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') "
          "-> Tensor");
  lib.def("nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
          "str interpolation='linear') -> Tensor");
  lib.def("nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') "
          "-> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<max>(lib, "max", key, __LINE__);
    impl_typed<max_dim>(lib, "max.dim", key, __LINE__);
    impl_typed<min>(lib, "min", key, __LINE__);
    impl_typed<min_dim>(lib, "min.dim", key, __LINE__);
    impl_typed<amax>(lib, "amax", key, __LINE__);
    impl_typed<amin>(lib, "amin", key, __LINE__);
    impl_typed<aminmax>(lib, "aminmax", key, __LINE__);
    impl_typed<argmax>(lib, "argmax", key, __LINE__);
    impl_typed<argmin>(lib, "argmin", key, __LINE__);
    impl_typed<median>(lib, "median", key, __LINE__);
    impl_typed<median_dim>(lib, "median.dim", key, __LINE__);
    impl_typed<nanmedian>(lib, "nanmedian", key, __LINE__);
    impl_typed<nanmedian_dim>(lib, "nanmedian.dim", key, __LINE__);
    impl_typed<mode>(lib, "mode", key, __LINE__);
    impl_typed<quantile_scalar>(lib, "quantile.scalar", key, __LINE__);
    impl_typed<quantile>(lib, "quantile", key, __LINE__);
    impl_typed<nanquantile_scalar>(lib, "nanquantile.scalar", key, __LINE__);
    impl_typed<nanquantile>(lib, "nanquantile", key, __LINE__);
  }
}

}  // namespace tp::p10
