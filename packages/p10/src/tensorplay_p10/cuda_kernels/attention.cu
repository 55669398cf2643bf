// attention.cu — scaled_dot_product_attention forward: softmax(scale Q K^T + mask) V with an online softmax,
// never materialising the [L, S] scores, plus each row's log-sum-exp for the backward.
//
// Where it sits: launched by csrc/cuda/ops_attention.cpp (and by ops_attention_backward.cpp, which reruns the
// forward for O and the log-sum-exp). Two kernels:
//   attn_fwd_<T>:          one warp per query row, any dtype and head dim: the readable reference version
//                          (float32/float64 run it; Note [Online softmax] in csrc/kernels/attention.cpp is the
//                          same update). Lanes take 32 keys at a time; each lane's score is a full dot product.
//   attn_fwd_mma_d<D>_<T>: float16/bfloat16 on tensor cores (FlashAttention-2, Note [Flash forward]); D is the
//                          head dim rounded up to 16/32/64/128/256, padding columns are zeros.
#include "attention_common.cuh"

// ---- the reference kernel: a warp per query row ------------------------------------------------------------
constexpr int kRowsPerBlock = 4;  // warps per block; block b of the grid covers rows of one batch element

template <typename T> __device__ void attn_fwd_rows(const AttnParams &p) {
  typedef typename Acc<T>::type A;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64 nqb = (p.L + kRowsPerBlock - 1) / kRowsPerBlock;
  const int64 b = blockIdx.x / nqb, i = (blockIdx.x % nqb) * kRowsPerBlock + warp;
  if (i >= p.L) return;  // the whole warp leaves: every shuffle below runs on full warps
  const AttnOffsets off = attn_offsets(p, b);
  const T *q = (const T *)p.q + off.q + i * p.q_rs, *k = (const T *)p.k + off.k, *v = (const T *)p.v + off.v;
  T *o = (T *)p.out + (b * p.L + i) * p.Ev;
  const A scale = A(p.scale);
  const int64 kend = p.causal ? min(p.S, i + 1) : p.S;  // causal: key j <= i
  // 8 accumulators per lane cover 256 output columns; wider values take more passes over the keys
  for (int64 c0 = 0; c0 < p.Ev; c0 += 256) {
    A acc[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) acc[t] = A(0);
    A m = -a_inf<A>(), l = A(0);
    bool nan = false;
    for (int64 j0 = 0; j0 < kend; j0 += 32) {
      const int64 j = j0 + lane;
      A s = -a_inf<A>();
      if (j < kend) {
        const T *kr = k + j * p.k_rs;
        A dot = A(0);
        for (int64 e = 0; e < p.E; ++e) dot += A(load(q[e])) * A(load(kr[e]));
        s = apply_mask(p, off.m, i, j, dot * scale);
      }
      const A mnew = max_skip_nan(m, warp_max_all(s));  // the same on every lane
      if (mnew == -a_inf<A>()) {  // every key so far masked: nothing to add (a NaN marks the row)
        nan |= __any_sync(0xffffffffu, s != s);
        continue;
      }
      const A alpha = a_exp(m - mnew);  // m = -inf (the first finite block) gives 0
      const A pj = j < kend ? a_exp(s - mnew) : A(0);
      l = l * alpha + warp_sum_all(pj);
      m = mnew;
#pragma unroll
      for (int t = 0; t < 8; ++t) acc[t] *= alpha;
      const int n = int(min(int64(32), kend - j0));
      for (int jj = 0; jj < n; ++jj) {
        const A pv = __shfl_sync(0xffffffffu, pj, jj);
        const T *vr = v + (j0 + jj) * p.v_rs;
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int64 e = c0 + lane + 32 * t;
          if (e < p.Ev) acc[t] += pv * A(load(vr[e]));
        }
      }
    }
    if (nan) l = a_nan<A>();
    // a row with no finite score (l = 0) gives zeros (Note [Attention semantics] in kernels/attention.cpp)
    const A inv = (l > A(0) || l != l) ? A(1) / l : A(0);
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const int64 e = c0 + lane + 32 * t;
      if (e < p.Ev) o[e] = store<T>(acc[t] * inv);
    }
    if (c0 == 0 && p.lse && lane == 0)
      ((A *)p.lse)[b * p.L + i] = l > A(0) ? m + a_log(l) : (l != l ? l : a_inf<A>());
  }
}

