// distributions.cpp — PyTorch-exact CPU sampling: uniform, normal, integers, and the derived distributions.
//
// Where it sits: implements distributions.h on top of CPUGenerator. Every formula here is chosen to give
// the same bits as PyTorch 2.x's CPU kernels (aten DistributionsHelper / TransformationHelper /
// cpu DistributionTemplates): the same number of 32- or 64-bit draws per element, the same masks, the same
// order of floating-point operations and the same libm calls. Change nothing here without re-running the
// comparison against torch (tools/record_rng_reference.py and the tests built on its JSON).
#include "random/distributions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "random/normal_avx2.h"

// Note [no implicit FMA]
//   PyTorch's kernels are compiled with FMA contraction, so where it fused a*b+c we call std::fma (exact on
//   every CPU), and nowhere else does this file contain an expression of the form a*b+c or a*b-c. That keeps
//   the bits independent of our own compiler flags (-mfma, -march=native, -ffp-contract). Keep it so: a plain
//   a*b+c rounds once or twice depending on how the file is compiled.

namespace tp::p10 {
namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- uniform words -> [0, 1) ---------------------------------------------------------------------------
// PyTorch keeps the low 53 bits of a 64-bit draw for double and the low 24 bits of a 32-bit draw for every
// other float type, and scales by 2^-bits. (Mantissa<T> also serves random_'s ranges for half/bfloat16.)
template <typename T> struct Mantissa;
template <> struct Mantissa<float> { static constexpr int digits = 24; };
template <> struct Mantissa<double> { static constexpr int digits = 53; };
template <> struct Mantissa<Half> { static constexpr int digits = 11; };
template <> struct Mantissa<BFloat16> { static constexpr int digits = 8; };

inline double uniform01_double(CPUGenerator &g) {
  return double(g.random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}
inline float uniform01_float(CPUGenerator &g) {
  return float(g.random() & 0xffffffu) * (1.0f / 16777216.0f);
}

// static_cast<T>(double) as c10 does it: the 16-bit types go through float (so round twice).
template <typename T> inline T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(float(v));
  else return static_cast<T>(v);
}
template <typename T> constexpr bool is_16bit_float() { return std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>; }

#define TP_DISPATCH_REAL_AND_BOOL(dtype, name, ...)                                               \
  [&] {                                                                                           \
    if ((dtype) == ScalarType::Bool) return __VA_ARGS__.template operator()<bool>();              \
    return TP_DISPATCH_REAL(dtype, name, __VA_ARGS__);                                            \
  }()

// ---- uniform ----------------------------------------------------------------------------------------
// from + x * (to - from), one rounding (PyTorch's kernel is compiled with FMA contraction), in double for
// float64 and in float for every other dtype (half and bfloat16 sample 24 bits in float, like float32, and
// round at the end). A result that rounds up to `to` is replaced by `from`, keeping the range half-open.
template <typename T> void uniform_impl(CPUGenerator &g, T *out, int64_t n, double from_d, double to_d) {
  if constexpr (std::is_same_v<T, double>) {
    for (int64_t i = 0; i < n; ++i) {
      const double v = std::fma(uniform01_double(g), to_d - from_d, from_d);
      out[i] = v == to_d ? from_d : v;
    }
  } else {
    const float from = float(from_d), to = float(to_d), range = to - from;
    const T to_t = T(to), from_t = T(from);
    for (int64_t i = 0; i < n; ++i) {
      const T v = T(std::fma(uniform01_float(g), range, from));
      out[i] = float(v) == float(to_t) ? from_t : v;
    }
  }
}

// ---- normal --------------------------------------------------------------------------------------------
// Note [cached normal sample]
//   The per-element path is PyTorch's at::normal_distribution<double>: Box-Muller on two double uniforms
//   u1, u2 gives r = sqrt(-2 log(1 - u2)), theta = 2 pi u1; it returns r cos(theta) and parks r sin(theta)
//   in gen.next_double_normal_sample, which the next call (from any op using this path: normal_ with
//   n < 16, log_normal_, ...) returns without drawing. manual_seed and set_state clear or restore it; the
//   chunked path below neither reads nor writes it.
double standard_normal(CPUGenerator &g) {
  if (g.next_double_normal_sample) {
    double v = *g.next_double_normal_sample;
    g.next_double_normal_sample.reset();
    return v;
  }
  const double u1 = uniform01_double(g);
  const double u2 = uniform01_double(g);
  const double r = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * kPi * u1;
  g.next_double_normal_sample = r * std::sin(theta);
  return r * std::cos(theta);
}
inline double normal_sample(CPUGenerator &g, double mean, double std) { return std::fma(standard_normal(g), std, mean); }

template <typename T> void normal_per_element(CPUGenerator &g, T *out, int64_t n, double mean, double std) {
  for (int64_t i = 0; i < n; ++i) out[i] = from_double<T>(normal_sample(g, mean, std));
}

// Note [normal_fill chunks of 16]
//   For a contiguous tensor with n >= 16 PyTorch does not use the cached path. It first writes n uniforms
//   into the output itself, then turns each block of 16 in place into 16 normals: lane j (0..7) takes
//   u1 = 1 - data[j] and u2 = data[j + 8], and writes r cos(theta) to data[j] and r sin(theta) to
//   data[j + 8]. If n is not a multiple of 16, it then draws 16 MORE uniforms over the last 16 slots
//   (overwriting normals already computed there) and transforms that final block, so such a tensor
//   consumes n + 16 draws and its tail overlaps the previous block. float64 uses 53-bit uniforms and libm;
//   float32 uses 24-bit uniforms and, on an x86-64 CPU with AVX2 + FMA, PyTorch's vectorised block
//   (replayed lane by lane in normal16_avx2_float), else the scalar block with libm. float16 and bfloat16
//   compute in float32 with a different draw order (normal_chunked_reduced).

// The scalar block (PyTorch's normal_fill_16) in T = float or double, with libm's log, cos and sin.
template <typename T> void normal16_scalar(T *d, T mean, T stdv) {
  for (int j = 0; j < 8; ++j) {
    const T u1 = T(1) - d[j];  // [0, 1) -> (0, 1] for the log
    const T u2 = d[j + 8];
    const T radius = std::sqrt(T(-2) * std::log(u1));
    const T theta = T(2.0 * kPi * double(u2));  // PyTorch forms 2 pi u2 in double, then rounds to T
    d[j] = std::fma(radius * std::cos(theta), stdv, mean);
    d[j + 8] = std::fma(radius * std::sin(theta), stdv, mean);
  }
}

// ---- the AVX2 block, one lane at a time ----
// PyTorch's AVX2 kernel computes log and sincos with the Cephes-derived polynomials of avx_mathfun.h
// (Pommier / Garberoglio), compiled with FMA contraction; we replay each lane with the same constants and
// the same fused/unfused steps, so the result is exact on any CPU (std::fma is exact everywhere).
// This replay is the readable reference; the kernels run normal16_avx2_simd (random/normal_avx2.cpp), the same
// steps on 8 lanes per AVX2 instruction.
inline uint32_t fbits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bitsf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

float cephes_logf(float x) {
  const bool invalid = !(x > 0.0f);
  const float min_norm = bitsf(0x00800000u);
  x = x > min_norm ? x : min_norm;  // maxps: denormals (and NaN) become the smallest normal
  int32_t e_i = int32_t(fbits(x) >> 23) - 0x7f;
  x = bitsf((fbits(x) & ~0x7f800000u) | fbits(0.5f));  // mantissa in [0.5, 1)
  float e = float(e_i) + 1.0f;
  const bool below = x < 0.707106781186547524f;
  const float tmp = below ? x : 0.0f;
  x = x - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = 7.0376836292E-2f;
  y = std::fma(y, x, -1.1514610310E-1f);
  y = std::fma(y, x, 1.1676998740E-1f);
  y = std::fma(y, x, -1.2420140846E-1f);
  y = std::fma(y, x, 1.4249322787E-1f);
  y = std::fma(y, x, -1.6668057665E-1f);
  y = std::fma(y, x, 2.0000714765E-1f);
  y = std::fma(y, x, -2.4999993993E-1f);
  y = std::fma(y, x, 3.3333331174E-1f);
  y = y * x;
  y = std::fma(y, z, e * -2.12194440e-4f);
  y = std::fma(-z, 0.5f, y);
  x = std::fma(e, 0.693359375f, x + y);
  return invalid ? bitsf(0xffffffffu) : x;
}

void cephes_sincosf(float x, float *s, float *c) {
  uint32_t sign_sin = fbits(x) & 0x80000000u;
  x = bitsf(fbits(x) & 0x7fffffffu);
  int32_t j = int32_t(x * 1.27323954473516f);  // 4/pi; cvttps truncates
  j = (j + 1) & ~1;
  const float y = float(j);
  const uint32_t swap_sin = uint32_t(j & 4) << 29;
  const bool poly_sin = (j & 2) == 0;  // the lane uses the sine polynomial for sin (cosine one for cos)
  x = std::fma(y, -0.78515625f, x);  // extended-precision reduction x - y * pi/4 in three pieces
  x = std::fma(y, -2.4187564849853515625e-4f, x);
  x = std::fma(y, -3.77489497744594108e-8f, x);
  const uint32_t sign_cos = uint32_t(~(j - 2) & 4) << 29;
  sign_sin ^= swap_sin;
  const float z = x * x;
  float yc = 2.443315711809948E-005f;
  yc = std::fma(yc, z, -1.388731625493765E-003f);
  yc = std::fma(yc, z, 4.166664568298827E-002f);
  yc = yc * z;
  yc = std::fma(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = -1.9515295891E-4f;
  ys = std::fma(ys, z, 8.3321608736E-3f);
  ys = std::fma(ys, z, -1.6666654611E-1f);
  ys = ys * z;
  ys = std::fma(ys, x, x);
  const float sin_v = poly_sin ? ys : yc, cos_v = poly_sin ? yc : ys;
  *s = bitsf(fbits(sin_v) ^ sign_sin);
  *c = bitsf(fbits(cos_v) ^ sign_cos);
}

void normal16_avx2_float(float *d, float mean, float stdv) {
  const float two_pi = float(2.0 * kPi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j], u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_logf(u1));
    float s, c;
    cephes_sincosf(two_pi * u2, &s, &c);
    d[j] = std::fma(radius * c, stdv, mean);
    d[j + 8] = std::fma(radius * s, stdv, mean);
  }
}

