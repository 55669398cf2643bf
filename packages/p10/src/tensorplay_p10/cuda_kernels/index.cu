// index.cu — reading and writing a tensor at positions given by integer tensors: gather / scatter (with the
// atomic reductions sum, prod, amax, amin), the element offsets of advanced indexing, nonzero's count and
// write passes, and the index map of repeat_interleave.
//
// Where it sits: launched by csrc/cuda/ops_index.cpp (gather, scatter*, index_select, index_add_/copy_/fill_,
// take, put_), ops_index_advanced.cpp (index.Tensor, index_put_, masked_*, nonzero) and ops_rearrange.cpp
// (repeat_interleave). As on the CPU (Note [Restriding] in kernels/index.cpp), the host views `self` with the
// index's sizes and stride 0 along the indexed dim, so every kernel here walks three operands through one
// Geometry (Note [Kernel geometry]) and only adds index * step to the restrided offset. The hot ones have a
// fast twin: gather_fast / scatter_fast with 32-bit offsets (Note [Fast strided offsets] in strided32.cuh),
// and whole-row gathers with a thread team per row (Note [Row gathers]); the host picks them when they fit.
//
// Note [Device index checks]
//   The CPU checks every index before its loop. Here the check happens where the index is read: a bad index
//   is not used, and it is recorded as (flag, value) in a two-word slot (record_bad in common.cuh). The slot is
//   mapped host memory (IndexErrorFlag, csrc/cuda/index_common.h): the host zeroes it before the launch and
//   reads it after waiting for the launch, with no memset or copy on the stream, and raises the CPU's
//   IndexError. Which bad value is named may differ from the CPU's (the first one in index order) when several
//   are bad; an in-place op may have written its good positions before the error is raised. A long gather,
//   index_select or x[idx] checks its indices in a kernel of their own (index_check_flat) and launches its
//   main kernel before waiting, with err null: bad indices skipped, not recorded (Note [Check first] in
//   index_common.h).
#include "strided32.cuh"

typedef unsigned short uint16;
typedef unsigned int uint32;
typedef unsigned long long uint64;
struct alignas(16) uint128 { uint64 lo, hi; };

// ---- index checks (Note [Device index checks]) -------------------------------------------------------------
// check: 0 = none (offsets already valid), 1 = [0, size), 2 = [-size, size) with negatives wrapped. A bad
// index is recorded in err, or only skipped when err is null (a kernel launched after the check of Note [Check
// first], whose flag it must not write).
__device__ __forceinline__ bool valid_index(int64 &k, int64 size, int check, uint64 *err) {
  if (check == 0) return true;
  const int64 given = k;
  if (check == 2 && k < 0) k += size;
  if (k >= 0 && k < size) return true;
  if (err) record_bad(err, given);
  return false;
}

// A check of n int64 indices at index[i * stride] against `size` (check 1 or 2, as valid_index): the first pass
// of Note [Check first] (csrc/cuda/index_common.h). Four per thread, their loads in flight together.
extern "C" __global__ void index_check_flat(int64 n, const int64 *index, int64 stride, int64 size, int check,
                                           uint64 *err) {
  const int64 step = int64(gridDim.x) * blockDim.x;
  int64 i = int64(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
    int64 k[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) k[u] = index[(i + u * step) * stride];
#pragma unroll
    for (int u = 0; u < 4; ++u) valid_index(k[u], size, check, err);
  }
  for (; i < n; i += step) {
    int64 k = index[i * stride];
    valid_index(k, size, check, err);
  }
}

// ---- gather: out[p] = src[p restrided + index[p] * step] ----------------------------------------------------
// Operands: 0 = out, 1 = restrided src, 2 = int64 index (or element offsets, with step 1 and check 0).
template <typename T>
__device__ void gather(int64 n, const Geometry &g, T *out, const T *src, const int64 *index, int64 size,
                       int64 step, int check, uint64 *err) {
  TP_GRID_STRIDE(i, n) {
    const Offsets o = offsets(g, i);
    int64 k = index[o.o[2]];
    if (valid_index(k, size, check, err)) out[o.o[0]] = src[o.o[1] + k * step];
  }
}
#define TP_GATHER(N, T)                                                                                     \
  extern "C" __global__ void gather_b##N(int64 n, Geometry g, T *out, const T *src, const int64 *index,     \
                                         int64 size, int64 step, int check, uint64 *err) {                  \
    gather(n, g, out, src, index, size, step, check, err);                                                  \
  }
