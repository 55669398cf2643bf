// search.cu — unique and unique_consecutive (group starts, scattered), searchsorted (a binary search per value),
// histc and bincount (atomic counts).
//
// Where it sits: launched by csrc/cuda/ops_search.cpp. unique runs on a row that sort.cu has sorted (values and
// their original positions); unique_consecutive on the data as it is. The group numbers are an inclusive scan
// of "starts a new group" flags (sort.cu's scan kernels). Comparisons follow kernels/sort.cpp: `==` for
// grouping (every NaN its own group, -0.0 == 0.0), less_nan_last for searching.
#include "common.cuh"

typedef unsigned long long u64;

// ---- unique ---------------------------------------------------------------------------------------------------
// flags[p] = 1 when element p starts a group (differs from p - 1 under ==).
template <typename T> __device__ void unique_flags(int64 n, const T *v, int64 *flags) {
  TP_GRID_STRIDE(p, n) flags[p] = (p == 0 || !(load(v[p]) == load(v[p - 1]))) ? 1 : 0;
}

// `group` is the inclusive scan of the flags: group[p] - 1 is p's group. A group's first element gives its
// value and start; `order` (the sorted positions, or null for unique_consecutive) sends each element's group
// number back to where the element was.
template <typename T>
__device__ void unique_scatter(int64 n, const T *v, const int64 *group, const int64 *order, T *values,
                               int64 *inverse, int64 *starts) {
  TP_GRID_STRIDE(p, n) {
    const int64 g = group[p] - 1;
    if (p == 0 || group[p] != group[p - 1]) {
      values[g] = v[p];
      starts[g] = p;
    }
    inverse[order ? order[p] : p] = g;
  }
}

extern "C" __global__ void unique_counts(int64 u, int64 n, const int64 *starts, int64 *counts) {
  TP_GRID_STRIDE(g, u) counts[g] = (g + 1 < u ? starts[g + 1] : n) - starts[g];
}

// ---- searchsorted -----------------------------------------------------------------------------------------------
template <typename T> __device__ __forceinline__ bool less_nan_last(T a, T b) {
  const typename OpMath<T>::type x = load(a), y = load(b);
  if (x != x) return false;
  if (y != y) return true;
  return x < y;
}

