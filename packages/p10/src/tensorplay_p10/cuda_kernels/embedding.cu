// embedding.cu — _embedding_bag on the GPU (sums, means or maxima of bags of embedding rows) and
// embedding_renorm_ (max_norm).
//
// Where it sits: launched by csrc/cuda/ops_embedding.cpp; the semantics are Note [Bags] in
// kernels/embedding_bag.cpp (padding rows skipped and not counted, empty bags give zeros, max_indices -1 for an
// empty bag in mode max, a NaN wins a max, 16-bit weights accumulate in float32). Three kernels:
//   embedding_bag_check:  every offset and index checked, a problem of each kind recorded (Note [Device index
//                         checks] in index.cu; the host explains it, see ops_embedding.cpp);
//   embedding_bag_offset2bag: the bag of each index (-1 for indices after the last offset);
//   embedding_bag_<T>:   one block per bag, threads across the embedding dim, rows read with the weight's
//                        strides;
//   embedding_renorm_mark / embedding_renorm_<T>: see below.
#include "common.cuh"

typedef unsigned long long uint64;

__device__ __forceinline__ void record(uint64 *slot, int64 v) { record_bad(slot, v); }  // common.cuh

// err: four (flag, value) slots: 0 an index out of [0, num), 1 offsets[0] != 0, 2 an offset > n, 3 a decrease.
extern "C" __global__ void embedding_bag_check(int64 n, const int64 *idx, int64 num, int64 noff, const int64 *off,
                                               uint64 *err) {
  TP_GRID_STRIDE(i, n > noff ? n : noff) {
    if (i < n && (idx[i] < 0 || idx[i] >= num)) record(err, idx[i]);
    if (i < noff) {
      if (i == 0 && off[0] != 0) record(err + 2, off[0]);
      if (off[i] > n) record(err + 4, i);
      if (i > 0 && off[i] < off[i - 1]) record(err + 6, i);
    }
  }
}

