// delta_rule_backward.cu — the gradients of the delta-rule scan on the device (delta_rule_backward): dq, dk, dv,
// dg, dbeta and the initial state's gradient, by the reverse-time recurrence of the CPU kernel.
//
// Where it sits: launched by csrc/cuda/ops_delta_rule.cpp; the step is Note [Delta rule backward] in
// csrc/kernels/delta_rule_backward.cpp, the thread layout Note [Delta rule on CUDA] in delta_rule.cuh.
//
// Note [Delta rule backward on CUDA]
//   The reverse recurrence also acts column by column: dS's column j needs only column j of S_{t-1} and S_t,
//   u_t[j], w_t[j] and dO_t[j], and du_t[j] = k^T dS[:, j] is a sum over rows. So a block owns column tiles of
//   one (b, h), as in the forward, and carries its lanes' parts of dS. What crosses columns are the gradients
//   of the vectors shared by every column: dq_t[i] = sum_j S_t[i, j] dO_t[j], dk_t, dg_t (per row, or summed
//   for a per-head g) and dbeta_t (sums over j). Per step each lane forms its column's terms; cols_sum adds a
//   warp's 4 columns; lanes 0..7 write the warp's sums to a record of `red` (shared memory, or block scratch
//   when a record of 2 Dk + Dk|1 + 1 values per warp does not fit); one barrier; then thread i adds the W
//   records of row i in warp order and writes the step's gradient. `red` has two halves used in turn, so the
//   next step may write while a slow thread still reads, and one barrier per step suffices.
//   A (b, h) with several tiles: its `groups` blocks take tiles grp, grp + groups, ...; a block writes its
//   first tile's sums and adds its next tiles' (the same thread owns row i throughout), into its own partial
//   copy of dq, dk, dg, dbeta (group grp at offset grp x the gradient's size) that the host sums (groups = 1:
//   the results themselves). dv and the initial state's gradient are per column: written where they belong.
//   The states: as the CPU kernel, a first pass keeps a checkpoint every `chunk` steps; then, last chunk
//   first, the chunk's states are recomputed from its checkpoint into chunk + 1 slots (with u and w of each
//   step) and its steps run backwards. Slots are per block in global scratch (thread-minor, so each thread
//   reads back only what it wrote and no barrier is needed); the host sizes the grid so that the scratch stays
//   bounded, and blocks then loop over (b, h, group) work items. Per block, in values of M:
//     [nchunks slots of checkpoints][chunk + 1 slots of states][u, w: 2 chunk x blockDim]
//     [slot mode: S and dS, 2 slots][red when not in shared memory: 2 W records]
//   Entry points: delta_bwd_r<R>_<M>(DeltaParams) as in the forward (blockDim = 32 W, W <= 8).
#include "delta_rule.cuh"

// One forward step on the lane's state (the CPU's delta_step): S <- diag(a) S, w = v - S^T k, u = beta w,
// S <- S + k u. Returns u and w for the lane's column.
template <typename M, typename St>
__device__ __forceinline__ void delta_recompute(St &S, const DeltaStep<M> &st, const DeltaLane &ln, int nr,
                                                M &u, M &w) {
  M pred = M(0);
#pragma unroll
  for (int r = 0; r < nr; ++r) {
    const int64 i = ln.row(r);
    const M x = S.get(r) * st.a_at(i);
    S.set(r, x);
    pred += st.k_at(i) * x;
  }
  w = st.v - rows_sum(pred);
  u = st.beta * w;
#pragma unroll
  for (int r = 0; r < nr; ++r) S.set(r, S.get(r) + st.k_at(ln.row(r)) * u);
}

// A thread's rows r < nr (the slot's rows) to or from a slot. The loop runs over the state's own count so that
// a register state is indexed by constants only (a runtime index would move the array to local memory).
template <typename M, typename St> __device__ __forceinline__ void slot_save(const St &S, M *slot, int nr) {
#pragma unroll
  for (int r = 0; r < TP_DELTA_ROWS(St, nr); ++r)
    if (r < nr) slot[int64(r) * blockDim.x + threadIdx.x] = S.get(r);
}
template <typename M, typename St> __device__ __forceinline__ void slot_load(St &S, const M *slot, int nr) {
#pragma unroll
  for (int r = 0; r < TP_DELTA_ROWS(St, nr); ++r)
    if (r < nr) S.set(r, slot[int64(r) * blockDim.x + threadIdx.x]);
}