// PyTorch picks its float32 block by CPU capability at run time; so do we, to agree with the torch running on
// the same machine. Build with -DTP_RNG_SCALAR_NORMAL to force the scalar block (to test it, or to match
// torch run with ATEN_CPU_CAPABILITY=default).
bool float_normal_uses_avx2() {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(TP_RNG_SCALAR_NORMAL)
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

template <typename T> void normal_chunked(CPUGenerator &g, T *d, int64_t n, double mean_d, double std_d) {
  const T mean = T(mean_d), stdv = T(std_d);
  auto block = [&](T *p) {
    if constexpr (std::is_same_v<T, float>) {
      if (float_normal_uses_avx2()) return normal16_avx2_simd(p, 1, mean, stdv);
    }
    normal16_scalar<T>(p, mean, stdv);
  };
  auto draw = [&](T *p, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, double>) p[i] = uniform01_double(g);
      else p[i] = uniform01_float(g);
    }
  };
  draw(d, n);
  int64_t done = 0;  // the float32 AVX2 kernel takes all whole blocks in one call
  if constexpr (std::is_same_v<T, float>) {
    if (float_normal_uses_avx2()) normal16_avx2_simd(d, n / 16, mean, stdv), done = n / 16 * 16;
  }
  for (int64_t i = done; i + 16 <= n; i += 16) block(d + i);
  if (n % 16 != 0) {  // Note [normal_fill chunks of 16]: redraw and redo the last 16
    draw(d + n - 16, 16);
    block(d + n - 16);
  }
}

