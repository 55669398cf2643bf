// delta_rule.cpp — delta_rule: the gated delta-rule scan of linear-attention mixers (GatedDeltaNet, Kimi Delta
// Attention), and _delta_rule_reference, the same recurrence written with P10 ops.
//
// Where it sits: the hot loop behind tensorplay.nn's delta-rule mixers. A kernel of its own rather than a
// Composite (STYLE.md rule 2): the composite is ~6 small ops per time step, so a sequence of 1024 tokens costs
// ~6000 dispatches and as many [B, H, Dk, Dv] temporaries; the kernel keeps one state per (b, h) in cache and
// runs the whole sequence over it. Its derivative is tpx's formulas/recurrent.py, which calls the fused
// delta_rule_backward (delta_rule_backward.cpp) or differentiates the reference (Note [Delta rule backward
// paths] there). The semantics are Note [Delta rule semantics] in delta_rule.h.
//
// Note [Delta rule kernel]
//   A task is one (b, h) pair; tasks are split over threads (B * H of them; each is T steps of O(Dk Dv)). The
//   inputs are made contiguous in the compute dtype first (O(input) work, and the kernel then indexes plain
//   [B, T, H, D] memory); the state lives in a per-task Dk x Dv buffer. A step of delta_step (delta_rule.h)
//   reads the state twice, since u_t needs all of S'^T k_t before S can be updated; the forward kernel
//   instead folds step t + 1's decay and its S'^T k_{t+1} into step t's update-and-output pass, so each step
//   reads and writes the state once, with the same operations in the same order (9.5 -> 7.5 ms of CPU time
//   at T = 1024, H = 8, Dk = Dv = 64). The float32 loop is built for AVX2+FMA and the baseline
//   (TP_SIMD_LOOP). The readable specification the kernel is tested against is delta_rule_reference below.
#include <algorithm>
#include <tuple>
#include <vector>

#include "kernels/delta_rule.h"
#include "loop/parallel.h"

