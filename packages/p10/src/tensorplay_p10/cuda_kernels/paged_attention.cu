// paged_attention.cu — paged_attention on the device: attention of each sequence's newest T queries over keys
// and values kept in fixed-size blocks of a shared pool, read through the block table where they lie.
//
// Where it sits: launched by csrc/cuda/ops_paged_attention.cpp, which has checked the call (Note [Paged attention
// semantics] in csrc/kernels/paged_attention.h: shapes, dtypes, and the block table and lengths read back) and
// made every operand contiguous. The CPU kernel is csrc/kernels/paged_attention.cpp.
//
// Note [Paged attention on CUDA]
//   One warp per query row (b, h, i), four rows per block; rows are numbered as the output's [B, H, T] rows, so a
//   block's warps are neighbouring queries of one head (or the query heads of one key/value head at T = 1) and
//   share the key and value blocks they read through L1. The row's visible keys are 0 .. S_b - T + i; the warp
//   takes them 32 at a time, lane j computing the full dot product of key j (found through the block table),
//   then the online softmax of the CPU kernel, step for step: the block's max skips NaN scores, alpha =
//   exp(m - m_new) (0 while m is -inf), p = exp(s - m_new), l = alpha l + sum p, acc = alpha acc + p v. Each
//   lane keeps 8 accumulators, output columns lane + 32 t, so a pass covers 256 value columns (wider values take
//   more passes over the keys). Arithmetic in float32 for the 16-bit dtypes and float32, float64 for float64
//   (attention_common.cuh's Acc), as the CPU op.
#include "attention_common.cuh"

struct PagedParams {  // csrc/cuda/ops_paged_attention.cpp holds the host copy
  const void *q, *kp, *vp;  // [B, H, T, D], [N, bs, Hkv, D], [N, bs, Hkv, Dv], contiguous, one dtype
  const int64 *table, *lens;  // [B, bpr], [B]
  void *out;                  // [B, H, T, Dv]
  int64 B, H, T, D, bs, Hkv, Dv, bpr;
  double scale;
};

constexpr int kPagedRows = 4;  // warps (query rows) per block

template <typename T> __device__ void paged_rows(const PagedParams &p) {
  typedef typename Acc<T>::type A;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64 row = int64(blockIdx.x) * kPagedRows + warp;
  if (row >= p.B * p.H * p.T) return;  // the whole warp leaves: every shuffle below runs on full warps
  const int64 i = row % p.T, h = (row / p.T) % p.H, b = row / (p.T * p.H);
  const int64 hk = h / (p.H / p.Hkv);
  const int64 kend = p.lens[b] - p.T + i + 1;  // keys 0 .. S_b - T + i (the host checked T <= S_b)
  const int64 *blocks = p.table + b * p.bpr;
  const T *q = (const T *)p.q + row * p.D, *kp = (const T *)p.kp, *vp = (const T *)p.vp;
  T *o = (T *)p.out + row * p.Dv;
  const A scale = A(p.scale);
  for (int64 c0 = 0; c0 < p.Dv; c0 += 256) {
    A acc[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) acc[t] = A(0);
    A m = -a_inf<A>(), l = A(0);
    for (int64 j0 = 0; j0 < kend; j0 += 32) {
      const int64 j = j0 + lane;
      A s = -a_inf<A>();
      if (j < kend) {
        const T *kr = kp + ((blocks[j / p.bs] * p.bs + j % p.bs) * p.Hkv + hk) * p.D;
        A dot = A(0);
        for (int64 e = 0; e < p.D; ++e) dot += A(load(q[e])) * A(load(kr[e]));
        s = scale * dot;
      }
      const A bmax = warp_max_all(s);  // NaN skipped unless every lane has one; lanes past kend hold -inf
      const A mnew = bmax > m ? bmax : m;
      const A alpha = m == -a_inf<A>() ? A(0) : a_exp(m - mnew);
      const A pj = j < kend ? a_exp(s - mnew) : A(0);
      l = l * alpha + warp_sum_all(pj);
      m = mnew;
#pragma unroll
      for (int t = 0; t < 8; ++t) acc[t] *= alpha;
      const int n = int(min(int64(32), kend - j0));
      for (int jj = 0; jj < n; ++jj) {
        const A pv = __shfl_sync(0xffffffffu, pj, jj);
        const int64 jk = j0 + jj;
        const T *vr = vp + ((blocks[jk / p.bs] * p.bs + jk % p.bs) * p.Hkv + hk) * p.Dv;
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int64 e = c0 + lane + 32 * t;
          if (e < p.Dv) acc[t] += pv * A(load(vr[e]));
        }
      }
    }
    const A inv = l > A(0) ? A(1) / l : A(0);  // T <= S_b: every row sees key 0, so l > 0 (or NaN)
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const int64 e = c0 + lane + 32 * t;
      if (e < p.Dv) o[e] = store<T>(acc[t] * inv);
    }
  }
}

#define TP_PAGED(T) \
  extern "C" __global__ void paged_attention_##T(PagedParams p) { paged_rows<T>(p); }
TP_PAGED(float16)
TP_PAGED(bfloat16)
TP_PAGED(float32)
TP_PAGED(float64)
