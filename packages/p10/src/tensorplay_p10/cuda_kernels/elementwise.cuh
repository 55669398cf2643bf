// elementwise.cuh — the loops and entry points of the elementwise kernel families with one, two or three
// inputs (unary_math.cu, activation.cu, binary_math.cu, ternary.cu), and the 16-byte vector loads they share
// with compare.cu.
//
// Where it sits: beside common.cuh, included by those .cu files; the host side is csrc/cuda/elementwise.cpp,
// which asks the CPU op on meta tensors for the result, casts the inputs to the compute dtype T and picks one
// of the forms below. Kernel names are <family>_<form>_<T>:
//   contig  (n, R *out, const T *a[, const T *b[, const T *c]], p0, p1, p2)  every operand contiguous, n items;
//   scalar  (n, R *out, const T *a, A b, int b_first, p0, p1, p2)            two inputs, one a number;
//   strided (n, Geometry g, R *out, const T *a[, const T *b[, const T *c]], p0, p1, p2)
// R is T or bool (a family's choice), A = OpMath<T>, p0..p2 are the op's numbers as doubles (each functor
// converts them, as the CPU's lambdas convert their double captures). In the three-input strided form, c is a
// contiguous tensor of the output's shape indexed by the linear output index (Geometry holds only 3 operands).
//
// A functor is `auto operator()(A x[, A y[, A z]], const P3 &p) const`; it may set `static constexpr bool raw
// = true` to receive the stored T itself (bit-level ops: signbit, nextafter of 16-bit floats).
#pragma once
#include "common.cuh"
#include "pointwise_math.cuh"  // m_exp, m_log, …: the float and double maths under one name

struct P3 {
  double p0, p1, p2;
};

template <typename X, typename Y> struct SameType { static constexpr bool value = false; };
template <typename X> struct SameType<X, X> { static constexpr bool value = true; };

// The functor's argument: the stored value as its opmath type, or the stored value itself for raw functors.
template <typename... X> struct VoidOf { typedef void type; };
template <typename Op, typename = void> struct IsRaw { static constexpr bool value = false; };
template <typename Op> struct IsRaw<Op, typename VoidOf<decltype(Op::raw)>::type> {
  static constexpr bool value = Op::raw;
};
template <typename Op, typename T> __device__ __forceinline__ auto arg(T v) {
  if constexpr (IsRaw<Op>::value) return v;
  else return load(v);
}
// The functor's value stored as R (passed through when it already is an R: raw results).
template <typename R, typename V> __device__ __forceinline__ R put(V v) {
  if constexpr (SameType<R, V>::value) return v;
  else return store<R>(v);
}

// An op's number (p0..p2) in the math type A. Integers go through int64 and wrap, as the CPU's conversion of a
// double to a narrow integer does there (a direct double -> uint8 conversion saturates on the device instead).
template <typename A> __device__ __forceinline__ A as(double v) {
  if constexpr (SameType<A, float>::value || SameType<A, double>::value) return A(v);
  else if constexpr (SameType<A, bool>::value) return v != 0.0;
  else return A((long long)v);
}

// ---- Note [16-byte packs] ----------------------------------------------------------------------------------
// A bandwidth-bound loop that moves one element per instruction leaves most of the memory system idle. On
// contiguous data each thread instead loads N = 16 / max(sizeof(T), sizeof(R)) elements of every input as one
// aligned vector (16 bytes for the widest type) and stores N results as one vector: 4 floats in, 4 bools out
// as one 32-bit store; 16 uint8 in, 16 bools out as one 16-byte store. The pack path runs only when every
// pointer is aligned to its pack size; the last n % N elements (and unaligned views) take the plain loop.
template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
template <typename T, typename R> struct PackWidth {
  static constexpr int bytes = sizeof(T) > sizeof(R) ? sizeof(T) : sizeof(R);
  static constexpr int value = 16 / bytes;
};
__device__ __forceinline__ bool aligned_to(const void *p, unsigned bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (bytes - 1)) == 0;
}

