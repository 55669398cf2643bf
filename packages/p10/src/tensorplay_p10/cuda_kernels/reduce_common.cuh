// reduce_common.cuh — the generic reduction machinery behind reduce_sums.cu, reduce_order.cu, reduce_stats.cu.
//
// Where it sits: included by those .cu files; the host side is csrc/cuda/reduce.h (ops_reduce_plan.cpp), which
// lays the input out as a contiguous [outer, red, inner] block and picks one of two kernels:
//   <op>_inner_<T>: inner == 1, each of `rows` rows is `cols` contiguous elements. One block per row (rows
//                   grid-strided), 16-byte vector loads, TP_RED_BATCH of them in flight per thread; a long row
//                   is split over gridDim.y blocks ("splits").
//   <op>_cols_<T>:  inner > 1, the reduced dim strides over `inner` contiguous columns. A block of 32 x 8
//                   threads takes 32 adjacent columns (coalesced loads), its 8 rows of threads split the reduced
//                   range and meet in shared memory; gridDim.y splits a long reduced range over blocks.
//   <op>_colsv_<T>: the same with 8, 4 or 2 adjacent columns per thread read as one 16-byte vector (2-, 4- and
//                   8-byte types, inner a multiple of the vector, an aligned input): a warp reads 512
//                   consecutive bytes of a row per load, the way a row reduction reads its row.
//   <op>_final_<T>: with splits > 1 both write one state per (output, split) to a workspace; this second pass
//                   folds each output's states (one warp per output) and finishes it. Two passes instead of
//                   atomics: the result does not depend on the order blocks finish in.
// An op is a struct (see reduce_sums.cu) with a state type S and
//   S init()                      the identity of merge;
//   S step(S s, T x, int64 idx)   fold one element (idx: its position in the reduced range, row-major; a
//                                 state sees its elements in increasing idx: Note [Steps in index order]);
//   S merge(S a, S b)             fold two states;
//   void finish(S s, int64 o, char *out0, char *out1)   write output o;
// and the members `p` (a double parameter: var's correction, norm's p) and `mode` (flags), set per launch.
//
// Note [One wave of blocks]
//   A reduction moves every byte once, so it runs at memory speed only while enough loads are in flight on every
//   SM, to the end. A block that starts in a second, nearly empty wave runs alone: its few hundred threads keep
//   a few tens of KB in flight, and it takes as long as a whole wave did. So the host (ops_reduce_plan.cpp)
//   splits a long reduction into at most as many blocks as are resident at once: the kernels declare
//   __launch_bounds__(threads, blocks per SM) below, which caps their registers so that this many blocks fit
//   on an SM whatever the op's state, and the host sizes the split to that count (for the row kernel, to the
//   count the driver reports for the kernel at hand, which may be more). Every block then starts at once and
//   they finish together; each thread keeps several 16-byte loads in flight so that the few blocks still
//   saturate HBM: the loops load a batch (TP_RED_BATCH vectors, or rows) into registers before folding any.
//   History, measured on the H200: the row loop once relied on `#pragma unroll 4` for that, but the compiler
//   kept each load next to its fold (seen in the SASS of sum and amax alike), so one 16-byte load was in
//   flight per thread. Speed then followed residency: amax (32 registers, 4 blocks of 512 per SM) ran at 3650 GB/s,
//   argmax and var (42-43 registers, 2 blocks per SM) at 0.74x and 0.84x PyTorch, and amax in one wave of 2
//   blocks per SM at 2950 GB/s. The explicit batch keeps 64 bytes per thread in flight at any residency.
#define TP_RED_INNER_THREADS 512
#define TP_RED_BATCH 4  // 16-byte vectors (row kernel; 2 for 1-byte types) or rows (column kernel) loaded
                        // before any of them is folded
#define TP_RED_INNER_BLOCKS_PER_SM 2  // at least; the host asks the driver for the real count (ops_reduce_plan.cpp)
#define TP_RED_COLS_BLOCKS_PER_SM 4   // kColsBlocksPerSm in ops_reduce_plan.cpp (blocks of 32 x 8 threads)
//
// Note [Merge order]
//   Threads take strided elements and trees of shuffles fold them, so states are merged in no fixed order: every
//   merge must be commutative as well as associative. Sums are (up to rounding); max/argmax break ties by the
//   smaller index, so "the FIRST index of the extreme" holds whatever the order (reduce_order.cu).
//
// Note [Steps in index order]
//   merge() sees states in any order, but step() does not: every loop below folds a thread's elements into its
//   state in increasing idx (a row: head, vector body, tail, each ascending; a column: ascending rows, and a
//   batch's elements in ascending idx). So a step may assume that every element already in the state came
//   earlier than x: argmax keeps the first maximum by taking x only when it is strictly larger, without
//   comparing indices (reduce_order.cu). A new loop must keep this order, or such ops break ties wrongly.
#pragma once
#include "common.cuh"

