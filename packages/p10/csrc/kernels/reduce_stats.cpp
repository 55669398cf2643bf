// reduce_stats.cpp — statistics over dims: var, std, var_mean, std_mean, logsumexp, norm.
//
// Where it sits: beside reduce.cpp (sums) and reduce_order.cpp (max, median, ...), on the ReducePlan of
// loop/reduce.h. These get their own kernels rather than being composed from sum and mean because they are
// numerically delicate (STYLE.md rule 2): var subtracts the mean before squaring (two passes over each row, never
// E[x^2] - E[x]^2), logsumexp subtracts the row maximum before exponentiating.
#include <cmath>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/reduce.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

using Dims = std::optional<std::vector<int64_t>>;
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<std::complex<T>> { using type = T; };
template <typename T> using real_t = typename RealOf<T>::type;

// |x|^2 for real and complex numbers.
template <typename M> static real_t<M> abs2(M v) {
  if constexpr (is_complex_dtype<M>) return std::norm(v);
  else return v * v;
}

// ---- var / std ----------------------------------------------------------------------------------------------
// Note [Moments]
//   A row's (count, mean, M2 = sum |x - mean|^2) comes from two pairwise passes. When a long row is split over
//   threads the pieces' moments are merged with Chan et al.'s formula, which stays exact in exact arithmetic
//   and stable in floating point, unlike summing x and x^2.
template <typename M> struct Moments {
  int64_t n = 0;
  M mean{};
  real_t<M> m2{};
};

template <typename M> static Moments<M> merge_moments(const Moments<M> &a, const Moments<M> &b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  using R = real_t<M>;
  const int64_t n = a.n + b.n;
  const M delta = b.mean - a.mean;
  return {n, a.mean + delta * (R(b.n) / R(n)), a.m2 + b.m2 + abs2(delta) * (R(a.n) * R(b.n) / R(n))};
}

// var (sqrt=false) or std of each row; the mean too when `mean_out` is defined (var_mean, std_mean).
static std::tuple<Tensor, Tensor> var_impl(const char *op, const Tensor &self, const Dims &dim,
                                           std::optional<Scalar> correction, bool keepdim, bool take_sqrt,
                                           bool with_mean) {
  TP_CHECK(is_floating(self.dtype()) || is_complex(self.dtype()), Runtime,
           "std and var only support floating point and complex dtypes");
  const double corr = correction ? correction->to_double() : 1.0;
  ReducePlan p = make_reduce_plan(self, dim, keepdim, op);
  Tensor out = p.new_output(to_real(self.dtype()));
  Tensor mean = with_mean ? p.new_output(self.dtype()) : Tensor();
  TP_DISPATCH_ALL(self.dtype(), op, [&]<typename T>() {
    if constexpr (is_complex_dtype<T> || std::is_floating_point_v<opmath_t<T>>) {
      using M = opmath_t<T>;
      using R = real_t<M>;
      using Out = std::conditional_t<is_complex_dtype<T>, real_t<T>, T>;
      Out *o = out.data<Out>();
      T *mo = with_mean ? mean.data<T>() : nullptr;
      reduce_rows<T, Moments<M>>(
          p, [](const T *x, int64_t n, int64_t s, int64_t) {
            Moments<M> m;
            if (n == 0) return m;
            m.n = n;
            m.mean = pairwise_sum<M>(x, n, s, [](T v) { return M(v); }) / R(n);
            const M mu = m.mean;
            m.m2 = pairwise_sum<R>(x, n, s, [mu](T v) { return abs2(M(v) - mu); });
            return m;
          },
          merge_moments<M>, [&](int64_t i, const Moments<M> &m) {
            R v = m.m2 / R(std::max(0.0, double(m.n) - corr));
            if (m.n == 0) v = R(NAN);
            o[i] = cast_value<Out>(take_sqrt ? std::sqrt(v) : v);
            if (mo) mo[i] = cast_value<T>(m.n ? m.mean : M(R(NAN)));
          });
    }
  });
  return {out, mean};
}

// The three calling forms PyTorch has: correction=, the older unbiased= with dims, and unbiased= alone.
static std::optional<Scalar> from_unbiased(bool unbiased) { return Scalar(int64_t(unbiased ? 1 : 0)); }

