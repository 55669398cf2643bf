// attention_simt.cu — scaled_dot_product_attention for float32 on CUDA cores: FlashAttention's tiling, forward
// (head dims up to 64) and backward (up to 32), for the small heads of float32 models (TinyLM's are 16 wide).
//
// Where it sits: chosen by csrc/cuda/ops_attention.cpp (attention_forward_launch) and
// ops_attention_backward.cpp for float32 when the head fits; float16/bfloat16 take the tensor-core kernels of
// attention.cu / attention_backward.cu, anything else their warp-per-row reference kernels. The semantics
// (masks, causal, NaN rows, rows with no key, the log-sum-exp) are the reference kernels', Note [Attention
// semantics] in csrc/kernels/attention.cpp; the backward's arithmetic is Note [Flash backward].
//
// Note [Attention on CUDA cores]
//   The reference kernels give a query row a warp and let each lane compute whole dot products out of global
//   memory: every K and V row is read once per query row, and for a 16-wide head half the lanes idle. Here one
//   THREAD owns one row — a query row in the forward and in dQ, a key row in dK/dV — and keeps that row's
//   operands and accumulators in registers (D floats each, D = the head dim rounded up to 16/32/64, padding
//   zeros). The block's 128 threads stream the other side's rows through shared memory in tiles of kTile = 32
//   rows: each value comes from global memory once per block and serves its 128 rows. Inside a tile all threads
//   read the same shared-memory row at the same moment (a broadcast: no bank conflicts, and the unrolled loop
//   reads it as 16-byte vectors), so the inner loop is D fused multiply-adds per 4-value load.
//   The forward keeps a tile's 32 scores in registers and rescales its running output once per tile (the
//   online softmax of Note [Flash forward], base-2 exponentials on scores times log2(e), the stored
//   log-sum-exp in natural units). Loop bounds are the same for every thread of a block (causal cuts them at
//   the block's last query row), because every thread, past-the-end rows included, must reach __syncthreads.
#include "attention_common.cuh"

constexpr int kThreads = 128, kTile = 32;
constexpr float kLog2eS = 1.4426950408889634f, kLn2S = 0.6931471805599453f;

// rows [r0, r0 + kTile) x columns [0, D) of a row-major float matrix (row stride rs, `rows` rows and `cols`
// columns valid) into dst[kTile][D], zeros elsewhere (a zero column adds nothing to a dot product).
template <int D>
__device__ __forceinline__ void tile_load(float *dst, const float *src, int64 rs, int64 r0, int64 rows, int64 cols) {
  for (int idx = threadIdx.x; idx < kTile * D; idx += kThreads) {
    const int r = idx / D, e = idx % D;
    const int64 row = r0 + r;
    dst[idx] = (row < rows && e < cols) ? src[row * rs + e] : 0.f;
  }
}

template <int D> __device__ __forceinline__ float dot_row(const float (&x)[D], const float *y) {
  float s = 0.f;
#pragma unroll
  for (int e = 0; e < D; ++e) s = fmaf(x[e], y[e], s);
  return s;
}