namespace tp::p10 {

namespace {

const char *kOp = "delta_rule";

// The T steps of one (b, h) pair: out rows written, the final state left in S (Note [Delta rule kernel]).
template <typename M>
TP_VEC_INLINE void forward_head(const DeltaDims &d, int64_t b, int64_t h, const M *q, const M *k, const M *v,
                                const M *g, const M *beta, M *__restrict S, M *out, M *scratch) {
  const int64_t Dk = d.Dk, Dv = d.Dv, H = d.H;
  M *__restrict a = scratch, *__restrict u = scratch + Dk, *__restrict w = u + Dv;
  if (d.T == 0) return;
  // step 0's decay and prediction w = S'^T k_0
  delta_decay(d, g, b, 0, h, a);
  const M *k0 = k + (b * d.T * H + h) * Dk;
  for (int64_t j = 0; j < Dv; ++j) w[j] = 0;
  for (int64_t i = 0; i < Dk; ++i)
    for (int64_t j = 0; j < Dv; ++j) {
      S[i * Dv + j] *= a[i];
      w[j] += k0[i] * S[i * Dv + j];
    }
  for (int64_t t = 0; t < d.T; ++t) {
    const int64_t r = (b * d.T + t) * H + h;
    const M *kt = k + r * Dk, *qt = q + r * Dk, *vt = v + r * Dv;
    M *__restrict o = out + r * Dv;
    for (int64_t j = 0; j < Dv; ++j) {
      u[j] = beta[r] * (vt[j] - w[j]);
      o[j] = 0;
    }
    if (t + 1 == d.T) {  // the last update: no next step to prepare
      for (int64_t i = 0; i < Dk; ++i) {
        M *__restrict row = S + i * Dv;
        for (int64_t j = 0; j < Dv; ++j) {
          row[j] += kt[i] * u[j];
          o[j] += qt[i] * row[j];
        }
      }
      break;
    }
    delta_decay(d, g, b, t + 1, h, a);
    const M *kn = kt + H * Dk;  // k at step t + 1
    for (int64_t j = 0; j < Dv; ++j) w[j] = 0;
    for (int64_t i = 0; i < Dk; ++i) {
      M *__restrict row = S + i * Dv;
      const M ki = kt[i], qi = qt[i], an = a[i], kni = kn[i];
      for (int64_t j = 0; j < Dv; ++j) {
        const M x = row[j] + ki * u[j];  // S_t
        o[j] += qi * x;
        row[j] = an * x;                 // S'_{t+1}
        w[j] += kni * row[j];
      }
    }
  }
}

TP_SIMD_LOOP(void, forward_head_f32,
             (const DeltaDims &d, int64_t b, int64_t h, const float *q, const float *k, const float *v,
              const float *g, const float *beta, float *S, float *out, float *scratch),
             (d, b, h, q, k, v, g, beta, S, out, scratch),
             { forward_head<float>(d, b, h, q, k, v, g, beta, S, out, scratch); })

}  // namespace

static std::tuple<Tensor, Tensor> delta_rule(const Tensor &query, const Tensor &key, const Tensor &value,
                                             const Tensor &g, const Tensor &beta,
                                             const std::optional<Tensor> &initial_state, int64_t chunk_size) {
  const DeltaDims d = check_delta_args(kOp, query, key, value, g, beta, initial_state, chunk_size);
  Tensor out = empty_tensor({d.B, d.T, d.H, d.Dv}, d.mt, query.device());
  Tensor state = empty_tensor({d.B, d.H, d.Dk, d.Dv}, d.mt, query.device());
  if (query.device().is_meta())
    return {query.dtype() == d.mt ? out : empty_tensor(out.sizes(), query.dtype(), query.device()), state};
  Tensor q = delta_operand(query, d.mt), k = delta_operand(key, d.mt), v = delta_operand(value, d.mt),
         gm = delta_operand(g, d.mt), bm = delta_operand(beta, d.mt);
  Tensor s0 = initial_state ? delta_operand(*initial_state, d.mt) : Tensor();
  const int64_t tasks = d.B * d.H;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d.T * d.Dk * d.Dv, 1));
  TP_DISPATCH_FLOATING(d.mt, kOp, [&]<typename M>() {
    if constexpr (std::is_same_v<M, float> || std::is_same_v<M, double>) {
      parallel_for(0, tasks, grain, [&](int64_t t0, int64_t t1) {
        std::vector<M> scratch(size_t(d.Dk + 2 * d.Dv));
        for (int64_t task = t0; task < t1; ++task) {
          const int64_t b = task / d.H, h = task % d.H;
          M *S = state.data<M>() + task * d.Dk * d.Dv;
          if (s0.defined()) std::copy_n(s0.data<M>() + task * d.Dk * d.Dv, d.Dk * d.Dv, S);
          else std::fill_n(S, d.Dk * d.Dv, M(0));
          if constexpr (std::is_same_v<M, float>)
            forward_head_f32(d, b, h, q.data<M>(), k.data<M>(), v.data<M>(), gm.data<M>(), bm.data<M>(), S,
                             out.data<M>(), scratch.data());
          else
            forward_head<M>(d, b, h, q.data<M>(), k.data<M>(), v.data<M>(), gm.data<M>(), bm.data<M>(), S,
                            out.data<M>(), scratch.data());
        }
      });
    }
  });
  return {out.dtype() == query.dtype() ? out : cast_to(out, query.dtype()), state};
}

// ---- the reference: the recurrence with P10 ops ------------------------------------------------------------

// Note [Delta rule reference]
//   Note [Delta rule semantics] step by step, each line one or two ops on [B, H, ...] tensors: it is what the
//   kernel is tested against, and, being ops, what autograd differentiates when the backward pass itself must
//   be recorded (create_graph=True, forward-mode AD; Note [Delta rule backward paths] in tpx's
//   formulas/recurrent.py). O(T) dispatches; never the fast path.
static Tensor as_compute(const Tensor &t, ScalarType mt) {
  return t.dtype() == mt ? t : call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(mt));
}

