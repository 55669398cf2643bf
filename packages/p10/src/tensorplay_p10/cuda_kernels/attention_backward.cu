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

// ---- Note [Flash backward on tensor cores] ----------------------------------------------------------------
//   float16/bfloat16 with head dims up to 128 (D = 16/32/64/128, padding columns zero), the fragments of Note
//   [mma fragments] in attention_common.cuh. Two kernels, no atomics:
//   attn_bwd_dkdv_mma: a block of 4 warps owns 64 key rows (16 per warp) with their K and V tiles in shared
//     memory, and streams the queries in tiles of 16 (Q, dO, lse, delta), two stages by cp.async (Note [Flash
//     dK dV pipeline]; 52 KiB of dynamic shared memory at D = 128). Per tile each warp computes the
//     transposed products, so that keys are the rows everywhere:
//       S^T = K Q^T,  dP^T = V dO^T  (B fragments: two adjacent values of one Q / dO row),
//       P^T = 2^(scale log2(e) S^T - log2(e) lse),  dS^T = P^T (dP^T - delta)  (per query = per column),
//       dV += P^T dO,  dK += dS^T Q  (P^T, dS^T re-packed as A fragments; dO's and Q's B fragments by
//       ldmatrix .trans, ldsm_b_trans). Causal: the query tiles before the block's first key are skipped.
//   attn_bwd_dq_mma: a block owns 64 query rows (Q and dO held as A fragments), streams K and V in tiles of
//     32, two stages by cp.async (Note [Flash dQ pipeline]): S = Q K^T, dP = dO V^T (B fragments by ldmatrix,
//     ldsm_b), P, dS as above (per row), dQ += dS K. Causal as the forward.
constexpr float kLog2eB = 1.4426950408889634f;

