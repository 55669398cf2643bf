// delta_rule_backward.cpp — delta_rule_backward: the gradients of the delta-rule scan (delta_rule.cpp) with
// respect to query, key, value, g, beta and initial_state, by the reverse-time recurrence.
//
// Where it sits: tpx's formula of delta_rule (formulas/recurrent.py) calls it when the backward pass is not
// recorded; under create_graph=True it differentiates _delta_rule_reference instead (Note [Delta rule backward
// paths] there). Semantics and shapes: Note [Delta rule semantics] in delta_rule.h.
//
// Note [Delta rule backward]
//   One step, for one (b, h), with a = exp(g_t) (one value per row of S; the same value for a per-head g):
//       S' = diag(a) S_prev,   w = v - S'^T k,   u = beta w,   S = S' + k u^T,   o = S^T q.
//   Going back in time we carry dS, the gradient of the loss with respect to S_t (it starts as
//   grad_final_state, or 0). Step t, in reverse order of the forward:
//     o = S^T q:         dq = S dO;                 dS += q dO^T
//     S = S' + k u^T:    dk = dS u;                 du = dS^T k;          dS' = dS
//     u = beta w:        dbeta = <du, w>;           dv = beta du;         dp = -beta du  (p = S'^T k = v - w)
//     p = S'^T k:        dk += S' dp;               dS' += k dp^T
//     S' = diag(a) S:    dg_i = a_i <dS'_i, S_prev_i> = <dS'_i, S'_i> (row i; summed over rows for a
//                        per-head g);               dS_prev = diag(a) dS'
//   and after step 0, grad_initial_state = dS. Every line is a rank-1 update or a matrix-vector product, so a
//   step costs three passes over Dk x Dv, like ~1.5 forward steps.
//   The step needs S_prev and S_t, which the forward does not keep. Storing all T states would be O(T Dk Dv)
//   per head (2 MB for T = 1024 at Dk = Dv = 64, per head and batch element); recomputing each from the start
//   would be O(T^2). Instead: a forward pass keeps a checkpoint of the state every chunk_size steps
//   (O(T / chunk_size * Dk Dv)); then, chunk by chunk from the last, the chunk's states are recomputed from
//   its checkpoint into a buffer of chunk_size + 1 states (with u and w of each step), and the steps above run
//   backwards over it. Work: two forward passes and one backward pass. One task per (b, h), as in the forward;
//   every task writes only its own slices of the gradients, so nothing races.
#include <algorithm>
#include <tuple>
#include <vector>

#include "kernels/delta_rule.h"
#include "loop/parallel.h"

