// softmax.cu — softmax and log_softmax over the rows of a contiguous [rows, cols] matrix.
//
// Where it sits: launched by csrc/cuda/ops_softmax.cpp, which moves the softmax dim last (a contiguous copy
// when it is not already) so that every kernel here sees rows. Per row, three steps over its elements:
//   m = max x;  s = sum e^(x - m);  y = e^(x - m) / s   (log_softmax: y = x - m - log s).
// Subtracting the max keeps e^ from overflowing; accumulation is in Acc<T> (float32 for float16/bfloat16 and
// float32, float64 for float64), the result is stored as T. Kernel names: <op>_<form>_<vec|scalar>_<T>:
//   warp8, warp32: one warp per row, the row in registers (8 or 32 elements a lane: cols <= 256 or 1024);
//   block16:       one block per row, the row in registers (16 elements a thread, blockDim.x <= 512, so
//                  cols <= 8192) — Note [Register rows] in rows_common.cuh;
//   vec / scalar:  16-byte packs (host-checked alignment) or single elements.
// and <op>_long_<T> for longer rows: one block per row, the row cached in dynamic shared memory when the host
// passes `cached` (cols * sizeof(Acc) bytes), read again from global memory otherwise.
//
// Note [Softmax one read]
//   Softmax is bandwidth-bound: it must read the row once and write it once. The register forms load the row
//   into registers with 16-byte loads and never touch memory again until the store; their only waits are the
//   two reductions (max, sum). Many rows are in flight per SM (a warp per short row, one 64..1024-thread block
//   per longer row), which hides the reductions' latency. softmax_long is the plain reference the others are
//   tested against (test_cuda_softmax.py runs rows of every length through both paths).
// Reductions end with every thread holding the result (xor shuffles), so the row's steps need no broadcast.
#include "rows_common.cuh"

// The register forms (Note [Softmax one read]). Warp: a warp per row; otherwise a block per row.
template <typename T, bool Log, int EPT, int VEC, bool Warp>
__device__ void softmax_regs(int64 rows, int64 cols, T *out, const T *in) {
  typedef typename Acc<T>::type A;
  const RowGroup<Warp> g;
  for (int64 r = g.first; r < rows; r += g.step) {  // the whole group has the same r: reductions are uniform
    A v[EPT];
    load_row<EPT, VEC>(v, in + r * cols, cols, g.t, g.G, neg_inf(A(0)));
    A m = v[0];
#pragma unroll
    for (int j = 1; j < EPT; ++j) m = MaxOp()(m, v[j]);
    m = group_all<Warp, MaxOp>(m);
    A s = A(0);
#pragma unroll
    for (int j = 0; j < EPT; ++j) {
      if (!in_row<VEC>(j, g.t, g.G, cols)) continue;  // padding slots: e^(-inf - m) is 0, but NaN when m = -inf
      v[j] -= m;
      if (Log) {
        s += m_exp(v[j]);
      } else {
        v[j] = m_exp(v[j]);
        s += v[j];
      }
    }
    s = group_all<Warp, SumOp>(s);
    if (Log) {
      const A ls = m_log(s);
#pragma unroll
      for (int j = 0; j < EPT; ++j) v[j] -= ls;
    } else {
      const A inv = A(1) / s;
#pragma unroll
      for (int j = 0; j < EPT; ++j) v[j] *= inv;
    }
    store_row<EPT, VEC>(out + r * cols, v, cols, g.t, g.G);
  }
}

template <typename T, bool Log>
__device__ void softmax_long(int64 rows, int64 cols, T *out, const T *in, int cached) {
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

// 16-byte packs: 8 float16/bfloat16, 4 float32, 2 float64. BOUNDS: the block form's thread cap (cuda/rows.h,
// Note [Row kernel registers] in norm.cu).
#define TP_SOFTMAX_FORM(op, Log, T, form, EPT, VEC, WARP, pack, BOUNDS)                         \
  extern "C" __global__ void __launch_bounds__(BOUNDS)                                        \
      op##_##form##_##pack##_##T(int64 rows, int64 cols, T *out, const T *in) {               \
    softmax_regs<T, Log, EPT, VEC, WARP>(rows, cols, out, in);                                \
  }
#define TP_SOFTMAX_REGS(op, Log, T, VEC)                                                      \
  TP_SOFTMAX_FORM(op, Log, T, warp8, 8, VEC, true, vec, 128)                                  \
  TP_SOFTMAX_FORM(op, Log, T, warp32, 32, VEC, true, vec, 128)                                \
  TP_SOFTMAX_FORM(op, Log, T, block16, 16, VEC, false, vec, 512)                              \
  TP_SOFTMAX_FORM(op, Log, T, warp8, 8, 1, true, scalar, 128)                                 \
  TP_SOFTMAX_FORM(op, Log, T, warp32, 32, 1, true, scalar, 128)                               \
  TP_SOFTMAX_FORM(op, Log, T, block16, 16, 1, false, scalar, 512)                             \
  extern "C" __global__ void __launch_bounds__(512)                                           \
      op##_long_##T(int64 rows, int64 cols, T *out, const T *in, int cached) {                \
    softmax_long<T, Log>(rows, cols, out, in, cached);                                        \
  }
#define TP_SOFTMAX(T, VEC)              \
  TP_SOFTMAX_REGS(softmax, false, T, VEC) \
  TP_SOFTMAX_REGS(log_softmax, true, T, VEC)
TP_SOFTMAX(float16, 8)
TP_SOFTMAX(bfloat16, 8)
TP_SOFTMAX(float32, 4)
TP_SOFTMAX(float64, 2)
