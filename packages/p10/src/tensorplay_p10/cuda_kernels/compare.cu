// compare.cu — elementwise functions of two tensors beyond add/sub/mul/div: the comparisons eq, ne, lt, le,
// gt, ge (bool results), maximum, minimum, pow, and where (a third, bool, operand).
//
// Where it sits: launched by csrc/cuda/ops_compare.cpp, which has already asked the CPU op (on meta tensors)
// for the result, promoted the operands to one dtype T and chosen one of three forms, as binary.cu does:
//   <op>_contig_<T>(n, out, a, b):              out, a, b contiguous with n elements;
//   <op>_scalar_<T>(n, out, a, b, b_first):     out and a contiguous, b one number (`x > 0`, `x ** 2`);
//   <op>_strided_<T>(n, g, out, a, b):          anything else (Note [Kernel geometry]).
// Comparisons write bool; the others write T. Arithmetic runs in OpMath<T> (float32 for 16-bit floats).
// where_<form>_<T> reads its condition as a contiguous bool tensor of the output's shape (the host broadcasts
// it), indexed by the linear output index, which Geometry's index order matches.
// The contig and scalar forms (and where's contig form) move 16-byte packs: Note [16-byte packs] in
// elementwise.cuh (4 floats in, 4 bools out as one 32-bit store); the strided forms stay one element a thread.
#include "elementwise.cuh"

// ---- comparisons: bool f(A a, A b) -------------------------------------------------------------------------
#define TP_CMP_FN(Name, expr)                                                                               \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ bool operator()(A a, A b) const { return expr; }       \
  };
TP_CMP_FN(Eq, a == b)
TP_CMP_FN(Ne, a != b)
TP_CMP_FN(Lt, a < b)
TP_CMP_FN(Le, a <= b)
TP_CMP_FN(Gt, a > b)
TP_CMP_FN(Ge, a >= b)

// ---- maximum / minimum: NaN in either operand gives NaN (x != x only for NaN; never for integers) ----------
struct Max {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const {
    return a != a ? a : (b != b ? b : (a > b ? a : b));
  }
};
struct Min {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const {
    return a != a ? a : (b != b ? b : (a < b ? a : b));
  }
};

// ---- pow ---------------------------------------------------------------------------------------------------
// Integers: repeated squaring in unsigned 64-bit arithmetic (wrapping is defined there; truncating to T keeps
// the same low bits the CPU's narrower unsigned product has). Negative exponents: 1 for base 1, ±1 for base
// -1, 0 otherwise (kernels/binary_special.cpp powi).
template <typename T> __device__ __forceinline__ T powi(T base, T exp) {
  if (exp < T(0)) {
    if (base == T(1)) return T(1);
    if (base == T(-1)) return (exp % 2) ? T(-1) : T(1);
    return T(0);
  }
  unsigned long long result = 1ull, b = (unsigned long long)(long long)base;
  for (T e = exp; e != T(0); e = T(e / 2)) {
    if (e & 1) result *= b;
    b *= b;
  }
  return T(result);
}
__device__ __forceinline__ float fpow(float a, float b) { return b == 2.f ? a * a : (b == 0.5f ? sqrtf(a) : powf(a, b)); }
__device__ __forceinline__ double fpow(double a, double b) { return b == 2.0 ? a * a : (b == 0.5 ? sqrt(a) : pow(a, b)); }
struct Pow {
  __device__ __forceinline__ float operator()(float a, float b) const { return fpow(a, b); }
  __device__ __forceinline__ double operator()(double a, double b) const { return fpow(a, b); }
  // bool ** number: a ** 1 = a, a ** 0 = 1 (the CPU takes only a number exponent for bool)
  __device__ __forceinline__ bool operator()(bool a, bool b) const { return a || !b; }
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return powi(a, b); }
};

// ---- loops: R is the stored result type (bool or T) --------------------------------------------------------
template <typename T, typename R, typename Op>
__device__ void pair_contig(int64 n, R *out, const T *a, const T *b) {
  constexpr int N = PackWidth<T, R>::value;
  const Op op;
  int64 done = 0;
  if (aligned_to(out, sizeof(R) * N) && aligned_to(a, sizeof(T) * N) && aligned_to(b, sizeof(T) * N)) {
    const int64 packs = n / N;
    TP_GRID_STRIDE(i, packs) {
      const Pack<T, N> x = reinterpret_cast<const Pack<T, N> *>(a)[i];
      const Pack<T, N> y = reinterpret_cast<const Pack<T, N> *>(b)[i];
      Pack<R, N> z;
#pragma unroll
      for (int k = 0; k < N; ++k) z.v[k] = store<R>(op(load(x.v[k]), load(y.v[k])));
      reinterpret_cast<Pack<R, N> *>(out)[i] = z;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) out[done + j] = store<R>(op(load(a[done + j]), load(b[done + j])));
}

template <typename T, typename R, typename Op, typename A>
__device__ void pair_scalar(int64 n, R *out, const T *a, A b, int b_first) {
  constexpr int N = PackWidth<T, R>::value;
  const Op op;
  int64 done = 0;
  if (aligned_to(out, sizeof(R) * N) && aligned_to(a, sizeof(T) * N)) {
    const int64 packs = n / N;
    TP_GRID_STRIDE(i, packs) {
      const Pack<T, N> x = reinterpret_cast<const Pack<T, N> *>(a)[i];
      Pack<R, N> z;
      if (b_first) {
#pragma unroll
        for (int k = 0; k < N; ++k) z.v[k] = store<R>(op(b, load(x.v[k])));
      } else {
#pragma unroll
        for (int k = 0; k < N; ++k) z.v[k] = store<R>(op(load(x.v[k]), b));
      }
      reinterpret_cast<Pack<R, N> *>(out)[i] = z;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) {
    const int64 i = done + j;
    out[i] = b_first ? store<R>(op(b, load(a[i]))) : store<R>(op(load(a[i]), b));
  }
}

template <typename T, typename R, typename Op>
__device__ void pair_strided(int64 n, const Geometry &g, R *out, const T *a, const T *b) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = store<R>(op(load(a[off.o[1]]), load(b[off.o[2]])));
  }
}

