// order_stats.cu — median, nanmedian, mode and quantile, read off rows that sort.cu has already sorted.
//
// Where it sits: launched by csrc/cuda/ops_order_stats.cpp after sort_rows (csrc/cuda/sort.h) has ordered each
// row by (value, index) with NaNs last. A sorted row makes every statistic a lookup, so these kernels take one
// thread per output; they match kernels/reduce_order.cpp's choices element for element:
//   median:    the first NaN (in index order) when the row has one, else the lower median (len - 1) / 2;
//   nanmedian: the lower median of the m non-NaN values, or the first NaN when m == 0;
//   mode:      the longest run of equal values (NaNs equal to each other), the smallest on ties, and the last
//              index of that value in the row (the run's last element: ties in a run are in index order);
//   quantile:  ranks lo = floor(q (m - 1)), hi = ceil(...), mixed as the interpolation says, NaN when the row
//              has a NaN (quantile) or no numbers (nanquantile).
#include "common.cuh"

template <typename T> __device__ __forceinline__ bool is_nan_value(T v) {
  const typename OpMath<T>::type a = load(v);
  return a != a;
}

// Position of the first NaN of a sorted row (NaNs sort last): the count of its numbers.
template <typename T> __device__ __forceinline__ int64 first_nan(const T *row, int64 len) {
  int64 lo = 0, hi = len;
  while (lo < hi) {
    const int64 mid = (lo + hi) >> 1;
    if (is_nan_value(row[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// out_i may be null (median() of the whole tensor has no index).
template <typename T>
__device__ void median_pick(int64 rows, int64 len, int ignore_nan, const T *values, const int64 *indices, T *out_v,
                            int64 *out_i) {
  TP_GRID_STRIDE(r, rows) {
    const T *row = values + r * len;
    const int64 m = first_nan(row, len);
    const int64 pos = ignore_nan ? (m == 0 ? 0 : (m - 1) / 2) : (m < len ? m : (len - 1) / 2);
    out_v[r] = row[pos];
    if (out_i) out_i[r] = indices[r * len + pos];
  }
}

template <typename T> __device__ __forceinline__ bool same_value(T a, T b) {
  const typename OpMath<T>::type x = load(a), y = load(b);
  return x == y || (x != x && y != y);
}

// One thread walks a whole row: mode is rarely hot, and the walk is a single pass over sorted data.
template <typename T>
__device__ void mode_rows(int64 rows, int64 len, const T *values, const int64 *indices, T *out_v, int64 *out_i) {
  TP_GRID_STRIDE(r, rows) {
    const T *row = values + r * len;
    int64 best_len = 0, best_end = 0;
    for (int64 i = 0; i < len;) {
      int64 j = i + 1;
      while (j < len && same_value(row[j], row[i])) ++j;
      if (j - i > best_len) {  // strictly longer: the smallest value wins ties
        best_len = j - i;
        best_end = j - 1;
      }
      i = j;
    }
    out_v[r] = row[best_end];
    out_i[r] = indices[r * len + best_end];
  }
}

// PyTorch's lerp, exact at both ends; the _rn intrinsics keep NVRTC from fusing into an FMA, so the rounding is
// the CPU's (separate multiply and add).
__device__ __forceinline__ float lerp_rn(float a, float b, float w) {
  return w < 0.5f ? __fadd_rn(a, __fmul_rn(w, __fsub_rn(b, a)))
                  : __fsub_rn(b, __fmul_rn(__fsub_rn(b, a), __fsub_rn(1.0f, w)));
}
__device__ __forceinline__ double lerp_rn(double a, double b, double w) {
  return w < 0.5 ? __dadd_rn(a, __dmul_rn(w, __dsub_rn(b, a)))
                 : __dsub_rn(b, __dmul_rn(__dsub_rn(b, a), __dsub_rn(1.0, w)));
}

// interp: 0 linear, 1 lower, 2 higher, 3 midpoint, 4 nearest (ops_order_stats.cpp's kInterpolations).
// out is [nq, rows]: out[k * rows + r] is q[k]'s quantile of row r.
template <typename T>
__device__ void quantile_rows(int64 rows, int64 len, const T *values, int64 nq, const double *qs, int ignore_nan,
                              int interp, T *out) {
  TP_GRID_STRIDE(t, rows * nq) {
    const int64 k = t / rows, r = t - k * rows;
    const T *row = values + r * len;
    const int64 m = first_nan(row, len);
    T res;
    if ((m < len && !ignore_nan) || m == 0) {
      res = T(__int_as_float(0x7fc00000));
    } else {
      const double rank = __dmul_rn(qs[k], double(m - 1));
      const int64 lo = int64(floor(rank)), hi = int64(ceil(rank));
      if (interp == 1) res = row[lo];
      else if (interp == 2) res = row[hi];
      else if (interp == 4) res = row[int64(rint(rank))];
      else if (interp == 3) res = lerp_rn(row[lo], row[hi], T(0.5));
      else res = lerp_rn(row[lo], row[hi], T(__dsub_rn(rank, double(lo))));
    }
    out[t] = res;
  }
}

#define TP_MEDIAN(T)                                                                                        \
  extern "C" __global__ void median_pick_##T(int64 rows, int64 len, int ignore_nan, const T *values,         \
                                             const int64 *indices, T *out_v, int64 *out_i) {                \
    median_pick<T>(rows, len, ignore_nan, values, indices, out_v, out_i);                                   \
  }
#define TP_MODE(T)                                                                                          \
  extern "C" __global__ void mode_rows_##T(int64 rows, int64 len, const T *values, const int64 *indices,     \
                                           T *out_v, int64 *out_i) {                                        \
    mode_rows<T>(rows, len, values, indices, out_v, out_i);                                                 \
  }
#define TP_ORDER_STATS(T) TP_MEDIAN(T) TP_MODE(T)
TP_MODE(bool)
TP_ORDER_STATS(uint8)
TP_ORDER_STATS(int8)
TP_ORDER_STATS(int16)
TP_ORDER_STATS(int32)
TP_ORDER_STATS(int64)
TP_ORDER_STATS(float16)
TP_ORDER_STATS(bfloat16)
TP_ORDER_STATS(float32)
TP_ORDER_STATS(float64)

#define TP_QUANTILE(T)                                                                                      \
  extern "C" __global__ void quantile_rows_##T(int64 rows, int64 len, const T *values, int64 nq,             \
                                               const double *qs, int ignore_nan, int interp, T *out) {      \
    quantile_rows<T>(rows, len, values, nq, qs, ignore_nan, interp, out);                                   \
  }
TP_QUANTILE(float32)
TP_QUANTILE(float64)
