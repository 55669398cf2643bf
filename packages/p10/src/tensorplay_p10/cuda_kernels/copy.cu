// copy.cu — moving elements on the device: strided copies, dtype conversion, and fill.
//
// Where it sits: launched by csrc/cuda/ops_copy.cpp for copy_, contiguous, clone, .to(dtype) and fill_ on cuda
// tensors (a same-dtype copy between contiguous tensors is cuMemcpyDtoD instead). Two kinds of kernel, so the
// file stays quick to compile (index arithmetic appears in 4 kernels, not in 100):
//   copy_strided_b<N>: any layout to any layout, same dtype, by element size N bytes (1, 2, 4, 8); the source
//                      may be broadcast. Strides come from the host's Geometry (Note [Kernel geometry] in
//                      common.cuh): operand 0 is the destination, operand 1 the source. The general kernel,
//                      and the reference the fast ones below are tested against.
//   copy_fast_b<N>:    the same copy with 32-bit offsets (Note [Fast strided offsets]) in units of N bytes
//                      (1..16): the host moves whole 16-byte packs when the innermost dim is contiguous on
//                      both sides (Note [Packed strided copy] in csrc/cuda/ops_copy.cpp).
//   copy_flip_b<N>:    copy_fast on 16-byte packs of N-byte elements whose source runs backwards (flip of
//                      the innermost dim): each pack is loaded forwards and its elements reversed.
//   cast_<D>_<S>:      n contiguous elements from dtype S to dtype D (PyTorch's conversion rules: float to int
//                      truncates, anything to bool is `!= 0`, 16-bit floats round to nearest even).
// A strided copy that also changes dtype is a cast plus a strided copy, chained on the host.
#include "strided32.cuh"

typedef unsigned short uint16;
typedef unsigned int uint32;
typedef unsigned long long uint64;

template <typename T> __device__ void copy_strided(int64 n, const Geometry &g, T *dst, const T *src) {
  if (g.ndim == 1 && g.strides[0][0] == 1 && g.strides[1][0] == 1) {
    TP_GRID_STRIDE(i, n) dst[i] = src[i];
    return;
  }
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    dst[off.o[0]] = src[off.o[1]];
  }
}

#define TP_COPY_STRIDED(N, T)                                                                              \
  extern "C" __global__ void copy_strided_b##N(int64 n, Geometry g, T *dst, const T *src) {                \
    copy_strided(n, g, dst, src);                                                                          \
  }
TP_COPY_STRIDED(1, uint8)
TP_COPY_STRIDED(2, uint16)
TP_COPY_STRIDED(4, uint32)
TP_COPY_STRIDED(8, uint64)

// ---- the fast strided copy (Note [Fast strided offsets]) ---------------------------------------------------
// Each thread moves 4 units per step of its grid-stride loop, all 4 loads issued before the first store, so a
// warp keeps 4 independent memory requests in flight instead of 1: latency, not arithmetic, bounds a copy.
template <typename E, int P> struct alignas(sizeof(E) * P) Pack {
  E v[P];
};
template <typename U> __device__ __forceinline__ U reversed(U x) { return x; }
template <typename E, int P> __device__ __forceinline__ Pack<E, P> reversed(const Pack<E, P> &x) {
  Pack<E, P> y;
#pragma unroll
  for (int k = 0; k < P; ++k) y.v[k] = x.v[P - 1 - k];
  return y;
}

template <typename U, bool kReverse>
__device__ void copy_fast(unsigned n, const Strided32 &g, U *dst, const U *src) {
  const unsigned step = gridDim.x * blockDim.x;  // n < 2^31 and step < 2^22: i + 4 * step never wraps
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
    U v[4];
    int at[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const Offsets32 o = offsets32<2>(g, i + k * step);
      at[k] = o.o[0];
      v[k] = src[o.o[1]];
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) dst[at[k]] = kReverse ? reversed(v[k]) : v[k];
  }
  for (; i < n; i += step) {
    const Offsets32 o = offsets32<2>(g, i);
    const U v = src[o.o[1]];  // one vector load, then the reversal in registers
    dst[o.o[0]] = kReverse ? reversed(v) : v;
  }
}
#define TP_COPY_FAST(N, U)                                                                                 \
  extern "C" __global__ void copy_fast_b##N(unsigned n, Strided32 g, U *dst, const U *src) {               \
    copy_fast<U, false>(n, g, dst, src);                                                                   \
  }
TP_COPY_FAST(1, uint8)
TP_COPY_FAST(2, uint16)
TP_COPY_FAST(4, uint32)
TP_COPY_FAST(8, uint64)
TP_COPY_FAST(16, uint4)
// Flip packs: 16 bytes of N-byte elements.
typedef Pack<uint8, 16> Flip1;
typedef Pack<uint16, 8> Flip2;
typedef Pack<uint32, 4> Flip4;
typedef Pack<uint64, 2> Flip8;
#define TP_COPY_FLIP(N)                                                                                    \
  extern "C" __global__ void copy_flip_b##N(unsigned n, Strided32 g, Flip##N *dst, const Flip##N *src) {   \
    copy_fast<Flip##N, true>(n, g, dst, src);                                                              \
  }
TP_COPY_FLIP(1)
TP_COPY_FLIP(2)
TP_COPY_FLIP(4)
TP_COPY_FLIP(8)

// One extern "C" entry point per (destination, source) dtype pair.
#define TP_CAST(D, S)                                                                                      \
  extern "C" __global__ void cast_##D##_##S(int64 n, D *dst, const S *src) {                               \
    TP_GRID_STRIDE(i, n) dst[i] = store<D>(load(src[i]));                                                  \
  }
#define TP_CAST_FROM_ALL(D)                                                                                \
  TP_CAST(D, bool) TP_CAST(D, uint8) TP_CAST(D, int8) TP_CAST(D, int16) TP_CAST(D, int32) TP_CAST(D, int64) \
  TP_CAST(D, float16) TP_CAST(D, bfloat16) TP_CAST(D, float32) TP_CAST(D, float64)
TP_CAST_FROM_ALL(bool)
TP_CAST_FROM_ALL(uint8)
TP_CAST_FROM_ALL(int8)
TP_CAST_FROM_ALL(int16)
TP_CAST_FROM_ALL(int32)
TP_CAST_FROM_ALL(int64)
TP_CAST_FROM_ALL(float16)
TP_CAST_FROM_ALL(bfloat16)
TP_CAST_FROM_ALL(float32)
TP_CAST_FROM_ALL(float64)

// fill_<size>: every element of a (possibly strided) tensor gets the same bits; the host packs the value in
// the tensor's dtype, so one kernel per element size serves all dtypes.
template <typename T> __device__ void fill(int64 n, const Geometry &g, T *dst, T value) {
  if (g.ndim == 1 && g.strides[0][0] == 1) {
    TP_GRID_STRIDE(i, n) dst[i] = value;
    return;
  }
  TP_GRID_STRIDE(i, n) dst[offsets(g, i).o[0]] = value;
}
#define TP_FILL(N, T) \
  extern "C" __global__ void fill_b##N(int64 n, Geometry g, T *dst, T value) { fill(n, g, dst, value); }
TP_FILL(1, uint8)
TP_FILL(2, uint16)
TP_FILL(4, uint32)
TP_FILL(8, uint64)