#define TP_PAIR(name, Op, T, R)                                                                             \
  extern "C" __global__ void name##_contig_##T(int64 n, R *out, const T *a, const T *b) {                   \
    pair_contig<T, R, Op>(n, out, a, b);                                                                    \
  }                                                                                                         \
  extern "C" __global__ void name##_scalar_##T(int64 n, R *out, const T *a, OpMath<T>::type b, int b_first) { \
    pair_scalar<T, R, Op>(n, out, a, b, b_first);                                                           \
  }                                                                                                         \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, R *out, const T *a, const T *b) {      \
    pair_strided<T, R, Op>(n, g, out, a, b);                                                                \
  }
// every real dtype and bool; comparisons write bool, the rest their own dtype
#define TP_PAIR_ALL(name, Op, R)                                                                            \
  TP_PAIR(name, Op, bool, R(bool)) TP_PAIR(name, Op, uint8, R(uint8)) TP_PAIR(name, Op, int8, R(int8))       \
  TP_PAIR(name, Op, int16, R(int16)) TP_PAIR(name, Op, int32, R(int32)) TP_PAIR(name, Op, int64, R(int64))   \
  TP_PAIR(name, Op, float16, R(float16)) TP_PAIR(name, Op, bfloat16, R(bfloat16))                           \
  TP_PAIR(name, Op, float32, R(float32)) TP_PAIR(name, Op, float64, R(float64))
#define TP_TO_BOOL(T) bool
#define TP_SAME(T) T

TP_PAIR_ALL(eq, Eq, TP_TO_BOOL)
TP_PAIR_ALL(ne, Ne, TP_TO_BOOL)
TP_PAIR_ALL(lt, Lt, TP_TO_BOOL)
TP_PAIR_ALL(le, Le, TP_TO_BOOL)
TP_PAIR_ALL(gt, Gt, TP_TO_BOOL)
TP_PAIR_ALL(ge, Ge, TP_TO_BOOL)
TP_PAIR_ALL(maximum, Max, TP_SAME)
TP_PAIR_ALL(minimum, Min, TP_SAME)
TP_PAIR_ALL(pow, Pow, TP_SAME)

// ---- where(cond, a, b) -------------------------------------------------------------------------------------
template <typename T> __device__ void where_contig(int64 n, T *out, const bool *cond, const T *a, const T *b) {
  constexpr int N = 16 / sizeof(T);
  int64 done = 0;
  if (aligned_to(out, 16) && aligned_to(a, 16) && aligned_to(b, 16) && aligned_to(cond, N)) {
    const int64 packs = n / N;
    TP_GRID_STRIDE(i, packs) {
      const Pack<bool, N> c = reinterpret_cast<const Pack<bool, N> *>(cond)[i];
      const Pack<T, N> x = reinterpret_cast<const Pack<T, N> *>(a)[i];
      const Pack<T, N> y = reinterpret_cast<const Pack<T, N> *>(b)[i];
      Pack<T, N> z;
#pragma unroll
      for (int k = 0; k < N; ++k) z.v[k] = c.v[k] ? x.v[k] : y.v[k];
      reinterpret_cast<Pack<T, N> *>(out)[i] = z;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) out[done + j] = cond[done + j] ? a[done + j] : b[done + j];
}
template <typename T>
__device__ void where_strided(int64 n, const Geometry &g, T *out, const bool *cond, const T *a, const T *b) {
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = cond[i] ? a[off.o[1]] : b[off.o[2]];
  }
}
#define TP_WHERE(T)                                                                                         \
  extern "C" __global__ void where_contig_##T(int64 n, T *out, const bool *cond, const T *a, const T *b) {  \
    where_contig<T>(n, out, cond, a, b);                                                                    \
  }                                                                                                         \
  extern "C" __global__ void where_strided_##T(int64 n, Geometry g, T *out, const bool *cond, const T *a,   \
                                                const T *b) {                                               \
    where_strided<T>(n, g, out, cond, a, b);                                                                \
  }
TP_WHERE(bool) TP_WHERE(uint8) TP_WHERE(int8) TP_WHERE(int16) TP_WHERE(int32) TP_WHERE(int64)
TP_WHERE(float16) TP_WHERE(bfloat16) TP_WHERE(float32) TP_WHERE(float64)
