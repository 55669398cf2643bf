// binary_special.cpp — elementwise functions of two tensors beyond the four arithmetic ones: pow, float_power,
// atan2, hypot, logaddexp, logaddexp2, maximum, minimum, fmax, fmin, copysign, nextafter, xlogy.
//
// Where it sits: like binary.cpp, each op is a scalar lambda over the loop helper (loop/tensor_iterator.h),
// which broadcasts, promotes and allocates; one kernel serves CPU and Meta. Each op has PyTorch's three forms
// (name, name_, name.out, see kernels/binary_common.h). Overloads whose first argument is a Python number
// (`2 ** t`, `xlogy(2, t)`) turn it into a wrapped number, so it promotes exactly as on the right-hand side.
#include <cmath>
#include <limits>

#include "kernels/binary_common.h"
#include "kernels/cast.h"

namespace tp::p10 {

// ---- pow ----------------------------------------------------------------------------------------------------
// Integer powers by repeated squaring, wrapping on overflow like PyTorch (the multiplication is done unsigned,
// where wrapping is defined). Negative exponents give what the true value truncates to: 1 for base 1, ±1 for
// base -1, 0 otherwise (PyTorch's powi); only a Python-number exponent is an error (pow_impl).
template <typename T> static T powi(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2) ? T(-1) : T(1);
      return 0;
    }
  }
  using U = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;
  U result = 1, b = U(base);
  for (auto e = exp; e; e = T(e / 2)) {
    if (e & 1) result = U(result * b);
    b = U(b * b);
  }
  return T(result);
}

static Tensor pow_impl(const char *op, const Tensor &self, const Tensor &exponent, const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, exponent, false, inplace);
  ScalarType ct = it.common_dtype();
  // A Python number as the exponent is pow(Tensor, Scalar) in PyTorch, which refuses negative integer powers.
  if (exponent->is_wrapped_number && is_integral(ct, true) && is_integral(exponent.dtype(), false)) {
    TP_CHECK(*exponent.data<int64_t>() >= 0, Runtime, op, ": Integers to negative integer powers are not allowed.");
  }
  // x ** 2 and x ** 0.5 with a number exponent are the common cases in models: a multiply and a sqrt.
  double scalar_exp = std::numeric_limits<double>::quiet_NaN();
  if (exponent.dim() == 0 && !exponent.device().is_meta() && is_floating(ct) && !is_complex(exponent.dtype()))
    TP_DISPATCH_ALL(exponent.dtype(), op, [&]<typename E>() { scalar_exp = cast_value<double>(*exponent.data<E>()); });
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      // PyTorch takes `bool_tensor ** True` (a number exponent) but no bool tensor exponent: a**1 = a, a**0 = 1.
      if (!exponent->is_wrapped_number) throw_unsupported_dtype(op, ct);
      cpu_kernel2<T>(it, [](T a, T b) -> T { return a || !b; });
    } else if constexpr (std::is_integral_v<T>) {
      cpu_kernel2<T>(it, [](T a, T b) -> T { return powi(a, b); });
    } else if constexpr (is_complex_dtype<T>) {
      cpu_kernel2<T>(it, [](T a, T b) -> T { return std::pow(a, b); });
    } else {
      if (scalar_exp == 2) cpu_kernel2<T>(it, [](T a, T) -> T { return T(M(a) * M(a)); });
      else if (scalar_exp == 0.5) cpu_kernel2<T>(it, [](T a, T) -> T { return T(std::sqrt(M(a))); });
      else cpu_kernel2<T>(it, [](T a, T b) -> T { return T(std::pow(M(a), M(b))); });
    }
  });
  return it.finish();
}
TP_BINARY_FORMS(pow)

// `2 ** t` (pow.Scalar) and `pow(t, 2)` from C++ (pow.Tensor_Scalar).
static Tensor pow_scalar(const Scalar &self, const Tensor &exponent) {
  return pow_impl("pow", wrapped_scalar(self), exponent, Tensor(), false);
}
static Tensor pow_tensor_scalar(const Tensor &self, const Scalar &exponent) {
  return pow_impl("pow", self, wrapped_scalar(exponent), Tensor(), false);
}

// float_power computes in double precision whatever the inputs: float64, or complex128 if either is complex.
static Tensor float_power_impl(const char *op, const Tensor &self, const Tensor &exponent, const Tensor &out,
                               bool inplace) {
  bool cplx = is_complex(self.dtype()) || is_complex(exponent.dtype());
  ScalarType dt = cplx ? ScalarType::Complex128 : ScalarType::Float64;
  TP_CHECK(!inplace || self.dtype() == dt, Runtime, "the base given to ", op, " has dtype ",
           scalar_type_name(self.dtype()), " but the operation's result requires dtype ", scalar_type_name(dt));
  TensorIterator it({.op = op, .compute_dtype = dt, .resize_out = !inplace}, out, {self, exponent});
  if (cplx) cpu_kernel2<complex128>(it, [](complex128 a, complex128 b) { return std::pow(a, b); });
  else cpu_kernel2<double>(it, [](double a, double b) { return std::pow(a, b); });
  return it.finish();
}
TP_BINARY_FORMS(float_power)