// The per-step record of one warp in `red`: [dq: Dk][dk: Dk][dg: Dk, or 1 for a per-head g][dbeta: 1].
__device__ __forceinline__ int64 red_record(const DeltaParams &p) { return 2 * p.Dk + (p.per_channel ? p.Dk : 1) + 1; }

template <typename M, typename St>
__device__ void delta_backward_block(const DeltaParams &p, St &S, St &dS, M *scr, M *red) {
  const int W = int(blockDim.x >> 5), nthr = int(blockDim.x);
  const int64 nr_all = (p.Dk + 7) / 8, slot = nr_all * nthr;
  const int64 chunk = p.chunk, nchunks = p.T > 0 ? (p.T + chunk - 1) / chunk : 0;
  M *ckpt = scr, *states = ckpt + nchunks * slot, *us = states + (chunk + 1) * slot, *ws = us + chunk * nthr;
  const int64 rec = red_record(p), BTH = p.B * p.T * p.H;
  const int64 dg_size = BTH * (p.per_channel ? p.Dk : 1);
  int parity = 0;
  for (int64 work = blockIdx.x; work < p.B * p.H * p.groups; work += gridDim.x) {
    const int64 task = work / p.groups, grp = work % p.groups, b = task / p.H, h = task % p.H;
    M *dq = (M *)p.dq + grp * BTH * p.Dk, *dk = (M *)p.dk + grp * BTH * p.Dk, *dg = (M *)p.dg + grp * dg_size,
      *dbeta = (M *)p.dbeta + grp * BTH;
    for (int64 tile = grp; tile < p.tiles; tile += p.groups) {
      const bool add = tile != grp;  // the block's later tiles add to its first one's sums
      const DeltaLane ln(p, tile);
      const int nr = TP_DELTA_ROWS(St, ln.nr);
      M u, w;
      // 1. checkpoints: the state before steps 0, chunk, 2 chunk, ...
      delta_load(S, (const M *)p.s0, p, ln, task);
      for (int64 t = 0; t < p.T; ++t) {
        if (t % chunk == 0) slot_save(S, ckpt + (t / chunk) * slot, ln.nr);
        if (t >= (nchunks - 1) * chunk) break;  // the last chunk is recomputed from its checkpoint anyway
        delta_recompute(S, DeltaStep<M>(p, ln, b, t, h), ln, nr, u, w);
      }
      delta_load(dS, (const M *)p.dstate, p, ln, task);
      // 2. chunks from the last: recompute its states, then run its steps backwards
      for (int64 c = nchunks - 1; c >= 0; --c) {
        const int64 t0 = c * chunk, n = min(chunk, p.T - t0);
        slot_load(S, ckpt + c * slot, ln.nr);
        slot_save(S, states, ln.nr);
        for (int64 s = 0; s < n; ++s) {
          delta_recompute(S, DeltaStep<M>(p, ln, b, t0 + s, h), ln, nr, u, w);
          us[s * nthr + threadIdx.x] = u;
          ws[s * nthr + threadIdx.x] = w;
          slot_save(S, states + (s + 1) * slot, ln.nr);
        }
        for (int64 s = n - 1; s >= 0; --s) {
          const int64 t = t0 + s, row = (b * p.T + t) * p.H + h;
          const DeltaStep<M> st(p, ln, b, t, h);
          // this thread's values of S_t and S_{t-1}; rows past the slot (r >= ln.nr, register mode) are zeros
          const M *Scur = states + (s + 1) * slot + threadIdx.x, *Sprev = states + s * slot + threadIdx.x;
          u = us[s * nthr + threadIdx.x], w = ws[s * nthr + threadIdx.x];
          const M gO = (p.dout && ln.jv) ? ((const M *)p.dout)[row * p.Dv + ln.j] : M(0);
          M *mine = red + (int64(parity) * W + ln.warp) * rec;  // this warp's record of this step
          const bool writer = ln.cl == 0;  // lanes 0..7 write the record: lane rl holds rows 8 r + rl
          // o = S^T q:  dq = S dO, dS += q dO^T;   S = S' + k u^T:  du = k^T dS (and dk = dS u, in pass B)
          M du = M(0);
#pragma unroll
          for (int r = 0; r < nr; ++r) {
            const int64 i = ln.row(r);
            const M d = dS.get(r) + st.q_at(i) * gO;
            dS.set(r, d);
            du += st.k_at(i) * d;
            const M xq = cols_sum((r < ln.nr ? Scur[int64(r) * nthr] : M(0)) * gO);
            if (writer && i < p.Dk) mine[i] = xq;
          }
          du = rows_sum(du);
          if (ln.rl == 0 && ln.jv) ((M *)p.dv)[row * p.Dv + ln.j] = st.beta * du;  // u = beta w
          const M dp = -st.beta * du;                                                // p = S'^T k = v - w
          M db = (ln.rl == 0 && ln.jv) ? du * w : M(0), dgh = M(0);
          // dk = dS u (dS as pass A left it);  p = S'^T k:  dk += S' dp, dS' = dS + k dp^T;
          // S' = diag(a) S_prev:  dg = a <dS', S_prev> (per row), dS_prev = a dS'
#pragma unroll
          for (int r = 0; r < nr; ++r) {
            const int64 i = ln.row(r);
            const M a = st.a_at(i), P = r < ln.nr ? Sprev[int64(r) * nthr] : M(0), dA = dS.get(r);
            const M d = dA + st.k_at(i) * dp, sg = a * (d * P);
            dS.set(r, d * a);
            const M xk = cols_sum(dA * u + a * (P * dp));
            if (writer && i < p.Dk) mine[p.Dk + i] = xk;
            if (p.per_channel) {  // warp-uniform
              const M xg = cols_sum(sg);
              if (writer && i < p.Dk) mine[2 * p.Dk + i] = xg;
            } else {
              dgh += sg;
            }
          }
          if (!p.per_channel) dgh = cols_sum(rows_sum(dgh));
          db = cols_sum(rows_sum(db));
          if (ln.cl == 0 && ln.rl == 0) {
            if (!p.per_channel) mine[2 * p.Dk] = dgh;
            mine[rec - 1] = db;
          }
          __syncthreads();
          const M *half = red + int64(parity) * W * rec;
          for (int64 i = threadIdx.x; i < p.Dk; i += nthr) {
            M sq = M(0), sk = M(0), sg = M(0);
            for (int v = 0; v < W; ++v) {
              sq += half[v * rec + i];
              sk += half[v * rec + p.Dk + i];
              if (p.per_channel) sg += half[v * rec + 2 * p.Dk + i];
            }
            const int64 o = row * p.Dk + i;
            dq[o] = add ? dq[o] + sq : sq;
            dk[o] = add ? dk[o] + sk : sk;
            if (p.per_channel) dg[o] = add ? dg[o] + sg : sg;
          }
          if (threadIdx.x == nthr - 1) {  // the per-step numbers: dbeta, and dg of a per-head g
            M sb = M(0), sg = M(0);
            for (int v = 0; v < W; ++v) sb += half[v * rec + rec - 1], sg += half[v * rec + 2 * p.Dk];
            dbeta[row] = add ? dbeta[row] + sb : sb;
            if (!p.per_channel) dg[row] = add ? dg[row] + sg : sg;
          }
          parity ^= 1;
        }
      }
      if (p.ds0) delta_store(dS, (M *)p.ds0, p, ln, task);
    }
  }
}