// The largest state any op uses: the host sizes the split workspace with it (kStateBytes in csrc/cuda/reduce.h).
#define TP_RED_STATE_BYTES 32

// A state moved down the warp word by word (every state is a plain struct of 4- and 8-byte fields).
template <typename S> __device__ __forceinline__ S shfl_down_state(S s, int offset) {
  static_assert(sizeof(S) % 4 == 0 && sizeof(S) <= TP_RED_STATE_BYTES, "reduction states are whole words");
  int *w = reinterpret_cast<int *>(&s);
#pragma unroll
  for (int k = 0; k < int(sizeof(S) / 4); ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], offset);
  return s;
}

template <typename Op, typename S> __device__ __forceinline__ S warp_reduce(const Op &op, S s) {
  for (int offset = 16; offset > 0; offset >>= 1) s = op.merge(s, shfl_down_state(s, offset));
  return s;
}

// The block's states folded into one (blockDim.x a multiple of 32, blockDim.y == 1); valid in thread 0.
template <typename Op, typename S> __device__ __forceinline__ S block_reduce(const Op &op, S s) {
  __shared__ S partial[32];
  __syncthreads();  // a previous row's readers are done before this one writes
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  s = warp_reduce(op, s);
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < nwarps ? partial[lane] : op.init();
    s = warp_reduce(op, s);
  }
  return s;
}

// 16 bytes of T: one vector load.
template <typename T> struct __align__(16) Vec16 { T v[16 / sizeof(T)]; };

// Fold N elements of one output into its state: x[k] sits at index idx + k * stride of the reduced range. By
// default one step each, in order; an op may overload fold_batch for a cheaper update of a whole batch (VarOp
// in reduce_stats.cu: Note [Welford in batches]). Found by argument-dependent lookup where the kernels are
// instantiated, so the overload may come after this header.
template <typename Op, typename T, int N>
__device__ __forceinline__ typename Op::S fold_batch(const Op &op, typename Op::S s, const T (&x)[N], int64 idx,
                                                     int64 stride) {
#pragma unroll
  for (int k = 0; k < N; ++k) s = op.step(s, x[k], idx + k * stride);
  return s;
}

// Fold G 16-byte vectors of one row into its state: vector g holds the elements at idx + g * stride + k, k <
// 16 / sizeof(T). By default one fold_batch per vector, in order; an op may overload it to fold all G * V
// elements as one batch (VarOp: one merge per 16 elements instead of per 4). Found by argument-dependent lookup,
// as fold_batch is.
template <typename Op, typename T, int G>
__device__ __forceinline__ typename Op::S fold_vectors(const Op &op, typename Op::S s, const Vec16<T> (&v)[G],
                                                       int64 idx, int64 stride) {
#pragma unroll
  for (int g = 0; g < G; ++g) s = fold_batch(op, s, v[g].v, idx + g * stride, 1);
  return s;
}

template <typename Op, typename T>
__device__ void reduce_inner(int64 rows, int64 cols, int splits, char *out0, char *out1, typename Op::S *ws,
                             const T *in, double p, int mode) {
  typedef typename Op::S S;
  Op op;
  op.p = p;
  op.mode = mode;
  const int V = 16 / sizeof(T);
  const int64 per = (cols + splits - 1) / splits;
  const int64 lo = int64(blockIdx.y) * per, hi = lo + per < cols ? lo + per : cols;
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *row = in + r * cols;
    S s = op.init();
    if (lo < hi) {
      // Scalar head up to a 16-byte boundary, vector body, scalar tail.
      const unsigned mis = unsigned(reinterpret_cast<unsigned long long>(row + lo) & 15);
      int64 body = lo + (mis ? int64((16 - mis) / sizeof(T)) : 0);
      if (body > hi) body = hi;
      for (int64 c = lo + threadIdx.x; c < body; c += blockDim.x) s = op.step(s, row[c], c);
      const int64 nvec = (hi - body) / V, bd = blockDim.x;
      const Vec16<T> *vp = reinterpret_cast<const Vec16<T> *>(row + body);
      constexpr int G = sizeof(T) == 1 ? 2 : TP_RED_BATCH;  // 1-byte types: 32 elements a batch, not 64
      int64 j = threadIdx.x;
      for (; j + (G - 1) * bd < nvec; j += G * bd) {  // Note [One wave of blocks]
        Vec16<T> v[G];
#pragma unroll
        for (int g = 0; g < G; ++g) v[g] = vp[j + g * bd];  // every load issued before any fold
        s = fold_vectors(op, s, v, body + j * V, bd * V);
      }
      for (; j < nvec; j += bd) {  // the thread's last < G vectors
        const Vec16<T> v = vp[j];
        s = fold_batch(op, s, v.v, body + j * V, 1);
      }
      for (int64 c = body + nvec * V + threadIdx.x; c < hi; c += blockDim.x) s = op.step(s, row[c], c);
    }
    s = block_reduce(op, s);
    if (threadIdx.x == 0) {
      if (splits == 1) op.finish(s, r, out0, out1);
      else ws[r * splits + blockIdx.y] = s;
    }
  }
}