namespace tp::p10 {

namespace {

const char *kBwdOp = "delta_rule_backward";

// <a, b> with kLanes partial sums: the vectoriser may not reorder one running float sum, but it can keep
// these in one register (the order of the additions is still fixed by the code, not by the thread count).
constexpr int kLanes = 8;
template <typename M> TP_VEC_INLINE M lane_dot(const M *__restrict a, const M *__restrict b, int64_t n) {
  M lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += a[j + l] * b[j + l];
  M s = 0;
  for (; j < n; ++j) s += a[j] * b[j];
  for (M l : lane) s += l;
  return s;
}

// Note [Delta rule backward] for one (b, h). `buf` holds (chunk + 2 + nchunks) * Dk * Dv + Dk + 2 * (chunk + 1)
// * Dv values (laid out below); ds0 is written only when the caller has an initial state.
template <typename M>
TP_VEC_INLINE void backward_head(const DeltaDims &d, int64_t chunk, int64_t b, int64_t h, const M *q, const M *k,
                                 const M *v, const M *g, const M *beta, const M *s0, const M *dout,
                                 const M *dstate, M *dq, M *dk, M *dv, M *dg, M *dbeta, M *ds0, M *buf) {
  const int64_t Dk = d.Dk, Dv = d.Dv, H = d.H, T = d.T, SS = Dk * Dv;
  const int64_t nchunks = (T + chunk - 1) / chunk;
  M *states = buf, *ckpt = states + (chunk + 1) * SS, *a = ckpt + nchunks * SS, *us = a + Dk,
    *ws = us + chunk * Dv, *du = ws + chunk * Dv, *dp = du + Dv, *dS = dp + Dv;
  // 1. The checkpoints: the state before steps 0, chunk, 2 chunk, ...
  M *S = states;  // a scratch state for this pass
  if (s0) std::copy_n(s0 + (b * H + h) * SS, SS, S);
  else std::fill_n(S, SS, M(0));
  for (int64_t t = 0; t < T; ++t) {
    if (t % chunk == 0) std::copy_n(S, SS, ckpt + (t / chunk) * SS);
    if (t >= (nchunks - 1) * chunk) break;  // the last chunk is recomputed from its checkpoint anyway
    const int64_t r = (b * T + t) * H + h;
    delta_decay(d, g, b, t, h, a);
    delta_step<M>(S, Dk, Dv, a, k + r * Dk, v + r * Dv, beta[r], nullptr, us, ws, nullptr);
  }
  if (dstate) std::copy_n(dstate + (b * H + h) * SS, SS, dS);
  else std::fill_n(dS, SS, M(0));
  // 2. Chunks from the last: recompute its states, then run the steps backwards.
  for (int64_t c = nchunks - 1; c >= 0; --c) {
    const int64_t t0 = c * chunk, n = std::min(chunk, T - t0);
    std::copy_n(ckpt + c * SS, SS, states);
    for (int64_t s = 0; s < n; ++s) {
      const int64_t r = (b * T + t0 + s) * H + h;
      std::copy_n(states + s * SS, SS, states + (s + 1) * SS);
      delta_decay(d, g, b, t0 + s, h, a);
      delta_step<M>(states + (s + 1) * SS, Dk, Dv, a, k + r * Dk, v + r * Dv, beta[r], nullptr, us + s * Dv,
                    ws + s * Dv, nullptr);
    }
    for (int64_t s = n - 1; s >= 0; --s) {
      const int64_t t = t0 + s, r = (b * T + t) * H + h;
      const M *Sprev = states + s * SS, *Scur = states + (s + 1) * SS, *u = us + s * Dv, *w = ws + s * Dv;
      const M *kt = k + r * Dk, *qt = q + r * Dk, *gO = dout ? dout + r * Dv : nullptr;
      M *dqt = dq + r * Dk, *dkt = dk + r * Dk;
      // o = S^T q, then S = S' + k u^T
      for (int64_t j = 0; j < Dv; ++j) du[j] = 0;
      for (int64_t i = 0; i < Dk; ++i) {
        M *__restrict dSi = dS + i * Dv;
        if (gO) {
          dqt[i] = lane_dot(Scur + i * Dv, gO, Dv);
          const M qi = qt[i];
          for (int64_t j = 0; j < Dv; ++j) dSi[j] += qi * gO[j];
        } else {
          dqt[i] = 0;
        }
        dkt[i] = lane_dot(dSi, u, Dv);
        const M ki = kt[i];
        for (int64_t j = 0; j < Dv; ++j) du[j] += ki * dSi[j];
      }
      // u = beta w
      const M bt = beta[r];
      for (int64_t j = 0; j < Dv; ++j) {
        dv[r * Dv + j] = bt * du[j];
        dp[j] = -bt * du[j];
      }
      dbeta[r] = lane_dot(du, w, Dv);
      // p = S'^T k and S' = diag(a) S_prev
      delta_decay(d, g, b, t, h, a);
      M dg_head = 0;
      for (int64_t i = 0; i < Dk; ++i) {
        M *__restrict dSi = dS + i * Dv;
        const M *__restrict Pi = Sprev + i * Dv;
        const M ai = a[i], ki = kt[i];
        dkt[i] += ai * lane_dot(Pi, dp, Dv);
        for (int64_t j = 0; j < Dv; ++j) dSi[j] += ki * dp[j];
        const M sg = ai * lane_dot(dSi, Pi, Dv);
        for (int64_t j = 0; j < Dv; ++j) dSi[j] *= ai;
        if (d.per_channel) dg[r * Dk + i] = sg;
        else dg_head += sg;
      }
      if (!d.per_channel) dg[r] = dg_head;
    }
  }
  if (ds0) std::copy_n(dS, SS, ds0 + (b * H + h) * SS);
}

TP_SIMD_LOOP(void, backward_head_f32,
             (const DeltaDims &d, int64_t chunk, int64_t b, int64_t h, const float *q, const float *k,
              const float *v, const float *g, const float *beta, const float *s0, const float *dout,
              const float *dstate, float *dq, float *dk, float *dv, float *dg, float *dbeta, float *ds0,
              float *buf),
             (d, chunk, b, h, q, k, v, g, beta, s0, dout, dstate, dq, dk, dv, dg, dbeta, ds0, buf), {
               backward_head<float>(d, chunk, b, h, q, k, v, g, beta, s0, dout, dstate, dq, dk, dv, dg, dbeta,
                                    ds0, buf);
             })

Tensor cast_back(const Tensor &t, ScalarType dt) { return t.dtype() == dt ? t : cast_to(t, dt); }

}  // namespace

// (grad_query, grad_key, grad_value, grad_g, grad_beta, grad_initial_state) of delta_rule; grad_out and
// grad_final_state may be None (zero); grad_initial_state is None when initial_state is. Each gradient has its
// input's shape and dtype.
static std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> delta_rule_backward(
    const std::optional<Tensor> &grad_out, const std::optional<Tensor> &grad_final_state, const Tensor &query,
    const Tensor &key, const Tensor &value, const Tensor &g, const Tensor &beta,
    const std::optional<Tensor> &initial_state, int64_t chunk_size) {
  const DeltaDims d = check_delta_args(kBwdOp, query, key, value, g, beta, initial_state, chunk_size);
  const Shape out_shape{d.B, d.T, d.H, d.Dv}, state_shape{d.B, d.H, d.Dk, d.Dv};
  if (grad_out)
    TP_CHECK(grad_out->sizes() == out_shape && is_floating(grad_out->dtype()), Runtime, kBwdOp,
             ": expected a floating point grad_out of shape ", shape_str(out_shape), ", got ",
             scalar_type_name(grad_out->dtype()), " ", shape_str(grad_out->sizes()));
  if (grad_final_state)
    TP_CHECK(grad_final_state->sizes() == state_shape && is_floating(grad_final_state->dtype()), Runtime, kBwdOp,
             ": expected a floating point grad_final_state of shape ", shape_str(state_shape), ", got ",
             scalar_type_name(grad_final_state->dtype()), " ", shape_str(grad_final_state->sizes()));
  const Device dev = query.device();
  auto grad_like = [&](const Tensor &t) { return empty_tensor(t.sizes(), d.mt, dev); };
  Tensor dq = grad_like(query), dk = grad_like(key), dv = grad_like(value), dg = grad_like(g),
         dbeta = grad_like(beta), ds0 = initial_state ? grad_like(*initial_state) : Tensor();
  const int64_t tasks = d.B * d.H;
  if (!dev.is_meta() && tasks > 0) {
    Tensor q = delta_operand(query, d.mt), k = delta_operand(key, d.mt), v = delta_operand(value, d.mt),
           gm = delta_operand(g, d.mt), bm = delta_operand(beta, d.mt);
    Tensor s0 = initial_state ? delta_operand(*initial_state, d.mt) : Tensor();
    Tensor go = grad_out ? delta_operand(*grad_out, d.mt) : Tensor();
    Tensor gs = grad_final_state ? delta_operand(*grad_final_state, d.mt) : Tensor();
    const int64_t chunk = std::max<int64_t>(1, std::min(chunk_size, d.T));
    const int64_t nchunks = (d.T + chunk - 1) / chunk, SS = d.Dk * d.Dv;
    const int64_t buf_size = (chunk + 1) * SS + nchunks * SS + d.Dk + 2 * chunk * d.Dv + 2 * d.Dv + SS;
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(3 * d.T * SS, 1));
    TP_DISPATCH_FLOATING(d.mt, kBwdOp, [&]<typename M>() {
      if constexpr (std::is_same_v<M, float> || std::is_same_v<M, double>) {
        auto ptr = [](const Tensor &t) { return t.defined() ? t.data<M>() : nullptr; };
        parallel_for(0, tasks, grain, [&](int64_t t0, int64_t t1) {
          std::vector<M> buf(static_cast<size_t>(buf_size));
          for (int64_t task = t0; task < t1; ++task) {
            const int64_t b = task / d.H, h = task % d.H;
            const M *qp = q.data<M>(), *kp = k.data<M>(), *vp = v.data<M>(), *gp = gm.data<M>(), *bp = bm.data<M>();
            M *dqp = dq.data<M>(), *dkp = dk.data<M>(), *dvp = dv.data<M>(), *dgp = dg.data<M>(),
              *dbp = dbeta.data<M>();
            if constexpr (std::is_same_v<M, float>)
              backward_head_f32(d, chunk, b, h, qp, kp, vp, gp, bp, ptr(s0), ptr(go), ptr(gs), dqp, dkp, dvp, dgp,
                                dbp, ptr(ds0), buf.data());
            else
              backward_head<M>(d, chunk, b, h, qp, kp, vp, gp, bp, ptr(s0), ptr(go), ptr(gs), dqp, dkp, dvp, dgp,
                               dbp, ptr(ds0), buf.data());
          }
        });
      }
    });
  }
  if (ds0.defined()) ds0 = cast_back(ds0, initial_state->dtype());
  return {cast_back(dq, query.dtype()), cast_back(dk, key.dtype()), cast_back(dv, value.dtype()),
          cast_back(dg, g.dtype()), cast_back(dbeta, beta.dtype()), ds0};
}

TP_LIBRARY(delta_rule_backward) {
  lib.def("delta_rule_backward(Tensor? grad_out, Tensor? grad_final_state, Tensor query, Tensor key, "
          "Tensor value, Tensor g, Tensor beta, Tensor? initial_state=None, int chunk_size=64) "
          "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    impl_typed<delta_rule_backward>(lib, "delta_rule_backward", key, __LINE__);
}

}  // namespace tp::p10
