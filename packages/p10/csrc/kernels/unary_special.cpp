// unary_special.cpp — special functions of one tensor: erf, erfc, erfinv, lgamma, digamma.
//
// Where it sits: beside unary_float.cpp, with the same rules (integer inputs compute in the default float
// dtype, float16/bfloat16 through float32, three call forms from kernels/unary.h) but real dtypes only, as in
// PyTorch. erf, erfc and lgamma are the C library's; erfinv and digamma are written here, in double for every
// dtype (a float32 result is then the rounded double, at most half an ulp from the true value).
#include <cmath>
#include <limits>
#include <numbers>

#include "kernels/unary.h"

namespace tp::p10 {

// Note [erfinv]
//   Start from Giles' single-precision polynomial ("Approximating the erfinv function", GPU Computing Gems,
//   2011; relative error below 1e-7 while 1 - |y| > 1e-7, a few percent at the far end of double's range), then
//   refine with Newton steps until they stop moving t. In the centre (|y| <= 0.5) Newton runs on erf(t) - |y|.
//   In the tail it runs on log erfc(t) - log(1 - |y|): 1 - |y| is exact there (Sterbenz), erfc(t) has full
//   relative precision, and log erfc is close to -t², almost linear, so the steps converge even from the rough
//   starting points near |y| = 1 (erf(t) - y would cancel to nothing).
static double erfinv_scalar(double y) {
  if (std::isnan(y) || std::abs(y) > 1) return std::numeric_limits<double>::quiet_NaN();
  if (std::abs(y) == 1) return std::copysign(std::numeric_limits<double>::infinity(), y);
  if (y == 0) return y;  // keeps the sign of -0.0
  const double a = std::abs(y);
  double w = -std::log((1 - a) * (1 + a)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double k : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = k + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double k : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = k + p * w;
  }
  double t = p * a;
  const double two_over_sqrt_pi = 2 / std::sqrt(std::numbers::pi);
  const double log_tail = std::log(1 - a);
  for (int step = 0; step < 8; ++step) {  // quadratic convergence: 2 steps in the centre, at most ~5 in the tail
    double slope = two_over_sqrt_pi * std::exp(-t * t);  // erf'(t) = -erfc'(t)
    double dt;
    if (a <= 0.5) {
      dt = -(std::erf(t) - a) / slope;
    } else {
      double c = std::erfc(t);
      dt = (std::log(c) - log_tail) * c / slope;  // d/dt log erfc(t) = -slope / erfc(t)
    }
    t += dt;
    if (std::abs(dt) <= 1e-16 * t) break;
  }
  return std::copysign(t, y);
}

// digamma(x) = d/dx log Γ(x), PyTorch's conventions at the poles: ±0 gives ∓inf, negative integers NaN.
//   x < 0:   reflection, ψ(x) = ψ(1 - x) - π / tan(π x), with tan taken of the fractional part (exact)
//   x < 10:  recurrence, ψ(x) = ψ(x + 1) - 1/x
//   x >= 10: asymptotic series, ψ(x) = log x - 1/(2x) - Σ B_2k / (2k x^2k)
static double digamma_scalar(double x) {
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();  // includes -inf
    double int_part;
    double frac = std::modf(x, &int_part);
    return digamma_scalar(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * frac);
  }
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  // B_2k / (2k) for k = 7 … 1, highest power of z = 1/x^2 first (Horner): 1/12, -691/32760, 1/132, -1/240,
  // 1/252, -1/120, 1/12.
  static constexpr double kCoef[] = {8.33333333333333333333E-2,  -2.10927960927960927961E-2,
                                     7.57575757575757575758E-3,  -4.16666666666666666667E-3,
                                     3.96825396825396825397E-3,  -8.33333333333333333333E-3,
                                     8.33333333333333333333E-2};
  double series = 0;
  if (x < 1e17) {  // beyond that the series is below double precision of log x
    double z = 1 / (x * x), poly = 0;
    for (double k : kCoef) poly = poly * z + k;
    series = z * poly;
  }
  return result + std::log(x) - 0.5 / x - series;  // +inf stays +inf, NaN stays NaN
}

// A real function run elementwise; `in_double`: compute in double rather than opmath_t<T>.
template <bool in_double, typename F> static Tensor special_op(const UnaryCall &c, const Tensor &self, F fn) {
  if (is_complex(self.dtype())) throw_unsupported_dtype(c.op, self.dtype());  // before out= is touched
  TensorIterator it = unary_iter(c, self, /*int_to_float=*/true);
  TP_DISPATCH_FLOATING(it.common_dtype(), c.op, [&]<typename T>() {
    using M = std::conditional_t<in_double, double, opmath_t<T>>;
    cpu_kernel<T>(it, [fn](T v) -> T { return T(fn(M(v))); });
  });
  return it.finish();
}

static Tensor erf_impl(const UnaryCall &c, const Tensor &self) {
  return special_op<false>(c, self, [](auto x) { return std::erf(x); });
}
static Tensor erfc_impl(const UnaryCall &c, const Tensor &self) {
  return special_op<false>(c, self, [](auto x) { return std::erfc(x); });
}
static Tensor lgamma_impl(const UnaryCall &c, const Tensor &self) {
  return special_op<false>(c, self, [](auto x) { return std::lgamma(x); });
}
static Tensor erfinv_impl(const UnaryCall &c, const Tensor &self) {
  return special_op<true>(c, self, erfinv_scalar);
}
static Tensor digamma_impl(const UnaryCall &c, const Tensor &self) {
  return special_op<true>(c, self, digamma_scalar);
}

TP_UNARY_VARIANTS(erf, , )
TP_UNARY_VARIANTS(erfc, , )
TP_UNARY_VARIANTS(erfinv, , )
TP_UNARY_VARIANTS(lgamma, , )
TP_UNARY_VARIANTS(digamma, , )

TP_LIBRARY(unary_special) {
  TP_DEF_UNARY_VARIANTS(lib, erf, "");
  TP_DEF_UNARY_VARIANTS(lib, erfc, "");
  TP_DEF_UNARY_VARIANTS(lib, erfinv, "");
  TP_DEF_UNARY_VARIANTS(lib, lgamma, "");
  TP_DEF_UNARY_VARIANTS(lib, digamma, "");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    TP_IMPL_UNARY_VARIANTS(lib, erf, key);
    TP_IMPL_UNARY_VARIANTS(lib, erfc, key);
    TP_IMPL_UNARY_VARIANTS(lib, erfinv, key);
    TP_IMPL_UNARY_VARIANTS(lib, lgamma, key);
    TP_IMPL_UNARY_VARIANTS(lib, digamma, key);
  }
}

}  // namespace tp::p10
