// unary.cpp — elementwise functions of one tensor that keep its dtype or return bool: neg, abs, sign, sgn,
// square; rounding (floor, ceil, round, trunc, frac); nan_to_num; classification (isnan, isinf, isfinite,
// signbit).
//
// Where it sits: like binary.cpp, each op is a scalar lambda over the loop helper; one kernel serves CPU and
// Meta. The float functions (exp, sin, …) live in unary_float.cpp, erf/lgamma/digamma in unary_special.cpp,
// real/imag/conj/angle in unary_complex.cpp; kernels/unary.h gives every op its `name_` and `name.out` forms.
// Unlike the float functions these do not promote: floor of an int64 tensor is that int64 tensor's values.
#include <bit>
#include <cmath>
#include <limits>

#include "kernels/unary.h"

namespace tp::p10 {

// ---- sign and magnitude -------------------------------------------------------------------------------------

static Tensor neg_impl(const UnaryCall &c, const Tensor &self) {
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, "Negation, the `-` operator, on a bool tensor is not "
           "supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) cpu_kernel<T>(it, [](T x) -> T { return T(-opmath_t<T>(x)); });
  });
  return it.finish();
}

// abs keeps the dtype, except that a complex input gives its real dtype (|z| is real; out= may then be real or
// complex). PyTorch has no abs for bool.
static Tensor abs_impl(const UnaryCall &c, const Tensor &self) {
  const bool cplx = is_complex(self.dtype());
  if (self.dtype() == ScalarType::Bool) throw_unsupported_dtype(c.op, self.dtype());
  TP_CHECK(!(cplx && c.inplace), Runtime, "In-place abs is not supported for complex tensors.");
  if (!cplx) check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false, cplx ? std::optional(to_real(self.dtype())) : std::nullopt);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (std::is_unsigned_v<T>) cpu_kernel<T>(it, [](T x) -> T { return x; });
    else if constexpr (std::is_integral_v<T>) cpu_kernel<T>(it, [](T x) -> T { return x < 0 ? T(-x) : x; });
    else if constexpr (is_complex_dtype<T>) cpu_kernel<T>(it, [](T z) { return std::abs(z); });  // hypot inside
    else cpu_kernel<T>(it, [](T x) -> T { return T(std::abs(opmath_t<T>(x))); });
  });
  return it.finish();
}

// sign of a real value: -1, 0 or 1 in its own type; bool is its own sign. PyTorch computes (0 < x) - (x < 0),
// so NaN has sign 0 and -0.0 has sign 0.
template <typename T> static T sign_of(T v) {
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return T(v > T(0));
  } else {
    using M = opmath_t<T>;
    M x = M(v);
    return T(M(M(0) < x) - M(x < M(0)));
  }
}

static Tensor sign_impl(const UnaryCall &c, const Tensor &self) {
  TP_CHECK(!is_complex(self.dtype()), NotImplemented, "Unlike NumPy, torch.sign is not intended to support complex "
           "numbers. Please use torch.sgn instead.");
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) cpu_kernel<T>(it, [](T x) -> T { return sign_of(x); });
  });
  return it.finish();
}

// sgn: sign for reals, z / |z| for complex (0 stays 0).
static Tensor sgn_impl(const UnaryCall &c, const Tensor &self) {
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (is_complex_dtype<T>)
      cpu_kernel<T>(it, [](T z) -> T { return z == T(0) ? T(0) : z / std::abs(z); });
    else cpu_kernel<T>(it, [](T x) -> T { return sign_of(x); });
  });
  return it.finish();
}

// square(x) is PyTorch's pow(x, 2): the 2 is an integer wrapped number, so bool squares to int64 and every
// other dtype keeps its own.
static Tensor square_impl(const UnaryCall &c, const Tensor &self) {
  IterConfig cfg{.op = c.op, .resize_out = !c.inplace};
  if (self.dtype() == ScalarType::Bool) cfg.compute_dtype = ScalarType::Int64;
  TensorIterator it(cfg, c.inplace ? self : c.out, {self});
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (!std::is_same_v<T, bool>) cpu_kernel<T>(it, [](T x) -> T { return T(M(x) * M(x)); });
  });
  return it.finish();
}