// blockDim = (32, 8): threadIdx.x picks V adjacent columns, threadIdx.y a stride of the reduced range. V > 1
// (the _colsv_ kernels) reads the V columns as one 16-byte vector: the host launches them only when inner is a
// multiple of V and the input is 16-byte aligned, so every row of V columns is aligned too.
template <typename Op, typename T, int V>
__device__ void reduce_cols(int64 outer, int64 red, int64 inner, int splits, char *out0, char *out1,
                            typename Op::S *ws, const T *in, double p, int mode) {
  typedef typename Op::S S;
  __shared__ S part[8][32];
  Op op;
  op.p = p;
  op.mode = mode;
  const int64 itiles = (inner + 32 * V - 1) / (32 * V), tiles = outer * itiles;
  const int64 per = (red + splits - 1) / splits;
  const int64 lo = int64(blockIdx.y) * per, hi = lo + per < red ? lo + per : red;
  for (int64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64 o = t / itiles, i = (t % itiles) * 32 * V + int64(threadIdx.x) * V;
    S s[V];
#pragma unroll
    for (int k = 0; k < V; ++k) s[k] = op.init();
    if (i < inner) {
      // The pointer steps down blockDim.y rows at a time (no 64-bit multiply per row); four rows per step, so
      // each thread has four loads in flight (Note [One wave of blocks]).
      const int64 step = int64(blockDim.y) * inner;
      const T *p = in + (o * red + lo + threadIdx.y) * inner + i;
      if (V == 1) {
#pragma unroll 4
        for (int64 r = lo + threadIdx.y; r < hi; r += blockDim.y, p += step) s[0] = op.step(s[0], *p, r);
      } else {
        // G rows of V columns at a time: G vector loads in flight, then each column folds its G elements as
        // one batch (fold_batch), G rows of threads apart.
        const int G = TP_RED_BATCH;
        const int64 by = blockDim.y;
        int64 r = lo + threadIdx.y;
        for (; r + (G - 1) * by < hi; r += G * by, p += G * step) {
          Vec16<T> v[G];
#pragma unroll
          for (int g = 0; g < G; ++g) v[g] = *reinterpret_cast<const Vec16<T> *>(p + g * step);
#pragma unroll
          for (int k = 0; k < V; ++k) {
            T x[G];
#pragma unroll
            for (int g = 0; g < G; ++g) x[g] = v[g].v[k];
            s[k] = fold_batch(op, s[k], x, r, by);
          }
        }
        for (; r < hi; r += by, p += step) {  // the last < G rows of this thread
          const Vec16<T> v = *reinterpret_cast<const Vec16<T> *>(p);
#pragma unroll
          for (int k = 0; k < V; ++k) s[k] = op.step(s[k], v.v[k], r);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {  // the 8 rows of threads meet in shared memory, one column of V at a time
      __syncthreads();             // the previous round's readers are done
      part[threadIdx.y][threadIdx.x] = s[k];
      __syncthreads();
      if (threadIdx.y == 0 && i + k < inner) {
        S a = s[k];
        for (int q = 1; q < int(blockDim.y); ++q) a = op.merge(a, part[q][threadIdx.x]);
        const int64 out = o * inner + i + k;
        if (splits == 1) op.finish(a, out, out0, out1);
        else ws[out * splits + blockIdx.y] = a;
      }
    }
  }
}

// Columns per thread of the _colsv_ kernels: one 16-byte vector of 2-, 4- and 8-byte types (1: not used; 16
// one-byte columns would be 16 states per thread).
template <typename T> struct ColVec { enum { value = sizeof(T) >= 2 ? 16 / int(sizeof(T)) : 1 }; };

// One warp per output: fold its `splits` states, finish.
template <typename Op>
__device__ void reduce_final(int64 nout, int splits, char *out0, char *out1, const typename Op::S *ws, double p,
                             int mode) {
  typedef typename Op::S S;
  Op op;
  op.p = p;
  op.mode = mode;
  const int lane = threadIdx.x & 31;
  const int64 wpb = blockDim.x >> 5;
  for (int64 o = int64(blockIdx.x) * wpb + (threadIdx.x >> 5); o < nout; o += int64(gridDim.x) * wpb) {
    S s = op.init();
    for (int k = lane; k < splits; k += 32) s = op.merge(s, ws[o * splits + k]);
    s = warp_reduce(op, s);
    if (lane == 0) op.finish(s, o, out0, out1);
  }
}

// The three entry points of op `name` (template OpT<T>) for input dtype T.
#define TP_RED_INNER_BOUNDS __launch_bounds__(TP_RED_INNER_THREADS, TP_RED_INNER_BLOCKS_PER_SM)
#define TP_RED_COLS_BOUNDS __launch_bounds__(256, TP_RED_COLS_BLOCKS_PER_SM)
#define TP_REDUCE_KERNELS(name, OpT, T)                                                                      \
  extern "C" __global__ void TP_RED_INNER_BOUNDS name##_inner_##T(                                           \
      int64 rows, int64 cols, int splits, char *out0, char *out1, OpT<T>::S *ws, const T *in, double p,      \
      int mode) {                                                                                            \
    reduce_inner<OpT<T>, T>(rows, cols, splits, out0, out1, ws, in, p, mode);                                \
  }                                                                                                          \
  extern "C" __global__ void TP_RED_COLS_BOUNDS name##_cols_##T(int64 outer, int64 red, int64 inner,         \
                                                                int splits, char *out0, char *out1,          \
                                                                OpT<T>::S *ws, const T *in, double p,        \
                                                                int mode) {                                  \
    reduce_cols<OpT<T>, T, 1>(outer, red, inner, splits, out0, out1, ws, in, p, mode);                       \
  }                                                                                                          \
  extern "C" __global__ void TP_RED_COLS_BOUNDS name##_colsv_##T(int64 outer, int64 red, int64 inner,        \
                                                                 int splits, char *out0, char *out1,         \
                                                                 OpT<T>::S *ws, const T *in, double p,       \
                                                                 int mode) {                                 \
    reduce_cols<OpT<T>, T, ColVec<T>::value>(outer, red, inner, splits, out0, out1, ws, in, p, mode);        \
  }                                                                                                          \
  extern "C" __global__ void name##_final_##T(int64 nout, int splits, char *out0, char *out1,                \
                                              const OpT<T>::S *ws, double p, int mode) {                     \
    reduce_final<OpT<T>>(nout, splits, out0, out1, ws, p, mode);                                             \
  }