template <typename M, int R> __device__ void delta_backward(const DeltaParams &p) {
  extern __shared__ __align__(16) unsigned char delta_smem[];
  const int64 nthr = blockDim.x, slot = (p.Dk + 7) / 8 * nthr;
  const int64 nchunks = p.T > 0 ? (p.T + p.chunk - 1) / p.chunk : 0;
  M *scr = (M *)p.scratch + int64(blockIdx.x) * p.scratch_per_block;
  M *extra = scr + (nchunks + p.chunk + 1) * slot + 2 * p.chunk * nthr;  // slot mode: S, dS; then red
  M *red = p.red_shared ? (M *)delta_smem : extra + (R > 0 ? 0 : 2 * slot);
  if constexpr (R > 0) {
    DeltaRegs<M, R> S, dS;
    delta_backward_block<M>(p, S, dS, scr, red);
  } else {
    DeltaSlot<M> S{extra + threadIdx.x, int(nthr)}, dS{extra + slot + threadIdx.x, int(nthr)};
    delta_backward_block<M>(p, S, dS, scr, red);
  }
}

#define TP_DELTA_BWD(R, M)                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) delta_bwd_r##R##_##M(const DeltaParams p) {            \
    delta_backward<M, R>(p);                                                                                \
  }
#define TP_DELTA_BWD_ALL(M)                                                                                 \
  TP_DELTA_BWD(0, M) TP_DELTA_BWD(1, M) TP_DELTA_BWD(2, M) TP_DELTA_BWD(4, M) TP_DELTA_BWD(8, M)            \
  TP_DELTA_BWD(16, M) TP_DELTA_BWD(32, M)
TP_DELTA_BWD_ALL(float32)
TP_DELTA_BWD_ALL(float64)