template <typename T, int D>
__device__ void attn_bwd_dkdv_mma(int64 L, int64 S, int64 E, int64 Ev, double scale_d, int causal, int vec,
                                  const T *q_, const T *k_, const T *v_, const T *g_, const void *lse_v,
                                  const void *delta_v, T *dk_, T *dv_) {
  constexpr int BK = 64, BQ = 16, LD = D + 8, KD = D / 16, ND = D / 8;
  // dynamic shared memory (attn_bwd_dkdv_smem_bytes on the host): K and V tiles, then two stages of (Q, dO)
  // tiles; every array 16-byte aligned for cp.async and ldmatrix rows
  extern __shared__ __align__(16) unsigned short dyn[];
  unsigned short *sK = dyn, *sV = sK + BK * LD, *stages = sV + BK * LD;
  __shared__ float sLs[2][BQ], sDs[2][BQ];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int64 nkb = (S + BK - 1) / BK;
  const int64 b = blockIdx.x / nkb, j0 = (blockIdx.x % nkb) * BK;
  const unsigned short *q = (const unsigned short *)q_ + b * L * E, *k = (const unsigned short *)k_ + b * S * E,
                       *v = (const unsigned short *)v_ + b * S * Ev, *go = (const unsigned short *)g_ + b * L * Ev;
  const float *lse = (const float *)lse_v + b * L, *delta = (const float *)delta_v + b * L;
  // Note [Flash dK dV pipeline]: the (Q, dO, lse, delta) tile of queries i0 + BQ loads into the other stage
  // while tile i0 is used. The __syncthreads at the top of an iteration publishes tile i0 and retires the
  // stage that the next request overwrites (every warp has finished the previous iteration).
  auto request = [&](int64 i0, int st) {
    unsigned short *sQ = stages + st * 2 * BQ * LD;
    load_tile<D, true>(sQ, LD, BQ, q, E, i0, L, E, vec);
    load_tile<D, true>(sQ + BQ * LD, LD, BQ, go, Ev, i0, L, Ev, vec);
    if (threadIdx.x < BQ) {  // rows past L: lse = +inf makes their P 0
      const int64 i = i0 + threadIdx.x;
      sLs[st][threadIdx.x] = i < L ? lse[i] * kLog2eB : a_inf<float>();
      sDs[st][threadIdx.x] = i < L ? delta[i] : 0.f;
    }
  };
  const int64 ibeg = causal ? (j0 / BQ) * BQ : 0;
  load_tile<D, true>(sK, LD, BK, k, E, j0, S, E, vec);
  load_tile<D, true>(sV, LD, BK, v, Ev, j0, S, Ev, vec);
  if (ibeg < L) request(ibeg, 0);
  cp_async_commit();
  float dk[ND][4], dv[ND][4];
#pragma unroll
  for (int n = 0; n < ND; ++n)
#pragma unroll
    for (int c = 0; c < 4; ++c) dk[n][c] = dv[n][c] = 0.f;
  const float sl2 = float(scale_d) * kLog2eB;
  const unsigned short *kw = sK + (warp * 16 + g) * LD + 2 * t4, *vw = sV + (warp * 16 + g) * LD + 2 * t4;
  const int64 jrow[2] = {j0 + warp * 16 + g, j0 + warp * 16 + g + 8};
  for (int64 i0 = ibeg, stage = 0; i0 < L; i0 += BQ, stage ^= 1) {
    cp_async_wait<0>();
    __syncthreads();
    if (i0 + BQ < L) request(i0 + BQ, stage ^ 1);
    cp_async_commit();
    const unsigned short *sQ = stages + stage * 2 * BQ * LD, *sG = sQ + BQ * LD;
    const float *sL = sLs[stage], *sD = sDs[stage];
    float st[2][4], dpt[2][4];
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) st[n][c] = dpt[n][c] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {  // the K and V A fragments once per k step, for both query sub-tiles
      const unsigned ak[4] = {*(const unsigned *)(kw + kk * 16), *(const unsigned *)(kw + 8 * LD + kk * 16),
                              *(const unsigned *)(kw + kk * 16 + 8), *(const unsigned *)(kw + 8 * LD + kk * 16 + 8)};
      const unsigned av[4] = {*(const unsigned *)(vw + kk * 16), *(const unsigned *)(vw + 8 * LD + kk * 16),
                              *(const unsigned *)(vw + kk * 16 + 8), *(const unsigned *)(vw + 8 * LD + kk * 16 + 8)};
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const unsigned short *qr = sQ + (n * 8 + g) * LD + 2 * t4, *gr = sG + (n * 8 + g) * LD + 2 * t4;
        Mma<T>::run(st[n], ak, *(const unsigned *)(qr + kk * 16), *(const unsigned *)(qr + kk * 16 + 8));
        Mma<T>::run(dpt[n], av, *(const unsigned *)(gr + kk * 16), *(const unsigned *)(gr + kk * 16 + 8));
      }
    }
    // P^T and dS^T: rows are keys (g, g + 8), columns queries (2 t4, 2 t4 + 1 of each 8)
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int qi = n * 8 + 2 * t4 + (c & 1);
        float pv = exp2f(st[n][c] * sl2 - sL[qi]);
        if (causal && jrow[c >> 1] > i0 + qi) pv = 0.f;
        st[n][c] = pv;
        dpt[n][c] = pv * (dpt[n][c] - sD[qi]);
      }
    const unsigned pa[4] = {Mma<T>::pack(st[0][0], st[0][1]), Mma<T>::pack(st[0][2], st[0][3]),
                            Mma<T>::pack(st[1][0], st[1][1]), Mma<T>::pack(st[1][2], st[1][3])};
    const unsigned da[4] = {Mma<T>::pack(dpt[0][0], dpt[0][1]), Mma<T>::pack(dpt[0][2], dpt[0][3]),
                            Mma<T>::pack(dpt[1][0], dpt[1][1]), Mma<T>::pack(dpt[1][2], dpt[1][3])};
#pragma unroll
    for (int n = 0; n < ND; n += 2) {
      unsigned gb[4], qb[4];
      ldsm_b_trans(gb, sG + n * 8, LD);
      ldsm_b_trans(qb, sQ + n * 8, LD);
      Mma<T>::run(dv[n], pa, gb[0], gb[1]);
      Mma<T>::run(dv[n + 1], pa, gb[2], gb[3]);
      Mma<T>::run(dk[n], da, qb[0], qb[1]);
      Mma<T>::run(dk[n + 1], da, qb[2], qb[3]);
    }
  }
  cp_async_wait<0>();  // (a block whose loop never ran still has K and V in flight)
  const float scale = float(scale_d);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64 j = jrow[h];
    if (j >= S) continue;
