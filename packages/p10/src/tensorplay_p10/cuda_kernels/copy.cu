// copy.cu — moving elements on the device: strided copies, dtype conversion, and fill.
//
// Where it sits: launched by csrc/cuda/ops_copy.cpp for copy_, contiguous, clone, .to(dtype) and fill_ on cuda
// tensors (a same-dtype copy between contiguous tensors is cuMemcpyDtoD instead). Two kinds of kernel, so the
// file stays quick to compile (index arithmetic appears in 4 kernels, not in 100):
//   copy_strided_b<N>: any layout to any layout, same dtype, by element size N bytes (1, 2, 4, 8); the source
//                      may be broadcast. Strides come from the host's Geometry (Note [Kernel geometry] in
//                      common.cuh): operand 0 is the destination, operand 1 the source.
//   cast_<D>_<S>:      n contiguous elements from dtype S to dtype D (PyTorch's conversion rules: float to int
//                      truncates, anything to bool is `!= 0`, 16-bit floats round to nearest even).
// A strided copy that also changes dtype is a cast plus a strided copy, chained on the host.
#include "common.cuh"

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

typedef unsigned short uint16;
typedef unsigned int uint32;
typedef unsigned long long uint64;
#define TP_COPY_STRIDED(N, T)                                                                              \
  extern "C" __global__ void copy_strided_b##N(int64 n, Geometry g, T *dst, const T *src) {                \
    copy_strided(n, g, dst, src);                                                                          \
  }
TP_COPY_STRIDED(1, uint8)
TP_COPY_STRIDED(2, uint16)
TP_COPY_STRIDED(4, uint32)
TP_COPY_STRIDED(8, uint64)

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
