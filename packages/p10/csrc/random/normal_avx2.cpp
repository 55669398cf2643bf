// normal_avx2.cpp — the float32 Box-Muller block of PyTorch's AVX2 normal kernel, 8 lanes per instruction.
//
// Where it sits: see normal_avx2.h. Each step below is one step of cephes_logf / cephes_sincosf /
// normal16_avx2_float in distributions.cpp (the readable lane-by-lane reference, same constants, same order),
// done on 8 lanes with AVX2 intrinsics: _mm256_fmadd_ps where the reference calls std::fma (one rounding),
// a separate multiply and add everywhere else. So the results are the reference's bit for bit, and with it
// PyTorch's (checked against its recorded streams in test_random.py and against torch in test_fast_loops.py).
#include "random/normal_avx2.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

namespace tp::p10 {
namespace {

#define TP_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

TP_AVX2 __m256 set1(float v) { return _mm256_set1_ps(v); }
TP_AVX2 __m256i set1i(int32_t v) { return _mm256_set1_epi32(v); }
TP_AVX2 __m256 fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }

// cephes_logf on 8 lanes.
TP_AVX2 __m256 log8(__m256 x) {
  const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NGT_UQ);  // !(x > 0)
  x = _mm256_max_ps(x, _mm256_castsi256_ps(set1i(0x00800000)));  // NaN and denormals -> smallest normal
  __m256i e_i = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(x), 23), set1i(0x7f));
  x = _mm256_and_ps(x, _mm256_castsi256_ps(set1i(int32_t(~0x7f800000u))));
  x = _mm256_or_ps(x, set1(0.5f));
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(e_i), set1(1.0f));
  const __m256 below = _mm256_cmp_ps(x, set1(0.707106781186547524f), _CMP_LT_OS);
  const __m256 tmp = _mm256_and_ps(x, below);
  x = _mm256_sub_ps(x, set1(1.0f));
  e = _mm256_sub_ps(e, _mm256_and_ps(set1(1.0f), below));
  x = _mm256_add_ps(x, tmp);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 y = set1(7.0376836292E-2f);
  y = fma(y, x, set1(-1.1514610310E-1f));
  y = fma(y, x, set1(1.1676998740E-1f));
  y = fma(y, x, set1(-1.2420140846E-1f));
  y = fma(y, x, set1(1.4249322787E-1f));
  y = fma(y, x, set1(-1.6668057665E-1f));
  y = fma(y, x, set1(2.0000714765E-1f));
  y = fma(y, x, set1(-2.4999993993E-1f));
  y = fma(y, x, set1(3.3333331174E-1f));
  y = _mm256_mul_ps(y, x);
  y = fma(y, z, _mm256_mul_ps(e, set1(-2.12194440e-4f)));
  y = fma(_mm256_xor_ps(z, set1(-0.0f)), set1(0.5f), y);  // fma(-z, 0.5, y)
  x = fma(e, set1(0.693359375f), _mm256_add_ps(x, y));
  return _mm256_or_ps(x, invalid);  // invalid lanes: all bits set, a NaN
}

// cephes_sincosf on 8 lanes.
TP_AVX2 void sincos8(__m256 x, __m256 *s, __m256 *c) {
  const __m256 sign_bit = set1(-0.0f);
  __m256 sign_sin = _mm256_and_ps(x, sign_bit);
  x = _mm256_andnot_ps(sign_bit, x);
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, set1(1.27323954473516f)));
  j = _mm256_and_si256(_mm256_add_epi32(j, set1i(1)), set1i(~1));
  const __m256 y = _mm256_cvtepi32_ps(j);
  const __m256 swap_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, set1i(4)), 29));
  const __m256 poly_sin =
      _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(j, set1i(2)), _mm256_setzero_si256()));
  x = fma(y, set1(-0.78515625f), x);
  x = fma(y, set1(-2.4187564849853515625e-4f), x);
  x = fma(y, set1(-3.77489497744594108e-8f), x);
  const __m256 sign_cos = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_andnot_si256(_mm256_sub_epi32(j, set1i(2)), set1i(4)), 29));
  sign_sin = _mm256_xor_ps(sign_sin, swap_sin);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 yc = set1(2.443315711809948E-005f);
  yc = fma(yc, z, set1(-1.388731625493765E-003f));
  yc = fma(yc, z, set1(4.166664568298827E-002f));
  yc = _mm256_mul_ps(yc, z);
  yc = fma(yc, z, _mm256_xor_ps(_mm256_mul_ps(z, set1(0.5f)), sign_bit));  // -(z * 0.5)
  yc = _mm256_add_ps(yc, set1(1.0f));
  __m256 ys = set1(-1.9515295891E-4f);
  ys = fma(ys, z, set1(8.3321608736E-3f));
  ys = fma(ys, z, set1(-1.6666654611E-1f));
  ys = _mm256_mul_ps(ys, z);
  ys = fma(ys, x, x);
  const __m256 sin_v = _mm256_blendv_ps(yc, ys, poly_sin), cos_v = _mm256_blendv_ps(ys, yc, poly_sin);
  *s = _mm256_xor_ps(sin_v, sign_sin);
  *c = _mm256_xor_ps(cos_v, sign_cos);
}

}  // namespace

__attribute__((target("avx2,fma"))) void normal16_avx2_simd(float *d, int64_t blocks, float mean, float stdv) {
  const __m256 two_pi = set1(float(2.0 * 3.14159265358979323846)), m = set1(mean), sd = set1(stdv);
  for (int64_t b = 0; b < blocks; ++b, d += 16) {
    const __m256 u1 = _mm256_sub_ps(set1(1.0f), _mm256_loadu_ps(d));
    const __m256 u2 = _mm256_loadu_ps(d + 8);
    const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(set1(-2.0f), log8(u1)));
    __m256 s, c;
    sincos8(_mm256_mul_ps(two_pi, u2), &s, &c);
    _mm256_storeu_ps(d, fma(_mm256_mul_ps(radius, c), sd, m));
    _mm256_storeu_ps(d + 8, fma(_mm256_mul_ps(radius, s), sd, m));
  }
}

}  // namespace tp::p10

#else  // not x86: float_normal_uses_avx2() is false, so this is never called

namespace tp::p10 {
void normal16_avx2_simd(float *, int64_t, float, float) {}
}  // namespace tp::p10

#endif
