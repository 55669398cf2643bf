// reduce_stats.cu — var/std (and var_mean, std_mean), logsumexp and vector norms on the device.
//
// Where it sits: launched by csrc/cuda/ops_reduce_stats.cpp through the plan of csrc/cuda/reduce.h; the loops
// are reduce_common.cuh's. Floats only (the host casts integers where the CPU op does); arithmetic in Acc
// (float32 for 16-bit floats and float32, float64 for float64), results stored as T.
#include "reduce_common.cuh"

template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double m_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float m_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double m_pow(double x, double y) { return pow(x, y); }

// Note [Welford on the device]
//   Each thread keeps (n, mean, M2 = sum (x - mean)^2) with Welford's update, and states meet by Chan et al.'s
//   merge — the device form of the CPU's Note [Moments]. Nothing ever forms sum(x^2) - sum(x)^2, so a large
//   common offset (1e4 + noise in float32) costs no digits. `p` is the correction; mode bit 0 takes the square
//   root (std), bit 1 also writes the mean to out1 (var_mean, std_mean). n is an int64: float32 counts stop
//   being exact past 2^24 elements.
template <typename T> struct VarOp {
  typedef typename Acc<T>::type A;
  struct S {
    A mean;
    A m2;
    int64 n;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{A(0), A(0), 0}; }
  __device__ __forceinline__ S step(S a, T x, int64) const {
    const A v = A(load(x));
    a.n += 1;
    const A d = v - a.mean;
    a.mean += d / A(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  __device__ __forceinline__ S merge(S a, S b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64 n = a.n + b.n;
    const A d = b.mean - a.mean, fb = A(b.n) / A(n);
    return S{a.mean + d * fb, a.m2 + b.m2 + d * d * A(a.n) * fb, n};
  }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *out1) const {
    const double div = double(a.n) - p;
    A v = a.m2 / A(div > 0 ? div : 0.0);  // n <= correction: m2 / 0, inf or NaN as on the CPU
    if (a.n == 0) v = nan_of(A(0));
    if (mode & 1) v = m_sqrt(v);
    reinterpret_cast<T *>(out0)[o] = store<T>(v);
    if (mode & 2) reinterpret_cast<T *>(out1)[o] = store<T>(a.n ? a.mean : nan_of(A(0)));
  }
};

// Note [Welford in batches]
//   Welford's update costs a division per element, and at memory speed (about a trillion float32 elements a
//   second on an H200) that division, not the memory, would set the pace. The loops hand a thread's elements
//   over in batches of N (a 16-byte vector of a row, or 4 rows of a column; N a power of two): the batch's own
//   (N, mean, M2) is exact two-pass arithmetic — mean = sum * (1/N), exact for a power of two, and
//   M2 = sum (x - mean)^2 — and it joins the running state by Chan's merge, one division per batch. Same
//   stability (no sum(x^2) - sum(x)^2 anywhere), a fraction of the instructions.
template <typename T, int N>
__device__ __forceinline__ typename VarOp<T>::S fold_batch(const VarOp<T> &op, typename VarOp<T>::S s,
                                                           const T (&x)[N], int64, int64) {
  typedef typename VarOp<T>::A A;
  A v[N], sum = A(0);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    v[k] = A(load(x[k]));
    sum += v[k];
  }
  const A mean = sum * A(1.0 / N);
  A m2 = A(0);
#pragma unroll
  for (int k = 0; k < N; ++k) m2 += (v[k] - mean) * (v[k] - mean);
  return op.merge(s, typename VarOp<T>::S{mean, m2, int64(N)});
}

// The row loop's batch of G vectors (reduce_common.cuh fold_vectors) as ONE batch of G * V elements (16 for
// float32: one merge, so one division, per 16 elements). 2-byte types (V = 8) keep a batch per vector: 32
// elements at once would hold 32 float32 values in registers.
template <typename T, int G>
__device__ __forceinline__ typename VarOp<T>::S fold_vectors(const VarOp<T> &op, typename VarOp<T>::S s,
                                                             const Vec16<T> (&v)[G], int64 idx, int64 stride) {
  const int V = 16 / sizeof(T);
  if constexpr (G * V <= 16) {
    T x[G * V];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int k = 0; k < V; ++k) x[g * V + k] = v[g].v[k];
    return fold_batch(op, s, x, idx, 1);  // the indices are not used
  } else {
#pragma unroll
    for (int g = 0; g < G; ++g) s = fold_batch(op, s, v[g].v, idx + g * stride, 1);
    return s;
  }
}

// Note [Online logsumexp]
//   The state (m, s) stands for s * e^m: m is the largest element seen and s the sum of e^(x - m). A larger x
//   rescales s; merging rescales the smaller side. Equal m's (two +inf, or -inf and -inf) add without forming
//   inf - inf, so the CPU's rule (an infinite max is replaced by 0) gives the same answers: a row holding +inf
//   gives +inf, a row of -inf (or an empty row) gives -inf. A NaN element makes s NaN (e^NaN), which then stays.
template <typename T> struct LogSumExpOp {
  typedef typename Acc<T>::type A;
  struct S {
    A m;
    A s;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{-inf_of(A(0)), A(0)}; }
  __device__ __forceinline__ S step(S a, T x, int64) const {
    const A v = A(load(x));
    if (v > a.m) return S{v, a.s * m_exp(a.m - v) + A(1)};
    if (v == a.m) return S{a.m, a.s + A(1)};
    return S{a.m, a.s + m_exp(v - a.m)};  // v < m, or v NaN
  }
  __device__ __forceinline__ S merge(S a, S b) const {
    if (b.m > a.m) {
      const S t = a;
      a = b;
      b = t;
    }
    if (a.m == b.m) return S{a.m, a.s + b.s};
    return S{a.m, a.s + b.s * m_exp(b.m - a.m)};
  }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<T *>(out0)[o] = store<T>(m_log(a.s) + a.m);
  }
};

// Vector p-norms (mode): 0: p = 2, 1: p = 1, 2: inf (max |x|), 3: -inf (min |x|), 4: p = 0 (count of
// non-zeros), 5: any other p (in `p`), (sum |x|^p)^(1/p). NaN propagates through the max and min.
template <typename T> struct NormOp {
  typedef typename Acc<T>::type A;
  struct S {
    A v;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{mode == 3 ? inf_of(A(0)) : A(0)}; }
  __device__ __forceinline__ S merge(S a, S b) const {
    if (mode == 2 || mode == 3) {
      if (is_nan(a.v)) return a;
      if (is_nan(b.v)) return b;
      return (mode == 2 ? b.v > a.v : b.v < a.v) ? b : a;
    }
    return S{a.v + b.v};
  }
  __device__ __forceinline__ S step(S a, T x, int64) const {
    const A v = A(load(x)), av = v < A(0) ? -v : v;  // |NaN| stays NaN
    switch (mode) {
      case 0: return S{a.v + av * av};
      case 1: return S{a.v + av};
      case 4: return S{a.v + A(av != A(0))};
      case 5: return S{a.v + m_pow(av, A(p))};
      default: return merge(a, S{av});
    }
  }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    A r = a.v;
    if (mode == 0) r = m_sqrt(r);
    else if (mode == 5) r = m_pow(r, A(1.0 / p));
    reinterpret_cast<T *>(out0)[o] = store<T>(r);
  }
};

TP_REDUCE_FLOATS(var, VarOp)
TP_REDUCE_FLOATS(logsumexp, LogSumExpOp)
TP_REDUCE_FLOATS(norm, NormOp)
