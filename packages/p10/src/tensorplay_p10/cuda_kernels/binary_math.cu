// binary_math.cu — elementwise functions of two tensors beyond binary.cu's and compare.cu's: true_divide,
// floor_divide (also div's rounding_mode='floor'), trunc_divide (rounding_mode='trunc'), remainder, fmod, float_power, atan2, hypot, copysign, logaddexp, logaddexp2, xlogy, fmax,
// fmin, nextafter; and any_zero, the scan behind "ZeroDivisionError" for integer division.
//
// Where it sits: launched by csrc/cuda/ops_binary_special.cpp through csrc/cuda/elementwise.cpp, which has
// asked the CPU op (kernels/binary.cpp, binary_special.cpp) on meta tensors for the result, promoted the
// operands to its compute dtype T and chosen the contig, scalar or strided form (elementwise.cuh). Each
// functor is the CPU op's scalar lambda, in OpMath<T> (float32 for float16/bfloat16).
#include "elementwise.cuh"

template <typename A> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };
template <> struct IsFloat<double> { static constexpr bool value = true; };
template <typename A> struct IsSigned { static constexpr bool value = A(-1) < A(0); };
template <typename T> struct UnsignedOf { typedef T type; };
template <> struct UnsignedOf<int8> { typedef unsigned char type; };
template <> struct UnsignedOf<int16> { typedef unsigned short type; };
template <> struct UnsignedOf<int32> { typedef unsigned int type; };
template <> struct UnsignedOf<int64> { typedef unsigned long long type; };
template <typename A> __device__ __forceinline__ bool m_isinf(A x) { return x == A(1) / A(0) || x == A(-1) / A(0); }

#define TP_FN2(Name, expr)                                                                                  \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const { return expr; } \
  };

TP_FN2(TrueDivide, a / b)

// ---- floor division and remainders (kernels/binary.cpp; integer zero divisors were refused on the host) ----
struct FloorDivide {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if constexpr (IsFloat<A>::value) {  // floor_div_float: Python's floor division, to the nearest integer
      if (b == A(0)) return a / b;
      const A mod = m_fmod(a, b);
      A div = (a - mod) / b;
      if (mod != A(0) && (b < A(0)) != (mod < A(0))) div -= A(1);
      if (div == A(0)) return m_copysign(A(0), a / b);
      A fl = m_floor(div);
      if (div - fl > A(0.5)) fl += A(1);
      return fl;
    } else if constexpr (IsSigned<A>::value) {  // b = -1: negate in unsigned arithmetic (MIN / -1 wraps)
      typedef typename UnsignedOf<A>::type U;
      if (b == A(-1)) return A(U(U(0) - U(a)));
      A q = A(a / b);
      if ((a % b != 0) && ((a < A(0)) != (b < A(0)))) --q;
      return q;
    } else {
      return A(a / b);
    }
  }
};

// div(rounding_mode='trunc'): the quotient rounded toward zero (kernels/binary.cpp trunc_div_int).
struct TruncDivide {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if constexpr (IsFloat<A>::value) {
      return m_trunc(a / b);
    } else if constexpr (IsSigned<A>::value) {
      typedef typename UnsignedOf<A>::type U;
      if (b == A(-1)) return A(U(U(0) - U(a)));
      return A(a / b);
    } else {
      return A(a / b);
    }
  }
};

// remainder is Python's `%` (the divisor's sign); fmod is C's (the dividend's sign).
struct Remainder {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if constexpr (IsFloat<A>::value) {
      A mod = m_fmod(a, b);
      if (mod != A(0) && ((b < A(0)) != (mod < A(0)))) mod += b;
      return mod;
    } else if constexpr (IsSigned<A>::value) {
      if (b == A(-1)) return A(0);  // MIN % -1 would trap
      A r = A(a % b);
      if (r != 0 && ((r < A(0)) != (b < A(0)))) r = A(r + b);
      return r;
    } else {
      return A(a % b);
    }
  }
};
struct Fmod {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if constexpr (IsFloat<A>::value) return m_fmod(a, b);
    else return b == A(-1) ? A(0) : A(a % b);  // as the CPU op, for every integer dtype
  }
};