TP_GATHER(1, uint8)
TP_GATHER(2, uint16)
TP_GATHER(4, uint32)
TP_GATHER(8, uint64)
TP_GATHER(16, uint128)

// gather_fast_b<N>: the same gather with 32-bit offsets (Note [Fast strided offsets]); k * step stays 64-bit.
// Each thread takes TP_GATHER_ILP elements a grid apart at a time: their index loads are in flight together,
// then their (dependent) source loads, instead of one element's two round trips after another. The host sizes
// the grid for that many per thread (ops: launch_gather).
#define TP_GATHER_ILP 4
template <typename T>
__device__ void gather_fast(unsigned n, const Strided32 &g, T *out, const T *src, const int64 *index, int64 size,
                            int64 step, int check, uint64 *err) {
  const unsigned stride = gridDim.x * blockDim.x;  // n < 2^31 and the grid < 2^22 threads: no wrap below
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (TP_GATHER_ILP - 1) * stride < n; i += TP_GATHER_ILP * stride) {
    Offsets32 o[TP_GATHER_ILP];
    int64 k[TP_GATHER_ILP];
#pragma unroll
    for (int u = 0; u < TP_GATHER_ILP; ++u) {
      o[u] = offsets32<3>(g, i + u * stride);
      k[u] = index[o[u].o[2]];
    }
    bool ok[TP_GATHER_ILP];
    T v[TP_GATHER_ILP];
#pragma unroll
    for (int u = 0; u < TP_GATHER_ILP; ++u) {
      ok[u] = valid_index(k[u], size, check, err);
      if (ok[u]) v[u] = src[o[u].o[1] + k[u] * step];
    }
#pragma unroll
    for (int u = 0; u < TP_GATHER_ILP; ++u)
      if (ok[u]) out[o[u].o[0]] = v[u];
  }
  for (; i < n; i += stride) {
    const Offsets32 o = offsets32<3>(g, i);
    int64 k = index[o.o[2]];
    if (valid_index(k, size, check, err)) out[o.o[0]] = src[o.o[1] + k * step];
  }
}
#define TP_GATHER_FAST(N, T)                                                                                \
  extern "C" __global__ void gather_fast_b##N(unsigned n, Strided32 g, T *out, const T *src,                \
                                              const int64 *index, int64 size, int64 step, int check,        \
                                              uint64 *err) {                                                \
    gather_fast(n, g, out, src, index, size, step, check, err);                                             \
  }
TP_GATHER_FAST(1, uint8)
TP_GATHER_FAST(2, uint16)
TP_GATHER_FAST(4, uint32)
TP_GATHER_FAST(8, uint64)
TP_GATHER_FAST(16, uint128)

// ---- whole-row gathers: a team of threads per row -------------------------------------------------------------
// Note [Row gathers]
//   index_select of a contiguous tensor (the embedding lookup) and x[idx] on the leading dims copy whole
//   contiguous rows: out row r is the source row chosen by the index. Per element, a flat kernel would find
//   its row by dividing its linear index; here a team of `lanes` threads (a power of two, up to the block)
//   owns one row at a time, reads the row's index once, and walks the row in units of U bytes (16 when the
//   row length and the pointers allow): consecutive threads touch consecutive units (coalesced 16-byte
//   accesses) and the only arithmetic per unit is an add. What makes it fast is memory-level parallelism:
//   each thread issues up to 8 independent loads before its stores (out and src never overlap: out is a
//   fresh tensor, hence __restrict__), so one row costs about one memory round trip after its index's. The
//   host (row_launch with per_thread 8) therefore keeps teams small — a warp for rows up to 8 * 32 units,
//   wider only for longer rows — instead of one 256-thread team per 4 KB row, which left each thread a
//   single load in flight between two dependent round trips (index, then row) and ran below the old flat
//   kernel. A block of 256 threads holds 256 / lanes teams; a row of fewer than 32 units gets a team of the
//   next power of two (1 for 1-unit rows: every thread is a team of one and the loads of indices coalesce).
template <typename U>
__device__ __forceinline__ void copy_row(U *__restrict__ dst, const U *__restrict__ src, int units, int lane,
                                         int lanes) {
  int c = lane;
  for (; c + 7 * lanes < units; c += 8 * lanes) {
    U v[8];
#pragma unroll
    for (int b = 0; b < 8; ++b) v[b] = src[c + b * lanes];
#pragma unroll
    for (int b = 0; b < 8; ++b) dst[c + b * lanes] = v[b];
  }
  for (; c + 3 * lanes < units; c += 4 * lanes) {
    const U a = src[c], b = src[c + lanes], e = src[c + 2 * lanes], f = src[c + 3 * lanes];
    dst[c] = a;
    dst[c + lanes] = b;
    dst[c + 2 * lanes] = e;
    dst[c + 3 * lanes] = f;
  }
  for (; c < units; c += lanes) dst[c] = src[c];
}

