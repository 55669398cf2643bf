// reduce.cu — sum on the device, with warp-shuffle reductions.
//
// Where it sits: launched by csrc/cuda/ops_reduce.cpp, which first lays the input out as a contiguous
// [rows, cols] matrix whose rows are the groups to sum (the reduced dims moved last). Two strategies:
//   sum_rows_<T>:    one block per row (rows >= a few hundred, or short rows);
//   sum_partial_<T> + sum_final_<T>: a whole grid on one long row (a full reduction such as x.sum()): every
//                    block sums a grid-stride slice into a partial, then one block sums the partials. Two
//                    passes instead of atomics: the result does not depend on the order blocks finish in.
// Accumulation is in Acc<T>: float32 for float16/bfloat16/float32, float64 for float64, int64 for integers and
// bool (sum of an integer tensor is int64, as in PyTorch). The output is Out<T>: T for floats, int64 otherwise.
#include "common.cuh"

template <typename T> struct Acc { typedef int64 type; typedef int64 out; };
template <> struct Acc<float16> { typedef float type; typedef float16 out; };
template <> struct Acc<bfloat16> { typedef float type; typedef bfloat16 out; };
template <> struct Acc<float> { typedef float type; typedef float out; };
template <> struct Acc<double> { typedef double type; typedef double out; };

template <typename T> __device__ __forceinline__ typename Acc<T>::type acc_load(T v) {
  return typename Acc<T>::type(load(v));
}

// One block per row, rows grid-strided over blocks.
template <typename T>
__device__ void sum_rows(int64 rows, int64 cols, typename Acc<T>::out *out, const T *in) {
  typedef typename Acc<T>::type A;
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *row = in + r * cols;
    A s = A(0);
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) s += acc_load(row[c]);
    s = block_sum(s);
    if (threadIdx.x == 0) out[r] = store<typename Acc<T>::out>(s);
  }
}

// Pass 1 of a long row: each block writes the sum of its grid-stride slice to partial[blockIdx.x].
template <typename T> __device__ void sum_partial(int64 n, typename Acc<T>::type *partial, const T *in) {
  typedef typename Acc<T>::type A;
  A s = A(0);
  TP_GRID_STRIDE(i, n) s += acc_load(in[i]);
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Note [Vectorised loads] (binary.cu): float32 reads float4s when the input is 16-byte aligned.
__device__ void sum_partial_f32(int64 n, float *partial, const float *in) {
  float s = 0.f;
  if ((reinterpret_cast<unsigned long long>(in) & 15) == 0) {
    const int64 n4 = n / 4;
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    TP_GRID_STRIDE(i, n4) {
      const float4 v = in4[i];
      s += (v.x + v.y) + (v.z + v.w);
    }
    TP_GRID_STRIDE(j, n - 4 * n4) s += in[4 * n4 + j];
  } else {
    TP_GRID_STRIDE(i, n) s += in[i];
  }
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Pass 2: one block sums the partials into out[0].
template <typename T>
__device__ void sum_final(int nparts, typename Acc<T>::out *out, const typename Acc<T>::type *partial) {
  typedef typename Acc<T>::type A;
  A s = A(0);
  for (int i = threadIdx.x; i < nparts; i += blockDim.x) s += partial[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = store<typename Acc<T>::out>(s);
}

#define TP_SUM(T)                                                                                            \
  extern "C" __global__ void sum_rows_##T(int64 rows, int64 cols, Acc<T>::out *out, const T *in) {           \
    sum_rows<T>(rows, cols, out, in);                                                                        \
  }                                                                                                          \
  extern "C" __global__ void sum_final_##T(int nparts, Acc<T>::out *out, const Acc<T>::type *partial) {      \
    sum_final<T>(nparts, out, partial);                                                                      \
  }
#define TP_SUM_PARTIAL(T)                                                                                    \
  extern "C" __global__ void sum_partial_##T(int64 n, Acc<T>::type *partial, const T *in) {                  \
    sum_partial<T>(n, partial, in);                                                                          \
  }
TP_SUM(bool) TP_SUM(uint8) TP_SUM(int8) TP_SUM(int16) TP_SUM(int32) TP_SUM(int64)
TP_SUM(float16) TP_SUM(bfloat16) TP_SUM(float32) TP_SUM(float64)
TP_SUM_PARTIAL(bool) TP_SUM_PARTIAL(uint8) TP_SUM_PARTIAL(int8) TP_SUM_PARTIAL(int16) TP_SUM_PARTIAL(int32)
TP_SUM_PARTIAL(int64) TP_SUM_PARTIAL(float16) TP_SUM_PARTIAL(bfloat16) TP_SUM_PARTIAL(float64)
extern "C" __global__ void sum_partial_float32(int64 n, float *partial, const float *in) {
  sum_partial_f32(n, partial, in);
}