// ---- forward: a thread per query row (grid: nb * ceil(L / 128) blocks) --------------------------------------
template <int D> __device__ void attn_fwd_simt(const AttnParams &p) {
  __shared__ __align__(16) float ks[kTile * D], vs[kTile * D];
  const int64 nqb = (p.L + kThreads - 1) / kThreads;
  const int64 b = blockIdx.x / nqb;
  int64 qt = blockIdx.x % nqb;
  if (p.causal) qt = nqb - 1 - qt;  // causal: the longest (last) query tiles start first
  const int64 i0 = qt * kThreads, i = i0 + threadIdx.x;
  const bool active = i < p.L;
  const AttnOffsets off = attn_offsets(p, b);
  const float *qp = (const float *)p.q + off.q, *kp = (const float *)p.k + off.k, *vp = (const float *)p.v + off.v;
  float q[D], acc[D];
#pragma unroll
  for (int e = 0; e < D; ++e) {
    q[e] = (active && e < p.E) ? qp[i * p.q_rs + e] : 0.f;
    acc[e] = 0.f;
  }
  const float scale = float(p.scale), ninf = -a_inf<float>();
  float m = ninf, l = 0.f;  // running max (log2 units) and sum of this row
  bool nan = false;
  const int64 kend = p.causal ? min(p.S, min(p.L, i0 + kThreads)) : p.S;  // the block's keys
  for (int64 j0 = 0; j0 < kend; j0 += kTile) {
    __syncthreads();  // every thread is done with the previous tile
    tile_load<D>(ks, kp, p.k_rs, j0, p.S, p.E);
    tile_load<D>(vs, vp, p.v_rs, j0, p.S, p.Ev);
    __syncthreads();
    float s[kTile], tmax = ninf;
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) {
      const int64 j = j0 + jj;
      const float dot = dot_row<D>(q, ks + jj * D);
      float sc = ninf;
      if (active && j < p.S && (!p.causal || j <= i)) sc = apply_mask(p, off.m, i, j, dot * scale) * kLog2eS;
      s[jj] = sc;
      tmax = max_skip_nan(tmax, sc);
    }
    const float mnew = max_skip_nan(m, tmax);
    if (mnew == ninf) {  // every key so far masked: nothing to add (a NaN score marks the row)
#pragma unroll
      for (int jj = 0; jj < kTile; ++jj) nan |= s[jj] != s[jj];
      continue;
    }
    const float alpha = exp2f(m - mnew);  // m = -inf (the first finite tile) gives 0
    l *= alpha;
#pragma unroll
    for (int e = 0; e < D; ++e) acc[e] *= alpha;
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) {
      const float pj = exp2f(s[jj] - mnew);
      l += pj;
      const float *vr = vs + jj * D;
#pragma unroll
      for (int e = 0; e < D; ++e) acc[e] = fmaf(pj, vr[e], acc[e]);
    }
    m = mnew;
  }
  if (!active) return;
  if (nan) l = a_nan<float>();
  // a row with no finite score (l = 0) gives zeros (Note [Attention semantics])
  const float inv = (l > 0.f || l != l) ? 1.f / l : 0.f;
  float *o = (float *)p.out + (b * p.L + i) * p.Ev;
#pragma unroll
  for (int e = 0; e < D; ++e)
    if (e < p.Ev) o[e] = acc[e] * inv;
  if (p.lse) ((float *)p.lse)[b * p.L + i] = l > 0.f ? (m + log2f(l)) * kLn2S : (l != l ? l : a_inf<float>());
}

// ---- backward (Note [Flash backward]): operands are contiguous [nb, rows, cols]; lse, delta are [nb, L] -----
// dK_j and dV_j: a thread per key row (grid: nb * ceil(S / 128) blocks), query tiles through shared memory.
template <int D>
__device__ void attn_bwd_dkdv_simt(int64 L, int64 S, int64 E, int64 Ev, double scale_d, int causal, const float *q,
                                   const float *k, const float *v, const float *g, const float *lse,
                                   const float *delta, float *dk, float *dv) {
  __shared__ __align__(16) float qs[kTile * D], gs[kTile * D];
  __shared__ float ls[kTile], dl[kTile];
  const int64 nkb = (S + kThreads - 1) / kThreads;
  const int64 b = blockIdx.x / nkb, j0 = (blockIdx.x % nkb) * kThreads, j = j0 + threadIdx.x;
  const bool active = j < S;
  q += b * L * E, k += b * S * E, v += b * S * Ev, g += b * L * Ev, lse += b * L, delta += b * L;
  float kr[D], vr[D], ak[D], av[D];
#pragma unroll
  for (int e = 0; e < D; ++e) {
    kr[e] = (active && e < E) ? k[j * E + e] : 0.f;
    vr[e] = (active && e < Ev) ? v[j * Ev + e] : 0.f;
    ak[e] = av[e] = 0.f;
  }
  const float scale = float(scale_d);
  // causal: query i sees key j when j <= i, so the block's keys are seen from query j0 on
  for (int64 i0 = causal ? j0 / kTile * kTile : 0; i0 < L; i0 += kTile) {
    __syncthreads();
    tile_load<D>(qs, q, E, i0, L, E);
    tile_load<D>(gs, g, Ev, i0, L, Ev);
    if (threadIdx.x < kTile) {
      const int64 i = i0 + threadIdx.x;
      ls[threadIdx.x] = i < L ? lse[i] : a_inf<float>();  // +inf: probability 0
      dl[threadIdx.x] = i < L ? delta[i] : 0.f;
    }
    __syncthreads();
#pragma unroll 4
    for (int ii = 0; ii < kTile; ++ii) {
      const float *qrow = qs + ii * D, *grow = gs + ii * D;
      float pij = exp2f((dot_row<D>(kr, qrow) * scale - ls[ii]) * kLog2eS);
      if (causal && i0 + ii < j) pij = 0.f;
      const float dsij = pij * (dot_row<D>(vr, grow) - dl[ii]);
#pragma unroll
      for (int e = 0; e < D; ++e) {
        av[e] = fmaf(pij, grow[e], av[e]);
        ak[e] = fmaf(dsij, qrow[e], ak[e]);
      }
    }
  }
  if (!active) return;
#pragma unroll
  for (int e = 0; e < D; ++e) {
    if (e < E) dk[(b * S + j) * E + e] = ak[e] * scale;
    if (e < Ev) dv[(b * S + j) * Ev + e] = av[e];
  }
}