// index_select: a contiguous self viewed as [outer, size, units]; out[o, j, :] = src[o, index[j], :] for
// row r = o * nidx + j (Note [Row gathers]). check: valid_index's (1 for index_select, 2 for x[idx], which
// wraps negatives); err null when the host checks the indices in a kernel of their own (Note [Check first]).
template <typename U>
__device__ void select_rows(int64 rows, int units, int64 nidx, int64 size, U *out, const U *src,
                            const int64 *index, int64 index_stride, int lanes, int check, uint64 *err) {
  TP_FOR_ROWS(r, rows, lanes) {
    const int64 o = r < nidx ? 0 : r / nidx, j = r - o * nidx;
    int64 k = index[j * index_stride];
    if (valid_index(k, size, check, err))
      copy_row(out + r * units, src + (o * size + k) * units, units, lane, lanes);
  }
}
// x[idx] on the leading dims: out row r = the `units` units at element offset offsets[r] (index_offsets'
// result, checked) of src; an offset in units is offsets[r] >> shift (the host checked that it divides).
template <typename U>
__device__ void gather_rows(int64 rows, int units, U *out, const U *src, const int64 *offsets, int shift,
                            int lanes) {
  TP_FOR_ROWS(r, rows, lanes) copy_row(out + r * units, src + (offsets[r] >> shift), units, lane, lanes);
}
#define TP_ROWS_KERNELS(N, U)                                                                               \
  extern "C" __global__ void select_rows_b##N(int64 rows, int units, int64 nidx, int64 size, U *out,       \
                                              const U *src, const int64 *index, int64 index_stride,         \
                                              int lanes, int check, uint64 *err) {                          \
    select_rows(rows, units, nidx, size, out, src, index, index_stride, lanes, check, err);                 \
  }                                                                                                         \
  extern "C" __global__ void gather_rows_b##N(int64 rows, int units, U *out, const U *src,                 \
                                              const int64 *offsets, int shift, int lanes) {                 \
    gather_rows(rows, units, out, src, offsets, shift, lanes);                                              \
  }
TP_ROWS_KERNELS(1, uint8)
TP_ROWS_KERNELS(2, uint16)
TP_ROWS_KERNELS(4, uint32)
TP_ROWS_KERNELS(8, uint64)
TP_ROWS_KERNELS(16, uint4)

// ---- atomics: one read-modify-write of any element type ----------------------------------------------------
// Note [Atomic updates]
//   Repeated indices make scatter's writes collide, so every combining write is atomic. f(old) -> new runs in a
//   compare-and-swap loop on the 4- or 8-byte word holding the element; 1- and 2-byte elements share their
//   aligned 32-bit word with neighbours, whose bits the loop carries over unchanged. Sums of float32,
//   float64, int32 and int64 use the hardware atomicAdd (integer sums wrap, as on the CPU). The order in which
//   colliding updates apply is not fixed, so float sums may differ from the CPU's in the last bits.
template <typename T> struct Bits;
template <> struct Bits<bool> { typedef uint8 type; };
template <> struct Bits<uint8> { typedef uint8 type; };
template <> struct Bits<int8> { typedef uint8 type; };
template <> struct Bits<int16> { typedef uint16 type; };
template <> struct Bits<float16> { typedef uint16 type; };
template <> struct Bits<bfloat16> { typedef uint16 type; };
template <> struct Bits<int32> { typedef uint32 type; };
template <> struct Bits<float32> { typedef uint32 type; };
template <> struct Bits<int64> { typedef uint64 type; };
template <> struct Bits<float64> { typedef uint64 type; };

