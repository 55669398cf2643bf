// pointwise_math.cuh — the maths library under one name per function (m_exp, m_log, …) for float and double,
// the same text on the host and on the device: the one shim the elementwise functors call.
//
// Where it sits: included by unary_float.cuh (the functors of exp, log, sin, …), by unary.cu and unary_math.cu
// (NVRTC, on the device) and, through unary_float.cuh, by csrc/kernels/unary_float.cpp (the host compiler).
// The C library's names are used on both sides (expf / exp): NVRTC provides them as device functions, <math.h>
// on the host. float16 and bfloat16 have no entry: they compute in float32 (OpMath), converted by the loops.
// Complex numbers exist on the host only (CUDA has no complex kernels yet): their overloads are std's, except
// where std has none (log2, exp2) or loses accuracy near 0 (expm1, log1p), which are PyTorch's formulas.
#pragma once
#ifdef __CUDACC_RTC__
#define TP_HD __host__ __device__ __forceinline__
#else
#include <math.h>

#include <cmath>
#include <complex>
#define TP_HD inline
#endif

TP_HD float m_exp(float x) { return expf(x); }
TP_HD double m_exp(double x) { return exp(x); }
TP_HD float m_exp2(float x) { return exp2f(x); }
TP_HD double m_exp2(double x) { return exp2(x); }
TP_HD float m_expm1(float x) { return expm1f(x); }
TP_HD double m_expm1(double x) { return expm1(x); }
TP_HD float m_log(float x) { return logf(x); }
TP_HD double m_log(double x) { return log(x); }
TP_HD float m_log2(float x) { return log2f(x); }
TP_HD double m_log2(double x) { return log2(x); }
TP_HD float m_log10(float x) { return log10f(x); }
TP_HD double m_log10(double x) { return log10(x); }
TP_HD float m_log1p(float x) { return log1pf(x); }
TP_HD double m_log1p(double x) { return log1p(x); }
TP_HD float m_sqrt(float x) { return sqrtf(x); }
TP_HD double m_sqrt(double x) { return sqrt(x); }
TP_HD float m_sin(float x) { return sinf(x); }
TP_HD double m_sin(double x) { return sin(x); }
TP_HD float m_cos(float x) { return cosf(x); }
TP_HD double m_cos(double x) { return cos(x); }
TP_HD float m_tan(float x) { return tanf(x); }
TP_HD double m_tan(double x) { return tan(x); }
TP_HD float m_asin(float x) { return asinf(x); }
TP_HD double m_asin(double x) { return asin(x); }
TP_HD float m_acos(float x) { return acosf(x); }
TP_HD double m_acos(double x) { return acos(x); }
TP_HD float m_atan(float x) { return atanf(x); }
TP_HD double m_atan(double x) { return atan(x); }
TP_HD float m_sinh(float x) { return sinhf(x); }
TP_HD double m_sinh(double x) { return sinh(x); }
TP_HD float m_cosh(float x) { return coshf(x); }
TP_HD double m_cosh(double x) { return cosh(x); }
TP_HD float m_tanh(float x) { return tanhf(x); }
TP_HD double m_tanh(double x) { return tanh(x); }
TP_HD float m_asinh(float x) { return asinhf(x); }
TP_HD double m_asinh(double x) { return asinh(x); }
TP_HD float m_acosh(float x) { return acoshf(x); }
TP_HD double m_acosh(double x) { return acosh(x); }
TP_HD float m_atanh(float x) { return atanhf(x); }
TP_HD double m_atanh(double x) { return atanh(x); }
// Beyond the unary float family (unary.cu, unary_math.cu, activation.cu, …): error functions, rounding,
// magnitude, lgamma.
TP_HD float m_erf(float x) { return erff(x); }
TP_HD double m_erf(double x) { return erf(x); }
TP_HD float m_erfc(float x) { return erfcf(x); }
TP_HD double m_erfc(double x) { return erfc(x); }
TP_HD float m_lgamma(float x) { return lgammaf(x); }
TP_HD double m_lgamma(double x) { return lgamma(x); }
TP_HD float m_floor(float x) { return floorf(x); }
TP_HD double m_floor(double x) { return floor(x); }
TP_HD float m_ceil(float x) { return ceilf(x); }
TP_HD double m_ceil(double x) { return ceil(x); }
TP_HD float m_trunc(float x) { return truncf(x); }
TP_HD double m_trunc(double x) { return trunc(x); }
TP_HD float m_rint(float x) { return rintf(x); }  // half to even (Note [round half to even], kernels/unary.cpp)
TP_HD double m_rint(double x) { return rint(x); }
TP_HD float m_fabs(float x) { return fabsf(x); }
TP_HD double m_fabs(double x) { return fabs(x); }

