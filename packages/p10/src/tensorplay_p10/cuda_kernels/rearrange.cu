// rearrange.cu — tril / triu: keep one triangle of the last two dims, zero the rest.
//
// Where it sits: launched by csrc/cuda/ops_rearrange.cpp. The other rearranging ops there (flip, repeat,
// repeat_interleave) are copies from strided views or gathers, so they run on copy.cu and index.cu. Zero is
// all-zero bits in every dtype, so one kernel per element size serves all dtypes.
//
// Note [Triangle coordinates]
//   The row and column of an element come from its linear index over the tensor's full shape (last dim
//   fastest), which the host's dim merging does not change; its memory offsets come from Geometry. So the
//   same kernel serves tril (out-of-place: operand 0 = out, 1 = self) and tril_ (both operands = self).
#include "common.cuh"

typedef unsigned short uint16;
typedef unsigned int uint32;
typedef unsigned long long uint64;

template <typename T>
__device__ void triangle(int64 n, const Geometry &g, T *out, const T *in, int64 rows, int64 cols, int64 diagonal,
                         int lower) {
  TP_GRID_STRIDE(i, n) {
    const int64 col = i % cols, row = (i / cols) % rows;
    const bool keep = lower ? (col - row <= diagonal) : (col - row >= diagonal);
    const Offsets o = offsets(g, i);
    if (keep) {
      if (out != in) out[o.o[0]] = in[o.o[1]];
    } else {
      out[o.o[0]] = T(0);
    }
  }
}
#define TP_TRIANGLE(N, T)                                                                                   \
  extern "C" __global__ void triangle_b##N(int64 n, Geometry g, T *out, const T *in, int64 rows, int64 cols, \
                                           int64 diagonal, int lower) {                                     \
    triangle(n, g, out, in, rows, cols, diagonal, lower);                                                   \
  }
TP_TRIANGLE(1, uint8)
TP_TRIANGLE(2, uint16)
TP_TRIANGLE(4, uint32)
TP_TRIANGLE(8, uint64)
