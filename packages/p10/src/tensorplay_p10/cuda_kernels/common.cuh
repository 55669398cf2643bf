// common.cuh — what every TensorPlay CUDA kernel file shares: dtype names, 16-bit float conversions, the
// strided-index helper and block/warp reductions.
//
// Where it sits: included by the .cu files beside it. They are compiled at run time by NVRTC (tensorplay_p10/
// cuda/_compiler.py), with this folder on the include path; the cache key hashes this header too, so editing
// it recompiles every kernel at the next run. No CUDA toolkit headers are used: NVRTC alone must do.
#pragma once

// dtype names, spelled as tensorplay's (kernel names end in them: add_contig_float32).
typedef unsigned char uint8;
typedef signed char int8;
typedef short int16;
typedef int int32;
typedef long long int64;
typedef float float32;
typedef double float64;
struct float16 { unsigned short bits; };
struct bfloat16 { unsigned short bits; };

// ---- 16-bit floats: stored as bits, computed in float32 ---------------------------------------------------
__device__ __forceinline__ float to_float(float16 h) {
  float f;
  asm("{ cvt.f32.f16 %0, %1; }" : "=f"(f) : "h"(h.bits));
  return f;
}
__device__ __forceinline__ float16 to_float16(float f) {
  float16 h;
  asm("{ cvt.rn.f16.f32 %0, %1; }" : "=h"(h.bits) : "f"(f));
  return h;
}
__device__ __forceinline__ float to_float(bfloat16 b) { return __uint_as_float(unsigned(b.bits) << 16); }
__device__ __forceinline__ bfloat16 to_bfloat16(float f) {  // round to nearest even; NaN stays a quiet NaN
  unsigned u = __float_as_uint(f);
  bfloat16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) b.bits = 0x7fc0;
  else b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  return b;
}

// The type arithmetic happens in (PyTorch's opmath): float32 for the 16-bit floats, the type itself otherwise.
template <typename T> struct OpMath { typedef T type; };
template <> struct OpMath<float16> { typedef float type; };
template <> struct OpMath<bfloat16> { typedef float type; };

// load(): a stored value as its opmath type. store<T>(): an arithmetic value as a stored T.
template <typename T> __device__ __forceinline__ typename OpMath<T>::type load(T v) { return v; }
__device__ __forceinline__ float load(float16 v) { return to_float(v); }
__device__ __forceinline__ float load(bfloat16 v) { return to_float(v); }
template <typename T> struct Store {
  template <typename V> __device__ __forceinline__ static T from(V v) { return T(v); }
};
// float -> integer truncates through int64 (so narrow types wrap as on the CPU); NaN becomes 0.
#define TP_INT_STORE(T)                                                                                     \
  template <> struct Store<T> {                                                                             \
    template <typename V> __device__ __forceinline__ static T from(V v) { return T(v); }                    \
    __device__ __forceinline__ static T from(float v) { return v != v ? T(0) : T((int64)v); }               \
    __device__ __forceinline__ static T from(double v) { return v != v ? T(0) : T((int64)v); }              \
  };
TP_INT_STORE(uint8)
TP_INT_STORE(int8)
TP_INT_STORE(int16)
TP_INT_STORE(int32)
TP_INT_STORE(int64)
template <> struct Store<bool> {
  template <typename V> __device__ __forceinline__ static bool from(V v) { return v != V(0); }
};
template <> struct Store<float16> {
  template <typename V> __device__ __forceinline__ static float16 from(V v) { return to_float16(float(v)); }
};
template <> struct Store<bfloat16> {
  template <typename V> __device__ __forceinline__ static bfloat16 from(V v) { return to_bfloat16(float(v)); }
};
template <typename T, typename V> __device__ __forceinline__ T store(V v) { return Store<T>::from(v); }

// ---- Note [Kernel geometry] --------------------------------------------------------------------------------
// The host (csrc/cuda/geometry.cpp) broadcasts the operands, coalesces dims and passes this struct by value:
// element strides per operand over the output's shape, innermost dim last, stride 0 on broadcast dims. Kernels
// turn a linear output index into each operand's offset here and nowhere else (STYLE.md rule 3).
#define TP_MAX_DIMS 8
struct Geometry {
  int ndim;
  int pad;
  int64 sizes[TP_MAX_DIMS];
  int64 strides[3][TP_MAX_DIMS];  // operand 0 = output, 1 and 2 = inputs
};

struct Offsets { int64 o[3]; };
__device__ __forceinline__ Offsets offsets(const Geometry &g, int64 linear) {
  Offsets r = {{0, 0, 0}};
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64 size = g.sizes[d];
    const int64 i = linear % size;
    linear /= size;
    r.o[0] += i * g.strides[0][d];
    r.o[1] += i * g.strides[1][d];
    r.o[2] += i * g.strides[2][d];
  }
  return r;
}

// Grid-stride loop over [0, n): each thread starts at its global index and steps by the whole grid.
#define TP_GRID_STRIDE(i, n) \
  for (int64 i = int64(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64(gridDim.x) * blockDim.x)

// Row r of `rows`, a team of `lanes` threads (a power of two) per row, grid-stride over the rows; declares
// `lane`, this thread's place in its team (the host's row_launch in cuda/index_common.h picks lanes and grid).
#define TP_FOR_ROWS(r, rows, lanes)                                                                         \
  const int lane = threadIdx.x & ((lanes) - 1), teams = blockDim.x / (lanes);                              \
  for (int64 r = int64(blockIdx.x) * teams + threadIdx.x / (lanes); r < (rows); r += int64(gridDim.x) * teams)

// ---- index checks ------------------------------------------------------------------------------------------
// Record a bad value `v` in a (flag, value) slot of an IndexErrorFlag (csrc/cuda/index_common.h; Note [Device
// index checks] in index.cu). The slot lives in mapped host memory, where device atomics are not guaranteed, so
// plain stores: every writer writes a bad value, so whichever lands is one; one thread of each converged group
// of a warp writes, so a tensor of bad indices costs a few writes over the bus, not one per element.
__device__ __forceinline__ void record_bad(unsigned long long *slot, long long v) {
  unsigned lower;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lower));
  if ((__activemask() & lower) == 0) {
    *reinterpret_cast<volatile unsigned long long *>(slot + 1) = (unsigned long long)v;
    *reinterpret_cast<volatile unsigned long long *>(slot) = 1ull;
  }
}

// ---- reductions --------------------------------------------------------------------------------------------
// Sum across a warp with shuffles: after it, lane 0 holds the warp's total.
template <typename T> __device__ __forceinline__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum across a block (blockDim.x a multiple of 32, at most 1024): warps reduce by shuffles, warp totals meet in
// shared memory, warp 0 reduces those. The result is valid in thread 0.
template <typename T> __device__ __forceinline__ T block_sum(T v) {
  __shared__ T warp_totals[32];
  __syncthreads();  // a previous call's readers are done before this call writes (a block may call it per row)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < nwarps ? warp_totals[lane] : T(0);
  if (warp == 0) v = warp_sum(v);
  return v;
}
