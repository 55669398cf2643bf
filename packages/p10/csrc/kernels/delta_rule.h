// delta_rule.h — what delta_rule.cpp (forward, composite reference) and delta_rule_backward.cpp share: the
// argument checks, the inputs laid out for the kernels, and one step of the recurrence on a state buffer.
//
// Note [Delta rule semantics]
//   query, key [B, T, H, Dk], value [B, T, H, Dv], g [B, T, H] (one log-decay per head) or [B, T, H, Dk] (one
//   per key channel, i.e. per row of the state), beta [B, T, H], initial_state [B, H, Dk, Dv] or None (zeros).
//   Per (b, h) a state S [Dk, Dv] runs through t = 0 .. T-1:
//       S <- diag(exp(g_t)) S          (a_t = exp(g_t): one number, or one per row)
//       u_t = beta_t (v_t - S^T k_t)   (the delta: what the state predicts for k_t, corrected towards v_t)
//       S <- S + k_t u_t^T
//       o_t = S^T q_t
//   Results: out [B, T, H, Dv] in query's dtype and the final state [B, H, Dk, Dv] in the compute dtype: float64
//   for float64 queries, float32 otherwise (16-bit inputs are read as float32). query, key and value share one
//   dtype; g, beta and initial_state may be any floating dtype (a float32 g with bfloat16 activations is usual).
//   q and k are used as given (callers scale / normalise them). chunk_size only sets how often the backward
//   keeps a state checkpoint (Note [Delta rule backward]); it never changes a result.
#pragma once
#include <cmath>
#include <optional>

#include "dispatch/kernel_box.h"
#include "kernels/linalg_common.h"
#include "loop/simd.h"

namespace tp::p10 {

struct DeltaDims {
  int64_t B, T, H, Dk, Dv;
  bool per_channel;  // g is [B, T, H, Dk]
  ScalarType mt;     // compute dtype (Note [Delta rule semantics])
};

// Checks the arguments of `op` (delta_rule, its backward or its reference) against Note [Delta rule semantics].
inline DeltaDims check_delta_args(const char *op, const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &g,
                                  const Tensor &beta, const std::optional<Tensor> &s0, int64_t chunk_size) {
  const Tensor *named[] = {&q, &k, &v, &g, &beta};
  const char *names[] = {"query", "key", "value", "g", "beta"};
  for (int i = 0; i < 5; ++i)
    TP_CHECK(is_floating(named[i]->dtype()), Runtime, op, ": expected a floating point ", names[i], ", got ",
             scalar_type_name(named[i]->dtype()));
  if (s0)
    TP_CHECK(is_floating(s0->dtype()), Runtime, op, ": expected a floating point initial_state, got ",
             scalar_type_name(s0->dtype()));
  TP_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), Runtime, op,
           ": expected query, key and value of one dtype, got ", scalar_type_name(q.dtype()), ", ",
           scalar_type_name(k.dtype()), " and ", scalar_type_name(v.dtype()));
  for (int i = 1; i < 5; ++i)
    TP_CHECK(named[i]->device() == q.device(), Runtime, op, ": expected ", names[i], " on query's device ",
             device_str(q.device()), ", got ", device_str(named[i]->device()));
  TP_CHECK(chunk_size > 0, Value, op, ": chunk_size must be positive, got ", chunk_size);
  TP_CHECK(q.dim() == 4, Runtime, op, ": expected query of shape [B, T, H, Dk], got ", shape_str(q.sizes()));
  const int64_t B = q.size(0), T = q.size(1), H = q.size(2), Dk = q.size(3);
  TP_CHECK(k.sizes() == q.sizes(), Runtime, op, ": expected key of query's shape ", shape_str(q.sizes()),
           " ([B, T, H, Dk]), got ", shape_str(k.sizes()));
  TP_CHECK(v.dim() == 4 && v.size(0) == B && v.size(1) == T && v.size(2) == H, Runtime, op,
           ": expected value of shape [B, T, H, Dv] = [", B, ", ", T, ", ", H, ", Dv] (query is ",
           shape_str(q.sizes()), "), got ", shape_str(v.sizes()));
  const int64_t Dv = v.size(3);
  const bool per_channel = g.dim() == 4;
  const Shape bth{B, T, H}, bthk{B, T, H, Dk}, state{B, H, Dk, Dv};
  TP_CHECK((g.dim() == 3 && g.sizes() == bth) || (per_channel && g.sizes() == bthk), Runtime, op,
           ": expected g of shape [B, T, H] = ", shape_str(bth), " (one log-decay per head) or [B, T, H, Dk] = ",
           shape_str(bthk), " (per key channel), got ", shape_str(g.sizes()));
  TP_CHECK(beta.sizes() == bth, Runtime, op, ": expected beta of shape [B, T, H] = ", shape_str(bth), ", got ",
           shape_str(beta.sizes()));
  if (s0)
    TP_CHECK(s0->sizes() == state, Runtime, op, ": expected initial_state of shape [B, H, Dk, Dv] = ",
             shape_str(state), ", got ", shape_str(s0->sizes()));
  const ScalarType mt = q.dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  return {B, T, H, Dk, Dv, per_channel, mt};
}

