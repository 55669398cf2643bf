// delta_rule.cu — the gated delta-rule scan on the device (delta_rule's forward): per (b, h), a state S [Dk, Dv]
// carried through T steps, the outputs o_t = S_t^T q_t and the final state.
//
// Where it sits: launched by csrc/cuda/ops_delta_rule.cpp; the semantics are Note [Delta rule semantics] in
// csrc/kernels/delta_rule.h and the thread layout Note [Delta rule on CUDA] in delta_rule.cuh. The backward is
// delta_rule_backward.cu.
//
// Note [Delta rule forward on CUDA]
//   A block is one column tile of one (b, h) (blockIdx.x = task * tiles + tile); its lanes walk the T steps
//   with their part of the state in registers (or a scratch slot) and never wait for each other: the only
//   exchanges are rows_sum's shuffles inside a warp. As in the CPU kernel (Note [Delta rule kernel]), step
//   t + 1's decay and its prediction S'^T k_{t+1} are folded into step t's update-and-output pass, so each
//   step visits the state once:
//       before step 0:  S <- diag(a_0) S,  w = S^T k_0
//       step t:         u = beta_t (v_t - w);  S <- S + k_t u;  o_t = S^T q_t;
//                       and unless t is the last step: S <- diag(a_{t+1}) S,  w = S^T k_{t+1}
//   The two sums of a step (o_t and the next w) are independent, so their shuffles interleave. Entry points:
//   delta_fwd_r<R>_<M>(DeltaParams), R = 1, 2, 4, 8, 16, 32 for rows in registers (Dk <= 8 R), R = 0 for a
//   scratch slot per block; M = float32 | float64; blockDim = 32 W with W <= 4 (4 W columns).
#include "delta_rule.cuh"

template <typename M, typename St>
__device__ void delta_forward_tile(const DeltaParams &p, St &S, int64 task, int64 tile) {
  const DeltaLane ln(p, tile);
  const int64 b = task / p.H, h = task % p.H;
  const int nr = TP_DELTA_ROWS(St, ln.nr);
  delta_load(S, (const M *)p.s0, p, ln, task);
  if (p.T > 0) {
    M w = M(0);
    {  // step 0's decay and prediction
      const DeltaStep<M> st(p, ln, b, 0, h);
#pragma unroll
      for (int r = 0; r < nr; ++r) {
        const int64 i = ln.row(r);
        const M x = S.get(r) * st.a_at(i);
        S.set(r, x);
        w += st.k_at(i) * x;
      }
      w = rows_sum(w);
    }
    M *out = (M *)p.out;
    for (int64 t = 0; t < p.T; ++t) {
      const DeltaStep<M> st(p, ln, b, t, h);
      const M u = st.beta * (st.v - w);
      M o = M(0);
      if (t + 1 == p.T) {  // the last update: no next step to prepare
#pragma unroll
        for (int r = 0; r < nr; ++r) {
          const int64 i = ln.row(r);
          const M x = S.get(r) + st.k_at(i) * u;
          S.set(r, x);
          o += st.q_at(i) * x;
        }
        o = rows_sum(o);
      } else {
        const DeltaStep<M> nx(p, ln, b, t + 1, h);
        M wn = M(0);
#pragma unroll
        for (int r = 0; r < nr; ++r) {
          const int64 i = ln.row(r);
          const M x = S.get(r) + st.k_at(i) * u;  // S_t
          o += st.q_at(i) * x;
          const M y = nx.a_at(i) * x;              // S'_{t+1}
          S.set(r, y);
          wn += nx.k_at(i) * y;
        }
        o = rows_sum(o);
        w = rows_sum(wn);
      }
      if (ln.rl == 0 && ln.jv) out[((b * p.T + t) * p.H + h) * p.Dv + ln.j] = o;
    }
  }
  delta_store(S, (M *)p.state, p, ln, task);
}

template <typename M, int R> __device__ void delta_forward(const DeltaParams &p) {
  const int64 task = blockIdx.x / p.tiles, tile = blockIdx.x % p.tiles;
  if constexpr (R > 0) {
    DeltaRegs<M, R> S;
    delta_forward_tile<M>(p, S, task, tile);
  } else {
    DeltaSlot<M> S{(M *)p.scratch + int64(blockIdx.x) * p.scratch_per_block + threadIdx.x, int(blockDim.x)};
    delta_forward_tile<M>(p, S, task, tile);
  }
}

#define TP_DELTA_FWD(R, M)                                                                                  \
  extern "C" __global__ void __launch_bounds__(128) delta_fwd_r##R##_##M(const DeltaParams p) {            \
    delta_forward<M, R>(p);                                                                                 \
  }
#define TP_DELTA_FWD_ALL(M)                                                                                 \
  TP_DELTA_FWD(0, M) TP_DELTA_FWD(1, M) TP_DELTA_FWD(2, M) TP_DELTA_FWD(4, M) TP_DELTA_FWD(8, M)            \
  TP_DELTA_FWD(16, M) TP_DELTA_FWD(32, M)
TP_DELTA_FWD_ALL(float32)
TP_DELTA_FWD_ALL(float64)