// dQ_i: a thread per query row (grid: nb * ceil(L / 128) blocks), key tiles through shared memory.
template <int D>
__device__ void attn_bwd_dq_simt(int64 L, int64 S, int64 E, int64 Ev, double scale_d, int causal, const float *q,
                                 const float *k, const float *v, const float *g, const float *lse,
                                 const float *delta, float *dq) {
  __shared__ __align__(16) float ks[kTile * D], vs[kTile * D];
  const int64 nqb = (L + kThreads - 1) / kThreads;
  const int64 b = blockIdx.x / nqb;
  int64 qt = blockIdx.x % nqb;
  if (causal) qt = nqb - 1 - qt;
  const int64 i0 = qt * kThreads, i = i0 + threadIdx.x;
  const bool active = i < L;
  q += b * L * E, k += b * S * E, v += b * S * Ev, g += b * L * Ev, lse += b * L, delta += b * L;
  float qr[D], gr[D], aq[D];
#pragma unroll
  for (int e = 0; e < D; ++e) {
    qr[e] = (active && e < E) ? q[i * E + e] : 0.f;
    gr[e] = (active && e < Ev) ? g[i * Ev + e] : 0.f;
    aq[e] = 0.f;
  }
  const float li = active ? lse[i] : a_inf<float>(), di = active ? delta[i] : 0.f;
  const float scale = float(scale_d);
  const int64 kend = causal ? min(S, min(L, i0 + kThreads)) : S;
  for (int64 j0 = 0; j0 < kend; j0 += kTile) {
    __syncthreads();
    tile_load<D>(ks, k, E, j0, S, E);
    tile_load<D>(vs, v, Ev, j0, S, Ev);
    __syncthreads();
#pragma unroll 4
    for (int jj = 0; jj < kTile; ++jj) {
      const int64 j = j0 + jj;
      const float *krow = ks + jj * D;
      float pij = exp2f((dot_row<D>(qr, krow) * scale - li) * kLog2eS);
      if (j >= S || (causal && j > i)) pij = 0.f;  // a zero-filled key past S would still score 0, not -inf
      const float dsij = pij * (dot_row<D>(gr, vs + jj * D) - di);
#pragma unroll
      for (int e = 0; e < D; ++e) aq[e] = fmaf(dsij, krow[e], aq[e]);
    }
  }
  if (!active) return;
#pragma unroll
  for (int e = 0; e < D; ++e)
    if (e < E) dq[(b * L + i) * E + e] = aq[e] * scale;
}

#define TP_ATTN_SIMT_FWD(D)                                                                                     \
  extern "C" __global__ void __launch_bounds__(kThreads) attn_fwd_simt_d##D##_float32(const AttnParams p) {    \
    attn_fwd_simt<D>(p);                                                                                       \
  }
#define TP_ATTN_SIMT_BWD(D)                                                                                     \
  extern "C" __global__ void __launch_bounds__(kThreads)                                                       \
      attn_bwd_dkdv_simt_d##D##_float32(int64 L, int64 S, int64 E, int64 Ev, double scale, int causal,         \
                                        const float *q, const float *k, const float *v, const float *g,        \
                                        const float *lse, const float *delta, float *dk, float *dv) {          \
    attn_bwd_dkdv_simt<D>(L, S, E, Ev, scale, causal, q, k, v, g, lse, delta, dk, dv);                         \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(kThreads)                                                       \
      attn_bwd_dq_simt_d##D##_float32(int64 L, int64 S, int64 E, int64 Ev, double scale, int causal,           \
                                      const float *q, const float *k, const float *v, const float *g,          \
                                      const float *lse, const float *delta, float *dq) {                       \
    attn_bwd_dq_simt<D>(L, S, E, Ev, scale, causal, q, k, v, g, lse, delta, dq);                               \
  }
TP_ATTN_SIMT_FWD(16)
TP_ATTN_SIMT_FWD(32)
TP_ATTN_SIMT_FWD(64)
TP_ATTN_SIMT_BWD(16)
TP_ATTN_SIMT_BWD(32)
