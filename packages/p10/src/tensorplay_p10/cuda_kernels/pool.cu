// pool.cu — pooling: max_pool (with indices), avg_pool, adaptive_avg_pool and adaptive_max_pool, for 1, 2 and
// 3 spatial dims.
//
// Where it sits: launched by csrc/cuda/ops_pool.cpp (sliding windows) and ops_pool_adaptive.cpp (windows from
// the output size). The host sees the input as planes (Note [Pooling planes] in kernels/pool.h): a contiguous
// [planes, D, H, W] with size-1 leading spatial dims for the 1-d and 2-d ops, so one kernel body serves every
// rank. One thread per output element, grid-stride; the output (and indices) are contiguous
// [planes, oD, oH, oW]. The window rules are the CPU's, in the same arithmetic:
//   Note [Pooling windows] (kernels/pool.cpp): taps o * s - p + j * d, padding skipped (max) or counted (avg);
//   the index of a max is flat within its plane (d * H * W + h * W + w); a NaN wins, the last NaN of the scan;
//   Note [Adaptive windows] (kernels/pool_adaptive.cpp): [floor(o * in / out), ceil((o + 1) * in / out)).
// Sums and comparisons are in OpMath (float32 for float16/bfloat16); avg_pool on int64 divides as integers
// (truncating), as the CPU and PyTorch do.
#include "common.cuh"

// The host's PoolWindow (csrc/cuda/pool.h), field for field; D, H, W order.
struct PoolWindow {
  int64 in[3], out[3], k[3], s[3], p[3], d[3];
};

// The smallest value of an opmath type: the max's starting point, as the CPU's (-inf for floats).
template <typename M> __device__ __forceinline__ M lowest();
template <> __device__ __forceinline__ float lowest<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double lowest<double>() { return -__longlong_as_double(0x7ff0000000000000ll); }
template <> __device__ __forceinline__ uint8 lowest<uint8>() { return 0; }
template <> __device__ __forceinline__ int8 lowest<int8>() { return -128; }
template <> __device__ __forceinline__ int16 lowest<int16>() { return -32768; }
template <> __device__ __forceinline__ int32 lowest<int32>() { return -2147483647 - 1; }
template <> __device__ __forceinline__ int64 lowest<int64>() { return -9223372036854775807ll - 1; }

template <typename M> __device__ __forceinline__ bool is_nan(M v) { return v != v; }  // false for integers
__device__ __forceinline__ int64 imin(int64 a, int64 b) { return a < b ? a : b; }
__device__ __forceinline__ int64 imax(int64 a, int64 b) { return a > b ? a : b; }

// Output element i as (plane, od, oh, ow), in the index type I: int64, or int where the host has checked that
// every index fits (max_pool32_*).
template <typename I> struct OutPosOf {
  I plane, o[3];
};
typedef OutPosOf<int64> OutPos;
template <typename I> __device__ __forceinline__ OutPosOf<I> out_pos(const PoolWindow &w, I i) {
  OutPosOf<I> r;
  r.o[2] = i % I(w.out[2]);
  i /= I(w.out[2]);
  r.o[1] = i % I(w.out[1]);
  i /= I(w.out[1]);
  r.o[0] = i % I(w.out[0]);
  r.plane = i / I(w.out[0]);
  return r;
}

// ---- max_pool ---------------------------------------------------------------------------------------------
// kernels/pool.cpp's max_range: the first tap at or after the window start that lies inside [0, in), and the
// exclusive end.
template <typename I> __device__ __forceinline__ void max_range(I o, I k, I s, I p, I dil, I in, I &b, I &e) {
  b = o * s - p;
  e = b + (k - 1) * dil + 1;
  if (e > in) e = in;
  while (b < 0) b += dil;
}