// ---- Note [Flash forward] ------------------------------------------------------------------------------------
//   A block of 4 warps owns 64 query rows of one batch element (16 per warp, the M of one mma) and streams the
//   keys in tiles of BN rows through shared memory (K and V tiles as [BN][D + 8] 16-bit values: the 8 extra
//   columns shift each row by 16 bytes, so the 8 lanes g reading one column of 8 rows hit different banks).
//   Q is staged through the same shared memory once and then held in registers as A fragments (Note [mma
//   fragments]). Per key tile, each warp:
//     S = Q K^T            (BN/8 accumulator tiles; B fragments by ldmatrix without .trans, ldsm_b),
//     scale, causal cut, attn_mask, keys past S -> -inf,
//     online softmax per row (the 4 lanes t of a quad hold one row's columns: max over the quad by xor
//     shuffles 1 and 2; running max m and a per-lane partial sum l, the quad sum is taken once at the end),
//     O = alpha O + P V    (P re-packed from the S accumulators as A fragments, V's B fragments by
//                           ldmatrix .trans, ldsm_b_trans).
//   Exponentials are base 2 (exp2f is one instruction, ex2.approx) on scores multiplied by log2(e) after the
//   mask; the running max m is in those units, the stored log-sum-exp in natural ones (m ln 2 + ln l).
//   Causal: a query tile visits only keys < i0 + 64, and the grid gives the longest (last) query tiles the
//   lowest block indices, so they start first. 64 rows per block (not FlashAttention-2's 128) keep the
//   registers of a 128-wide head at 2 blocks per SM, so one block's tile loads overlap the other's products.
//
// Note [Flash forward pipeline]
//   The K and V tiles arrive by cp.async while the warps compute, with one buffer each (FlashAttention-2's
//   order): V of tile j is requested before S = Q K_j^T, K of tile j + 1 before O += P V_j, and each product
//   waits only for its own operand. The __syncthreads after a wait does double duty: everyone's copies are
//   visible, and every warp has finished reading the buffer that the next request overwrites.
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

template <typename T, int D> __device__ void attn_fwd_mma(const AttnParams &p) {
  constexpr int BM = 64, BN = D <= 128 ? 64 : 32, LD = D + 8, NT = BN / 8, KD = D / 16, ND = D / 8;
  __shared__ __align__(16) unsigned short smem[2 * BN * LD];  // K tile, V tile (Q staged here first)
  unsigned short *sK = smem, *sV = smem + BN * LD;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int64 nqb = (p.L + BM - 1) / BM;
  const int64 b = blockIdx.x / nqb, qt = nqb - 1 - blockIdx.x % nqb, i0 = qt * BM;
  const AttnOffsets off = attn_offsets(p, b);
  const unsigned short *q = (const unsigned short *)p.q + off.q, *k = (const unsigned short *)p.k + off.k,
                       *v = (const unsigned short *)p.v + off.v;

  // Q tile -> shared memory (BM rows fit in the 2 * BN rows) -> A fragments
  load_tile<D>(smem, LD, BM, q, p.q_rs, i0, p.L, p.E, p.vec);
  __syncthreads();
  unsigned qa[KD][4];
  {
    const unsigned short *r0 = smem + (warp * 16 + g) * LD + 2 * t4, *r8 = r0 + 8 * LD;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
      qa[kk][0] = *(const unsigned *)(r0 + kk * 16);
      qa[kk][1] = *(const unsigned *)(r8 + kk * 16);
      qa[kk][2] = *(const unsigned *)(r0 + kk * 16 + 8);
      qa[kk][3] = *(const unsigned *)(r8 + kk * 16 + 8);
    }
  }
  __syncthreads();

  const float sc = float(p.scale), sc2 = sc * kLog2e;
  const int64 row[2] = {i0 + warp * 16 + g, i0 + warp * 16 + g + 8};
  float o[ND][4];