// Half and bfloat16 (n >= 16) run the float32 block in float and round at the end, but draw per block:
// 16 uniforms, transform, next 16, ..., then 16 fresh ones for an overlapping last block when n % 16 != 0.
// So they consume 16 * ceil(n / 16) words, not n (+ 16) like float32 and float64.
void normal_chunked_reduced(CPUGenerator &g, float *d, int64_t n, double mean_d, double std_d) {
  const float mean = float(mean_d), stdv = float(std_d);
  auto block = [&](float *p) {
    for (int i = 0; i < 16; ++i) p[i] = uniform01_float(g);
    if (float_normal_uses_avx2()) normal16_avx2_simd(p, 1, mean, stdv);
    else normal16_scalar<float>(p, mean, stdv);
  };
  for (int64_t i = 0; i + 16 <= n; i += 16) block(d + i);
  if (n % 16 != 0) block(d + n - 16);
}

// ---- integers ------------------------------------------------------------------------------------------

template <typename T> inline T from_int64(int64_t v) {
  if constexpr (is_16bit_float<T>()) return T(float(v));
  else return static_cast<T>(v);
}

// int64 -> T -> int64 the way x86 does it (an out-of-range conversion gives INT64_MIN, as cvttsd2si does).
template <typename T> int64_t through(int64_t v) {
  const double d = double(opmath_t<T>(from_int64<T>(v)));
  return (d >= 9223372036854775808.0 || d < -9223372036854775808.0 || std::isnan(d)) ? INT64_MIN : int64_t(d);
}
inline int floor_log2(uint64_t v) { int k = 0; while (v >>= 1) ++k; return k; }

