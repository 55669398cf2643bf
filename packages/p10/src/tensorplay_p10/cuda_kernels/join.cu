// join.cu — cat: every (contiguous, same-dtype) input copied into the output in one launch.
//
// Where it sits: launched by csrc/cuda/ops_join.cpp, which fills a CatTable (its layout is the host's
// CatTable, byte for byte) with up to TP_CAT_MAX inputs. The output is viewed as [outer, out_row] with
// out_row = (its size along dim) * inner; input k as [outer, row[k]], landing at column col[k] of each output
// row. Elements move as units of U bytes (the kernel's suffix): the host picks the widest U, up to 16 bytes,
// that divides every row, column and pointer, so contiguous inputs travel as 16-byte loads and stores.
//
// Note [Blocks per input]
//   Blocks [first_block[k], first_block[k+1]) copy input k with a grid-stride loop of their own, so one
//   launch serves inputs of any sizes without a search per element: a block finds its input once.
#include "common.cuh"

typedef unsigned short uint16;
typedef unsigned int uint32;
typedef unsigned long long uint64;
struct alignas(16) uint128 { uint64 lo, hi; };

#define TP_CAT_MAX 32
struct CatTable {
  int64 count;    // inputs in this launch
  int64 out_row;  // units in one output row
  const void *src[TP_CAT_MAX];
  int64 row[TP_CAT_MAX];    // units in one row of input k
  int64 col[TP_CAT_MAX];    // where input k's row starts in an output row
  int64 numel[TP_CAT_MAX];  // units in input k
  int64 first_block[TP_CAT_MAX + 1];
};

template <typename T> __device__ void cat_copy(const CatTable &t, T *out) {
  const int64 b = blockIdx.x;
  int k = 0;
  while (k + 1 < t.count && t.first_block[k + 1] <= b) ++k;
  const T *src = static_cast<const T *>(t.src[k]);
  const int64 row = t.row[k], col = t.col[k], numel = t.numel[k], out_row = t.out_row;
  const int64 stride = (t.first_block[k + 1] - t.first_block[k]) * blockDim.x;
  for (int64 i = (b - t.first_block[k]) * blockDim.x + threadIdx.x; i < numel; i += stride) {
    const int64 r = i / row;
    out[r * out_row + col + (i - r * row)] = src[i];
  }
}
#define TP_CAT(N, T) \
  extern "C" __global__ void cat_b##N(CatTable t, T *out) { cat_copy(t, out); }
TP_CAT(1, uint8)
TP_CAT(2, uint16)
TP_CAT(4, uint32)
TP_CAT(8, uint64)
TP_CAT(16, uint128)
