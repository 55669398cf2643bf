// ops_delta_rule.cpp — the CUDA kernels of delta_rule and delta_rule_backward: the gated delta-rule scan of the
// linear-attention mixers (GatedDeltaNet, Kimi Delta Attention) and its gradients.
//
// Where it sits: the CUDA twin of kernels/delta_rule.cpp and kernels/delta_rule_backward.cpp, with the same
// checks (check_delta_args in kernels/delta_rule.h), results and dtypes: operands are made contiguous in the
// compute dtype (float32, float64 for float64 queries) as the CPU op does; the output comes back in query's
// dtype, the final state in the compute dtype, each gradient in its input's dtype. The launch shapes are
// cuda/delta_rule.h's; the arithmetic is tensorplay_p10/cuda_kernels/delta_rule.cu (forward) and
// delta_rule_backward.cu (Notes there). tpx's formula (formulas/recurrent.py) calls delta_rule_backward when the
// backward pass is not recorded, and differentiates _delta_rule_reference (whose ops run on the GPU) otherwise.
#include <climits>
#include <tuple>

#include "cuda/delta_rule.h"
#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "kernels/delta_rule.h"

namespace tp::p10::cuda {

namespace {
// delta_rule.cuh's DeltaParams, byte for byte.
struct DeltaParams {
  const void *q = nullptr, *k = nullptr, *v = nullptr, *g = nullptr, *beta = nullptr, *s0 = nullptr;
  const void *dout = nullptr, *dstate = nullptr;
  void *out = nullptr, *state = nullptr;
  void *dq = nullptr, *dk = nullptr, *dv = nullptr, *dg = nullptr, *dbeta = nullptr, *ds0 = nullptr;
  void *scratch = nullptr;
  int64_t B = 0, T = 0, H = 0, Dk = 0, Dv = 0;
  int64_t chunk = 1, scratch_per_block = 0;
  int32_t per_channel = 0, tiles = 0, groups = 1, red_shared = 1;
};
static_assert(sizeof(DeltaParams) == 17 * 8 + 7 * 8 + 4 * 4, "DeltaParams must match delta_rule.cuh");

constexpr int64_t kScratchBudget = int64_t(512) << 20;  // bytes of backward scratch before the grid is cut

Tensor cast_back(const Tensor &t, ScalarType dt) { return t.dtype() == dt ? t : contiguous_as(t, dt); }

// The operands every launch reads, in the compute dtype, and the call's device.
struct DeltaOperands {
  int dev;
  Device device;
  Tensor q, k, v, g, beta, s0;
};
DeltaOperands delta_operands(const char *op, const DeltaDims &d, const Tensor &query, const Tensor &key,
                             const Tensor &value, const Tensor &g, const Tensor &beta,
                             const std::optional<Tensor> &initial_state) {
  std::vector<Tensor> all{query, key, value, g, beta};
  if (initial_state) all.push_back(*initial_state);
  const int dev = common_device(op, all, false);
  return {dev,
          Device{DeviceType::CUDA, int8_t(dev)},
          dense(query, d.mt),
          dense(key, d.mt),
          dense(value, d.mt),
          dense(g, d.mt),
          dense(beta, d.mt),
          initial_state ? dense(*initial_state, d.mt) : Tensor()};
}

DeltaParams base_params(const DeltaDims &d, const DeltaOperands &o, const DeltaPlan &plan) {
  DeltaParams p;
  p.q = o.q.data_ptr(), p.k = o.k.data_ptr(), p.v = o.v.data_ptr(), p.g = o.g.data_ptr();
  p.beta = o.beta.data_ptr(), p.s0 = ptr_or_null(o.s0);
  p.B = d.B, p.T = d.T, p.H = d.H, p.Dk = d.Dk, p.Dv = d.Dv;
  p.per_channel = d.per_channel ? 1 : 0, p.tiles = plan.tiles, p.groups = plan.groups;
  p.chunk = plan.chunk, p.scratch_per_block = plan.scratch_per_block, p.red_shared = plan.red_shared ? 1 : 0;
  return p;
}

std::string entry(const char *family, const DeltaPlan &plan, ScalarType mt) {
  return std::string(family) + "_r" + std::to_string(plan.R) + "_" + scalar_type_name(mt);
}

void check_grid(const char *op, int64_t grid) {
  TP_CHECK(grid <= INT_MAX, NotImplemented, op, ": ", grid, " CUDA blocks are more than one launch takes");
}
}  // namespace

static std::tuple<Tensor, Tensor> delta_rule(const Tensor &query, const Tensor &key, const Tensor &value,
                                             const Tensor &g, const Tensor &beta,
                                             const std::optional<Tensor> &initial_state, int64_t chunk_size) {
  const char *op = "delta_rule";
  const DeltaDims d = check_delta_args(op, query, key, value, g, beta, initial_state, chunk_size);
  const DeltaOperands o = delta_operands(op, d, query, key, value, g, beta, initial_state);
  DeviceGuard guard(o.dev);
  Tensor out = empty_tensor({d.B, d.T, d.H, d.Dv}, d.mt, o.device);
  Tensor state = empty_tensor({d.B, d.H, d.Dk, d.Dv}, d.mt, o.device);
  const DeltaPlan plan = delta_forward_plan(d.B, d.H, d.Dk, d.Dv, properties(o.dev).multi_processor_count);
  if (plan.grid > 0) {  // every (b, h) with at least one column: Dk = 0 still writes zero outputs
    check_grid(op, plan.grid);
    // scratch slots only when the rows do not fit in registers (Dk > 256)
    const Tensor scratch = plan.scratch_per_block > 0
                               ? empty_tensor({plan.grid * plan.scratch_per_block}, d.mt, o.device)
                               : Tensor();
    DeltaParams p = base_params(d, o, plan);
    p.out = out.data_ptr(), p.state = state.data_ptr(), p.scratch = ptr_or_null(scratch);
    launch(kernel(o.dev, "delta_rule.cu", entry("delta_fwd", plan, d.mt)),
           LaunchConfig{unsigned(plan.grid), unsigned(32 * plan.warps), 0}, stream_for(o.dev), p);
  }
  return {cast_back(out, query.dtype()), state};
}

static std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> delta_rule_backward(
    const std::optional<Tensor> &grad_out, const std::optional<Tensor> &grad_final_state, const Tensor &query,
    const Tensor &key, const Tensor &value, const Tensor &g, const Tensor &beta,
    const std::optional<Tensor> &initial_state, int64_t chunk_size) {
  const char *op = "delta_rule_backward";
  // the CPU op's checks, including grad_out's and grad_final_state's shapes and dtypes, on meta copies
  call_op<void>(
      TP_OP("delta_rule_backward"), meta_like(grad_out), meta_like(grad_final_state), meta_like(query),
      meta_like(key), meta_like(value), meta_like(g), meta_like(beta), meta_like(initial_state), chunk_size);
  const DeltaDims d = check_delta_args(op, query, key, value, g, beta, initial_state, chunk_size);
  const DeltaOperands o = delta_operands(op, d, query, key, value, g, beta, initial_state);
  DeviceGuard guard(o.dev);
  for (const auto *t : {&grad_out, &grad_final_state})
    if (*t) common_device(op, {query, **t}, false);
  const Tensor go = grad_out ? dense(*grad_out, d.mt) : Tensor();
  const Tensor gs = grad_final_state ? dense(*grad_final_state, d.mt) : Tensor();
  const int item = d.mt == ScalarType::Float64 ? 8 : 4;
  const DeltaPlan plan = delta_backward_plan(d.B, d.T, d.H, d.Dk, d.Dv, d.per_channel, chunk_size, item,
                                             properties(o.dev).multi_processor_count, kScratchBudget);
  // dq, dk, dg, dbeta: `groups` partial copies when several blocks share one (b, h) (summed below)
  auto grads = [&](const Tensor &like) {
    Shape s = like.sizes();
    if (plan.groups > 1) s.insert(s.begin(), plan.groups);
    return empty_tensor(s, d.mt, o.device);
  };
  Tensor dq = grads(query), dk = grads(key), dg = grads(g), dbeta = grads(beta);
  Tensor dv = empty_tensor(value.sizes(), d.mt, o.device);
  Tensor ds0 = initial_state ? empty_tensor(initial_state->sizes(), d.mt, o.device) : Tensor();
  if (plan.grid > 0) {
    check_grid(op, plan.grid);
    Tensor scratch = empty_tensor({std::max<int64_t>(1, plan.grid * plan.scratch_per_block)}, d.mt, o.device);
    DeltaParams p = base_params(d, o, plan);
    p.dout = ptr_or_null(go), p.dstate = ptr_or_null(gs);
    p.dq = dq.data_ptr(), p.dk = dk.data_ptr(), p.dv = dv.data_ptr(), p.dg = dg.data_ptr();
    p.dbeta = dbeta.data_ptr(), p.ds0 = ptr_or_null(ds0), p.scratch = scratch.data_ptr();
    launch(kernel(o.dev, "delta_rule_backward.cu", entry("delta_bwd", plan, d.mt)),
           LaunchConfig{unsigned(plan.grid), unsigned(32 * plan.warps), plan.shared_bytes}, stream_for(o.dev), p);
    if (plan.groups > 1) {
      const std::optional<std::vector<int64_t>> first(std::vector<int64_t>{0});
      for (Tensor *t : {&dq, &dk, &dg, &dbeta})
        *t = call_op<Tensor>(TP_OP("sum"), *t, first, false, std::optional<ScalarType>());
    }
  } else {  // no column (Dv = 0) or no (b, h): the sums over columns are empty
    for (Tensor *t : {&dq, &dk, &dg, &dbeta, &dv, &ds0})
      if (t->defined() && t->numel() > 0) call_op<Tensor>(TP_OP("fill_"), *t, Scalar(0.0));
  }
  if (ds0.defined()) ds0 = cast_back(ds0, initial_state->dtype());
  return {cast_back(dq, query.dtype()), cast_back(dk, key.dtype()),   cast_back(dv, value.dtype()),
          cast_back(dg, g.dtype()),     cast_back(dbeta, beta.dtype()), ds0};
}

TP_LIBRARY(cuda_delta_rule) {
  TP_IMPL(lib, "delta_rule", CUDA, delta_rule);
  TP_IMPL(lib, "delta_rule_backward", CUDA, delta_rule_backward);
}

}  // namespace tp::p10::cuda