// Note [random_ bounds for floats]
//   A float dtype cannot hold every integer, so PyTorch first moves the bounds to values it can hold: when
//   `from + 1` rounds below `from`, from becomes that rounded value plus one ulp at that magnitude; when
//   `to - 1` rounds up to `to` or beyond, to becomes the rounded value minus one ulp. E.g. float32
//   randint(0, 2**32) really samples [0, 2**32 - 256).
template <typename T> void adjust_float_bounds(int64_t &from, int64_t &to) {
  constexpr int digits = Mantissa<T>::digits;
  const int64_t from_p1 = through<T>(from + 1);
  if (from_p1 < from) from = from_p1 + (int64_t(1) << (floor_log2(uint64_t(std::abs(from + 1))) - digits + 1));
  const int64_t to_m1 = through<T>(to - 1);
  if (to_m1 >= to) to = to_m1 - (int64_t(1) << (floor_log2(uint64_t(std::abs(to - 1))) - digits + 1));
  TP_CHECK(from < to, Runtime, "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
           "got from=", from, " >= to=", to);
}

template <typename T> void check_from_to(int64_t from, int64_t to_inc) {
  const char *nm = scalar_type_name(ScalarTypeOf<T>::value);
  double lo, hi;
  if constexpr (std::is_same_v<T, Half>) lo = -65504.0, hi = 65504.0;
  else if constexpr (std::is_same_v<T, BFloat16>) lo = -3.3895313892515355e38, hi = 3.3895313892515355e38;
  else lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
  TP_CHECK(double(from) >= lo && double(from) <= hi, Runtime, "random_: from is out of bounds for ", nm, ": from=", from);
  TP_CHECK(double(to_inc) >= lo && double(to_inc) <= hi, Runtime, "random_: to - 1 is out of bounds for ", nm,
           ": to - 1=", to_inc);
}

template <typename T> void random_from_to_impl(CPUGenerator &g, T *out, int64_t n, int64_t from, int64_t to) {
  TP_CHECK(from < to, Runtime, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
  if constexpr (!std::is_integral_v<T>) adjust_float_bounds<T>(from, to);
  check_from_to<T>(from, to - 1);
  const uint64_t range = uint64_t(to) - uint64_t(from);
  // PyTorch 2.x takes 64 random bits once the range reaches 2^28, to keep the modulo bias small.
  const bool use64 = range >= (uint64_t(1) << 28);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t v = use64 ? g.random64() : uint64_t(g.random());
    out[i] = from_int64<T>(int64_t(v % range + uint64_t(from)));
  }
}