// `t` as a contiguous tensor of dtype `mt` (the kernels index plain [B, T, H, D] memory).
inline Tensor delta_operand(const Tensor &t, ScalarType mt) {
  Tensor r = t.dtype() == mt ? t : cast_to(t, mt);
  return r.is_contiguous() ? r : call_op<Tensor>(TP_OP("contiguous"), r);
}

// One step of Note [Delta rule semantics] on the row-major state S [Dk, Dv], in place. `a` holds the decay
// exp(g_t) of each row (Dk values). Leaves u_t in `u` and w_t = v_t - S'^T k_t (S' the decayed state) in `w`,
// which the backward needs; `o` (Dv values, or null) receives S^T q_t. Two passes over S: decay and S'^T k,
// then the rank-1 update and S^T q. Inner loops run along Dv, contiguous, for the vectoriser.
template <typename M>
TP_VEC_INLINE void delta_step(M *__restrict S, int64_t Dk, int64_t Dv, const M *__restrict a, const M *__restrict k,
                              const M *__restrict v, M beta, const M *__restrict q, M *__restrict u,
                              M *__restrict w, M *__restrict o) {
  for (int64_t j = 0; j < Dv; ++j) w[j] = 0;
  for (int64_t i = 0; i < Dk; ++i) {
    M *__restrict row = S + i * Dv;
    const M ai = a[i], ki = k[i];
    for (int64_t j = 0; j < Dv; ++j) {
      row[j] *= ai;
      w[j] += ki * row[j];
    }
  }
  for (int64_t j = 0; j < Dv; ++j) {
    w[j] = v[j] - w[j];
    u[j] = beta * w[j];
  }
  if (o)
    for (int64_t j = 0; j < Dv; ++j) o[j] = 0;
  for (int64_t i = 0; i < Dk; ++i) {
    M *__restrict row = S + i * Dv;
    const M ki = k[i];
    for (int64_t j = 0; j < Dv; ++j) row[j] += ki * u[j];
    if (o) {
      const M qi = q[i];
      for (int64_t j = 0; j < Dv; ++j) o[j] += qi * row[j];
    }
  }
}

// The decay of step t for head (b, h): exp(g) for each of the Dk rows. g is contiguous [B, T, H] or [B, T, H, Dk].
template <typename M>
TP_VEC_INLINE void delta_decay(const DeltaDims &d, const M *g, int64_t b, int64_t t, int64_t h, M *a) {
  if (d.per_channel) {
    const M *gr = g + ((b * d.T + t) * d.H + h) * d.Dk;
    for (int64_t i = 0; i < d.Dk; ++i) a[i] = std::exp(gr[i]);
  } else {
    const M e = std::exp(g[(b * d.T + t) * d.H + h]);
    for (int64_t i = 0; i < d.Dk; ++i) a[i] = e;
  }
}

}  // namespace tp::p10