template <typename T> __device__ __forceinline__ typename Bits<T>::type to_bits(T v) {
  union { T t; typename Bits<T>::type b; } u;
  u.b = 0;
  u.t = v;
  return u.b;
}
template <typename T> __device__ __forceinline__ T from_bits(typename Bits<T>::type b) {
  union { T t; typename Bits<T>::type b; } u;
  u.b = b;
  return u.t;
}

template <typename T, typename F> __device__ __forceinline__ void atomic_update(T *addr, F f) {
  if constexpr (sizeof(T) == 8) {
    uint64 *w = reinterpret_cast<uint64 *>(addr);
    uint64 old = *w, assumed;
    do {
      assumed = old;
      const uint64 next = (uint64)to_bits<T>(f(from_bits<T>((typename Bits<T>::type)assumed)));
      if (next == assumed) return;
      old = atomicCAS(w, assumed, next);
    } while (old != assumed);
  } else {
    // the aligned 32-bit word holding *addr, and where the element's bits sit in it (little-endian)
    const unsigned long long a = reinterpret_cast<unsigned long long>(addr);
    uint32 *w = reinterpret_cast<uint32 *>(a & ~3ull);
    const uint32 shift = uint32(a & 3ull) * 8u;
    uint32 mask = 0xffffffffu;
    if constexpr (sizeof(T) < 4) mask = ((1u << (8u * sizeof(T))) - 1u) << shift;
    uint32 old = *w, assumed;
    do {
      assumed = old;
      const uint32 mine = (assumed & mask) >> shift;
      const uint32 next_bits = uint32(to_bits<T>(f(from_bits<T>((typename Bits<T>::type)mine))));
      const uint32 next = (assumed & ~mask) | ((next_bits << shift) & mask);
      if (next == assumed) return;
      old = atomicCAS(w, assumed, next);
    } while (old != assumed);
  }
}

// The reductions, in T's arithmetic type. amax/amin: a NaN source wins; a NaN already there stays (the CPU's).
enum { kNone = 0, kSum = 1, kProd = 2, kMax = 3, kMin = 4 };
template <typename T> struct Combine {
  int reduce;
  T v;
  __device__ __forceinline__ T operator()(T x) const {
    typedef typename OpMath<T>::type M;
    const M a = load(x), b = load(v);
    switch (reduce) {
      case kSum: return store<T>(a + b);
      case kProd: return store<T>(a * b);
      case kMax: return (b > a || b != b) ? v : x;
      case kMin: return (b < a || b != b) ? v : x;
      default: return v;
    }
  }
};
template <> struct Combine<bool> {  // bool: sum and amax are `or`, prod and amin are `and`
  int reduce;
  bool v;
  __device__ __forceinline__ bool operator()(bool x) const {
    if (reduce == kNone) return v;
    return (reduce == kProd || reduce == kMin) ? (x && v) : (x || v);
  }
};

template <typename T> __device__ __forceinline__ void combine_at(T *p, T v, int reduce) {
  if (reduce == kNone) { *p = v; return; }
  atomic_update(p, Combine<T>{reduce, v});
}
// Hardware sums (Note [Atomic updates]).
__device__ __forceinline__ void combine_at(float *p, float v, int reduce) {
  if (reduce == kSum) atomicAdd(p, v);
  else if (reduce == kNone) *p = v;
  else atomic_update(p, Combine<float>{reduce, v});
}
__device__ __forceinline__ void combine_at(double *p, double v, int reduce) {
  if (reduce == kSum) atomicAdd(p, v);
  else if (reduce == kNone) *p = v;
  else atomic_update(p, Combine<double>{reduce, v});
}
__device__ __forceinline__ void combine_at(int32 *p, int32 v, int reduce) {
  if (reduce == kSum) atomicAdd(p, v);
  else if (reduce == kNone) *p = v;
  else atomic_update(p, Combine<int32>{reduce, v});
}
__device__ __forceinline__ void combine_at(int64 *p, int64 v, int reduce) {
  if (reduce == kSum) atomicAdd(reinterpret_cast<uint64 *>(p), (uint64)v);
  else if (reduce == kNone) *p = v;
  else atomic_update(p, Combine<int64>{reduce, v});
}