static Tensor float_power_scalar(const Scalar &self, const Tensor &exponent) {
  return float_power_impl("float_power", wrapped_scalar(self), exponent, Tensor(), false);
}
static Tensor float_power_tensor_scalar(const Tensor &self, const Scalar &exponent) {
  return float_power_impl("float_power", self, wrapped_scalar(exponent), Tensor(), false);
}

// ---- floating-point functions of two arguments --------------------------------------------------------------
// Run `fn(M a, M b)` (a generic lambda over the opmath type) on the float dtypes. `int_to_float`: integer
// inputs promote to the default float dtype (atan2, copysign, xlogy); otherwise they are a dtype error
// (hypot, logaddexp, nextafter), as in PyTorch.
template <typename Fn>
static Tensor float_binary(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,
                           bool inplace, bool int_to_float, Fn fn) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, int_to_float, inplace);
  TP_DISPATCH_FLOATING(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu_kernel2<T>(it, [fn](T a, T b) -> T { return T(fn(M(a), M(b))); });
  });
  return it.finish();
}

#define TP_FLOAT_BINARY(name, int_to_float, fn)                                                                 \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,       \
                            bool inplace) {                                                                   \
    return float_binary(op, self, other, out, inplace, int_to_float, fn);                                     \
  }                                                                                                           \
  TP_BINARY_FORMS(name)

TP_FLOAT_BINARY(atan2, true, [](auto a, auto b) { return std::atan2(a, b); })
TP_FLOAT_BINARY(hypot, false, [](auto a, auto b) { return std::hypot(a, b); })
TP_FLOAT_BINARY(copysign, true, [](auto a, auto b) { return std::copysign(a, b); })

// log(exp(a) + exp(b)) without overflow: max + log1p(exp(-|a - b|)). Equal infinities would give inf - inf.
template <typename M> static M logaddexp_real(M a, M b) {
  if (std::isinf(a) && a == b) return a;
  M m = std::max(a, b);
  return std::isnan(m) ? m : M(m + std::log1p(std::exp(-std::abs(a - b))));
}

// The complex version (PyTorch's _log_add_exp_helper): factor out the operand with the larger real part.
// A NaN anywhere in the smaller one gives NaN; equal infinite real parts are handled apart to avoid inf - inf.
template <typename C> static C logaddexp_complex(C x, C y) {
  using R = typename C::value_type;
  const bool x_small = x.real() < y.real();
  const C lo = x_small ? x : y, hi = x_small ? y : x;
  if (std::isnan(lo.real()) || std::isnan(lo.imag())) {
    return C(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  }
  if (!std::isfinite(lo.real()) && lo.real() == hi.real())
    return lo.real() < 0 ? lo : std::log(std::exp(lo) + std::exp(hi));
  return std::log(C(1) + std::exp(lo - hi)) + hi;
}

static Tensor logaddexp_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,
                             bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  const ScalarType ct = it.common_dtype();
  if (ct == ScalarType::Complex64) cpu_kernel2<complex64>(it, logaddexp_complex<complex64>);
  else if (ct == ScalarType::Complex128) cpu_kernel2<complex128>(it, logaddexp_complex<complex128>);
  else TP_DISPATCH_FLOATING(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu_kernel2<T>(it, [](T a, T b) -> T { return T(logaddexp_real(M(a), M(b))); });
  });
  return it.finish();
}
TP_BINARY_FORMS(logaddexp)
TP_FLOAT_BINARY(logaddexp2, false, [](auto a, auto b) {
  using M = decltype(a);
  if (std::isinf(a) && a == b) return a;
  M m = std::max(a, b);
  constexpr M inv_log2 = M(1.4426950408889634);
  return std::isnan(m) ? m : M(m + std::log1p(std::exp2(-std::abs(a - b))) * inv_log2);
})

// x * log(y), with 0 * log(anything but NaN) = 0 (so xlogy(0, 0) is 0, the entropy convention).
TP_FLOAT_BINARY(xlogy, true, [](auto x, auto y) {
  using M = decltype(x);
  if (std::isnan(y)) return y;
  if (x == M(0)) return M(0);
  return M(x * std::log(y));
})

static Tensor xlogy_scalar_self(const Scalar &self, const Tensor &other) {
  return xlogy_impl("xlogy", wrapped_scalar(self), other, Tensor(), false);
}