// Two arguments (binary_math.cu).
TP_HD float m_fmod(float x, float y) { return fmodf(x, y); }
TP_HD double m_fmod(double x, double y) { return fmod(x, y); }
TP_HD float m_copysign(float x, float y) { return copysignf(x, y); }
TP_HD double m_copysign(double x, double y) { return copysign(x, y); }
TP_HD float m_atan2(float x, float y) { return atan2f(x, y); }
TP_HD double m_atan2(double x, double y) { return atan2(x, y); }
TP_HD float m_hypot(float x, float y) { return hypotf(x, y); }
TP_HD double m_hypot(double x, double y) { return hypot(x, y); }
TP_HD float m_fmax(float x, float y) { return fmaxf(x, y); }
TP_HD double m_fmax(double x, double y) { return fmax(x, y); }
TP_HD float m_fmin(float x, float y) { return fminf(x, y); }
TP_HD double m_fmin(double x, double y) { return fmin(x, y); }

#ifndef __CUDACC_RTC__
// ---- complex numbers, on the host ---------------------------------------------------------------------------
template <typename R> std::complex<R> m_exp(const std::complex<R> &z) { return std::exp(z); }
template <typename R> std::complex<R> m_log(const std::complex<R> &z) { return std::log(z); }
template <typename R> std::complex<R> m_log10(const std::complex<R> &z) { return std::log10(z); }
template <typename R> std::complex<R> m_sqrt(const std::complex<R> &z) { return std::sqrt(z); }
template <typename R> std::complex<R> m_sin(const std::complex<R> &z) { return std::sin(z); }
template <typename R> std::complex<R> m_cos(const std::complex<R> &z) { return std::cos(z); }
template <typename R> std::complex<R> m_tan(const std::complex<R> &z) { return std::tan(z); }
template <typename R> std::complex<R> m_asin(const std::complex<R> &z) { return std::asin(z); }
template <typename R> std::complex<R> m_acos(const std::complex<R> &z) { return std::acos(z); }
template <typename R> std::complex<R> m_atan(const std::complex<R> &z) { return std::atan(z); }
template <typename R> std::complex<R> m_sinh(const std::complex<R> &z) { return std::sinh(z); }
template <typename R> std::complex<R> m_cosh(const std::complex<R> &z) { return std::cosh(z); }
template <typename R> std::complex<R> m_tanh(const std::complex<R> &z) { return std::tanh(z); }
template <typename R> std::complex<R> m_asinh(const std::complex<R> &z) { return std::asinh(z); }
template <typename R> std::complex<R> m_acosh(const std::complex<R> &z) { return std::acosh(z); }
template <typename R> std::complex<R> m_atanh(const std::complex<R> &z) { return std::atanh(z); }
// log2 z = log z / log 2 and 2^z = exp(z log 2): std has no complex log2 or exp2.
template <typename R> std::complex<R> m_log2(const std::complex<R> &z) {
  return std::log(z) / R(0.693147180559945309417232121458176568);
}
template <typename R> std::complex<R> m_exp2(const std::complex<R> &z) {
  return std::exp(z * R(0.693147180559945309417232121458176568));
}
// exp(x+iy) - 1 = (expm1(x) cos y - 2 sin²(y/2)) + i exp(x) sin y: the part that cancels near 0 is the real
// expm1, not exp(z) - 1 (PyTorch's formula).
template <typename R> std::complex<R> m_expm1(const std::complex<R> &z) {
  const R x = z.real(), y = z.imag(), s = std::sin(y / 2);
  return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
}
// log(1+z) = log|1+z| + i arg(1+z); for small |z|, log|1+z| = log1p(x(x+2) + y²) / 2 avoids the cancellation
// in 1 + x (when that underflows to 0, log|1+z| ≈ x to first order).
template <typename R> std::complex<R> m_log1p(const std::complex<R> &z) {
  const R x = z.real(), y = z.imag(), theta = std::atan2(y, x + R(1));
  if (std::abs(z) < R(0.5)) {
    const R r = x * (R(2) + x) + y * y;
    return {r == 0 ? x : std::log1p(r) / 2, theta};
  }
  return {std::log(std::hypot(x + R(1), y)), theta};
}
#endif