// ---- loops -------------------------------------------------------------------------------------------------
template <typename T, typename R, typename Op>
__device__ void map1_contig(int64 n, R *out, const T *a, const P3 &p) {
  constexpr int N = PackWidth<T, R>::value;
  const Op op;
  int64 done = 0;
  if (aligned_to(out, sizeof(R) * N) && aligned_to(a, sizeof(T) * N)) {
    const int64 packs = n / N;
    TP_GRID_STRIDE(i, packs) {
      const Pack<T, N> x = reinterpret_cast<const Pack<T, N> *>(a)[i];
      Pack<R, N> y;
#pragma unroll
      for (int k = 0; k < N; ++k) y.v[k] = put<R>(op(arg<Op>(x.v[k]), p));
      reinterpret_cast<Pack<R, N> *>(out)[i] = y;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) out[done + j] = put<R>(op(arg<Op>(a[done + j]), p));
}

template <typename T, typename R, typename Op>
__device__ void map1_strided(int64 n, const Geometry &g, R *out, const T *a, const P3 &p) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = put<R>(op(arg<Op>(a[off.o[1]]), p));
  }
}

template <typename T, typename R, typename Op>
__device__ void map2_contig(int64 n, R *out, const T *a, const T *b, const P3 &p) {
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
      for (int k = 0; k < N; ++k) z.v[k] = put<R>(op(arg<Op>(x.v[k]), arg<Op>(y.v[k]), p));
      reinterpret_cast<Pack<R, N> *>(out)[i] = z;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) {
    const int64 i = done + j;
    out[i] = put<R>(op(arg<Op>(a[i]), arg<Op>(b[i]), p));
  }
}

// One operand is a number `b` (already in the functor's argument type); b_first: it is the left operand.
template <typename T, typename R, typename Op, typename B>
__device__ void map2_scalar(int64 n, R *out, const T *a, B b, int b_first, const P3 &p) {
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
        for (int k = 0; k < N; ++k) z.v[k] = put<R>(op(b, arg<Op>(x.v[k]), p));
      } else {
#pragma unroll
        for (int k = 0; k < N; ++k) z.v[k] = put<R>(op(arg<Op>(x.v[k]), b, p));
      }
      reinterpret_cast<Pack<R, N> *>(out)[i] = z;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) {
    const int64 i = done + j;
    out[i] = b_first ? put<R>(op(b, arg<Op>(a[i]), p)) : put<R>(op(arg<Op>(a[i]), b, p));
  }
}

template <typename T, typename R, typename Op>
__device__ void map2_strided(int64 n, const Geometry &g, R *out, const T *a, const T *b, const P3 &p) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = put<R>(op(arg<Op>(a[off.o[1]]), arg<Op>(b[off.o[2]]), p));
  }
}

template <typename T, typename R, typename Op>
__device__ void map3_contig(int64 n, R *out, const T *a, const T *b, const T *c, const P3 &p) {
  constexpr int N = PackWidth<T, R>::value;
  const Op op;
  int64 done = 0;
  if (aligned_to(out, sizeof(R) * N) && aligned_to(a, sizeof(T) * N) && aligned_to(b, sizeof(T) * N) &&
      aligned_to(c, sizeof(T) * N)) {
    const int64 packs = n / N;
    TP_GRID_STRIDE(i, packs) {
      const Pack<T, N> x = reinterpret_cast<const Pack<T, N> *>(a)[i];
      const Pack<T, N> y = reinterpret_cast<const Pack<T, N> *>(b)[i];
      const Pack<T, N> w = reinterpret_cast<const Pack<T, N> *>(c)[i];
      Pack<R, N> z;
#pragma unroll
      for (int k = 0; k < N; ++k) z.v[k] = put<R>(op(arg<Op>(x.v[k]), arg<Op>(y.v[k]), arg<Op>(w.v[k]), p));
      reinterpret_cast<Pack<R, N> *>(out)[i] = z;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) {
    const int64 i = done + j;
    out[i] = put<R>(op(arg<Op>(a[i]), arg<Op>(b[i]), arg<Op>(c[i]), p));
  }
}

// c: contiguous, of the output's shape (linear index i).
template <typename T, typename R, typename Op>
__device__ void map3_strided(int64 n, const Geometry &g, R *out, const T *a, const T *b, const T *c, const P3 &p) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = put<R>(op(arg<Op>(a[off.o[1]]), arg<Op>(b[off.o[2]]), arg<Op>(c[i]), p));
  }
}