#define TP_REDUCE_FLOATS(name, OpT)                                                                          \
  TP_REDUCE_KERNELS(name, OpT, float16)                                                                      \
  TP_REDUCE_KERNELS(name, OpT, bfloat16) TP_REDUCE_KERNELS(name, OpT, float32) TP_REDUCE_KERNELS(name, OpT, float64)
#define TP_REDUCE_ALL(name, OpT)                                                                             \
  TP_REDUCE_KERNELS(name, OpT, bool)                                                                         \
  TP_REDUCE_KERNELS(name, OpT, uint8) TP_REDUCE_KERNELS(name, OpT, int8) TP_REDUCE_KERNELS(name, OpT, int16)  \
  TP_REDUCE_KERNELS(name, OpT, int32) TP_REDUCE_KERNELS(name, OpT, int64) TP_REDUCE_FLOATS(name, OpT)

// ---- shared numeric helpers ----------------------------------------------------------------------------------
// The accumulation type of sums and products: float32 for 16-bit floats and float32, float64 for float64, int64
// for integers and bool (sum of an integer tensor is int64, as in PyTorch).
template <typename T> struct SumAcc { typedef int64 type; };
template <> struct SumAcc<float16> { typedef float type; };
template <> struct SumAcc<bfloat16> { typedef float type; };
template <> struct SumAcc<float> { typedef float type; };
template <> struct SumAcc<double> { typedef double type; };
// What a plain sum writes: floats their own type, integers and bool int64.
template <typename T> struct SumOut { typedef int64 type; };
template <> struct SumOut<float16> { typedef float16 type; };
template <> struct SumOut<bfloat16> { typedef bfloat16 type; };
template <> struct SumOut<float> { typedef float type; };
template <> struct SumOut<double> { typedef double type; };

template <typename V> __device__ __forceinline__ bool is_nan(V v) { return v != v; }
__device__ __forceinline__ float inf_of(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double inf_of(double) { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ float nan_of(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double nan_of(double) { return __longlong_as_double(0x7ff8000000000000ll); }
