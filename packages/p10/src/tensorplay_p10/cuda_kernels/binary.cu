// binary.cu — elementwise add, sub, mul and div on the device.
//
// Where it sits: launched by csrc/cuda/ops_binary.cpp, which has already broadcast the operands, promoted
// them to one dtype T (PyTorch's rules, shared with the CPU kernels) and chosen one of three forms:
//   <op>_contig_<T>:  out, a, b all contiguous with n elements (the hot path);
//   <op>_scalar_<T>:  out and a contiguous, b a single value passed by value (x * 2);
//   <op>_strided_<T>: anything else, through Geometry (Note [Kernel geometry] in common.cuh).
// sub is add with alpha negated on the host. Arithmetic runs in OpMath<T> (float32 for 16-bit floats).
//
// Note [Bool arithmetic]
//   bool tensors add and multiply as PyTorch's: the same functors in bool arithmetic, whose int result is stored
//   as (v != 0), so add is a || (alpha && b) (logical or for alpha = True or 1) and mul is a && b. bool - bool
//   is refused on the host (the CPU op's error), and true division promotes bool to a float dtype first.
//
// Note [Vectorised loads]
//   A thread that loads one float at a time issues four times as many memory instructions as one that loads
//   a float4 (16 bytes). When every pointer is 16-byte aligned the float32 forms walk float4s, and the last
//   n % 4 elements one by one. The plain loop (binary_contig) is the reference it is tested against.
#include "common.cuh"

struct Add {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, A alpha) const { return a + alpha * b; }
};
struct Mul {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, A) const { return a * b; }
};
struct Div {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, A) const { return a / b; }
};

template <typename T, typename Op, typename A>
__device__ void binary_contig(int64 n, T *out, const T *a, const T *b, A alpha) {
  const Op op;
  TP_GRID_STRIDE(i, n) out[i] = store<T>(op(load(a[i]), load(b[i]), alpha));
}

template <typename T, typename Op, typename A>
__device__ void binary_scalar(int64 n, T *out, const T *a, A b, A alpha, int scalar_first) {
  const Op op;
  if (scalar_first) TP_GRID_STRIDE(i, n) out[i] = store<T>(op(b, load(a[i]), alpha));
  else TP_GRID_STRIDE(i, n) out[i] = store<T>(op(load(a[i]), b, alpha));
}

template <typename T, typename Op, typename A>
__device__ void binary_strided(int64 n, const Geometry &g, T *out, const T *a, const T *b, A alpha) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = store<T>(op(load(a[off.o[1]]), load(b[off.o[2]]), alpha));
  }
}

// Note [Vectorised loads]: float32, all pointers 16-byte aligned.
__device__ __forceinline__ bool aligned16(const void *p) { return (reinterpret_cast<unsigned long long>(p) & 15) == 0; }

template <typename Op>
__device__ void binary_contig_f32(int64 n, float *out, const float *a, const float *b, float alpha) {
  if (!(aligned16(out) && aligned16(a) && aligned16(b))) return binary_contig<float, Op>(n, out, a, b, alpha);
  const Op op;
  const int64 n4 = n / 4;
  const float4 *a4 = reinterpret_cast<const float4 *>(a), *b4 = reinterpret_cast<const float4 *>(b);
  float4 *o4 = reinterpret_cast<float4 *>(out);
  TP_GRID_STRIDE(i, n4) {
    const float4 x = a4[i], y = b4[i];
    o4[i] = make_float4(op(x.x, y.x, alpha), op(x.y, y.y, alpha), op(x.z, y.z, alpha), op(x.w, y.w, alpha));
  }
  TP_GRID_STRIDE(j, n - 4 * n4) out[4 * n4 + j] = op(a[4 * n4 + j], b[4 * n4 + j], alpha);
}