static Tensor var_corr(const Tensor &self, Dims dim, std::optional<Scalar> correction, bool keepdim) {
  return std::get<0>(var_impl("var", self, dim, correction, keepdim, false, false));
}
static Tensor var_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  return std::get<0>(var_impl("var", self, dim, from_unbiased(unbiased), keepdim, false, false));
}
static Tensor var_all(const Tensor &self, bool unbiased) { return var_dim(self, std::nullopt, unbiased, false); }
static Tensor std_corr(const Tensor &self, Dims dim, std::optional<Scalar> correction, bool keepdim) {
  return std::get<0>(var_impl("std", self, dim, correction, keepdim, true, false));
}
static Tensor std_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  return std::get<0>(var_impl("std", self, dim, from_unbiased(unbiased), keepdim, true, false));
}
static Tensor std_all(const Tensor &self, bool unbiased) { return std_dim(self, std::nullopt, unbiased, false); }
static std::tuple<Tensor, Tensor> var_mean_corr(const Tensor &self, Dims dim, std::optional<Scalar> correction,
                                                bool keepdim) {
  return var_impl("var_mean", self, dim, correction, keepdim, false, true);
}
static std::tuple<Tensor, Tensor> var_mean_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  return var_impl("var_mean", self, dim, from_unbiased(unbiased), keepdim, false, true);
}
static std::tuple<Tensor, Tensor> var_mean_all(const Tensor &self, bool unbiased) {
  return var_mean_dim(self, std::nullopt, unbiased, false);
}
static std::tuple<Tensor, Tensor> std_mean_corr(const Tensor &self, Dims dim, std::optional<Scalar> correction,
                                                bool keepdim) {
  return var_impl("std_mean", self, dim, correction, keepdim, true, true);
}
static std::tuple<Tensor, Tensor> std_mean_dim(const Tensor &self, Dims dim, bool unbiased, bool keepdim) {
  return var_impl("std_mean", self, dim, from_unbiased(unbiased), keepdim, true, true);
}
static std::tuple<Tensor, Tensor> std_mean_all(const Tensor &self, bool unbiased) {
  return std_mean_dim(self, std::nullopt, unbiased, false);
}

// ---- logsumexp ----------------------------------------------------------------------------------------------
// log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the row maximum; an infinite m is replaced by 0 (PyTorch's
// rule), so a row of -inf gives -inf and a row holding +inf gives +inf instead of NaN from inf - inf.
static Tensor logsumexp(const Tensor &self, std::vector<int64_t> dim, bool keepdim) {
  Tensor x = is_integral(self.dtype(), true) ? cast_to(self, default_dtype()) : self;
  TP_CHECK(!is_complex(x.dtype()), NotImplemented, "logsumexp: complex inputs are not supported");
  ReducePlan p = make_reduce_plan(x, dim, keepdim, "logsumexp");
  Tensor out = p.new_output(x.dtype());
  TP_DISPATCH_FLOATING(x.dtype(), "logsumexp", [&]<typename T>() {
    using M = opmath_t<T>;
    T *o = out.data<T>();
    for_each_row<T>(p, [&](int64_t i, const T *v, int64_t n, int64_t s) {
      M m = -INFINITY;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, M(v[k * s]));  // NaN then flows through the sum below
      if (std::isinf(m)) m = 0;
      M sum = pairwise_sum<M>(v, n, s, [m](T e) { return std::exp(M(e) - m); });
      o[i] = T(std::log(sum) + m);
    });
  });
  return out;
}

