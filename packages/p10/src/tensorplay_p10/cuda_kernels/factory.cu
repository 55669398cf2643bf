// factory.cu — tensors from nothing on the GPU: arange, linspace, logspace, eye.
//
// Where it sits: launched by csrc/cuda/ops_factory.cpp after the CPU op, asked on the meta device, has
// checked the arguments and chosen the dtype and length. The formulas are the CPU's (kernels/factory.cpp),
// with explicitly rounded multiplies and adds (__dmul_rn, __fadd_rn, ...): NVRTC would otherwise fuse
// `a + step * i` into one FMA and round differently from the CPU.
#include "common.cuh"

template <typename T> struct IsFloat { static const bool value = false; };
template <> struct IsFloat<float16> { static const bool value = true; };
template <> struct IsFloat<bfloat16> { static const bool value = true; };
template <> struct IsFloat<float32> { static const bool value = true; };
template <> struct IsFloat<float64> { static const bool value = true; };

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }

// arange: integers (all of start, end, step integers, integer dtype) as start + i * step in int64; anything
// else as start + i * step in double, then cast.
template <typename T>
__device__ void arange(int64 n, T *out, int64 start_i, int64 step_i, double start, double step, int int_mode) {
  TP_GRID_STRIDE(i, n) {
    if (int_mode) out[i] = store<T>(int64((unsigned long long)start_i + (unsigned long long)i * (unsigned long long)step_i));
    else out[i] = store<T>(add_rn(start, mul_rn(double(i), step)));
  }
}

// linspace: floats step up from start for the first half and down from end for the second (so both ends are
// exact), in T's arithmetic type; integers truncate a + step * i computed in double.
template <typename T> __device__ void linspace(int64 steps, T *out, double a, double b) {
  typedef typename OpMath<T>::type M;
  if (steps == 1) {
    TP_GRID_STRIDE(i, steps) out[i] = store<T>(a);
    return;
  }
  if constexpr (IsFloat<T>::value) {
    const M step = (M(b) - M(a)) / M(steps - 1);
    const int64 half = steps / 2;
    TP_GRID_STRIDE(i, steps) {
      const M v = i < half ? add_rn(M(a), mul_rn(step, M(i))) : sub_rn(M(b), mul_rn(step, M(steps - i - 1)));
      out[i] = store<T>(v);
    }
  } else {
    const double step = (b - a) / double(steps - 1);
    TP_GRID_STRIDE(i, steps) out[i] = store<T>(int64(add_rn(a, mul_rn(step, double(i)))));
  }
}

// logspace: base ** x with x as linspace computes it in double (first half up from start, second down from end).
template <typename T> __device__ void logspace(int64 steps, T *out, double a, double b, double base) {
  if (steps == 1) {
    TP_GRID_STRIDE(i, steps) out[i] = store<T>(pow(base, a));
    return;
  }
  const double step = (b - a) / double(steps - 1);
  const int64 half = steps / 2;
  TP_GRID_STRIDE(i, steps) {
    const double x = i < half ? add_rn(a, mul_rn(step, double(i))) : sub_rn(b, mul_rn(step, double(steps - i - 1)));
    out[i] = store<T>(pow(base, x));
  }
}

#define TP_FACTORY(T)                                                                                       \
  extern "C" __global__ void arange_##T(int64 n, T *out, int64 start_i, int64 step_i, double start,         \
                                        double step, int int_mode) {                                        \
    arange(n, out, start_i, step_i, start, step, int_mode);                                                 \
  }                                                                                                         \
  extern "C" __global__ void linspace_##T(int64 steps, T *out, double a, double b) { linspace(steps, out, a, b); } \
  extern "C" __global__ void logspace_##T(int64 steps, T *out, double a, double b, double base) {           \
    logspace(steps, out, a, b, base);                                                                       \
  }
TP_FACTORY(uint8)
TP_FACTORY(int8)
TP_FACTORY(int16)
TP_FACTORY(int32)
TP_FACTORY(int64)
TP_FACTORY(float16)
TP_FACTORY(bfloat16)
TP_FACTORY(float32)
TP_FACTORY(float64)

// eye: out[r, c] = one where r == c, zero elsewhere ([rows, cols] contiguous); `one` is 1 in the dtype's bits.
typedef unsigned short uint16;
typedef unsigned int uint32;
typedef unsigned long long uint64;
template <typename T> __device__ void eye(int64 rows, int64 cols, T *out, T one) {
  TP_GRID_STRIDE(i, rows * cols) out[i] = (i / cols == i % cols) ? one : T(0);
}
#define TP_EYE(N, T) \
  extern "C" __global__ void eye_b##N(int64 rows, int64 cols, T *out, T one) { eye(rows, cols, out, one); }
TP_EYE(1, uint8)
TP_EYE(2, uint16)
TP_EYE(4, uint32)
TP_EYE(8, uint64)