template <typename T> void random_impl(CPUGenerator &g, T *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = (g.random() & 1u) != 0;
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
      constexpr uint64_t m = std::is_same_v<T, double> ? (uint64_t(1) << 53) + 1 : uint64_t(1) << 63;
      out[i] = T(g.random64() % m);
    } else if constexpr (std::is_integral_v<T>) {
      out[i] = T(uint64_t(g.random()) % (uint64_t(std::numeric_limits<T>::max()) + 1));
    } else {  // float, half, bfloat16: [0, 2^digits]
      out[i] = T(float(uint64_t(g.random()) % ((uint64_t(1) << Mantissa<T>::digits) + 1)));
    }
  }
}

}  // namespace

// ---- public entry points -------------------------------------------------------------------------------

void uniform_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double from, double to) {
  TP_CHECK(from <= to, Runtime, "uniform_ expects to return a [from, to) range, but found from=", from,
           " > to=", to);
  TP_DISPATCH_FLOATING(t, "uniform_", [&]<typename T>() {
    const double lim = std::is_same_v<T, double>  ? std::numeric_limits<double>::max()
                       : std::is_same_v<T, float> ? double(std::numeric_limits<float>::max())
                       : std::is_same_v<T, Half>  ? 65504.0
                                                  : 3.3895313892515355e38;
    TP_CHECK(std::isfinite(from) && from >= -lim && from <= lim, Runtime, "uniform_: from is out of bounds for ",
             scalar_type_name(t), ": from=", from);
    TP_CHECK(std::isfinite(to) && to >= -lim && to <= lim, Runtime, "uniform_: to is out of bounds for ",
             scalar_type_name(t), ": to=", to);
    TP_CHECK(to - from <= lim, Runtime, "uniform_ expects to-from <= max of ", scalar_type_name(t),
             ", but found to=", to, " and from=", from, " which result in to-from to exceed the limit");
    std::lock_guard<std::mutex> lock(g.mutex);
    uniform_impl<T>(g, static_cast<T *>(data), n, from, to);
  });
}

void normal_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double mean, double std) {
  TP_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  TP_DISPATCH_FLOATING(t, "normal_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    T *out = static_cast<T *>(data);
    if (n < 16) return normal_per_element<T>(g, out, n, mean, std);
    if constexpr (is_16bit_float<T>()) {
      std::vector<float> tmp(static_cast<size_t>(n));
      normal_chunked_reduced(g, tmp.data(), n, mean, std);
      for (int64_t i = 0; i < n; ++i) out[i] = T(tmp[size_t(i)]);
    } else {
      normal_chunked<T>(g, out, n, mean, std);
    }
  });
}

void normal_fill_strided(CPUGenerator &g, ScalarType t, void *data, int64_t n, double mean, double std) {
  TP_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  TP_DISPATCH_FLOATING(t, "normal_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    normal_per_element<T>(g, static_cast<T *>(data), n, mean, std);
  });
}

void random_from_to_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, int64_t from, int64_t to) {
  TP_DISPATCH_REAL_AND_BOOL(t, "random_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    random_from_to_impl<T>(g, static_cast<T *>(data), n, from, to);
  });
}

void random_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n) {
  TP_DISPATCH_REAL_AND_BOOL(t, "random_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    random_impl<T>(g, static_cast<T *>(data), n);
  });
}

