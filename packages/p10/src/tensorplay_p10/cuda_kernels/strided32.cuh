// strided32.cuh — the fast twin of common.cuh's offsets(): a linear index turned into element offsets with
// 32-bit arithmetic and precomputed divisors, for the hot strided kernels (copy.cu's strided copy, index.cu's
// gather).
//
// Where it sits: included by copy.cu and index.cu; the host half (csrc/cuda/strided32.h) builds the struct
// from a KernelGeometry when every number fits in 31 bits, and falls back to the int64 kernels otherwise.
//
// Note [Fast strided offsets]
//   offsets() in common.cuh divides a 64-bit index by each dim's size: a 64-bit division is a ~70-instruction
//   software routine on the GPU, so a 4-dim copy spends hundreds of instructions per 4-byte element and is
//   bound by arithmetic, not memory. Here every number is 32-bit (the host checks numel < 2^31 and that every
//   offset fits in an int32), and each division by a dim's size is a multiply-high, an add and a shift with
//   a magic number the host computed once (Granlund & Montgomery; PyTorch's IntDivider):
//     shift = ceil(log2(d)),  magic = floor(2^32 * (2^shift - d) / d) + 1,  n / d = (umulhi(n, magic) + n) >> shift
//   exact for all n, d < 2^31 (umulhi(n, magic) <= n, so the add cannot overflow 32 bits). Dims are stored
//   innermost first, and the outermost needs no division at all: what is left of the index is its coordinate.
#pragma once
#include "common.cuh"

#define TP_FAST_DIMS 6
struct Strided32 {
  int ndim;                              // 1..TP_FAST_DIMS, innermost first
  unsigned sizes[TP_FAST_DIMS];
  unsigned magic[TP_FAST_DIMS];
  unsigned shift[TP_FAST_DIMS];
  int strides[3][TP_FAST_DIMS];          // element strides per operand (may be 0 or negative)
};

struct Offsets32 { int o[3]; };

__device__ __forceinline__ unsigned fast_div(unsigned n, unsigned magic, unsigned shift) {
  return (__umulhi(n, magic) + n) >> shift;
}

template <int NOPS> __device__ __forceinline__ Offsets32 offsets32(const Strided32 &g, unsigned linear) {
  Offsets32 r = {{0, 0, 0}};
#pragma unroll
  for (int d = 0; d < TP_FAST_DIMS; ++d) {
    if (d == g.ndim - 1) {  // the outermost dim: the rest of the index is its coordinate
#pragma unroll
      for (int k = 0; k < NOPS; ++k) r.o[k] += int(linear) * g.strides[k][d];
      break;
    }
    const unsigned q = fast_div(linear, g.magic[d], g.shift[d]);
    const int i = int(linear - q * g.sizes[d]);
#pragma unroll
    for (int k = 0; k < NOPS; ++k) r.o[k] += i * g.strides[k][d];
    linear = q;
  }
  return r;
}