// o2b[i] = the last bag b < nbags with off[b] <= i, or -1 when i is past the end of that bag (an index after
// the extra last offset of include_last_offset). `off` is non-decreasing and starts at 0 (checked).
extern "C" __global__ void embedding_bag_offset2bag(int64 n, const int64 *off, int64 noff, int64 nbags, int64 *o2b) {
  TP_GRID_STRIDE(i, n) {
    int64 lo = 0, hi = nbags - 1;
    while (lo < hi) {
      const int64 mid = (lo + hi + 1) / 2;
      if (off[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    const int64 end = lo + 1 < noff ? off[lo + 1] : n;
    o2b[i] = (nbags > 0 && off[lo] <= i && i < end) ? lo : -1;
  }
}

template <typename T>
__device__ void embedding_bag(int64 nbags, int64 n, int64 noff, int64 D, const T *w, int64 rs, int64 cs,
                              const int64 *idx, const int64 *off, const T *psw, int mode, int64 pad, T *out,
                              int64 *bag_size, int64 *max_indices) {
  typedef typename OpMath<T>::type M;
  for (int64 b = blockIdx.x; b < nbags; b += gridDim.x) {
    const int64 start = off[b], end = b + 1 < noff ? off[b + 1] : n;
    for (int64 d = threadIdx.x; d < D; d += blockDim.x) {
      M acc = M(0);
      int64 taken = 0, arg = -1;
      for (int64 i = start; i < end; ++i) {
        const int64 r = idx[i];
        if (r == pad) continue;
        const M x = load(w[r * rs + d * cs]);
        if (mode == 2) {
          if (taken == 0 || x > acc || (x != x && acc == acc)) acc = x, arg = r;
        } else {
          acc += psw ? load(psw[i]) * x : x;
        }
        ++taken;
      }
      const M div = (mode == 1 && taken > 0) ? M(taken) : M(1);
      out[b * D + d] = store<T>(acc / div);
      if (mode == 2) max_indices[b * D + d] = arg;
      if (d == 0) bag_size[b] = taken;
    }
    if (D == 0 && threadIdx.x == 0) {  // no columns: the bag's size still counts its rows
      int64 taken = 0;
      for (int64 i = start; i < end; ++i) taken += idx[i] != pad;
      bag_size[b] = taken;
    }
  }
}
#define TP_EMBEDDING_BAG(T)                                                                                 \
  extern "C" __global__ void embedding_bag_##T(int64 nbags, int64 n, int64 noff, int64 D, const T *w, int64 rs, \
                                               int64 cs, const int64 *idx, const int64 *off, const T *psw,  \
                                               int mode, int64 pad, T *out, int64 *bag_size,                \
                                               int64 *max_indices) {                                        \
    embedding_bag(nbags, n, noff, D, w, rs, cs, idx, off, psw, mode, pad, out, bag_size, max_indices);      \
  }
TP_EMBEDDING_BAG(float16)
TP_EMBEDDING_BAG(bfloat16)
TP_EMBEDDING_BAG(float32)
TP_EMBEDDING_BAG(float64)

// ---- embedding_renorm_ (max_norm) --------------------------------------------------------------------------
// Pass 1 marks each row an index picks (a row picked twice is still scaled once); pass 2 gives each marked row
// a block, which takes its norm_type-norm (1, 2, inf or any p; float32 for 16-bit rows) and, where it exceeds
// max_norm, scales the row by max_norm / (norm + 1e-7) (PyTorch's formula).
extern "C" __global__ void embedding_renorm_mark(int64 n, const int64 *idx, int64 num, int *marked, uint64 *err) {
  TP_GRID_STRIDE(i, n) {
    if (idx[i] < 0 || idx[i] >= num) record(err, idx[i]);
    else marked[idx[i]] = 1;
  }
}

template <typename A> __device__ __forceinline__ A block_reduce(A v, bool is_max) {
  __shared__ A partial[32];
  __shared__ A result;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  for (int o = 16; o > 0; o >>= 1) {
    const A y = __shfl_down_sync(0xffffffffu, v, o);
    v = is_max ? (y > v ? y : v) : v + y;
  }
  __syncthreads();  // a previous call's readers of `result` are done
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? partial[lane] : A(0);
    for (int o = 16; o > 0; o >>= 1) {
      const A y = __shfl_down_sync(0xffffffffu, v, o);
      v = is_max ? (y > v ? y : v) : v + y;
    }
    if (lane == 0) result = v;
  }
  __syncthreads();
  return result;
}

template <typename T>
__device__ void embedding_renorm(int64 num, int64 D, T *w, int64 rs, int64 cs, const int *marked, double max_norm,
                                 double norm_type) {
  typedef typename OpMath<T>::type M;
  const bool is_max = norm_type == 1.0 / 0.0;
  for (int64 r = blockIdx.x; r < num; r += gridDim.x) {
    if (!marked[r]) continue;  // the whole block skips together
    T *row = w + r * rs;
    M acc = M(0);
    for (int64 d = threadIdx.x; d < D; d += blockDim.x) {
      const M a = fabs(load(row[d * cs]));
      if (norm_type == 1.0) acc += a;
      else if (norm_type == 2.0) acc += a * a;
      else if (is_max) acc = a > acc ? a : acc;
      else acc += M(pow(a, M(norm_type)));
    }
    M norm = block_reduce<M>(acc, is_max);
    if (norm_type == 2.0) norm = sqrt(norm);
    else if (norm_type != 1.0 && !is_max) norm = M(pow(norm, M(1.0 / norm_type)));
    if (norm > M(max_norm)) {
      const M scale = M(max_norm) / (norm + M(1e-7));
      for (int64 d = threadIdx.x; d < D; d += blockDim.x) row[d * cs] = store<T>(load(row[d * cs]) * scale);
    }
  }
}
#define TP_EMBEDDING_RENORM(T)                                                                              \
  extern "C" __global__ void embedding_renorm_##T(int64 num, int64 D, T *w, int64 rs, int64 cs, const int *marked, \
                                                  double max_norm, double norm_type) {                      \
    embedding_renorm(num, D, w, rs, cs, marked, max_norm, norm_type);                                       \
  }
TP_EMBEDDING_RENORM(float16)
TP_EMBEDDING_RENORM(bfloat16)
TP_EMBEDDING_RENORM(float32)
TP_EMBEDDING_RENORM(float64)