// ---- entry points: TP_MAPk(family, Functor, T, R) ----------------------------------------------------------
#define TP_P3 double p0, double p1, double p2
#define TP_MAKE_P3 const P3 p = {p0, p1, p2}
#define TP_MAP1(name, Op, T, R)                                                                             \
  extern "C" __global__ void name##_contig_##T(int64 n, R *out, const T *a, TP_P3) {                        \
    TP_MAKE_P3;                                                                                             \
    map1_contig<T, R, Op>(n, out, a, p);                                                                    \
  }                                                                                                         \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, R *out, const T *a, TP_P3) {           \
    TP_MAKE_P3;                                                                                             \
    map1_strided<T, R, Op>(n, g, out, a, p);                                                                \
  }
// The number of the scalar form arrives as OpMath<T> (raw functors: as T's opmath too, converted back).
#define TP_MAP2(name, Op, T, R)                                                                             \
  extern "C" __global__ void name##_contig_##T(int64 n, R *out, const T *a, const T *b, TP_P3) {            \
    TP_MAKE_P3;                                                                                             \
    map2_contig<T, R, Op>(n, out, a, b, p);                                                                 \
  }                                                                                                         \
  extern "C" __global__ void name##_scalar_##T(int64 n, R *out, const T *a, OpMath<T>::type b, int b_first, \
                                                TP_P3) {                                                    \
    TP_MAKE_P3;                                                                                             \
    if constexpr (IsRaw<Op>::value) map2_scalar<T, R, Op>(n, out, a, store<T>(b), b_first, p);              \
    else map2_scalar<T, R, Op>(n, out, a, b, b_first, p);                                                   \
  }                                                                                                         \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, R *out, const T *a, const T *b, TP_P3) { \
    TP_MAKE_P3;                                                                                             \
    map2_strided<T, R, Op>(n, g, out, a, b, p);                                                             \
  }
#define TP_MAP3(name, Op, T, R)                                                                             \
  extern "C" __global__ void name##_contig_##T(int64 n, R *out, const T *a, const T *b, const T *c, TP_P3) { \
    TP_MAKE_P3;                                                                                             \
    map3_contig<T, R, Op>(n, out, a, b, c, p);                                                              \
  }                                                                                                         \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, R *out, const T *a, const T *b,        \
                                                 const T *c, TP_P3) {                                       \
    TP_MAKE_P3;                                                                                             \
    map3_strided<T, R, Op>(n, g, out, a, b, c, p);                                                          \
  }

// Families over dtype lists; R_OF(T) is the stored result type (TP_SAME or TP_BOOL).
#define TP_SAME_R(T) T
#define TP_BOOL_R(T) bool
#define TP_FOR_FLOATS(M, name, Op, R_OF)                                                                    \
  M(name, Op, float32, R_OF(float32)) M(name, Op, float64, R_OF(float64)) M(name, Op, float16, R_OF(float16)) \
  M(name, Op, bfloat16, R_OF(bfloat16))
#define TP_FOR_INTS(M, name, Op, R_OF)                                                                      \
  M(name, Op, uint8, R_OF(uint8)) M(name, Op, int8, R_OF(int8)) M(name, Op, int16, R_OF(int16))               \
  M(name, Op, int32, R_OF(int32)) M(name, Op, int64, R_OF(int64))
#define TP_FOR_REAL(M, name, Op, R_OF)                                                                      \
  TP_FOR_FLOATS(M, name, Op, R_OF) TP_FOR_INTS(M, name, Op, R_OF)
#define TP_FOR_ALL(M, name, Op, R_OF) TP_FOR_REAL(M, name, Op, R_OF) M(name, Op, bool, R_OF(bool))