// ---- scatter: dst[p restrided + index[p] * step] (reduce)= src[p] --------------------------------------------
// Operands: 0 = restrided dst, 1 = int64 index (or element offsets), 2 = src (stride 0 for a value).
template <typename T>
__device__ void scatter(int64 n, const Geometry &g, T *dst, const int64 *index, const T *src, int64 size,
                        int64 step, int check, int reduce, uint64 *err) {
  TP_GRID_STRIDE(i, n) {
    const Offsets o = offsets(g, i);
    int64 k = index[o.o[1]];
    if (valid_index(k, size, check, err)) combine_at(dst + o.o[0] + k * step, src[o.o[2]], reduce);
  }
}

// scatter_reduce mean: divide each element by its count of contributions (counts <= 1 leave it). Integers
// round toward minus infinity, as the CPU does; bool is left alone. Operands: 0 = self, 1 = int64 counts.
template <typename T> __device__ __forceinline__ T div_count(T x, int64 c) {
  const int64 v = (int64)x;
  return T(v >= 0 ? v / c : -((-v + c - 1) / c));
}
__device__ __forceinline__ bool div_count(bool x, int64) { return x; }
__device__ __forceinline__ float16 div_count(float16 x, int64 c) { return to_float16(load(x) / float(c)); }
__device__ __forceinline__ bfloat16 div_count(bfloat16 x, int64 c) { return to_bfloat16(load(x) / float(c)); }
__device__ __forceinline__ float div_count(float x, int64 c) { return x / float(c); }
__device__ __forceinline__ double div_count(double x, int64 c) { return x / double(c); }

template <typename T> __device__ void scatter_mean(int64 n, const Geometry &g, T *self, const int64 *counts) {
  TP_GRID_STRIDE(i, n) {
    const Offsets o = offsets(g, i);
    const int64 c = counts[o.o[1]];
    if (c > 1) self[o.o[0]] = div_count(self[o.o[0]], c);
  }
}

// scatter_fast_<T>: the same scatter with 32-bit offsets (Note [Fast strided offsets]).
template <typename T>
__device__ void scatter_fast(unsigned n, const Strided32 &g, T *dst, const int64 *index, const T *src, int64 size,
                             int64 step, int check, int reduce, uint64 *err) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Offsets32 o = offsets32<3>(g, i);
    int64 k = index[o.o[1]];
    if (valid_index(k, size, check, err)) combine_at(dst + o.o[0] + k * step, src[o.o[2]], reduce);
  }
}

#define TP_SCATTER(T)                                                                                       \
  extern "C" __global__ void scatter_##T(int64 n, Geometry g, T *dst, const int64 *index, const T *src,     \
                                         int64 size, int64 step, int check, int reduce, uint64 *err) {      \
    scatter(n, g, dst, index, src, size, step, check, reduce, err);                                         \
  }                                                                                                         \
  extern "C" __global__ void scatter_fast_##T(unsigned n, Strided32 g, T *dst, const int64 *index,          \
                                              const T *src, int64 size, int64 step, int check, int reduce,  \
                                              uint64 *err) {                                                \
    scatter_fast(n, g, dst, index, src, size, step, check, reduce, err);                                    \
  }                                                                                                         \
  extern "C" __global__ void scatter_mean_##T(int64 n, Geometry g, T *self, const int64 *counts) {          \
    scatter_mean(n, g, self, counts);                                                                       \
  }
TP_SCATTER(bool)
TP_SCATTER(uint8)
TP_SCATTER(int8)
TP_SCATTER(int16)
TP_SCATTER(int32)
TP_SCATTER(int64)
TP_SCATTER(float16)
TP_SCATTER(bfloat16)
TP_SCATTER(float32)
TP_SCATTER(float64)