// ---- rounding -----------------------------------------------------------------------------------------------

// Integers are already whole: floor, ceil, trunc and round return their values unchanged, in the input's
// dtype. As in PyTorch, bool and complex inputs are errors.
template <typename Fn> static Tensor rounding_op(const UnaryCall &c, const Tensor &self, Fn fn) {
  if (is_complex(self.dtype()) || self.dtype() == ScalarType::Bool) throw_unsupported_dtype(c.op, self.dtype());
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_REAL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) cpu_kernel<T>(it, [](T x) -> T { return x; });
    else cpu_kernel<T>(it, [fn](T x) -> T { return T(fn(opmath_t<T>(x))); });
  });
  return it.finish();
}

static Tensor floor_impl(const UnaryCall &c, const Tensor &self) {
  return rounding_op(c, self, [](auto x) { return std::floor(x); });
}
static Tensor ceil_impl(const UnaryCall &c, const Tensor &self) {
  return rounding_op(c, self, [](auto x) { return std::ceil(x); });
}
static Tensor trunc_impl(const UnaryCall &c, const Tensor &self) {
  return rounding_op(c, self, [](auto x) { return std::trunc(x); });
}

// Note [round half to even]
//   std::nearbyint rounds in the current rounding mode, round-to-nearest-even by default, so round(0.5) = 0 and
//   round(1.5) = 2 as in PyTorch and NumPy (std::round would give 1 and 2). With decimals = d, PyTorch scales
//   by 10^|d| in the op's math type first: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for
//   negative d. We do exactly that, float quirks included: round(2.675, decimals=2) is 2.68 (as in NumPy),
//   because the stored 2.67499999… times 100 rounds to 267.5, where Python's exact round() says 2.67.
static Tensor round_impl(const UnaryCall &c, const Tensor &self, int64_t decimals) {
  if (decimals == 0) return rounding_op(c, self, [](auto x) { return std::nearbyint(x); });
  if (!is_floating(self.dtype())) throw_unsupported_dtype(c.op, self.dtype());  // PyTorch: floats only
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_FLOATING(it.common_dtype(), c.op, [&]<typename T>() {
    using M = opmath_t<T>;
    const bool negative = decimals < 0;
    const M scale = M(std::pow(10.0, double(negative ? -decimals : decimals)));
    cpu_kernel<T>(it, [negative, scale](T v) -> T {
      M x = M(v);
      return T(negative ? std::nearbyint(x / scale) * scale : std::nearbyint(x * scale) / scale);
    });
  });
  return it.finish();
}

// frac(x) = x - trunc(x), floats only (PyTorch has no integer frac); frac(±inf) is NaN.
static Tensor frac_impl(const UnaryCall &c, const Tensor &self) {
  if (!is_floating(self.dtype())) throw_unsupported_dtype(c.op, self.dtype());
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_FLOATING(it.common_dtype(), c.op, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu_kernel<T>(it, [](T v) -> T { M x = M(v); return T(x - std::trunc(x)); });
  });
  return it.finish();
}

// ---- nan_to_num ---------------------------------------------------------------------------------------------

// The largest finite value of a float type (what posinf becomes by default; neginf becomes its negative).
template <typename T> static T max_finite() {
  T m{};
  if constexpr (std::is_same_v<T, Half>) m.x = 0x7bff;           // 65504
  else if constexpr (std::is_same_v<T, BFloat16>) m.x = 0x7f7f;  // 3.3895e38
  else m = std::numeric_limits<T>::max();
  return m;
}

// One real value with NaN, +inf and -inf replaced; the replacements are already in T.
template <typename T> static T replace_nonfinite(T v, T nan, T posinf, T neginf) {
  using M = opmath_t<T>;
  M x = M(v);
  if (x != x) return nan;
  if (x == std::numeric_limits<M>::infinity()) return posinf;
  if (x == -std::numeric_limits<M>::infinity()) return neginf;
  return v;
}

