// softmax.cu — softmax and log_softmax over the rows of a contiguous [rows, cols] matrix.
//
// Where it sits: launched by csrc/cuda/ops_softmax.cpp, which moves the softmax dim last (a contiguous copy
// when it is not already) so that every kernel here sees rows. Per row, three steps over its elements:
//   m = max x;  s = sum e^(x - m);  y = e^(x - m) / s   (log_softmax: y = x - m - log s).
// Subtracting the max keeps e^ from overflowing; accumulation is in Acc<T> (float32 for float16/bfloat16 and
// float32, float64 for float64), the result is stored as T. Two kernels:
//   softmax_warp_<T> / log_softmax_warp_<T>:   one warp per row (cols <= 1024), 32-lane shuffles only;
//   softmax_block_<T> / log_softmax_block_<T>: one block per row, warp shuffles then shared memory; when the
//                                              host passes `cached` the row is read from global memory once,
//                                              into dynamic shared memory (cols * sizeof(Acc) bytes), and the
//                                              two later steps read it there.
// Reductions end with every thread holding the result (xor shuffles), so the row's steps need no broadcast.
#include "common.cuh"

template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float neg_inf(float) { return -__int_as_float(0x7f800000); }
__device__ __forceinline__ double neg_inf(double) { return -__longlong_as_double(0x7ff0000000000000ll); }

struct MaxOp {
  // A NaN is not carried by the max: it reaches the sum through e^(NaN - m), which makes the whole row NaN.
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return a > b ? a : b; }
};
struct SumOp {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// Every lane of the warp ends with the reduction of all 32 lanes' values.
template <typename Op, typename A> __device__ __forceinline__ A warp_all(A v) {
  const Op op;
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of the block (blockDim.x a multiple of 32) ends with the reduction of all threads' values; all
// threads combine the warp totals in the same order, so they agree bit for bit.
template <typename Op, typename A> __device__ __forceinline__ A block_all(A v) {
  __shared__ A totals[32];
  const Op op;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_all<Op>(v);
  __syncthreads();  // the previous call's readers are done before this call writes
  if (lane == 0) totals[warp] = v;
  __syncthreads();
  A r = totals[0];
  for (int w = 1; w < nwarps; ++w) r = op(r, totals[w]);
  return r;
}

template <typename T, bool Log>
__device__ void softmax_warp(int64 rows, int64 cols, T *out, const T *in) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const int64 warps = blockDim.x >> 5;
  // every lane of a warp has the same r, so the shuffles below always run on full warps
  for (int64 r = int64(blockIdx.x) * warps + (threadIdx.x >> 5); r < rows; r += int64(gridDim.x) * warps) {
    const T *x = in + r * cols;
    T *y = out + r * cols;
    A m = neg_inf(A(0));
    for (int64 c = lane; c < cols; c += 32) m = MaxOp()(m, A(load(x[c])));
    m = warp_all<MaxOp>(m);
    A s = A(0);
    for (int64 c = lane; c < cols; c += 32) s += m_exp(A(load(x[c])) - m);
    s = warp_all<SumOp>(s);
    if (Log) {
      const A ls = m_log(s);
      for (int64 c = lane; c < cols; c += 32) y[c] = store<T>(A(load(x[c])) - m - ls);
    } else {
      const A inv = A(1) / s;
      for (int64 c = lane; c < cols; c += 32) y[c] = store<T>(m_exp(A(load(x[c])) - m) * inv);
    }
  }
}

template <typename T, bool Log>
__device__ void softmax_block(int64 rows, int64 cols, T *out, const T *in, int cached) {
  typedef typename Acc<T>::type A;
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  A *row = reinterpret_cast<A *>(dynamic_smem);
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * cols;
    T *y = out + r * cols;
    A m = neg_inf(A(0));
    if (cached) {
      // each thread reads back only the elements it writes (the same c in every loop): no barrier is needed
      for (int64 c = threadIdx.x; c < cols; c += blockDim.x) {
        const A v = A(load(x[c]));
        row[c] = v;
        m = MaxOp()(m, v);
      }
    } else {
      for (int64 c = threadIdx.x; c < cols; c += blockDim.x) m = MaxOp()(m, A(load(x[c])));
    }
    m = block_all<MaxOp>(m);
    A s = A(0);
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) s += m_exp((cached ? row[c] : A(load(x[c]))) - m);
    s = block_all<SumOp>(s);
    if (Log) {
      const A ls = m_log(s);
      for (int64 c = threadIdx.x; c < cols; c += blockDim.x)
        y[c] = store<T>((cached ? row[c] : A(load(x[c]))) - m - ls);
    } else {
      const A inv = A(1) / s;
      for (int64 c = threadIdx.x; c < cols; c += blockDim.x)
        y[c] = store<T>(m_exp((cached ? row[c] : A(load(x[c]))) - m) * inv);
    }
  }
}

#define TP_SOFTMAX(T)                                                                                       \
  extern "C" __global__ void softmax_warp_##T(int64 rows, int64 cols, T *out, const T *in) {                \
    softmax_warp<T, false>(rows, cols, out, in);                                                            \
  }                                                                                                         \
  extern "C" __global__ void log_softmax_warp_##T(int64 rows, int64 cols, T *out, const T *in) {            \
    softmax_warp<T, true>(rows, cols, out, in);                                                             \
  }                                                                                                         \
  extern "C" __global__ void softmax_block_##T(int64 rows, int64 cols, T *out, const T *in, int cached) {   \
    softmax_block<T, false>(rows, cols, out, in, cached);                                                   \
  }                                                                                                         \
  extern "C" __global__ void log_softmax_block_##T(int64 rows, int64 cols, T *out, const T *in, int cached) { \
    softmax_block<T, true>(rows, cols, out, in, cached);                                                    \
  }
TP_SOFTMAX(float16)
TP_SOFTMAX(bfloat16)
TP_SOFTMAX(float32)
TP_SOFTMAX(float64)
