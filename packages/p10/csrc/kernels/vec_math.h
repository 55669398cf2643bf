// vec_math.h — float32 exp, log, sigmoid, tanh (and expm1, log1p, erfc for the activations) as short polynomial
// kernels that the compiler vectorises.
//
// Where it sits: the float32 loops of unary_float.cpp (exp, log, sigmoid, tanh), activation*.cpp and
// softmax.cpp call these functions inside TP_SIMD_LOOP loops (loop/simd.h: one copy for AVX2+FMA, one for the
// baseline); float64 keeps the C library (std::exp, ...).
//
// Note [Vectorised float math]
//   std::exp and friends are library calls, one element at a time, and they were most of the time of exp,
//   softmax and sigmoid. The functions below are Cephes' single-precision algorithms (S. L. Moshier, Cephes
//   Math Library): a range reduction, a small polynomial, a rescale by a power of two built in the exponent
//   bits. They are written as straight-line code with no branches and no library calls, so inlined into a loop
//   GCC turns each into 4 (SSE2) or 8 (AVX2) lanes at a time. Two rules keep them vectorisable under GCC's
//   default -ftrapping-math, which refuses to vectorise selects on ordered float compares (x < y may trap):
//   clamps and special-value tests are done on the integer bits, and the one float test left is the quiet
//   __builtin_isunordered (NaN in, NaN out). Accuracy against float64 (test_vec_math.py checks
//   the bounds over a sweep of the float32 range): exp and log <= 1.5 ulp (measured worst: 1.0 and 0.8),
//   tanh <= 2 ulp (1.3), sigmoid <= 3 ulp (2.7); subnormal inputs and results, +-inf and NaN follow IEEE (exp(-inf) = 0, log(0) = -inf, log(-1) = NaN, ...).
//   The AVX2+FMA copy fuses a * b + c into one rounding, so its last bit may differ from the baseline copy's;
//   every layout of one op goes through the same copy (unary_float.cpp), so results never depend on strides.
#pragma once
#include <algorithm>
#include <cstdint>

#include "loop/simd.h"

