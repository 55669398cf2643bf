// rearrange.cu — tril / triu: keep one triangle of the last two dims, zero the rest.
//
// Two kernels: triangle_b<N> takes any layout through Geometry (the general one, and the reference);
// triangle_packs_b<N> / triangle_rows_b<N> take a contiguous tensor row by row (Note [Triangle rows]).
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

// ---- Note [Triangle rows] ------------------------------------------------------------------------------------
// For a contiguous input (and output) the matrix rows are contiguous, so the kernel walks rows, not elements:
// a team of `lanes` threads (a power of two, up to the block; 256 / lanes teams per block) owns one row at a
// time and moves it in packs of P elements (16 bytes, when a row is a whole number of aligned packs; else
// P = 1). The row's kept columns are one interval ([0, row + diagonal] for tril, [row + diagonal, cols) for
// triu), so a pack is entirely kept (copied, or left alone in place), entirely dropped (zeros stored, the
// input not even read) or split (read, masked per element, stored). No division per element: the only one is
// `r % rows` per row. One pass over memory, as a masked copy.
template <typename E, int P> struct alignas(sizeof(E) * P) Pack {
  E v[P];
};
template <typename E, int P>
__device__ void triangle_rows(int64 nrows, int units, int64 rows, int64 diagonal, int lower, int lanes,
                              Pack<E, P> *out, const Pack<E, P> *in) {
  const bool inplace = out == in;
  TP_FOR_ROWS(r, nrows, lanes) {
    const int64 row = r % rows;
    // kept columns: [lo, hi)
    const int64 lo = lower ? 0 : row + diagonal, hi = lower ? row + diagonal + 1 : int64(units) * P;
    Pack<E, P> *o = out + r * units;
    const Pack<E, P> *x = in + r * units;
    for (int c = lane; c < units; c += lanes) {
      const int64 c0 = int64(c) * P, c1 = c0 + P;  // this pack's columns: [c0, c1)
      if (c0 >= lo && c1 <= hi) {
        if (!inplace) o[c] = x[c];
      } else if (c1 <= lo || c0 >= hi) {
        Pack<E, P> z;
#pragma unroll
        for (int k = 0; k < P; ++k) z.v[k] = E(0);
        o[c] = z;
      } else {
        Pack<E, P> v = x[c];
#pragma unroll
        for (int k = 0; k < P; ++k)
          if (c0 + k < lo || c0 + k >= hi) v.v[k] = E(0);
        o[c] = v;
      }
    }
  }
}
#define TP_TRIANGLE_ROWS(N, E)                                                                              \
  extern "C" __global__ void triangle_packs_b##N(int64 nrows, int units, int64 rows, int64 diagonal,       \
                                                 int lower, int lanes, Pack<E, 16 / N> *out,                \
                                                 const Pack<E, 16 / N> *in) {                               \
    triangle_rows(nrows, units, rows, diagonal, lower, lanes, out, in);                                     \
  }                                                                                                         \
  extern "C" __global__ void triangle_rows_b##N(int64 nrows, int units, int64 rows, int64 diagonal,        \
                                                int lower, int lanes, Pack<E, 1> *out, const Pack<E, 1> *in) { \
    triangle_rows(nrows, units, rows, diagonal, lower, lanes, out, in);                                     \
  }
TP_TRIANGLE_ROWS(1, uint8)
TP_TRIANGLE_ROWS(2, uint16)
TP_TRIANGLE_ROWS(4, uint32)
TP_TRIANGLE_ROWS(8, uint64)