// Integers have no NaN or inf: their values pass through. Complex numbers are treated part by part with the
// limits of their real dtype.
static Tensor nan_to_num_impl(const UnaryCall &c, const Tensor &self, std::optional<double> nan,
                              std::optional<double> posinf, std::optional<double> neginf) {
  check_out_dtype(c, self.dtype());
  TensorIterator it = unary_iter(c, self, false);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
      cpu_kernel<T>(it, [](T x) -> T { return x; });
    } else {
      using R = real_of_t<T>;
      const R n = R(opmath_t<R>(nan.value_or(0.0)));
      const R p = posinf ? R(opmath_t<R>(*posinf)) : max_finite<R>();
      const R m = neginf ? R(opmath_t<R>(*neginf)) : R(-opmath_t<R>(max_finite<R>()));
      if constexpr (is_complex_dtype<T>)
        cpu_kernel<T>(it, [n, p, m](T z) -> T {
          return T(replace_nonfinite(z.real(), n, p, m), replace_nonfinite(z.imag(), n, p, m));
        });
      else
        cpu_kernel<T>(it, [n, p, m](T x) -> T { return replace_nonfinite(x, n, p, m); });
    }
  });
  return it.finish();
}

// ---- classification (bool results) --------------------------------------------------------------------------

// Run a predicate with a bool result; integers are never NaN or infinite, so `pred` sees only float values
// (as opmath) and complex ones, and `int_result` answers for bool and integer dtypes.
template <typename Pred>
static Tensor classify(const UnaryCall &c, const Tensor &self, bool int_result, Pred pred) {
  TensorIterator it = unary_iter(c, self, false, ScalarType::Bool);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>)
      cpu_kernel<T>(it, [int_result](T) -> bool { return int_result; });
    else if constexpr (is_complex_dtype<T>) cpu_kernel<T>(it, [pred](T z) -> bool { return pred(z); });
    else cpu_kernel<T>(it, [pred](T x) -> bool { return pred(opmath_t<T>(x)); });
  });
  return it.finish();
}

// For complex z: isnan if either part is NaN, isinf if either part is infinite, isfinite if both are finite.
static Tensor isnan(const Tensor &self) {
  return classify({"isnan", Tensor(), false}, self, false, []<typename V>(V v) {
    if constexpr (is_complex_dtype<V>) return std::isnan(v.real()) || std::isnan(v.imag());
    else return std::isnan(v);
  });
}
static Tensor isinf(const Tensor &self) {
  return classify({"isinf", Tensor(), false}, self, false, []<typename V>(V v) {
    if constexpr (is_complex_dtype<V>) return std::isinf(v.real()) || std::isinf(v.imag());
    else return std::isinf(v);
  });
}
static Tensor isfinite(const Tensor &self) {
  return classify({"isfinite", Tensor(), false}, self, true, []<typename V>(V v) {
    if constexpr (is_complex_dtype<V>) return std::isfinite(v.real()) && std::isfinite(v.imag());
    else return std::isfinite(v);
  });
}

// The sign bit of a float, read from its bits. (GCC 12 crashes vectorising std::signbit over float in the
// contiguous loop, an internal compiler error; reading the bits gives the same answer and compiles.)
template <typename T> static bool sign_bit(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return (x.x >> 15) != 0;
  else if constexpr (std::is_same_v<T, float>) return (std::bit_cast<uint32_t>(x) >> 31) != 0;
  else return (std::bit_cast<uint64_t>(x) >> 63) != 0;
}

// signbit: true for negative values, -0.0 and NaNs with the sign bit set; unsigned and bool never.
static Tensor signbit_impl(const UnaryCall &c, const Tensor &self) {
  TP_CHECK(!is_complex(self.dtype()), Runtime, "signbit is not implemented for complex tensors.");
  TP_CHECK(!c.out.defined() || c.out.dtype() == ScalarType::Bool, Runtime,
           "signbit does not support non-boolean outputs.");
  TensorIterator it = unary_iter(c, self, false, ScalarType::Bool);
  TP_DISPATCH_ALL(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>)
      cpu_kernel<T>(it, [](T) -> bool { return false; });
    else if constexpr (std::is_integral_v<T>) cpu_kernel<T>(it, [](T x) -> bool { return x < 0; });
    else if constexpr (!is_complex_dtype<T>) cpu_kernel<T>(it, [](T x) -> bool { return sign_bit(x); });
  });
  return it.finish();
}
static Tensor signbit(const Tensor &self) { return signbit_impl({"signbit", Tensor(), false}, self); }
static Tensor signbit_out(const Tensor &self, const Tensor &out) {
  return signbit_impl({"signbit.out", out, false}, self);
}