void random_full_range_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n) {
  std::lock_guard<std::mutex> lock(g.mutex);
  switch (t) {
    case ScalarType::Int64: for (int64_t i = 0; i < n; ++i) static_cast<int64_t *>(data)[i] = int64_t(g.random64()); break;
    case ScalarType::Float64: for (int64_t i = 0; i < n; ++i) static_cast<double *>(data)[i] = double(int64_t(g.random64())); break;
    case ScalarType::Float32: for (int64_t i = 0; i < n; ++i) static_cast<float *>(data)[i] = float(int64_t(g.random64())); break;
    case ScalarType::BFloat16:
      for (int64_t i = 0; i < n; ++i) static_cast<BFloat16 *>(data)[i] = BFloat16(float(int64_t(g.random64())));
      break;
    default:
      fail(ErrorKind::Runtime, "random_ over the full 64-bit range handles only int64, float64, float32 and "
           "bfloat16, got ", scalar_type_name(t));
  }
}

void exponential_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double lambd) {
  TP_CHECK(lambd > 0.0, Runtime, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  TP_DISPATCH_FLOATING(t, "exponential_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    T *out = static_cast<T *>(data);
    for (int64_t i = 0; i < n; ++i) out[i] = from_double<T>(-1.0 / lambd * std::log1p(-uniform01_double(g)));
  });
}

void cauchy_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double median, double sigma) {
  TP_CHECK(sigma > 0.0, Runtime, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  TP_DISPATCH_FLOATING(t, "cauchy_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    T *out = static_cast<T *>(data);
    for (int64_t i = 0; i < n; ++i)
      out[i] = from_double<T>(std::fma(sigma, std::tan(kPi * (uniform01_double(g) - 0.5)), median));
  });
}

void log_normal_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double mean, double std) {
  TP_CHECK(std > 0.0, Runtime, "log_normal_ expects std > 0.0, but found std=", std);
  TP_DISPATCH_FLOATING(t, "log_normal_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    T *out = static_cast<T *>(data);
    for (int64_t i = 0; i < n; ++i) out[i] = from_double<T>(std::exp(normal_sample(g, mean, std)));
  });
}

void geometric_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double p) {
  TP_CHECK(p > 0.0 && p < 1.0, Runtime, "geometric_ expects p to be in (0, 1), but got p=", p);
  TP_DISPATCH_REAL(t, "geometric_", [&]<typename T>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    T *out = static_cast<T *>(data);
    const double denom = std::log1p(-p);
    for (int64_t i = 0; i < n; ++i) out[i] = from_double<T>(std::ceil(std::log(uniform01_double(g)) / denom));
  });
}

namespace {
// Bernoulli outcomes are drawn as 0/1 bytes and then stored in the output dtype, so the sampling loops are
// instantiated per probability type only (not per probability type x output type).
void store_flags(ScalarType t, void *data, const std::vector<uint8_t> &flags) {
  TP_DISPATCH_REAL_AND_BOOL(t, "bernoulli", [&]<typename T>() {
    T *out = static_cast<T *>(data);
    for (size_t i = 0; i < flags.size(); ++i) out[i] = from_int64<T>(flags[i]);
  });
}
void check_bernoulli_dtype(ScalarType t) {
  if (is_complex(t)) throw_unsupported_dtype("bernoulli", t);
}
}  // namespace

void bernoulli_scalar_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, double p) {
  TP_CHECK(p >= 0.0 && p <= 1.0, Runtime, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  check_bernoulli_dtype(t);
  std::vector<uint8_t> flags(static_cast<size_t>(n));
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    for (auto &f : flags) f = uniform01_double(g) < p;
  }
  store_flags(t, data, flags);
}

void bernoulli_tensor_fill(CPUGenerator &g, ScalarType t, void *data, int64_t n, ScalarType pt, const void *p) {
  check_bernoulli_dtype(t);
  std::vector<uint8_t> flags(static_cast<size_t>(n));
  TP_DISPATCH_FLOATING(pt, "bernoulli (probabilities)", [&]<typename P>() {
    std::lock_guard<std::mutex> lock(g.mutex);
    const P *prob = static_cast<const P *>(p);
    for (int64_t i = 0; i < n; ++i) {
      // float64 probabilities meet a 53-bit double uniform, all others a 24-bit float one.
      using C = std::conditional_t<std::is_same_v<P, double>, double, float>;
      const C pv = C(prob[i]);
      TP_CHECK(pv >= C(0) && pv <= C(1), Runtime, "bernoulli: probability must be in [0, 1], but got p=", pv,
               " at index ", i);
      if constexpr (std::is_same_v<C, double>) flags[size_t(i)] = uniform01_double(g) < pv;
      else flags[size_t(i)] = uniform01_float(g) < pv;
    }
  });
  store_flags(t, data, flags);
}