// ---- advanced indexing: offsets[p] (+)= wrap(index[p]) * stride (Note [Advanced indexing]) ------------------
// Operands: 0 = int64 offsets (contiguous, the broadcast index shape), 1 = one int64 index tensor broadcast.
extern "C" __global__ void index_offsets(int64 n, Geometry g, int64 *offsets_out, const int64 *index, int64 size,
                                         int64 stride, int first, uint64 *err) {
  TP_GRID_STRIDE(i, n) {
    const Offsets o = offsets(g, i);
    int64 k = index[o.o[1]];
    if (!valid_index(k, size, 2, err)) k = 0;
    offsets_out[o.o[0]] = (first ? 0 : offsets_out[o.o[0]]) + k * stride;
  }
}

// ---- block scans -------------------------------------------------------------------------------------------
// Exclusive prefix sum across a block (blockDim.x a multiple of 32); *total gets the block's sum. Every
// thread of the block must call it.
template <typename T> __device__ __forceinline__ T block_exclusive_scan(T v, T *total) {
  __shared__ T warp_sums[32];
  __shared__ T block_total;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  T incl = v;
  for (int o = 1; o < 32; o <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += y;
  }
  __syncthreads();  // a previous call's readers are done
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const T w = lane < nwarps ? warp_sums[lane] : T(0);
    T wi = w;
    for (int o = 1; o < 32; o <<= 1) {
      const T y = __shfl_up_sync(0xffffffffu, wi, o);
      if (lane >= o) wi += y;
    }
    warp_sums[lane] = wi - w;  // what the warps before this one hold
    if (lane == 31) block_total = wi;
  }
  __syncthreads();
  *total = block_total;
  return warp_sums[warp] + incl - v;
}

// In place: data[i] = data[0] + ... + data[i-1]; total[0] = the sum of all. One block of 1024 threads walks
// the array in tiles, carrying the running sum. A negative entry is recorded in err (repeat_interleave's
// counts), when err is given.
extern "C" __global__ void exclusive_scan_int64(int64 n, int64 *data, int64 *total, uint64 *err) {
  int64 carry = 0;
  for (int64 base = 0; base < n; base += blockDim.x) {
    const int64 i = base + threadIdx.x;
    const int64 v = i < n ? data[i] : 0;
    if (err && v < 0) record_bad(err, v);
    int64 tile;
    const int64 excl = block_exclusive_scan<int64>(v, &tile);
    if (i < n) data[i] = carry + excl;
    carry += tile;
  }
  if (threadIdx.x == 0) total[0] = carry;
}

// ---- nonzero (Note [Nonzero passes] in csrc/cuda/index_common.cpp) ----------------------------------------
// Each block owns a chunk of blockDim.x * kItems elements of a contiguous bool tensor; each thread kItems
// consecutive ones of it, so both passes see the same elements in the same order. A thread reads its 16
// bytes as one 16-byte load when they are aligned and in range (one memory instruction instead of 16).
#define TP_NZ_ITEMS 16
// The thread's 16 flags as a bit mask (bit k: element start + k is nonzero).
__device__ __forceinline__ unsigned nonzero_bits(int64 n, const uint8 *x, int64 start) {
  unsigned bits = 0;
  if (start + TP_NZ_ITEMS <= n && (reinterpret_cast<unsigned long long>(x + start) & 15ull) == 0) {
    const uint4 v = *reinterpret_cast<const uint4 *>(x + start);
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int b = 0; b < 4; ++b) bits |= ((w[q] >> (8 * b)) & 0xffu) ? (1u << (4 * q + b)) : 0u;
  } else {
    for (int k = 0; k < TP_NZ_ITEMS; ++k) bits |= (start + k < n && x[start + k]) ? (1u << k) : 0u;
  }
  return bits;
}

extern "C" __global__ void nonzero_count(int64 n, const uint8 *x, int64 *block_counts) {
  const int64 start = (int64(blockIdx.x) * blockDim.x + threadIdx.x) * TP_NZ_ITEMS;
  const int total = block_sum<int>(__popc(nonzero_bits(n, x, start)));
  if (threadIdx.x == 0) block_counts[blockIdx.x] = total;
}