namespace tp::p10 {

namespace vec {

constexpr int32_t kSignMask = int32_t(0x80000000u), kAbsMask = 0x7fffffff, kInfBits = 0x7f800000;

// __builtin_bit_cast, not std::bit_cast: a builtin is inlined even into functions with other optimize options.
TP_VEC_INLINE int32_t bits(float x) { return __builtin_bit_cast(int32_t, x); }
TP_VEC_INLINE float from_bits(int32_t b) { return __builtin_bit_cast(float, b); }
// 2^n as a float, for -126 <= n <= 127 (the exponent field is n + 127).
TP_VEC_INLINE float pow2i(int32_t n) { return from_bits((n + 127) << 23); }
// Integer select: GCC vectorises it without any float compare. Written as a mask blend, not `c ? a : b`: from a
// conditional GCC sinks a float operation that only one arm uses (x * slope) into a branch, and a branch with a
// float operation in it (which may trap) is neither if-converted nor vectorised.
TP_VEC_INLINE float select(bool c, float a, float b) {
  const int32_t m = -int32_t(c);
  return from_bits((bits(a) & m) | (bits(b) & ~m));
}

}  // namespace vec

// e^x. Range reduction x = n ln2 + r, |r| <= ln2 / 2, with ln2 split in two parts (C1 + C2, C1 exact in 9
// bits) so n * C1 is exact; e^r = 1 + r + r^2 P(r) with Cephes' degree-5 P; then e^x = e^r 2^n. 2^n is applied
// as two factors 2^(n/2) 2^(n - n/2), so results between 2^-149 (subnormal) and 2^128 (overflow to inf) come out
// with a single rounding. |x| is clamped at 104 first: e^104 overflows and e^-104 underflows either way.
TP_VEC_INLINE float exp_f32(float x) {
  const int32_t b = vec::bits(x);
  const int32_t mag = std::min(b & vec::kAbsMask, vec::bits(104.0f));   // |x| clamped; NaN too (fixed below)
  const float xc = vec::from_bits(mag | (b & vec::kSignMask));
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer, held in the low bits
  const float t = xc * 1.44269504088896341f + kRound;
  const int32_t n = vec::bits(t) - vec::bits(kRound);  // round(x / ln2), in [-150, 150]
  const float k = t - kRound;
  const float r = (xc - k * 0.693359375f) + k * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t n1 = n >> 1;
  const float y = p * vec::pow2i(n1) * vec::pow2i(n - n1);
  return __builtin_isunordered(x, x) ? x : y;
}

// log x. Write x = m 2^e with m in [sqrt(1/2), sqrt(2)); log x = e ln2 + log(1 + f), f = m - 1, with Cephes'
// degree-8 polynomial: log(1 + f) = f - f^2/2 + f^3 P(f). e ln2 is added in two parts (C1 + C2) as in exp.
// Subnormal inputs are scaled by 2^23 first. log(+0 or -0) = -inf, log(+inf) = +inf, log(x < 0) = NaN.
TP_VEC_INLINE float log_f32(float x) {
  const int32_t b0 = vec::bits(x);
  const bool sub = b0 < 0x00800000;  // +0, subnormals (and negatives, which end as NaN anyway)
  const int32_t b = sub ? vec::bits(x * 8388608.0f) : b0;
  int32_t e = (b >> 23) - 126 - (sub ? 23 : 0);  // x = m 2^e with m in [0.5, 1)
  float m = vec::from_bits((b & 0x007fffff) | 0x3f000000);
  const bool low = vec::bits(m) < vec::bits(0.707106781186547524f);  // m < sqrt(1/2): use 2m, e - 1
  e -= low;
  m = vec::select(low, m + m, m) - 1.0f;
  const float fe = float(e);
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  float y = p * m * z;
  y = y + fe * -2.12194440e-4f;
  y = y - 0.5f * z;
  y = (m + y) + fe * 0.693359375f;
  y = vec::select(b0 == vec::kInfBits, x, y);                                        // +inf
  y = vec::select((b0 & vec::kAbsMask) == 0, vec::from_bits(vec::kInfBits | vec::kSignMask), y);  // +-0
  y = vec::select(b0 < 0 && b0 != vec::kSignMask, vec::from_bits(0x7fc00000), y);   // x < 0
  return __builtin_isunordered(x, x) ? x : y;
}

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0, both from e = e^-|x| <= 1: the second form keeps
// the tiny results of very negative x (down to the subnormals) where e^-x would overflow and give 0.
TP_VEC_INLINE float sigmoid_f32(float x) {
  const int32_t b = vec::bits(x);
  const float e = exp_f32(vec::from_bits(b | vec::kSignMask));  // e^-|x|; NaN stays NaN
  const float pos = 1.0f / (1.0f + e);
  return vec::select(b < 0, e * pos, pos);
}

// tanh x. For |x| < 0.625 Cephes' odd polynomial x + x^3 P(x^2) (no cancellation near 0); above it
// 1 - 2 / (e^2|x| + 1) with the sign of x, which is 1 once e^2|x| overflows.
TP_VEC_INLINE float tanh_f32(float x) {
  const int32_t b = vec::bits(x);
  const float ax = vec::from_bits(b & vec::kAbsMask);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float big = 1.0f - 2.0f / (exp_f32(ax + ax) + 1.0f);  // NaN for a NaN x
  // both take the sign of x (small already has it, except that -0 + ... gives +0)
  const float y = vec::select((b & vec::kAbsMask) < vec::bits(0.625f), small, big);
  return vec::from_bits((vec::bits(y) & vec::kAbsMask) | (b & vec::kSignMask));
}

// A signed integer with the order of the floats (for non-NaN x): compare keys where a float compare would stop
// GCC from vectorising (Note [Vectorised float math]). -0 and +0 get different keys (-1 and 0).
TP_VEC_INLINE int32_t vec_order_key(float x) {
  const int32_t b = vec::bits(x);
  return b ^ ((b >> 31) & vec::kAbsMask);
}

// e^x - 1 without the cancellation of exp_f32(x) - 1 near 0: for |x| < 0.35 the Taylor series to x^7
// (truncation below 2e-8 relative), otherwise exp_f32(x) - 1, which loses at most two bits there.
TP_VEC_INLINE float expm1_f32(float x) {
  float p = 1.0f / 5040;
  p = p * x + 1.0f / 720;
  p = p * x + 1.0f / 120;
  p = p * x + 1.0f / 24;
  p = p * x + 1.0f / 6;
  p = p * x + 0.5f;
  const float small = p * (x * x) + x;
  const float big = exp_f32(x) - 1.0f;
  return vec::select((vec::bits(x) & vec::kAbsMask) < vec::bits(0.35f), small, big);
}

// log(1 + t) for t > -1 (Goldberg's trick: u = 1 + t rounded, then log(u) * t / (u - 1) cancels the rounding
// of u to first order; u == 1 means t is below half an ulp of 1 and log1p(t) = t). +inf gives +inf.
TP_VEC_INLINE float log1p_f32(float t) {
  const float u = 1.0f + t;
  const float d = u - 1.0f;
  const float y = log_f32(u) * (t / vec::select(vec::bits(d) == 0, 1.0f, d));
  const float r = vec::select(vec::bits(d) == 0, t, y);
  return vec::select(vec::bits(t) == vec::kInfBits, t, r);
}

// erfc x, relative error below 1.2e-7 in exact arithmetic (Numerical Recipes' erfcc, a Chebyshev fit:
// erfc z = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), z = |x|; erfc(-z) = 2 - erfc z). The float rounding of z^2
// adds up to z^2 2^-24 relative error in the tail (5e-6 at z = 9, where erfc is 4e-37). Used by GELU, whose
// negative tail 0.5 x erfc(-x/sqrt2) then keeps its relative accuracy instead of cancelling in 1 + erf.
TP_VEC_INLINE float erfc_f32(float x) {
  const float z = vec::from_bits(vec::bits(x) & vec::kAbsMask);
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float r = t * exp_f32(p - z * z);  // NaN for a NaN x; 0 once z^2 passes exp_f32's clamp
  return vec::select(vec::bits(x) < 0, 2.0f - r, r);
}

// y[i * sy] = f(x[i * sx]) for i < n: the loop every float32 map in this header runs in. The unit-stride case
// is its own loop so the compiler sees contiguous loads and stores.
template <typename F>
TP_VEC_INLINE void map_f32(const float *x, int64_t sx, float *y, int64_t sy, int64_t n, const F &f) {
  if (sx == 1 && sy == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i * sy] = f(x[i * sx]);
  }
}

}  // namespace tp::p10