#pragma unroll
  for (int n = 0; n < ND; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m[2] = {-a_inf<float>(), -a_inf<float>()}, l[2] = {0.f, 0.f};
  bool nan[2] = {false, false};
  const int64 kend = p.causal ? min(p.S, i0 + BM) : p.S;

  // Note [Flash forward pipeline]: K of the first tile is in flight before the loop
  load_tile<D, true>(sK, LD, BN, k, p.k_rs, 0, p.S, p.E, p.vec);
  cp_async_commit();
  for (int64 j0 = 0; j0 < kend; j0 += BN) {
    load_tile<D, true>(sV, LD, BN, v, p.v_rs, j0, p.S, p.Ev, p.vec);
    cp_async_commit();
    cp_async_wait<1>();  // this thread's K copies have landed (V's may still be in flight) ...
    __syncthreads();     // ... and everyone's
    float s[NT][4];
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
      const unsigned short *kr = sK + n * 8 * LD;
#pragma unroll
      for (int kk = 0; kk + 1 < KD; kk += 2) {
        unsigned kb[4];
        ldsm_b(kb, kr + kk * 16, LD);
        Mma<T>::run(s[n], qa[kk], kb[0], kb[1]);
        Mma<T>::run(s[n], qa[kk + 1], kb[2], kb[3]);
      }
      if (KD % 2) {  // D = 16: one k step, two plain loads
        const unsigned short *kg = kr + g * LD + (KD - 1) * 16 + 2 * t4;
        Mma<T>::run(s[n], qa[KD - 1], *(const unsigned *)kg, *(const unsigned *)(kg + 8));
      }
    }
    // scale (base 2), masks, and the online softmax of the two rows this lane holds. A tile that needs no
    // mask (every key exists, none is past a causal diagonal of this warp's rows, no attn_mask) skips the
    // per-element tests.
    const bool plain = j0 + BN <= p.S && p.mask_kind == kMaskNone && (!p.causal || j0 + BN - 1 <= i0 + warp * 16);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -a_inf<float>();
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          float x;
          if (plain) {
            x = s[n][2 * h + c] * sc2;
          } else {
            const int64 j = j0 + n * 8 + 2 * t4 + c;
            x = s[n][2 * h + c] * sc;
            if (j >= p.S || (p.causal && j > row[h])) x = -a_inf<float>();
            else if (p.mask_kind != kMaskNone && row[h] < p.L) x = apply_mask(p, off.m, row[h], j, x);
            x *= kLog2e;
          }
          s[n][2 * h + c] = x;
          mx = max_skip_nan(mx, x);
        }
      mx = max_skip_nan(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = max_skip_nan(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float mnew = max_skip_nan(m[h], mx);
      if (mnew == -a_inf<float>()) {  // nothing finite yet in this row: P = 0 here (a NaN marks the row)
#pragma unroll
        for (int n = 0; n < NT; ++n)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            nan[h] |= s[n][2 * h + c] != s[n][2 * h + c];
            s[n][2 * h + c] = 0.f;
          }
        continue;
      }
      const float alpha = exp2f(m[h] - mnew);
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) sum += (s[n][2 * h + c] = exp2f(s[n][2 * h + c] - mnew));
      l[h] = l[h] * alpha + sum;
      m[h] = mnew;
