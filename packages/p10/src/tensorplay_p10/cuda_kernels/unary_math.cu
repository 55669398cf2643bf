// unary_math.cu — special functions of one tensor (erfc, erfinv, lgamma, digamma), frac and angle, and the
// dtype-keeping or bool-valued ones: sgn, square, nan_to_num, isnan, isinf, isfinite, signbit. (The float
// family — exp, log, trigonometry, … — is unary_float.cu's.)
//
// Where it sits: launched by csrc/cuda/ops_unary_special.cpp through csrc/cuda/elementwise.cpp, which has asked
// the CPU op (kernels/unary_special.cpp, unary.cpp, unary_complex.cpp) on meta tensors for the result and cast
// the input to its compute dtype T. Loops and entry points: elementwise.cuh (<fn>_contig_<T>, <fn>_strided_<T>).
// Arithmetic runs in OpMath<T> (float32 for float16/bfloat16), except erfinv and digamma, which the CPU
// computes in double for every dtype and so do these.
#include "elementwise.cuh"

#define TP_FN1(Name, expr)                                                                                  \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A x, const P3 &p) const { return expr; }  \
  };
TP_FN1(Erfc, m_erfc(x))
TP_FN1(Lgamma, m_lgamma(x))
// frac(x) = x - trunc(x); frac(±inf) is NaN.
TP_FN1(Frac, x - m_trunc(x))
// square keeps the dtype (bool arrives as int64, the CPU's compute dtype).
TP_FN1(Square, A(x * x))
// angle of a real number: pi below 0, 0 otherwise, NaN kept (kernels/unary_complex.cpp; complex has no kernels).
TP_FN1(Angle, x != x ? x : (x < A(0) ? A(3.141592653589793) : A(0)))
// (0 < x) - (x < 0): NaN gives 0 (kernels/unary.cpp sign_of); sgn of a real number is its sign.
TP_FN1(Sgn, A(A(A(0) < x) - A(x < A(0))))

// nan_to_num: p0, p1, p2 replace NaN, +inf and -inf (the host has chosen the dtype's largest finite values
// for the defaults); the replacements go through the math type like the CPU's R(opmath_t<R>(v)).
struct NanToNum {
  template <typename A> __device__ __forceinline__ A operator()(A x, const P3 &p) const {
    if (x != x) return A(p.p0);
    if (x == A(1) / A(0)) return A(p.p1);
    if (x == A(-1) / A(0)) return A(p.p2);
    return x;
  }
};

// Classification (bool results); integers are answered on the host (never NaN or infinite).
struct IsNan {
  template <typename A> __device__ __forceinline__ bool operator()(A x, const P3 &) const { return x != x; }
};
struct IsInf {
  template <typename A> __device__ __forceinline__ bool operator()(A x, const P3 &) const {
    return x == A(1) / A(0) || x == A(-1) / A(0);
  }
};
struct IsFinite {
  template <typename A> __device__ __forceinline__ bool operator()(A x, const P3 &) const {
    return x == x && x != A(1) / A(0) && x != A(-1) / A(0);
  }
};
// signbit reads the stored bits: -0.0 and NaNs with the sign bit set count (a conversion could drop them).
struct Signbit {
  static constexpr bool raw = true;
  __device__ __forceinline__ bool operator()(float16 x, const P3 &) const { return (x.bits >> 15) != 0; }
  __device__ __forceinline__ bool operator()(bfloat16 x, const P3 &) const { return (x.bits >> 15) != 0; }
  __device__ __forceinline__ bool operator()(float x, const P3 &) const { return (__float_as_uint(x) >> 31) != 0; }
  __device__ __forceinline__ bool operator()(double x, const P3 &) const { return __double_as_longlong(x) < 0; }
  template <typename I> __device__ __forceinline__ bool operator()(I x, const P3 &) const { return x < I(0); }
};

// ---- erfinv and digamma, in double (kernels/unary_special.cpp computes them in double for every dtype) ------
// CUDA's erfinv is accurate to a few ulp of double; a float result is then the rounded double, as the CPU's.
struct Erfinv {
  template <typename A> __device__ __forceinline__ double operator()(A x, const P3 &) const {
    return erfinv(double(x));
  }
};

// digamma: PyTorch's conventions at the poles (±0 gives ∓inf, negative integers NaN); reflection for x < 0,
// recurrence up to 10, then the asymptotic series (the CPU's digamma_scalar, step for step).
__device__ double digamma_positive(double x) {
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  double series = 0;
  if (x < 1e17) {
    const double z = 1 / (x * x);
    double poly = 8.33333333333333333333E-2;
    poly = poly * z - 2.10927960927960927961E-2;
    poly = poly * z + 7.57575757575757575758E-3;
    poly = poly * z - 4.16666666666666666667E-3;
    poly = poly * z + 3.96825396825396825397E-3;
    poly = poly * z - 8.33333333333333333333E-3;
    poly = poly * z + 8.33333333333333333333E-2;
    series = z * poly;
  }
  return result + log(x) - 0.5 / x - series;
}
struct Digamma {
  template <typename A> __device__ __forceinline__ double operator()(A v, const P3 &) const {
    const double x = double(v);
    if (x == 0) {  // copysign(inf, -x): -0.0 has the sign bit set
      const long long inf = 0x7ff0000000000000ll, neg_inf = (long long)0xfff0000000000000ull;
      return __longlong_as_double(__double_as_longlong(x) < 0 ? inf : neg_inf);
    }
    if (x < 0) {
      if (x == trunc(x)) return __longlong_as_double(0x7ff8000000000000ll);  // NaN; includes -inf
      const double frac = x - trunc(x);
      return digamma_positive(1 - x) - 3.14159265358979323846 / tan(3.14159265358979323846 * frac);
    }
    return digamma_positive(x);  // NaN stays NaN (x < 10 is false), +inf stays +inf
  }
};

#define TP_FLOAT_FAMILY(name, Op) TP_FOR_FLOATS(TP_MAP1, name, Op, TP_SAME_R)
TP_FLOAT_FAMILY(erfc, Erfc)
TP_FLOAT_FAMILY(erfinv, Erfinv)
TP_FLOAT_FAMILY(lgamma, Lgamma)
TP_FLOAT_FAMILY(digamma, Digamma)
TP_FLOAT_FAMILY(frac, Frac)
TP_FLOAT_FAMILY(nan_to_num, NanToNum)
TP_FLOAT_FAMILY(angle, Angle)
TP_FOR_REAL(TP_MAP1, square, Square, TP_SAME_R)
TP_FOR_REAL(TP_MAP1, sgn, Sgn, TP_SAME_R)
TP_FOR_FLOATS(TP_MAP1, isnan, IsNan, TP_BOOL_R)
TP_FOR_FLOATS(TP_MAP1, isinf, IsInf, TP_BOOL_R)
TP_FOR_FLOATS(TP_MAP1, isfinite, IsFinite, TP_BOOL_R)
TP_FOR_FLOATS(TP_MAP1, signbit, Signbit, TP_BOOL_R)
TP_MAP1(signbit, Signbit, int8, bool)
TP_MAP1(signbit, Signbit, int16, bool)
TP_MAP1(signbit, Signbit, int32, bool)
TP_MAP1(signbit, Signbit, int64, bool)