// For value i, its insertion point in its row of the sequence (row i / per_row, or the one row when `shared`):
// left = the first j with !(seq[j] < v), right = the first j with v < seq[j]. With `sorter`, the row's j-th
// element is seq[row][sorter[row][j]] (what the CPU's gather builds).
template <typename T>
__device__ void searchsorted(int64 nv, int64 m, int64 per_row, int shared, const T *seq, const int64 *sorter,
                             const T *values, int right, int64 *out) {
  TP_GRID_STRIDE(i, nv) {
    const int64 base = shared ? 0 : (i / per_row) * m;
    const T v = values[i];
    int64 lo = 0, hi = m;
    while (lo < hi) {
      const int64 mid = lo + ((hi - lo) >> 1);
      const T s = seq[base + (sorter ? sorter[base + mid] : mid)];
      if (right ? !less_nan_last(v, s) : less_nan_last(s, v)) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
}

// *first_bad = the first position of a sorter entry outside [0, m) (the host starts it at n and raises, naming
// that entry, before any search reads through the sorter).
extern "C" __global__ void sorter_check(int64 n, int64 m, const int64 *sorter, u64 *first_bad) {
  TP_GRID_STRIDE(i, n) if (sorter[i] < 0 || sorter[i] >= m) atomicMin(first_bad, u64(i));
}

// ---- histc ------------------------------------------------------------------------------------------------------
// The data's range when histc is called with min == max: the CPU takes std::min_element/max_element, which
// skip NaNs unless the first element is one (then it stays the answer). So: min and max over the numbers,
// and x[0] beside them; minmax_final picks.
__device__ __forceinline__ double pos_inf() { return __longlong_as_double(0x7ff0000000000000ll); }

__device__ __forceinline__ void block_minmax(double &lo, double &hi) {
  __shared__ double s_lo[32], s_hi[32];
  for (int o = 16; o > 0; o >>= 1) {
    lo = fmin(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = fmax(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  if (lane == 0) {
    s_lo[warp] = lo;
    s_hi[warp] = hi;
  }
  __syncthreads();
  lo = s_lo[0];
  hi = s_hi[0];
  for (int w = 1; w < nwarps; ++w) {
    lo = fmin(lo, s_lo[w]);
    hi = fmax(hi, s_hi[w]);
  }
}

// partial[2b], partial[2b+1]: block b's min and max over numbers; partial[2 * gridDim.x] = x[0].
template <typename T> __device__ void minmax_partial(int64 n, const T *x, double *partial) {
  double lo = pos_inf(), hi = -pos_inf();
  TP_GRID_STRIDE(i, n) {
    const double v = double(load(x[i]));
    if (v == v) {
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
  }
  block_minmax(lo, hi);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = lo;
    partial[2 * blockIdx.x + 1] = hi;
    if (blockIdx.x == 0) partial[2 * gridDim.x] = double(load(x[0]));
  }
}

// One block: out[0], out[1] = the range the CPU would find.
extern "C" __global__ void minmax_final(int nparts, const double *partial, double *out) {
  double lo = pos_inf(), hi = -pos_inf();
  for (int b = threadIdx.x; b < nparts; b += blockDim.x) {
    lo = fmin(lo, partial[2 * b]);
    hi = fmax(hi, partial[2 * b + 1]);
  }
  block_minmax(lo, hi);
  if (threadIdx.x == 0) {
    const double x0 = partial[2 * nparts];
    out[0] = x0 != x0 ? x0 : lo;
    out[1] = x0 != x0 ? x0 : hi;
  }
}

// The CPU's bin: int64((v - lo) * bins / (hi - lo)) in float64, clamped to the last bin; values outside
// [lo, hi] (and NaN) are skipped. The _rn intrinsics keep the CPU's rounding (no fused multiply-add).
template <typename T> __device__ void histc_count(int64 n, const T *x, int64 bins, double lo, double hi, u64 *counts) {
  TP_GRID_STRIDE(i, n) {
    const double v = double(load(x[i]));
    if (!(v >= lo && v <= hi)) continue;
    int64 b = int64(__ddiv_rn(__dmul_rn(__dsub_rn(v, lo), double(bins)), __dsub_rn(hi, lo)));
    if (b > bins - 1) b = bins - 1;
    atomicAdd(&counts[b], 1ull);
  }
}

// ---- bincount ---------------------------------------------------------------------------------------------------
// stats[0] = the largest value (the host starts it at -1), stats[1] = the first negative value's index (the host
// starts it at n): a warp combines its lanes first, so only one atomic per warp.
extern "C" __global__ void bincount_stats(int64 n, const int64 *x, long long *stats) {
  long long mx = -1;
  u64 first = u64(n);
  TP_GRID_STRIDE(i, n) {
    const int64 v = x[i];
    if (v > mx) mx = v;
    if (v < 0 && u64(i) < first) first = u64(i);
  }
  for (int o = 16; o > 0; o >>= 1) {
    const long long om = __shfl_xor_sync(0xffffffffu, mx, o);
    const u64 of = __shfl_xor_sync(0xffffffffu, first, o);
    mx = om > mx ? om : mx;
    first = of < first ? of : first;
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&stats[0], mx);
    atomicMin(reinterpret_cast<u64 *>(&stats[1]), first);
  }
}

extern "C" __global__ void bincount_count(int64 n, const int64 *x, u64 *counts) {
  TP_GRID_STRIDE(i, n) atomicAdd(&counts[x[i]], 1ull);
}

// Weighted: float64 sums (the CPU's accumulator); atomics make the order of the additions vary.
extern "C" __global__ void bincount_weighted(int64 n, const int64 *x, const double *w, double *sums) {
  TP_GRID_STRIDE(i, n) atomicAdd(&sums[x[i]], w[i]);
}

#define TP_SEARCH(T)                                                                                        \
  extern "C" __global__ void unique_flags_##T(int64 n, const T *v, int64 *flags) { unique_flags<T>(n, v, flags); } \
  extern "C" __global__ void unique_scatter_##T(int64 n, const T *v, const int64 *group, const int64 *order,   \
                                                T *values, int64 *inverse, int64 *starts) {                 \
    unique_scatter<T>(n, v, group, order, values, inverse, starts);                                         \
  }                                                                                                         \
  extern "C" __global__ void searchsorted_##T(int64 nv, int64 m, int64 per_row, int shared, const T *seq,     \
                                              const int64 *sorter, const T *values, int right, int64 *out) { \
    searchsorted<T>(nv, m, per_row, shared, seq, sorter, values, right, out);                               \
  }
TP_SEARCH(bool)
TP_SEARCH(uint8)
TP_SEARCH(int8)
TP_SEARCH(int16)
TP_SEARCH(int32)
TP_SEARCH(int64)
TP_SEARCH(float16)
TP_SEARCH(bfloat16)
TP_SEARCH(float32)
TP_SEARCH(float64)

#define TP_HISTC(T)                                                                                         \
  extern "C" __global__ void minmax_partial_##T(int64 n, const T *x, double *partial) {                     \
    minmax_partial<T>(n, x, partial);                                                                       \
  }                                                                                                         \
  extern "C" __global__ void histc_count_##T(int64 n, const T *x, int64 bins, double lo, double hi,          \
                                             u64 *counts) {                                                 \
    histc_count<T>(n, x, bins, lo, hi, counts);                                                             \
  }
TP_HISTC(float16)
TP_HISTC(bfloat16)
TP_HISTC(float32)
TP_HISTC(float64)
