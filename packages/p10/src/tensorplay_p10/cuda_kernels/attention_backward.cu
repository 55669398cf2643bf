// attention_backward.cu — scaled_dot_product_attention_backward: dQ, dK, dV from Q, K, V, dO and the forward's
// output O and per-row log-sum-exp, recomputing the probabilities instead of storing them.
//
// Where it sits: launched by csrc/cuda/ops_attention_backward.cpp after it reran the forward (attention.cu)
// for O and lse. Every operand is a contiguous [nb, rows, cols] tensor of one dtype T; lse and delta are Acc.
//
// Note [Flash backward]
//   With P_ij = e^(scale q_i.k_j - lse_i) (the softmax, recomputed from the saved log-sum-exp; causal: 0 for
//   j > i) and D_i = rowsum(dO_i * O_i) (= rowsum(dP_i * P_i), FlashAttention-2's delta):
//     dV_j = sum_i P_ij dO_i,  dP_ij = dO_i.v_j,  dS_ij = P_ij (dP_ij - D_i),
//     dK_j = scale sum_i dS_ij q_i,  dQ_i = scale sum_j dS_ij k_j.
//   Three kernels, no atomics: attn_bwd_delta (a warp per row: D), attn_bwd_dkdv (a warp per key row j, lanes
//   taking 32 query rows at a time, each lane's P and dS from two full dot products, then the 32 rows are
//   broadcast by shuffles into the lane's columns of dK_j and dV_j), attn_bwd_dq (a warp per query row, the
//   same with the roles swapped). The probabilities are computed twice (once per kernel): the price of never
//   adding into dQ from many blocks.
#include "attention_common.cuh"

constexpr int kWarpsPerBlock = 4;

// D_r = sum_e dO[r, e] * O[r, e] for `rows` rows of `cols` values (a warp per row).
template <typename T> __device__ void attn_bwd_delta(int64 rows, int64 cols, const T *dout, const T *out, void *delta) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const int64 r = int64(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (r >= rows) return;
  A s = A(0);
  for (int64 e = lane; e < cols; e += 32) s += A(load(dout[r * cols + e])) * A(load(out[r * cols + e]));
  s = warp_sum_all(s);
  if (lane == 0) ((A *)delta)[r] = s;
}

// dot(x, y) over n values, in A.
template <typename T, typename A> __device__ __forceinline__ A dot(const T *x, const T *y, int64 n) {
  A s = A(0);
  for (int64 e = 0; e < n; ++e) s += A(load(x[e])) * A(load(y[e]));
  return s;
}

// The probability and dS of query row i against key row j of one batch element (Note [Flash backward]).
template <typename T, typename A>
__device__ __forceinline__ void p_ds(const T *q, const T *k, const T *v, const T *dout, const A *lse, const A *delta,
                                     int64 i, int64 j, int64 E, int64 Ev, A scale, A &pij, A &dsij) {
  const A s = dot<T, A>(q + i * E, k + j * E, E) * scale;
  pij = a_exp(s - lse[i]);  // lse = +inf (a row with no key) gives 0
  const A dp = dot<T, A>(dout + i * Ev, v + j * Ev, Ev);
  dsij = pij * (dp - delta[i]);
}