#pragma unroll
      for (int n = 0; n < ND; ++n) o[n][2 * h] *= alpha, o[n][2 * h + 1] *= alpha;
    }
    cp_async_wait<0>();  // V has landed, and every warp is done with K: the next K may overwrite it
    __syncthreads();
    if (j0 + BN < kend) load_tile<D, true>(sK, LD, BN, k, p.k_rs, j0 + BN, p.S, p.E, p.vec);
    cp_async_commit();  // (an empty group on the last tile keeps the wait counts above uniform)
    // O += P V: the accumulator pair (2 kt, 2 kt + 1) is the A fragment of key rows 16 kt .. 16 kt + 15
#pragma unroll
    for (int kt = 0; kt < BN / 16; ++kt) {
      unsigned pa[4];
      pa[0] = Mma<T>::pack(s[2 * kt][0], s[2 * kt][1]);
      pa[1] = Mma<T>::pack(s[2 * kt][2], s[2 * kt][3]);
      pa[2] = Mma<T>::pack(s[2 * kt + 1][0], s[2 * kt + 1][1]);
      pa[3] = Mma<T>::pack(s[2 * kt + 1][2], s[2 * kt + 1][3]);
#pragma unroll
      for (int n = 0; n < ND; n += 2) {
        unsigned vb[4];
        ldsm_b_trans(vb, sV + kt * 16 * LD + n * 8, LD);
        Mma<T>::run(o[n], pa, vb[0], vb[1]);
        Mma<T>::run(o[n + 1], pa, vb[2], vb[3]);
      }
    }
    __syncthreads();  // every warp is done with this V tile before the next one overwrites it
  }

  cp_async_wait<0>();  // nothing may be in flight when the block exits (a loop that never ran)

  // finish: the quad's partial sums, then O / l; rows with no finite score give zeros, NaN rows NaN
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float lh = l[h];
    lh += __shfl_xor_sync(0xffffffffu, lh, 1);
    lh += __shfl_xor_sync(0xffffffffu, lh, 2);
    bool nh = nan[h];
    nh |= __shfl_xor_sync(0xffffffffu, int(nh), 1) != 0;
    nh |= __shfl_xor_sync(0xffffffffu, int(nh), 2) != 0;
    if (nh) lh = a_nan<float>();
    const float inv = (lh > 0.f || lh != lh) ? 1.f / lh : 0.f;
    if (row[h] >= p.L) continue;
    T *orow = (T *)p.out + (b * p.L + row[h]) * p.Ev;
#pragma unroll
    for (int n = 0; n < ND; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int64 e = n * 8 + 2 * t4 + c;
        if (e < p.Ev) orow[e] = store<T>(o[n][2 * h + c] * inv);
      }
    if (p.lse && t4 == 0)
      ((float *)p.lse)[b * p.L + row[h]] =
          lh > 0.f ? m[h] * kLn2 + logf(lh) : (lh != lh ? lh : a_inf<float>());
  }
}

#define TP_ATTN_FWD(T) \
  extern "C" __global__ void __launch_bounds__(128) attn_fwd_##T(const AttnParams p) { attn_fwd_rows<T>(p); }
TP_ATTN_FWD(float16)
TP_ATTN_FWD(bfloat16)
TP_ATTN_FWD(float32)
TP_ATTN_FWD(float64)

#define TP_ATTN_FWD_MMA(D, T)                                                                          \
  extern "C" __global__ void __launch_bounds__(128) attn_fwd_mma_d##D##_##T(const AttnParams p) { \
    attn_fwd_mma<T, D>(p);                                                                             \
  }
#define TP_ATTN_FWD_MMA_ALL(T) \
  TP_ATTN_FWD_MMA(16, T)       \
  TP_ATTN_FWD_MMA(32, T)       \
  TP_ATTN_FWD_MMA(64, T)       \
  TP_ATTN_FWD_MMA(128, T)      \
  TP_ATTN_FWD_MMA(256, T)
TP_ATTN_FWD_MMA_ALL(float16)
TP_ATTN_FWD_MMA_ALL(bfloat16)
