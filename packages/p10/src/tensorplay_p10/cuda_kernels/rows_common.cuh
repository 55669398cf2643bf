// rows_common.cuh — what the row kernels (softmax.cu, norm.cu, cross_entropy.cu, loss.cu) share: the
// accumulator type, math in it, reductions that leave the result in every thread, and a row held in registers.
//
// Where it sits: included by those .cu files beside common.cuh. Their host sides (csrc/cuda/ops_softmax.cpp,
// ops_norm.cpp, ops_cross_entropy.cpp, ops_loss.cpp) lay the data out as rows of a contiguous [rows, cols]
// matrix and pick, per call, how many threads share a row (Note [Register rows]).
#pragma once
#include "common.cuh"

// The type sums run in: float32 for float16/bfloat16/float32, float64 for float64.
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float m_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double m_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double m_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float m_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double m_abs(double x) { return fabs(x); }
__device__ __forceinline__ float neg_inf(float) { return -__int_as_float(0x7f800000); }
__device__ __forceinline__ double neg_inf(double) { return -__longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ float quiet_nan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double quiet_nan(double) { return __longlong_as_double(0x7ff8000000000000ll); }

struct MaxOp {
  // A NaN is not carried by the max: it reaches the sums through e^(NaN - m), which makes the whole row NaN.
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

// The reduction over the G threads that share a row: G == 32 (a warp per row) or G == blockDim.x.
template <bool Warp, typename Op, typename A> __device__ __forceinline__ A group_all(A v) {
  return Warp ? warp_all<Op>(v) : block_all<Op>(v);
}

// ---- Note [Register rows] ----------------------------------------------------------------------------------
// A row of `cols` elements is shared by G threads (a warp, or a whole block); each thread holds up to EPT of
// them in registers, so the row is read from global memory once and every later step (max, sum, normalise,
// store) works on registers. The elements are taken in packs of VEC: pack p of thread t starts at column
// (p * G + t) * VEC, so a warp's loads of one pack are 32 * VEC consecutive elements (coalesced). VEC > 1 loads
// a pack as one 16-byte access (Note [Vectorised loads] in binary.cu): the host picks it only when every row
// pointer is 16-byte aligned, i.e. the base pointers are and cols % VEC == 0, so a pack is either wholly inside
// the row or wholly past its end. Slots past the end hold `fill` and must be masked by the caller (in_row).
// Loops over the EPT slots are fully unrolled, so the arrays stay in registers. Column offsets are 32-bit
// (register rows hold at most a few thousand elements), which saves ptxas a register pair per pack.
// Aligned to its size, so a 16-byte pack is one ld.global.v4 / st.global.v4 (a VEC = 1 pack is one element).
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) Pack { T v[VEC]; };

template <typename T, int VEC> __device__ __forceinline__ Pack<T, VEC> load_pack(const T *p) {
  return *reinterpret_cast<const Pack<T, VEC> *>(p);
}
// A 16-byte pack is stored with an explicit st.global.v4: left to itself, NVVM splits some of an unrolled
// row's pack stores into four scalar ones.
template <typename T, int VEC> __device__ __forceinline__ void store_pack(T *p, const Pack<T, VEC> &k) {
  if constexpr (sizeof(T) * VEC == 16) {
    union { Pack<T, VEC> k; unsigned w[4]; } c;
    c.k = k;
    asm volatile("st.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(c.w[0]), "r"(c.w[1]), "r"(c.w[2]),
                 "r"(c.w[3]) : "memory");
  } else {
    *reinterpret_cast<Pack<T, VEC> *>(p) = k;
  }
}

// The column of slot j (j = p * VEC + i) of thread t when G threads share the row.
template <int VEC> __device__ __forceinline__ int slot_col(int j, int t, int G) {
  return ((j / VEC) * G + t) * VEC + j % VEC;
}

// v[j] = x[slot_col(j)] as A, or `fill` past the row's end.
template <int EPT, int VEC, typename T, typename A>
__device__ __forceinline__ void load_row(A (&v)[EPT], const T *x, int64 cols, int t, int G, A fill) {
#pragma unroll
  for (int p = 0; p < EPT / VEC; ++p) {
    const int c = (p * G + t) * VEC;
    if (c < cols) {
      const Pack<T, VEC> k = load_pack<T, VEC>(x + c);
#pragma unroll
      for (int i = 0; i < VEC; ++i) v[p * VEC + i] = A(load(k.v[i]));
    } else {
#pragma unroll
      for (int i = 0; i < VEC; ++i) v[p * VEC + i] = fill;
    }
  }
}

// y[slot_col(j)] = v[j] stored as T, for the slots inside the row.
template <int EPT, int VEC, typename T, typename A>
__device__ __forceinline__ void store_row(T *y, const A (&v)[EPT], int64 cols, int t, int G) {
#pragma unroll
  for (int p = 0; p < EPT / VEC; ++p) {
    const int c = (p * G + t) * VEC;
    if (c < cols) {
      Pack<T, VEC> k;
#pragma unroll
      for (int i = 0; i < VEC; ++i) k.v[i] = store<T>(v[p * VEC + i]);
      store_pack<T, VEC>(y + c, k);
    }
  }
}

// Is slot j of thread t inside the row?
template <int VEC> __device__ __forceinline__ bool in_row(int j, int t, int G, int64 cols) {
  return slot_col<VEC>(j, t, G) < cols;
}

// The row a thread group works on first, the step to its next row, and the thread's index in its group:
// Warp: blockDim.x / 32 rows per block, one per warp; otherwise one row per block.
template <bool Warp> struct RowGroup {
  int64 first, step;
  int t, G;
  __device__ __forceinline__ RowGroup() {
    if (Warp) {
      const int64 warps = blockDim.x >> 5;
      first = int64(blockIdx.x) * warps + (threadIdx.x >> 5);
      step = int64(gridDim.x) * warps;
      t = threadIdx.x & 31;
      G = 32;
    } else {
      first = blockIdx.x;
      step = gridDim.x;
      t = threadIdx.x;
      G = blockDim.x;
    }
  }
};