#pragma unroll
    for (int n = 0; n < ND; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int64 e = n * 8 + 2 * t4 + c;
        if (e < Ev) dv_[(b * S + j) * Ev + e] = store<T>(dv[n][2 * h + c]);
        if (e < E) dk_[(b * S + j) * E + e] = store<T>(dk[n][2 * h + c] * scale);
      }
  }
}

template <typename T, int D>
__device__ void attn_bwd_dq_mma(int64 L, int64 S, int64 E, int64 Ev, double scale_d, int causal, int vec,
                                const T *q_, const T *k_, const T *v_, const T *g_, const void *lse_v,
                                const void *delta_v, T *dq_) {
  constexpr int BM = 64, BN = 32, LD = D + 8, NT = BN / 8, KD = D / 16, ND = D / 8;
  // two stages of (K tile, V tile); Q and dO are staged in the first BM rows first
  __shared__ __align__(16) unsigned short smem[4 * BN * LD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int64 nqb = (L + BM - 1) / BM;
  const int64 b = blockIdx.x / nqb, i0 = (nqb - 1 - blockIdx.x % nqb) * BM;
  const unsigned short *q = (const unsigned short *)q_ + b * L * E, *k = (const unsigned short *)k_ + b * S * E,
                       *v = (const unsigned short *)v_ + b * S * Ev, *go = (const unsigned short *)g_ + b * L * Ev;
  const float *lse = (const float *)lse_v + b * L, *delta = (const float *)delta_v + b * L;
  // Q, then dO, through shared memory into A fragments (BM rows fit in the 4 * BN rows of the two stages)
  unsigned qa[KD][4], ga[KD][4];
  const unsigned short *r0 = smem + (warp * 16 + g) * LD + 2 * t4, *r8 = r0 + 8 * LD;
  load_tile<D>(smem, LD, BM, q, E, i0, L, E, vec);
  __syncthreads();
#pragma unroll
  for (int kk = 0; kk < KD; ++kk) {
    qa[kk][0] = *(const unsigned *)(r0 + kk * 16), qa[kk][1] = *(const unsigned *)(r8 + kk * 16);
    qa[kk][2] = *(const unsigned *)(r0 + kk * 16 + 8), qa[kk][3] = *(const unsigned *)(r8 + kk * 16 + 8);
  }
  __syncthreads();
  load_tile<D>(smem, LD, BM, go, Ev, i0, L, Ev, vec);
  __syncthreads();
#pragma unroll
  for (int kk = 0; kk < KD; ++kk) {
    ga[kk][0] = *(const unsigned *)(r0 + kk * 16), ga[kk][1] = *(const unsigned *)(r8 + kk * 16);
    ga[kk][2] = *(const unsigned *)(r0 + kk * 16 + 8), ga[kk][3] = *(const unsigned *)(r8 + kk * 16 + 8);
  }
  const int64 row[2] = {i0 + warp * 16 + g, i0 + warp * 16 + g + 8};
  float lrow[2], drow[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lrow[h] = row[h] < L ? lse[row[h]] * kLog2eB : a_inf<float>();
    drow[h] = row[h] < L ? delta[row[h]] : 0.f;
  }
  float acc[ND][4];
#pragma unroll
  for (int n = 0; n < ND; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  const float sl2 = float(scale_d) * kLog2eB;
  const int64 kend = causal ? min(S, i0 + BM) : S;
  // Note [Flash dQ pipeline]: tile j + 1's K and V load into the other stage while tile j is used; the
  // __syncthreads at the top of an iteration both publishes the tile and retires the stage the next request
  // overwrites (every warp finished the previous iteration).
  __syncthreads();  // every warp has its dO fragments: the staging rows may be overwritten
  load_tile<D, true>(smem, LD, BN, k, E, 0, S, E, vec);
  load_tile<D, true>(smem + BN * LD, LD, BN, v, Ev, 0, S, Ev, vec);
  cp_async_commit();
  for (int64 j0 = 0, st = 0; j0 < kend; j0 += BN, st ^= 1) {
    const unsigned short *sK = smem + st * 2 * BN * LD, *sV = sK + BN * LD;
    cp_async_wait<0>();
    __syncthreads();
    if (j0 + BN < kend) {
      unsigned short *nK = smem + (st ^ 1) * 2 * BN * LD;
      load_tile<D, true>(nK, LD, BN, k, E, j0 + BN, S, E, vec);
      load_tile<D, true>(nK + BN * LD, LD, BN, v, Ev, j0 + BN, S, Ev, vec);
    }
    cp_async_commit();
    float s[NT][4], dp[NT][4];
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
      dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.f;
      const unsigned short *kr = sK + n * 8 * LD, *vr = sV + n * 8 * LD;
#pragma unroll
      for (int kk = 0; kk + 1 < KD; kk += 2) {
        unsigned kb[4], vb[4];
        ldsm_b(kb, kr + kk * 16, LD);
        ldsm_b(vb, vr + kk * 16, LD);
        Mma<T>::run(s[n], qa[kk], kb[0], kb[1]);
        Mma<T>::run(dp[n], ga[kk], vb[0], vb[1]);
        Mma<T>::run(s[n], qa[kk + 1], kb[2], kb[3]);
        Mma<T>::run(dp[n], ga[kk + 1], vb[2], vb[3]);
      }
      if (KD % 2) {  // D = 16: one k step, plain loads
        const unsigned short *kg = kr + g * LD + (KD - 1) * 16 + 2 * t4, *vg = vr + g * LD + (KD - 1) * 16 + 2 * t4;
        Mma<T>::run(s[n], qa[KD - 1], *(const unsigned *)kg, *(const unsigned *)(kg + 8));
        Mma<T>::run(dp[n], ga[KD - 1], *(const unsigned *)vg, *(const unsigned *)(vg + 8));
      }
    }
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int h = c >> 1;
        const int64 j = j0 + n * 8 + 2 * t4 + (c & 1);
        float pv = exp2f(s[n][c] * sl2 - lrow[h]);
        if (j >= S || (causal && j > row[h])) pv = 0.f;
        s[n][c] = pv * (dp[n][c] - drow[h]);  // dS
      }
#pragma unroll
    for (int kt = 0; kt < BN / 16; ++kt) {
      const unsigned pa[4] = {Mma<T>::pack(s[2 * kt][0], s[2 * kt][1]), Mma<T>::pack(s[2 * kt][2], s[2 * kt][3]),
                              Mma<T>::pack(s[2 * kt + 1][0], s[2 * kt + 1][1]),
                              Mma<T>::pack(s[2 * kt + 1][2], s[2 * kt + 1][3])};
#pragma unroll
      for (int n = 0; n < ND; n += 2) {
        unsigned kb[4];
        ldsm_b_trans(kb, sK + kt * 16 * LD + n * 8, LD);
        Mma<T>::run(acc[n], pa, kb[0], kb[1]);
        Mma<T>::run(acc[n + 1], pa, kb[2], kb[3]);
      }
    }
  }
  cp_async_wait<0>();
  const float scale = float(scale_d);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (row[h] >= L) continue;
#pragma unroll
    for (int n = 0; n < ND; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int64 e = n * 8 + 2 * t4 + c;
        if (e < E) dq_[(b * L + row[h]) * E + e] = store<T>(acc[n][2 * h + c] * scale);
      }
  }
}