// dK_j and dV_j: a warp per key row (grid: nb * ceil(S / kWarpsPerBlock) blocks).
template <typename T>
__device__ void attn_bwd_dkdv(int64 L, int64 S, int64 E, int64 Ev, double scale_d, int causal, const T *q,
                              const T *k, const T *v, const T *dout, const void *lse_v, const void *delta_v, T *dk,
                              T *dv) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const int64 nkb = (S + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const int64 b = blockIdx.x / nkb, j = (blockIdx.x % nkb) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (j >= S) return;
  q += b * L * E, k += b * S * E, v += b * S * Ev, dout += b * L * Ev, dk += b * S * E, dv += b * S * Ev;
  const A *lse = (const A *)lse_v + b * L, *delta = (const A *)delta_v + b * L;
  const A scale = A(scale_d);
  const int64 istart = causal ? j : 0;  // causal: key j is seen by the queries i >= j
  const int64 width = max(E, Ev);
  for (int64 c0 = 0; c0 < width; c0 += 256) {  // 8 columns per lane per pass
    A ak[8], av[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) ak[t] = av[t] = A(0);
    for (int64 i0 = istart; i0 < L; i0 += 32) {
      const int64 i = i0 + lane;
      A pij = A(0), dsij = A(0);
      if (i < L) p_ds<T, A>(q, k, v, dout, lse, delta, i, j, E, Ev, scale, pij, dsij);
      const int n = int(min(int64(32), L - i0));
      for (int ii = 0; ii < n; ++ii) {
        const A pb = __shfl_sync(0xffffffffu, pij, ii), db = __shfl_sync(0xffffffffu, dsij, ii);
        const T *qr = q + (i0 + ii) * E, *gr = dout + (i0 + ii) * Ev;
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int64 e = c0 + lane + 32 * t;
          if (e < Ev) av[t] += pb * A(load(gr[e]));
          if (e < E) ak[t] += db * A(load(qr[e]));
        }
      }
    }
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const int64 e = c0 + lane + 32 * t;
      if (e < Ev) dv[j * Ev + e] = store<T>(av[t]);
      if (e < E) dk[j * E + e] = store<T>(ak[t] * scale);
    }
  }
}

// dQ_i: a warp per query row (grid: nb * ceil(L / kWarpsPerBlock) blocks).
template <typename T>
__device__ void attn_bwd_dq(int64 L, int64 S, int64 E, int64 Ev, double scale_d, int causal, const T *q,
                            const T *k, const T *v, const T *dout, const void *lse_v, const void *delta_v, T *dq) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const int64 nqb = (L + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const int64 b = blockIdx.x / nqb, i = (blockIdx.x % nqb) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (i >= L) return;
  q += b * L * E, k += b * S * E, v += b * S * Ev, dout += b * L * Ev, dq += b * L * E;
  const A *lse = (const A *)lse_v + b * L, *delta = (const A *)delta_v + b * L;
  const A scale = A(scale_d);
  const int64 kend = causal ? min(S, i + 1) : S;
  for (int64 c0 = 0; c0 < E; c0 += 256) {
    A acc[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) acc[t] = A(0);
    for (int64 j0 = 0; j0 < kend; j0 += 32) {
      const int64 j = j0 + lane;
      A pij = A(0), dsij = A(0);
      if (j < kend) p_ds<T, A>(q, k, v, dout, lse, delta, i, j, E, Ev, scale, pij, dsij);
      const int n = int(min(int64(32), kend - j0));
      for (int jj = 0; jj < n; ++jj) {
        const A db = __shfl_sync(0xffffffffu, dsij, jj);
        const T *kr = k + (j0 + jj) * E;
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int64 e = c0 + lane + 32 * t;
          if (e < E) acc[t] += db * A(load(kr[e]));
        }
      }
    }
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const int64 e = c0 + lane + 32 * t;
      if (e < E) dq[i * E + e] = store<T>(acc[t] * scale);
    }
  }
}

#define TP_ATTN_BWD(T)                                                                                          \
  extern "C" __global__ void __launch_bounds__(128)                                                            \
      attn_bwd_delta_##T(int64 rows, int64 cols, const T *dout, const T *out, void *delta) {                  \
    attn_bwd_delta<T>(rows, cols, dout, out, delta);                                                           \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                                                            \
      attn_bwd_dkdv_##T(int64 L, int64 S, int64 E, int64 Ev, double scale, int causal, const T *q, const T *k, \
                        const T *v, const T *dout, const void *lse, const void *delta, T *dk, T *dv) {         \
    attn_bwd_dkdv<T>(L, S, E, Ev, scale, causal, q, k, v, dout, lse, delta, dk, dv);                          \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                                                            \
      attn_bwd_dq_##T(int64 L, int64 S, int64 E, int64 Ev, double scale, int causal, const T *q, const T *k,   \
                      const T *v, const T *dout, const void *lse, const void *delta, T *dq) {                  \
    attn_bwd_dq<T>(L, S, E, Ev, scale, causal, q, k, v, dout, lse, delta, dq);                                \
  }
TP_ATTN_BWD(float16)
TP_ATTN_BWD(bfloat16)
TP_ATTN_BWD(float32)
TP_ATTN_BWD(float64)
