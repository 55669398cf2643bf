// linalg.cu — the small kernels around cuSOLVER's factorisations: det/slogdet/logdet from an LU factorisation,
// mirroring a triangle (zeroing one is tril_/triu_), the zero-diagonal check of least squares and the NaN check of the SVD.
//
// Where it sits: launched by csrc/cuda/linalg.cpp for the ops in csrc/cuda/ops_linalg_*.cpp. Every matrix is
// column-major and a batch is contiguous (Note [Row-major matrices in cuSOLVER] in csrc/cuda/linalg.h): element
// (b, i, j) of a batch of rows x cols matrices is at b*rows*cols + i + j*rows. The formulas are the CPU's
// (kernels/linalg_lu.cpp, linalg_cholesky.cpp), in the same order, so a determinant overflows or underflows
// where the CPU's does. float32 and float64 only, as cuSOLVER.
#include "common.cuh"

__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float m_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double m_abs(double x) { return fabs(x); }
template <typename T> __device__ __forceinline__ T neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double neg_inf<double>() { return -__longlong_as_double(0x7ff0000000000000ll); }
template <typename T> __device__ __forceinline__ T quiet_nan();
template <> __device__ __forceinline__ float quiet_nan<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double quiet_nan<double>() { return __longlong_as_double(0x7ff8000000000000ll); }

// One thread per matrix of an n x n LU factorisation P A = L U (getrf's, pivots 1-based): det(A) = sign(P) *
// prod(diag(U)). kind 0: det into out. kind 1: slogdet, the sign (0 when singular) into out and log|det| (-inf
// when singular) into logabs. kind 2: logdet into out, NaN for a negative determinant. A loop over the diagonal
// per thread: O(n) next to the O(n^3) factorisation, and the CPU's order of products.
template <typename T>
__device__ void det_from_lu(int64 batch, int64 n, const T *lu, const int *piv, T *out, T *logabs, int kind) {
  TP_GRID_STRIDE(b, batch) {
    const T *a = lu + b * n * n;
    const int *p = piv + b * n;
    if (kind == 0) {
      T d = T(1);
      for (int64 i = 0; i < n; ++i) {
        d *= a[i + i * n];
        if (p[i] != i + 1) d = -d;
      }
      out[b] = d;
      continue;
    }
    T sign = T(1), la = T(0);
    for (int64 i = 0; i < n; ++i) {
      const T v = a[i + i * n], av = m_abs(v);
      if (av == T(0)) {
        sign = T(0);
        la = neg_inf<T>();
        break;
      }
      sign *= v / av;
      la += m_log(av);
      if (p[i] != i + 1) sign = -sign;
    }
    if (kind == 1) {
      out[b] = sign;
      logabs[b] = la;
    } else {  // the log of a negative determinant is NaN; of a zero one, -inf
      out[b] = sign < T(0) ? quiet_nan<T>() : la;
    }
  }
}

// Mirror one triangle of every n x n matrix onto the other (potri writes one triangle of a symmetric inverse).
// Each thread of a lower-triangle element (i > j) moves one value between (i, j) and (j, i): from the upper one
// when `from_upper`, else to it. The triangle read is never written, so no thread races another.
template <typename T> __device__ void mirror_triangle(int64 total, int64 n, T *a, int from_upper) {
  TP_GRID_STRIDE(e, total) {
    const int64 i = e % n, j = (e / n) % n;
    if (i <= j) continue;
    const int64 mirror = e - i - j * n + j + i * n;  // (j, i) of the same matrix
    if (from_upper) a[e] = a[mirror];
    else a[mirror] = a[e];
  }
}

// info[b] = 1 + the first i < k whose diagonal entry a[b*stride + i + i*ld] is zero, else 0: the check LAPACK's
// trtrs makes of the triangular factor before solving with it (gels raises on it).
template <typename T>
__device__ void zero_diagonal_info(int64 batch, int64 k, int64 ld, int64 stride, const T *a, int *info) {
  TP_GRID_STRIDE(b, batch) {
    int r = 0;
    for (int64 i = 0; i < k; ++i)
      if (a[b * stride + i + i * ld] == T(0)) {
        r = int(i) + 1;
        break;
      }
    info[b] = r;
  }
}

// flag[e / per] = 1 for every NaN element e. Threads of one matrix may store at once: they store the same value.
template <typename T> __device__ void nan_flags(int64 total, int64 per, const T *a, int *flag) {
  TP_GRID_STRIDE(e, total) {
    if (a[e] != a[e]) flag[e / per] = 1;
  }
}

#define TP_LINALG(T)                                                                                        \
  extern "C" __global__ void det_from_lu_##T(int64 batch, int64 n, const T *lu, const int *piv, T *out,     \
                                              T *logabs, int kind) {                                        \
    det_from_lu(batch, n, lu, piv, out, logabs, kind);                                                      \
  }                                                                                                         \
  extern "C" __global__ void mirror_triangle_##T(int64 total, int64 n, T *a, int from_upper) {              \
    mirror_triangle(total, n, a, from_upper);                                                               \
  }                                                                                                         \
  extern "C" __global__ void zero_diagonal_info_##T(int64 batch, int64 k, int64 ld, int64 stride, const T *a, \
                                                     int *info) {                                           \
    zero_diagonal_info(batch, k, ld, stride, a, info);                                                      \
  }                                                                                                         \
  extern "C" __global__ void nan_flags_##T(int64 total, int64 per, const T *a, int *flag) {                 \
    nan_flags(total, per, a, flag);                                                                         \
  }
TP_LINALG(float32)
TP_LINALG(float64)