// ---- float functions of two arguments ----------------------------------------------------------------------
TP_FN2(FloatPower, pow(a, b))  // double only: float_power computes in float64 whatever the inputs
TP_FN2(Atan2, m_atan2(a, b))
TP_FN2(Hypot, m_hypot(a, b))
TP_FN2(Copysign, m_copysign(a, b))
// log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities would give inf - inf. m is std::max's
// answer (a unless a < b), so a NaN anywhere still ends in NaN through |a - b|.
struct Logaddexp {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if (m_isinf(a) && a == b) return a;
    const A m = a < b ? b : a;
    return m != m ? m : A(m + m_log1p(m_exp(-m_fabs(a - b))));
  }
};
struct Logaddexp2 {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if (m_isinf(a) && a == b) return a;
    const A m = a < b ? b : a;
    return m != m ? m : A(m + m_log1p(m_exp2(-m_fabs(a - b))) * A(1.4426950408889634));
  }
};
// x log(y), with 0 log(anything but NaN) = 0.
struct Xlogy {
  template <typename A> __device__ __forceinline__ A operator()(A x, A y, const P3 &) const {
    if (y != y) return y;
    if (x == A(0)) return A(0);
    return A(x * m_log(y));
  }
};
// fmax / fmin: NaN loses; integers and bool by comparison (bool: or / and).
struct Fmax {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if constexpr (IsFloat<A>::value) return m_fmax(a, b);
    else return a > b ? a : b;
  }
};
struct Fmin {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    if constexpr (IsFloat<A>::value) return m_fmin(a, b);
    else return a < b ? a : b;
  }
};

// nextafter steps in the storage type (a float32 neighbour is not a float64 one): raw values. The 16-bit
// floats are sign-magnitude like float32, so the neighbour is one step of the bit pattern (nextafter16).
template <typename H> __device__ __forceinline__ H nextafter16(H from, H to) {
  const float f = load(from), t = load(to);
  if (f != f || t != t) return store<H>(f + t);  // a quiet NaN
  if (f == t) return to;
  H r;
  if (f == 0.f) {  // the smallest subnormal, with the sign of the direction
    r.bits = (unsigned short)((t < 0.f ? 0x8000u : 0u) | 1u);
    return r;
  }
  r.bits = (unsigned short)((f < t) == (f > 0.f) ? from.bits + 1 : from.bits - 1);
  return r;
}
struct Nextafter {
  static constexpr bool raw = true;
  __device__ __forceinline__ float operator()(float a, float b, const P3 &) const { return nextafterf(a, b); }
  __device__ __forceinline__ double operator()(double a, double b, const P3 &) const { return nextafter(a, b); }
  __device__ __forceinline__ float16 operator()(float16 a, float16 b, const P3 &) const { return nextafter16(a, b); }
  __device__ __forceinline__ bfloat16 operator()(bfloat16 a, bfloat16 b, const P3 &) const {
    return nextafter16(a, b);
  }
};

#define TP_FLOAT2(name, Op) TP_FOR_FLOATS(TP_MAP2, name, Op, TP_SAME_R)
#define TP_REAL2(name, Op) TP_FOR_REAL(TP_MAP2, name, Op, TP_SAME_R)
TP_FLOAT2(true_divide, TrueDivide)
TP_REAL2(floor_divide, FloorDivide)
TP_REAL2(trunc_divide, TruncDivide)
TP_REAL2(remainder, Remainder)
TP_REAL2(fmod, Fmod)
TP_MAP2(float_power, FloatPower, float64, float64)
TP_FLOAT2(atan2, Atan2)
TP_FLOAT2(hypot, Hypot)
TP_FLOAT2(copysign, Copysign)
TP_FLOAT2(logaddexp, Logaddexp)
TP_FLOAT2(logaddexp2, Logaddexp2)
TP_FLOAT2(xlogy, Xlogy)
TP_FOR_ALL(TP_MAP2, fmax, Fmax, TP_SAME_R)
TP_FOR_ALL(TP_MAP2, fmin, Fmin, TP_SAME_R)
TP_FLOAT2(nextafter, Nextafter)

// ---- any_zero_<T>(n, g, x, flag): *flag = 1 when some element of x (operand 0 of g) is zero ---------------
// Every thread that finds one stores the same 1, so no atomics are needed; the host zeroes flag first and
// reads it back once.
template <typename T> __device__ void any_zero(int64 n, const Geometry &g, const T *x, int *flag) {
  TP_GRID_STRIDE(i, n) {
    if (x[offsets(g, i).o[0]] == T(0)) *flag = 1;
  }
}
#define TP_ANY_ZERO(T)                                                                                      \
  extern "C" __global__ void any_zero_##T(int64 n, Geometry g, const T *x, int *flag) { any_zero<T>(n, g, x, flag); }
TP_ANY_ZERO(uint8) TP_ANY_ZERO(int8) TP_ANY_ZERO(int16) TP_ANY_ZERO(int32) TP_ANY_ZERO(int64)