// Note [32-bit pooling indices]
//   One thread per output element; it finds its (plane, od, oh, ow) with three divisions and scans its
//   window. A max pool reads each input about k*k/s^2 times (from L1/L2) and does little arithmetic, so
//   with 64-bit indices the divisions and the window arithmetic (software routines for 64-bit division,
//   two instructions per 64-bit add) cost more than the memory traffic. max_pool32_* does the same in int
//   (hardware 32-bit arithmetic), taken by the host when the input, the output and each dim's window
//   arithmetic stay below 2^30 (ops_pool.cpp, pool_fits_int32); the index it writes is still an int64.
template <typename T, typename I>
__device__ void max_pool(int64 total, const PoolWindow &w, T *y, int64 *ind, const T *x) {
  typedef typename OpMath<T>::type M;
  const I D = I(w.in[0]), H = I(w.in[1]), W = I(w.in[2]), dd = I(w.d[0]), dh = I(w.d[1]), dw = I(w.d[2]);
  TP_GRID_STRIDE(i, total) {
    const OutPosOf<I> q = out_pos<I>(w, I(i));
    I b[3], e[3];
    for (int j = 0; j < 3; ++j)
      max_range<I>(q.o[j], I(w.k[j]), I(w.s[j]), I(w.p[j]), I(w.d[j]), I(w.in[j]), b[j], e[j]);
    const T *plane = x + q.plane * D * H * W;
    M best = lowest<M>();
    I at = (b[0] * H + b[1]) * W + b[2];
    for (I id = b[0]; id < e[0]; id += dd)
      for (I ih = b[1]; ih < e[1]; ih += dh)
        for (I iw = b[2]; iw < e[2]; iw += dw) {
          const I at_i = (id * H + ih) * W + iw;
          const M v = load(plane[at_i]);
          if (v > best || is_nan(v)) best = v, at = at_i;
        }
    y[i] = store<T>(best);
    if (ind) ind[i] = int64(at);
  }
}

// ---- avg_pool ---------------------------------------------------------------------------------------------
// The window [b, e) along one dim clipped to the input, and its size when the padding counts.
__device__ __forceinline__ int64 avg_range(int64 o, int64 k, int64 s, int64 p, int64 in, int64 &b, int64 &e) {
  b = o * s - p;
  e = imin(b + k, in + p);
  const int64 padded = e - b;
  b = imax(b, 0);
  e = imin(e, in);
  return padded;
}

// divisor == 0: no divisor_override (the op refuses 0 as an override).
template <typename T>
__device__ void avg_pool(int64 total, const PoolWindow &w, int count_include_pad, int64 divisor, T *y, const T *x) {
  typedef typename OpMath<T>::type M;
  const int64 D = w.in[0], H = w.in[1], W = w.in[2];
  TP_GRID_STRIDE(i, total) {
    const OutPos q = out_pos(w, i);
    int64 b[3], e[3], padded = 1;
    for (int j = 0; j < 3; ++j) padded *= avg_range(q.o[j], w.k[j], w.s[j], w.p[j], w.in[j], b[j], e[j]);
    if (b[0] >= e[0] || b[1] >= e[1] || b[2] >= e[2]) {  // wholly in the padding
      y[i] = store<T>(M(0));
      continue;
    }
    const T *plane = x + q.plane * D * H * W;
    M sum = M(0);
    for (int64 id = b[0]; id < e[0]; ++id)
      for (int64 ih = b[1]; ih < e[1]; ++ih) {
        const T *row = plane + (id * H + ih) * W;
        for (int64 iw = b[2]; iw < e[2]; ++iw) sum += load(row[iw]);
      }
    const int64 n = divisor ? divisor : count_include_pad ? padded : (e[0] - b[0]) * (e[1] - b[1]) * (e[2] - b[2]);
    y[i] = store<T>(sum / M(n));
  }
}

// ---- adaptive pooling ---------------------------------------------------------------------------------------
// floor(o * in / out) and ceil((o + 1) * in / out), written as the CPU (and PyTorch) does.
__device__ __forceinline__ int64 window_start(int64 o, int64 out, int64 in) { return (o / out) * in + ((o % out) * in) / out; }
__device__ __forceinline__ int64 window_end(int64 o, int64 out, int64 in) { return 1 + ((o + 1) * in - 1) / out; }