std::vector<int64_t> randperm(CPUGenerator &g, int64_t n) {
  TP_CHECK(n >= 0, Runtime, "randperm: n must be non-negative, but got n=", n);
  std::vector<int64_t> r(size_t(n), 0);
  std::lock_guard<std::mutex> lock(g.mutex);
  if (n < int64_t(std::numeric_limits<uint32_t>::max() / 20)) {
    // Small n (PyTorch's historical path): forward Fisher-Yates with a 32-bit draw modulo the tail length.
    for (int64_t i = 0; i < n; ++i) r[size_t(i)] = i;
    for (int64_t i = 0; i < n - 1; ++i) {
      const int64_t z = int64_t(g.random() % uint64_t(n - i));
      std::swap(r[size_t(i)], r[size_t(z + i)]);
    }
  } else {
    // Huge n: a 32-bit draw modulo n would be visibly biased, so the "inside-out" shuffle with 64-bit draws.
    for (int64_t i = 0; i < n; ++i) {
      const int64_t z = int64_t(g.random64() % uint64_t(i + 1));
      r[size_t(i)] = r[size_t(z)];
      r[size_t(z)] = i;
    }
  }
  return r;
}

// Note [multinomial paths]
//   PyTorch samples without replacement, and with replacement when num_samples == 1, by the exponential
//   (Gumbel-max) trick: q = exponential_(1) over the whole [rows, cats] tensor in the probabilities' dtype,
//   then the indices of the num_samples largest p / q per row (argmax for one sample, topk otherwise).
//   With replacement and num_samples > 1 it builds each row's cumulative distribution in the input dtype,
//   divides it by its total, pins the last entry to 1, and binary-searches one 53-bit uniform per sample
//   for the first bucket whose cumulative value is >= the uniform.
namespace {
// The indices of the k largest keys, best first, as PyTorch's CPU argmax (k = 1) and topk (k > 1) return
// them. Which of several EQUAL keys comes first is whatever PyTorch's std::partial_sort / std::nth_element
// call leaves there, so we make the same call with the same comparator; this matters when zero-probability
// categories are drawn (their keys are all 0). NaN ranks above everything.
template <typename P> void top_k_indices(const P *key, int64_t cats, int64_t k, int64_t *out) {
  if (k == 1) {
    int64_t best = 0;
    for (int64_t c = 1; c < cats; ++c) {
      if (std::isnan(key[best])) break;
      if (std::isnan(key[c]) || key[c] > key[best]) best = c;
    }
    out[0] = best;
    return;
  }
  using Elem = std::pair<double, int64_t>;  // PyTorch's topk compares in its accumulate type (double)
  std::vector<Elem> q(static_cast<size_t>(cats));
  for (int64_t c = 0; c < cats; ++c) q[size_t(c)] = {double(key[c]), c};
  auto before = [](const Elem &x, const Elem &y) {
    return (std::isnan(x.first) && !std::isnan(y.first)) || x.first > y.first;
  };
  if (k * 64 <= cats) {
    std::partial_sort(q.begin(), q.begin() + k, q.end(), before);
  } else {
    std::nth_element(q.begin(), q.begin() + k - 1, q.end(), before);
    std::sort(q.begin(), q.begin() + k - 1, before);  // sic: the k-th is already in place
  }
  for (int64_t j = 0; j < k; ++j) out[j] = q[size_t(j)].second;
}

template <typename P>
void multinomial_impl(CPUGenerator &g, const P *probs, int64_t rows, int64_t cats, int64_t ns, bool repl,
                      int64_t *out) {
  if (!repl || ns == 1) {
    for (int64_t i = 0; i < rows * cats; ++i)
      TP_CHECK(std::isfinite(probs[i]) && probs[i] >= P(0), Runtime,
               "multinomial: probability tensor contains either `inf`, `nan` or element < 0 (value ", probs[i],
               " at row ", i / cats, ", column ", i % cats, ")");
    for (int64_t r = 0; r < rows; ++r) {
      bool any = false;
      for (int64_t c = 0; c < cats; ++c) any = any || probs[r * cats + c] > P(0);
      TP_CHECK(any, Runtime, "multinomial: invalid multinomial distribution (sum of probabilities <= 0) in row ", r);
    }
    std::vector<P> key(size_t(rows * cats));
    for (int64_t i = 0; i < rows * cats; ++i)
      key[size_t(i)] = P(-1.0 / 1.0 * std::log1p(-uniform01_double(g)));
    for (int64_t i = 0; i < rows * cats; ++i) key[size_t(i)] = probs[i] / key[size_t(i)];
    for (int64_t r = 0; r < rows; ++r) top_k_indices(key.data() + r * cats, cats, ns, out + r * ns);
    return;
  }
  std::vector<P> cum(static_cast<size_t>(cats));
  for (int64_t r = 0; r < rows; ++r) {
    const P *row = probs + r * cats;
    P sum = 0;
    for (int64_t c = 0; c < cats; ++c) {
      const P v = row[c];
      TP_CHECK(v >= P(0), Runtime, "multinomial: invalid multinomial distribution (encountering probability "
               "entry < 0): value ", v, " at row ", r, ", column ", c);
      TP_CHECK(std::isfinite(v), Runtime, "multinomial: invalid multinomial distribution (encountering "
               "probability entry = infinity or NaN): value ", v, " at row ", r, ", column ", c);
      sum += v;
      cum[size_t(c)] = sum;
    }
    TP_CHECK(sum > P(0), Runtime, "multinomial: invalid multinomial distribution (sum of probabilities <= 0) "
             "in row ", r);
    for (int64_t c = 0; c < cats; ++c) cum[size_t(c)] /= sum;
    cum[size_t(cats - 1)] = 1;
    for (int64_t s = 0; s < ns; ++s) {
      const double u = uniform01_double(g);
      int64_t lo = 0, hi = cats;
      while (hi - lo > 0) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (double(cum[size_t(mid)]) < u) lo = mid + 1;
        else hi = mid;
      }
      out[r * ns + s] = lo;
    }
  }
}
}  // namespace