// ---- norm ---------------------------------------------------------------------------------------------------
// Vector p-norms of each row: p = 2 (also 'fro'), 1, inf (max |x|), -inf (min |x|), 0 (count of non-zeros),
// otherwise (sum |x|^p)^(1/p). Sums are pairwise; the result has the input's real dtype.
static Tensor norm_impl(const Tensor &self, double pv, const Dims &dim, bool keepdim,
                        std::optional<ScalarType> dtype) {
  ScalarType in = dtype.value_or(self.dtype());
  TP_CHECK(is_floating(in) || is_complex(in), Runtime,
           "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ", scalar_type_name(in));
  Tensor x = self.dtype() == in ? self : cast_to(self, in);
  ReducePlan p = make_reduce_plan(x, dim, keepdim, "norm");
  if (std::isinf(pv))
    TP_CHECK(p.red_numel > 0 || p.out_numel == 0, Runtime, "linalg.vector_norm cannot compute the ",
             pv > 0 ? "inf" : "-inf", " norm on an empty tensor because the operation does not have an identity");
  Tensor out = p.new_output(to_real(in));
  TP_DISPATCH_ALL(in, "norm", [&]<typename T>() {
    if constexpr (is_complex_dtype<T> || std::is_floating_point_v<opmath_t<T>>) {
      using M = opmath_t<T>;
      using R = real_t<M>;
      using Out = std::conditional_t<is_complex_dtype<T>, real_t<T>, T>;
      Out *o = out.data<Out>();
      const bool is_max = pv == INFINITY, is_min = pv == -INFINITY;
      auto absv = [](T v) -> R { return std::abs(M(v)); };
      reduce_rows<T, R>(
          p, [&](const T *v, int64_t n, int64_t s, int64_t) -> R {
            if (is_max || is_min) {
              R r = absv(v[0]);
              for (int64_t k = 1; k < n; ++k) {
                R a = absv(v[k * s]);
                if (a != a || (is_max ? a > r : a < r)) r = a;
                if (r != r) break;
              }
              return r;
            }
            if (pv == 0) return pairwise_sum<R>(v, n, s, [&](T e) { return R(absv(e) != 0); });
            if (pv == 1) return pairwise_sum<R>(v, n, s, absv);
            if (pv == 2) return pairwise_sum<R>(v, n, s, [](T e) { return abs2(M(e)); });
            return pairwise_sum<R>(v, n, s, [&](T e) { return R(std::pow(absv(e), R(pv))); });
          },
          [&](R a, R b) -> R {
            if (a != a || b != b) return a + b;
            return is_max ? std::max(a, b) : is_min ? std::min(a, b) : a + b;
          },
          [&](int64_t i, R r) {
            if (pv == 2) r = std::sqrt(r);
            else if (pv != 0 && pv != 1 && !is_max && !is_min) r = std::pow(r, R(1.0 / pv));
            o[i] = cast_value<Out>(r);
          });
    }
  });
  return out;
}

static Tensor norm(const Tensor &self, std::optional<Scalar> p, Dims dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  return norm_impl(self, p ? p->to_double() : 2.0, dim, keepdim, dtype);
}

static Tensor norm_str(const Tensor &self, std::string p, Dims dim, bool keepdim, std::optional<ScalarType> dtype) {
  TP_CHECK(p != "nuc", NotImplemented, "norm(): p='nuc' (the nuclear norm) needs an SVD, which P10 does not have");
  TP_CHECK(p == "fro", Runtime, "norm(): invalid norm type '", p, "' (expected a number, 'fro' or 'nuc')");
  TP_CHECK(!dim || dim->size() <= 2, Runtime, "norm(): the Frobenius norm is defined over at most 2 dims, got ",
           shape_str(*dim));
  return norm_impl(self, 2.0, dim, keepdim, dtype);
}

TP_LIBRARY(reduce_stats) {
  for (const char *name : {"var", "std"}) {
    std::string n(name);
    lib.def(n + ".correction(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor");
    lib.def(n + ".dim(Tensor self, int[]? dim, bool unbiased=True, bool keepdim=False) -> Tensor");
    lib.def(n + "(Tensor self, bool unbiased=True) -> Tensor");
  }
  for (const char *name : {"var_mean", "std_mean"}) {
    std::string n(name);
    lib.def(n + ".correction(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
                "-> (Tensor, Tensor)");
    lib.def(n + ".dim(Tensor self, int[]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)");
    lib.def(n + "(Tensor self, bool unbiased=True) -> (Tensor, Tensor)");
  }
  lib.def("logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor");
  lib.def("norm(Tensor self, Scalar? p=2, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  lib.def("norm.str(Tensor self, str p, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<var_corr>(lib, "var.correction", key, __LINE__);
    impl_typed<var_dim>(lib, "var.dim", key, __LINE__);
    impl_typed<var_all>(lib, "var", key, __LINE__);
    impl_typed<std_corr>(lib, "std.correction", key, __LINE__);
    impl_typed<std_dim>(lib, "std.dim", key, __LINE__);
    impl_typed<std_all>(lib, "std", key, __LINE__);
    impl_typed<var_mean_corr>(lib, "var_mean.correction", key, __LINE__);
    impl_typed<var_mean_dim>(lib, "var_mean.dim", key, __LINE__);
    impl_typed<var_mean_all>(lib, "var_mean", key, __LINE__);
    impl_typed<std_mean_corr>(lib, "std_mean.correction", key, __LINE__);
    impl_typed<std_mean_dim>(lib, "std_mean.dim", key, __LINE__);
    impl_typed<std_mean_all>(lib, "std_mean", key, __LINE__);
    impl_typed<logsumexp>(lib, "logsumexp", key, __LINE__);
    impl_typed<norm>(lib, "norm", key, __LINE__);
    impl_typed<norm_str>(lib, "norm.str", key, __LINE__);
  }
}

}  // namespace tp::p10