template <typename T, bool Max>
__device__ void adaptive_pool(int64 total, const PoolWindow &w, T *y, int64 *ind, const T *x) {
  typedef typename OpMath<T>::type M;
  const int64 D = w.in[0], H = w.in[1], W = w.in[2];
  TP_GRID_STRIDE(i, total) {
    const OutPos q = out_pos(w, i);
    int64 b[3], e[3];
    for (int j = 0; j < 3; ++j) b[j] = window_start(q.o[j], w.out[j], w.in[j]), e[j] = window_end(q.o[j], w.out[j], w.in[j]);
    const T *plane = x + q.plane * D * H * W;
    if (Max) {
      M best = lowest<M>();
      int64 at = (b[0] * H + b[1]) * W + b[2];
      for (int64 id = b[0]; id < e[0]; ++id)
        for (int64 ih = b[1]; ih < e[1]; ++ih)
          for (int64 iw = b[2]; iw < e[2]; ++iw) {
            const int64 at_i = (id * H + ih) * W + iw;
            const M v = load(plane[at_i]);
            if (v > best || is_nan(v)) best = v, at = at_i;
          }
      y[i] = store<T>(best);
      ind[i] = at;
    } else {
      M sum = M(0);
      for (int64 id = b[0]; id < e[0]; ++id)
        for (int64 ih = b[1]; ih < e[1]; ++ih) {
          const T *row = plane + (id * H + ih) * W;
          for (int64 iw = b[2]; iw < e[2]; ++iw) sum += load(row[iw]);
        }
      y[i] = store<T>(sum / M((e[0] - b[0]) * (e[1] - b[1]) * (e[2] - b[2])));
    }
  }
}

// ---- entry points -------------------------------------------------------------------------------------------
#define TP_MAX_POOL(T)                                                                                     \
  extern "C" __global__ void max_pool_##T(int64 total, PoolWindow w, T *y, int64 *ind, const T *x) {      \
    max_pool<T, int64>(total, w, y, ind, x);                                                               \
  }                                                                                                        \
  extern "C" __global__ void max_pool32_##T(int64 total, PoolWindow w, T *y, int64 *ind, const T *x) {    \
    max_pool<T, int>(total, w, y, ind, x);                                                                 \
  }
#define TP_AVG_POOL(T)                                                                                     \
  extern "C" __global__ void avg_pool_##T(int64 total, PoolWindow w, int count_include_pad, int64 divisor, \
                                          T *y, const T *x) {                                              \
    avg_pool<T>(total, w, count_include_pad, divisor, y, x);                                               \
  }
#define TP_ADAPTIVE_POOL(T)                                                                                \
  extern "C" __global__ void adaptive_avg_pool_##T(int64 total, PoolWindow w, T *y, const T *x) {         \
    adaptive_pool<T, false>(total, w, y, 0, x);                                                            \
  }                                                                                                        \
  extern "C" __global__ void adaptive_max_pool_##T(int64 total, PoolWindow w, T *y, int64 *ind, const T *x) { \
    adaptive_pool<T, true>(total, w, y, ind, x);                                                           \
  }
TP_MAX_POOL(uint8)
TP_MAX_POOL(int8)
TP_MAX_POOL(int16)
TP_MAX_POOL(int32)
TP_MAX_POOL(int64)
TP_MAX_POOL(float16)
TP_MAX_POOL(bfloat16)
TP_MAX_POOL(float32)
TP_MAX_POOL(float64)
TP_AVG_POOL(int64)
TP_AVG_POOL(float16)
TP_AVG_POOL(bfloat16)
TP_AVG_POOL(float32)
TP_AVG_POOL(float64)
TP_ADAPTIVE_POOL(float16)
TP_ADAPTIVE_POOL(bfloat16)
TP_ADAPTIVE_POOL(float32)
TP_ADAPTIVE_POOL(float64)