static std::tuple<Tensor, Tensor> delta_rule_reference(const Tensor &query, const Tensor &key,
                                                       const Tensor &value, const Tensor &g, const Tensor &beta,
                                                       const std::optional<Tensor> &initial_state,
                                                       int64_t chunk_size) {
  const DeltaDims d = check_delta_args("_delta_rule_reference", query, key, value, g, beta, initial_state,
                                       chunk_size);
  const Operator &select = TP_OP("select"), &unsq = TP_OP("unsqueeze"), &mul = TP_OP("mul"),
                 &matmul = TP_OP("matmul");
  Tensor q = as_compute(query, d.mt), k = as_compute(key, d.mt), v = as_compute(value, d.mt),
         gm = as_compute(g, d.mt), bm = as_compute(beta, d.mt);
  // S [B, H, Dk, Dv]
  Tensor S = initial_state ? as_compute(*initial_state, d.mt)
                           : call_op<Tensor>(TP_OP("full"), Shape{d.B, d.H, d.Dk, d.Dv}, Scalar(0.0),
                                             std::optional<ScalarType>(d.mt), std::optional<Device>(query.device()));
  std::vector<Tensor> outs;
  for (int64_t t = 0; t < d.T; ++t) {
    auto at = [&](const Tensor &x) { return call_op<Tensor>(select, x, int64_t(1), t); };  // [B, H, ...]
    auto col = [&](const Tensor &x) { return call_op<Tensor>(unsq, x, int64_t(-1)); };
    auto row = [&](const Tensor &x) { return call_op<Tensor>(unsq, x, int64_t(-2)); };
    Tensor a = call_op<Tensor>(TP_OP("exp"), at(gm));             // [B, H] or [B, H, Dk]
    a = d.per_channel ? col(a) : col(col(a));                     // decays rows of S
    S = call_op<Tensor>(mul, S, a);                               // S <- diag(exp(g_t)) S
    Tensor kt = row(at(k));                                       // [B, H, 1, Dk]
    Tensor pred = call_op<Tensor>(matmul, kt, S);                 // (S^T k_t)^T: [B, H, 1, Dv]
    Tensor u = call_op<Tensor>(TP_OP("sub"), row(at(v)), pred);   // v_t - S^T k_t
    u = call_op<Tensor>(mul, u, col(col(at(bm))));                // u_t = beta_t (v_t - S^T k_t)
    Tensor kcol = call_op<Tensor>(TP_OP("transpose"), kt, int64_t(-2), int64_t(-1));
    S = call_op<Tensor>(TP_OP("add"), S, call_op<Tensor>(matmul, kcol, u));  // S <- S + k_t u_t^T
    outs.push_back(call_op<Tensor>(matmul, row(at(q)), S));      // o_t^T = q_t^T S: [B, H, 1, Dv]
  }
  Tensor out = d.T == 0 ? call_op<Tensor>(TP_OP("full"), Shape{d.B, d.H, 0, d.Dv}, Scalar(0.0),
                                          std::optional<ScalarType>(d.mt), std::optional<Device>(query.device()))
                        : call_op<Tensor>(TP_OP("cat"), outs, int64_t(2));  // [B, H, T, Dv]
  out = call_op<Tensor>(TP_OP("permute"), out, std::vector<int64_t>{0, 2, 1, 3});
  if (d.T == 0 && initial_state) S = call_op<Tensor>(TP_OP("clone"), S);  // a new tensor, never the input
  return {as_compute(out, query.dtype()), S};
}

TP_LIBRARY(delta_rule) {
  lib.def("delta_rule(Tensor query, Tensor key, Tensor value, Tensor g, Tensor beta, Tensor? initial_state=None, "
          "int chunk_size=64) -> (Tensor, Tensor)");
  lib.def("_delta_rule_reference(Tensor query, Tensor key, Tensor value, Tensor g, Tensor beta, "
          "Tensor? initial_state=None, int chunk_size=64) -> (Tensor, Tensor)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) impl_typed<delta_rule>(lib, "delta_rule", key, __LINE__);
  TP_IMPL(lib, "_delta_rule_reference", Composite, delta_rule_reference);
}

}  // namespace tp::p10