#define TP_ATTN_BWD_MMA(D, T)                                                                                  \
  extern "C" __global__ void __launch_bounds__(128) attn_bwd_dkdv_mma_d##D##_##T(                             \
      int64 L, int64 S, int64 E, int64 Ev, double scale, int causal, int vec, const T *q, const T *k,          \
      const T *v, const T *dout, const void *lse, const void *delta, T *dk, T *dv) {                           \
    attn_bwd_dkdv_mma<T, D>(L, S, E, Ev, scale, causal, vec, q, k, v, dout, lse, delta, dk, dv);              \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(128) attn_bwd_dq_mma_d##D##_##T(                               \
      int64 L, int64 S, int64 E, int64 Ev, double scale, int causal, int vec, const T *q, const T *k,          \
      const T *v, const T *dout, const void *lse, const void *delta, T *dq) {                                  \
    attn_bwd_dq_mma<T, D>(L, S, E, Ev, scale, causal, vec, q, k, v, dout, lse, delta, dq);                    \
  }
#define TP_ATTN_BWD_MMA_ALL(T) \
  TP_ATTN_BWD_MMA(16, T)       \
  TP_ATTN_BWD_MMA(32, T)       \
  TP_ATTN_BWD_MMA(64, T)       \
  TP_ATTN_BWD_MMA(128, T)
TP_ATTN_BWD_MMA_ALL(float16)
TP_ATTN_BWD_MMA_ALL(bfloat16)

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