template <typename Op>
__device__ void binary_scalar_f32(int64 n, float *out, const float *a, float b, float alpha, int scalar_first) {
  if (!(aligned16(out) && aligned16(a))) return binary_scalar<float, Op>(n, out, a, b, alpha, scalar_first);
  const Op op;
  const int64 n4 = n / 4;
  const float4 *a4 = reinterpret_cast<const float4 *>(a);
  float4 *o4 = reinterpret_cast<float4 *>(out);
  TP_GRID_STRIDE(i, n4) {
    const float4 x = a4[i];
    o4[i] = scalar_first
                ? make_float4(op(b, x.x, alpha), op(b, x.y, alpha), op(b, x.z, alpha), op(b, x.w, alpha))
                : make_float4(op(x.x, b, alpha), op(x.y, b, alpha), op(x.z, b, alpha), op(x.w, b, alpha));
  }
  TP_GRID_STRIDE(j, n - 4 * n4) {
    const float x = a[4 * n4 + j];
    out[4 * n4 + j] = scalar_first ? op(b, x, alpha) : op(x, b, alpha);
  }
}

// Entry points. The generic forms serve every dtype; float32's contiguous forms take the float4 path.
#define TP_BINARY_GENERIC(name, Op, T)                                                                          \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, T *out, const T *a, const T *b,            \
                                                 OpMath<T>::type alpha) {                                       \
    binary_strided<T, Op>(n, g, out, a, b, alpha);                                                              \
  }
#define TP_BINARY_CONTIG(name, Op, T)                                                                           \
  extern "C" __global__ void name##_contig_##T(int64 n, T *out, const T *a, const T *b, OpMath<T>::type alpha) { \
    binary_contig<T, Op>(n, out, a, b, alpha);                                                                  \
  }                                                                                                             \
  extern "C" __global__ void name##_scalar_##T(int64 n, T *out, const T *a, OpMath<T>::type b,                  \
                                                OpMath<T>::type alpha, int scalar_first) {                      \
    binary_scalar<T, Op>(n, out, a, b, alpha, scalar_first);                                                    \
  }
#define TP_BINARY_F32(name, Op)                                                                                 \
  extern "C" __global__ void name##_contig_float32(int64 n, float *out, const float *a, const float *b,         \
                                                    float alpha) {                                              \
    binary_contig_f32<Op>(n, out, a, b, alpha);                                                                 \
  }                                                                                                             \
  extern "C" __global__ void name##_scalar_float32(int64 n, float *out, const float *a, float b, float alpha,   \
                                                    int scalar_first) {                                         \
    binary_scalar_f32<Op>(n, out, a, b, alpha, scalar_first);                                                   \
  }                                                                                                             \
  TP_BINARY_GENERIC(name, Op, float32)
#define TP_BINARY_OTHER(name, Op, T) TP_BINARY_CONTIG(name, Op, T) TP_BINARY_GENERIC(name, Op, T)
#define TP_BINARY_FLOATS(name, Op)                                                                              \
  TP_BINARY_F32(name, Op) TP_BINARY_OTHER(name, Op, float64) TP_BINARY_OTHER(name, Op, float16)                 \
  TP_BINARY_OTHER(name, Op, bfloat16)
#define TP_BINARY_INTS(name, Op)                                                                                \
  TP_BINARY_OTHER(name, Op, uint8) TP_BINARY_OTHER(name, Op, int8) TP_BINARY_OTHER(name, Op, int16)             \
  TP_BINARY_OTHER(name, Op, int32) TP_BINARY_OTHER(name, Op, int64)

TP_BINARY_FLOATS(add, Add)
TP_BINARY_INTS(add, Add)
TP_BINARY_FLOATS(mul, Mul)
TP_BINARY_INTS(mul, Mul)
TP_BINARY_OTHER(add, Add, bool)
TP_BINARY_OTHER(mul, Mul, bool)
TP_BINARY_FLOATS(div, Div)  // true division: integer operands are promoted to a float dtype on the host