void multinomial(CPUGenerator &g, ScalarType pt, const void *probs, int64_t rows, int64_t cats,
                 int64_t num_samples, bool replacement, int64_t *out) {
  TP_CHECK(num_samples > 0, Runtime, "multinomial: cannot sample n_sample <= 0 samples (num_samples=",
           num_samples, ")");
  TP_CHECK(replacement || num_samples <= cats, Runtime, "multinomial: cannot sample n_sample > prob_dist.size(-1) "
           "samples without replacement (num_samples=", num_samples, ", categories=", cats, ")");
  TP_CHECK(cats <= (int64_t(1) << 24), Runtime, "multinomial: number of categories cannot exceed 2^24, got ", cats);
  TP_CHECK(rows >= 0 && cats >= 0, Value, "multinomial: bad shape [", rows, ", ", cats, "]");
  if (rows == 0) return;
  TP_CHECK(cats > 0, Runtime, "multinomial: invalid multinomial distribution (sum of probabilities <= 0): no "
           "categories");
  std::lock_guard<std::mutex> lock(g.mutex);
  switch (pt) {
    case ScalarType::Float32:
      return multinomial_impl<float>(g, static_cast<const float *>(probs), rows, cats, num_samples, replacement, out);
    case ScalarType::Float64:
      return multinomial_impl<double>(g, static_cast<const double *>(probs), rows, cats, num_samples, replacement, out);
    default:
      fail(ErrorKind::Type, "multinomial: probabilities must be float32 or float64, got ", scalar_type_name(pt));
  }
}

}  // namespace tp::p10