TP_UNARY_VARIANTS(neg, , )
TP_UNARY_VARIANTS(abs, , )
TP_UNARY_VARIANTS(sign, , )
TP_UNARY_VARIANTS(sgn, , )
TP_UNARY_VARIANTS(square, , )
TP_UNARY_VARIANTS(floor, , )
TP_UNARY_VARIANTS(ceil, , )
TP_UNARY_VARIANTS(trunc, , )
TP_UNARY_VARIANTS(frac, , )
TP_UNARY_VARIANTS(round, TP_UCOMMA int64_t decimals, TP_UCOMMA decimals)
TP_UNARY_VARIANTS(nan_to_num,
                  TP_UCOMMA std::optional<double> nan TP_UCOMMA std::optional<double> posinf
                  TP_UCOMMA std::optional<double> neginf,
                  TP_UCOMMA nan TP_UCOMMA posinf TP_UCOMMA neginf)

TP_LIBRARY(unary) {
  TP_DEF_UNARY_VARIANTS(lib, neg, "");
  TP_DEF_UNARY_VARIANTS(lib, abs, "");
  TP_DEF_UNARY_VARIANTS(lib, sign, "");
  TP_DEF_UNARY_VARIANTS(lib, sgn, "");
  TP_DEF_UNARY_VARIANTS(lib, square, "");
  TP_DEF_UNARY_VARIANTS(lib, floor, "");
  TP_DEF_UNARY_VARIANTS(lib, ceil, "");
  TP_DEF_UNARY_VARIANTS(lib, trunc, "");
  TP_DEF_UNARY_VARIANTS(lib, frac, "");
  // round's decimals is keyword-only, so its out= form cannot use the shared pattern
  lib.def("round(Tensor self, *, int decimals=0) -> Tensor");
  lib.def("round_(Tensor(a!) self, *, int decimals=0) -> Tensor(a!)");
  lib.def("round.out(Tensor self, *, int decimals=0, Tensor(a!) out) -> Tensor(a!)");
  TP_DEF_UNARY_VARIANTS(lib, nan_to_num, ", float? nan=None, float? posinf=None, float? neginf=None");
  lib.def("isnan(Tensor self) -> Tensor");
  lib.def("isinf(Tensor self) -> Tensor");
  lib.def("isfinite(Tensor self) -> Tensor");
  lib.def("signbit(Tensor self) -> Tensor");
  lib.def("signbit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    TP_IMPL_UNARY_VARIANTS(lib, neg, key);
    TP_IMPL_UNARY_VARIANTS(lib, abs, key);
    TP_IMPL_UNARY_VARIANTS(lib, sign, key);
    TP_IMPL_UNARY_VARIANTS(lib, sgn, key);
    TP_IMPL_UNARY_VARIANTS(lib, square, key);
    TP_IMPL_UNARY_VARIANTS(lib, floor, key);
    TP_IMPL_UNARY_VARIANTS(lib, ceil, key);
    TP_IMPL_UNARY_VARIANTS(lib, trunc, key);
    TP_IMPL_UNARY_VARIANTS(lib, frac, key);
    TP_IMPL_UNARY_VARIANTS(lib, round, key);
    TP_IMPL_UNARY_VARIANTS(lib, nan_to_num, key);
    impl_typed<isnan>(lib, "isnan", key, __LINE__);
    impl_typed<isinf>(lib, "isinf", key, __LINE__);
    impl_typed<isfinite>(lib, "isfinite", key, __LINE__);
    impl_typed<signbit>(lib, "signbit", key, __LINE__);
    impl_typed<signbit_out>(lib, "signbit.out", key, __LINE__);
  }
}

}  // namespace tp::p10