// Coordinates of every true element, row-major: out[r, d]. `dims` holds the input's sizes (dims.ndim of them);
// block_offsets[b] is where block b's first hit goes (the exclusive scan of nonzero_count's results). With
// `fast` (n < 2^31), the coordinates come from dims32's precomputed divisors (Note [Fast strided offsets]).
extern "C" __global__ void nonzero_write(int64 n, const uint8 *x, const int64 *block_offsets, int64 *out,
                                         Geometry dims, Strided32 dims32, int fast) {
  const int64 start = (int64(blockIdx.x) * blockDim.x + threadIdx.x) * TP_NZ_ITEMS;
  unsigned bits = nonzero_bits(n, x, start);
  int block_total;
  int64 at = block_offsets[blockIdx.x] + block_exclusive_scan<int>(__popc(bits), &block_total);
  const int nd = dims.ndim;
  while (bits) {
    const int k = __ffs(bits) - 1;
    bits &= bits - 1;
    int64 *row = out + at * nd;
    if (fast) {
      unsigned rem = unsigned(start + k);
      for (int d = 0; d < nd - 1; ++d) {  // dims32 is innermost first
        const unsigned q = fast_div(rem, dims32.magic[d], dims32.shift[d]);
        row[nd - 1 - d] = int64(rem - q * dims32.sizes[d]);
        rem = q;
      }
      row[0] = int64(rem);
    } else {
      int64 rem = start + k;
      for (int d = nd - 1; d >= 0; --d) {
        row[d] = rem % dims.sizes[d];
        rem /= dims.sizes[d];
      }
    }
    ++at;
  }
}

// ---- repeat_interleave: out position j comes from the last slice i with starts[i] <= j ---------------------
// starts: the exclusive scan of the counts (n_in of them). Slices with count 0 share their start with the next
// slice, so "the last" always picks one that has elements.
extern "C" __global__ void repeat_interleave_index(int64 n_out, const int64 *starts, int64 n_in, int64 *index) {
  TP_GRID_STRIDE(j, n_out) {
    int64 lo = 0, hi = n_in - 1;
    while (lo < hi) {
      const int64 mid = (lo + hi + 1) / 2;
      if (starts[mid] <= j) lo = mid;
      else hi = mid - 1;
    }
    index[j] = lo;
  }
}

// ---- masked_fill_: self[p] = *value where mask[p] (operands: 0 = self, 1 = bool mask broadcast) -----------
// The value is a 0-d device tensor already in self's dtype, so one kernel per element size serves all dtypes.
template <typename T>
__device__ void masked_fill(int64 n, const Geometry &g, T *self, const bool *mask, const T *value) {
  const T v = *value;
  TP_GRID_STRIDE(i, n) {
    const Offsets o = offsets(g, i);
    if (mask[o.o[1]]) self[o.o[0]] = v;
  }
}
#define TP_MASKED_FILL(N, T)                                                                                \
  extern "C" __global__ void masked_fill_b##N(int64 n, Geometry g, T *self, const bool *mask, const T *value) { \
    masked_fill(n, g, self, mask, value);                                                                   \
  }
TP_MASKED_FILL(1, uint8)
TP_MASKED_FILL(2, uint16)
TP_MASKED_FILL(4, uint32)
TP_MASKED_FILL(8, uint64)
TP_MASKED_FILL(16, uint128)

// ---- index_wrap: out[p] = in[p] checked (and wrapped, check 2); out may be null (a check only) -------------
// For the CPU's check_index_range / wrap_negative (kernels/index_helpers.cpp) when the index is on a GPU, as
// Composites such as take reach them. Operands: 0 = out (contiguous), 1 = int64 index.
extern "C" __global__ void index_wrap(int64 n, Geometry g, int64 *out, const int64 *index, int64 size, int check,
                                      uint64 *err) {
  TP_GRID_STRIDE(i, n) {
    const Offsets o = offsets(g, i);
    int64 k = index[o.o[1]];
    valid_index(k, size, check, err);
    if (out) out[o.o[0]] = k;
  }
}
