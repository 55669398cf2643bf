// embedding.cu — _embedding_bag on the GPU: sums, means or maxima of bags of embedding rows.
//
// Where it sits: launched by csrc/cuda/ops_embedding.cpp; the semantics are Note [Bags] in
// kernels/embedding_bag.cpp (padding rows skipped and not counted, empty bags give zeros, max_indices -1 for an
// empty bag in mode max, a NaN wins a max, 16-bit weights accumulate in float32). Three kernels:
//   embedding_bag_check:  every offset and index checked, the first problem of each kind recorded
//                         (Note [Device index checks] in index.cu; the host explains it, see ops_embedding.cpp);
//   embedding_bag_offset2bag: the bag of each index (-1 for indices after the last offset);
//   embedding_bag_<T>:   one block per bag, threads across the embedding dim, rows read with the weight's
//                        strides.
#include "common.cuh"

typedef unsigned long long uint64;

__device__ __forceinline__ void record(uint64 *slot, int64 v) {
  if (atomicCAS(slot, 0ull, 1ull) == 0ull) slot[1] = (uint64)v;
}

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