// nextafter steps in the storage type itself (a float32 neighbour is not a float64 one), so no opmath here.
// The 16-bit floats are sign-magnitude like float32: the neighbour is one step of the bit pattern.
template <typename H> static H nextafter16(H from, H to) {
  float f = float(from), t = float(to);
  if (f != f || t != t) return H(std::numeric_limits<float>::quiet_NaN());
  if (f == t) return to;
  H r;
  if (f == 0) {  // the smallest subnormal, with the sign of the direction
    r.x = uint16_t((t < 0 ? 0x8000u : 0u) | 1u);
    return r;
  }
  r.x = uint16_t((f < t) == (f > 0) ? from.x + 1 : from.x - 1);
  return r;
}

static Tensor nextafter_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,
                             bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  ScalarType ct = it.common_dtype();
  if (ct == ScalarType::Float32) cpu_kernel2<float>(it, [](float a, float b) { return std::nextafter(a, b); });
  else if (ct == ScalarType::Float64) cpu_kernel2<double>(it, [](double a, double b) { return std::nextafter(a, b); });
  else if (ct == ScalarType::Float16) cpu_kernel2<Half>(it, [](Half a, Half b) { return nextafter16(a, b); });
  else if (ct == ScalarType::BFloat16)
    cpu_kernel2<BFloat16>(it, [](BFloat16 a, BFloat16 b) { return nextafter16(a, b); });
  else throw_unsupported_dtype(op, ct);
  return it.finish();
}
TP_BINARY_FORMS(nextafter)

// ---- maximum, minimum (NaN wins) and fmax, fmin (NaN loses) ------------------------------------------------
template <bool Max, bool PropagateNan>
static Tensor extremum(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  ScalarType ct = it.common_dtype();
  TP_CHECK(!is_complex(ct), Runtime, op, " not implemented for complex tensors.");
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel2<T>(it, [](T a, T b) -> T { return Max ? (a || b) : (a && b); });
    } else if constexpr (std::is_integral_v<T>) {
      cpu_kernel2<T>(it, [](T a, T b) -> T { return Max ? std::max(a, b) : std::min(a, b); });
    } else if constexpr (!is_complex_dtype<T>) {
      cpu_kernel2<T>(it, [](T va, T vb) -> T {
        M a = M(va), b = M(vb);
        if constexpr (PropagateNan) {
          if (a != a) return va;
          if (b != b) return vb;
          return T(Max ? (a > b ? a : b) : (a < b ? a : b));  // PyTorch's tie rule: max(0., -0.) is -0.
        } else {
          return T(Max ? std::fmax(a, b) : std::fmin(a, b));
        }
      });
    }
  });
  return it.finish();
}

#define TP_EXTREMUM(name, is_max, nan)                                                                          \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,       \
                            bool inplace) {                                                                   \
    return extremum<is_max, nan>(op, self, other, out, inplace);                                              \
  }                                                                                                           \
  TP_BINARY_FORMS(name)
TP_EXTREMUM(maximum, true, true)
TP_EXTREMUM(minimum, false, true)
TP_EXTREMUM(fmax, true, false)
TP_EXTREMUM(fmin, false, false)

TP_LIBRARY(binary_special) {
  TP_DEF_BINARY_FORMS(lib, pow, "exponent")
  lib.def("pow.Scalar(Scalar self, Tensor exponent) -> Tensor");
  lib.def("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor");
  TP_DEF_BINARY_FORMS(lib, float_power, "exponent")
  lib.def("float_power.Scalar(Scalar self, Tensor exponent) -> Tensor");
  lib.def("float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor");
  TP_DEF_BINARY_FORMS(lib, atan2, "other")
  TP_DEF_BINARY_FORMS(lib, hypot, "other")
  TP_DEF_BINARY_FORMS(lib, logaddexp, "other")
  TP_DEF_BINARY_FORMS(lib, logaddexp2, "other")
  TP_DEF_BINARY_FORMS(lib, maximum, "other")
  TP_DEF_BINARY_FORMS(lib, minimum, "other")
  TP_DEF_BINARY_FORMS(lib, fmax, "other")
  TP_DEF_BINARY_FORMS(lib, fmin, "other")
  TP_DEF_BINARY_FORMS(lib, copysign, "other")
  TP_DEF_BINARY_FORMS(lib, nextafter, "other")
  TP_DEF_BINARY_FORMS(lib, xlogy, "other")
  lib.def("xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<pow_scalar>(lib, "pow.Scalar", key, __LINE__);
    impl_typed<pow_tensor_scalar>(lib, "pow.Tensor_Scalar", key, __LINE__);
    impl_typed<float_power_scalar>(lib, "float_power.Scalar", key, __LINE__);
    impl_typed<float_power_tensor_scalar>(lib, "float_power.Tensor_Scalar", key, __LINE__);
    impl_typed<xlogy_scalar_self>(lib, "xlogy.Scalar_Self", key, __LINE__);
  }
}

}  // namespace tp::p10
