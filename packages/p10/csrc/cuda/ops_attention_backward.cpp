// ops_attention_backward.cpp — the CUDA kernel of scaled_dot_product_attention_backward.
//
// Where it sits: the CUDA twin of kernels/attention_backward.cpp, called by the derivative formula of
// scaled_dot_product_attention (tpx formulas/attention.py, Note [Attention backward paths]); the arithmetic is
// tensorplay_p10/cuda_kernels/attention_backward.cu (Note [Flash backward]). The CPU op, asked on meta
// tensors, checks the shapes (in float32 for 16-bit inputs: the CPU kernel takes float32/float64 only, this
// one also float16/bfloat16, accumulating in float32). The forward is rerun here (attention.cu) for its
// output O and each row's log-sum-exp; then delta = rowsum(dO * O), dK/dV by key rows and dQ by query rows:
// on tensor cores for float16/bfloat16 with head dims up to 128, on CUDA-core tiles for float32 with head dims
// up to 32 (attention_simt.cu), the warp-per-row kernels otherwise.
#include <algorithm>
#include <climits>
#include <tuple>

#include "cuda/attention.h"
#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

namespace {
const char *kBwdOp = "scaled_dot_product_attention_backward";
constexpr int64_t kWarpsPerBlock = 4;  // attention_backward.cu

unsigned grid_of(int64_t blocks) {
  TP_CHECK(blocks <= INT_MAX, NotImplemented, kBwdOp, ": the problem needs more CUDA blocks (", blocks,
           ") than one launch takes");
  return unsigned(std::max<int64_t>(blocks, 1));
}
}  // namespace

static std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor &grad_out, const Tensor &query, const Tensor &key, const Tensor &value, bool is_causal,
    double scale) {
  const ScalarType dt = query.dtype();
  TP_CHECK(is_floating(dt) && key.dtype() == dt && value.dtype() == dt && grad_out.dtype() == dt, Runtime,
           kBwdOp, ": expected floating point grad_out, query, key and value of one dtype, got ",
           scalar_type_name(grad_out.dtype()), ", ", scalar_type_name(dt), ", ", scalar_type_name(key.dtype()),
           " and ", scalar_type_name(value.dtype()));
  const bool half = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  auto meta = [&](const Tensor &t) {
    return empty_strided_tensor(t.sizes(), t.strides(), half ? ScalarType::Float32 : t.dtype(),
                                Device{DeviceType::Meta, -1});
  };
  call_op<std::tuple<Tensor, Tensor, Tensor>>(TP_OP("scaled_dot_product_attention_backward"), meta(grad_out),
                                              meta(query), meta(key), meta(value), is_causal, scale);
  const int dev = common_device(kBwdOp, {grad_out, query, key, value}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor dq = empty_tensor(query.sizes(), dt, device), dk = empty_tensor(key.sizes(), dt, device),
         dv = empty_tensor(value.sizes(), dt, device);
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1), Ev = value.size(-1);
  const int64_t nb = shape_numel(Shape(query.sizes().begin(), query.sizes().end() - 2));
  if (dq.numel() + dk.numel() + dv.numel() == 0) return {dq, dk, dv};
  if (L == 0 || S == 0 || E == 0 || Ev == 0) {  // no pairs, or empty dot products: every gradient is 0
    for (const Tensor &t : {dq, dk, dv})
      if (t.numel() > 0) call_op<Tensor>(TP_OP("fill_"), t, Scalar(0.0));
    return {dq, dk, dv};
  }
  auto contig = [&](const Tensor &t) { return t.is_contiguous() ? t : contiguous_as(t, dt); };
  const Tensor q = contig(query), k = contig(key), v = contig(value), g = contig(grad_out);
  const ScalarType at = dt == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  Tensor out = empty_tensor({nb, L, Ev}, dt, device), lse = empty_tensor({nb, L}, at, device),
         delta = empty_tensor({nb, L}, at, device);

  // the forward again, for O and the log-sum-exp (contiguous operands, one flat batch dim)
  AttnParams p;
  p.q = q.data_ptr(), p.k = k.data_ptr(), p.v = v.data_ptr(), p.out = out.data_ptr(), p.lse = lse.data_ptr();
  p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.q_rs = E, p.k_rs = E, p.v_rs = Ev;
  p.nb = nb, p.nd = 1, p.sizes[0] = nb, p.qs[0] = L * E, p.ks[0] = S * E, p.vs[0] = S * Ev;
  p.scale = scale, p.causal = is_causal;
  p.vec = half && E % 8 == 0 && Ev % 8 == 0 && reinterpret_cast<uintptr_t>(q.data_ptr()) % 16 == 0 &&
          reinterpret_cast<uintptr_t>(k.data_ptr()) % 16 == 0 &&
          reinterpret_cast<uintptr_t>(v.data_ptr()) % 16 == 0;
  attention_forward_launch(p, dt, dev);

  const Stream stream = stream_for(dev);
  const int64_t causal = is_causal;
  launch(kernel(dev, "attention_backward.cu", kname("attn_bwd_delta", dt)),
         LaunchConfig{grid_of((nb * L + kWarpsPerBlock - 1) / kWarpsPerBlock), 128, 0}, stream, nb * L, Ev,
         g.data_ptr(), out.data_ptr(), delta.data_ptr());
  const int64_t width = std::max(E, Ev);
  const int D = width <= 16 ? 16 : width <= 32 ? 32 : width <= 64 ? 64 : width <= 128 ? 128 : 0;
  if (half && D > 0 && properties(dev).major >= 8) {  // tensor cores (Note [Flash backward on tensor cores])
    const std::string suffix = "_mma_d" + std::to_string(D) + "_" + scalar_type_name(dt);
    // attn_bwd_dkdv_mma's dynamic shared memory: 64-row K and V tiles and two stages of 16-row Q and dO tiles,
    // rows of D + 8 16-bit values
    const unsigned smem = unsigned((2 * 64 + 2 * 2 * 16) * (D + 8) * 2);
    launch(kernel(dev, "attention_backward.cu", "attn_bwd_dkdv" + suffix),
           LaunchConfig{grid_of(nb * ((S + 63) / 64)), 128, smem}, stream, L, S, E, Ev, scale, int(causal),
           int(p.vec), q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), lse.data_ptr(), delta.data_ptr(),
           dk.data_ptr(), dv.data_ptr());
    launch(kernel(dev, "attention_backward.cu", "attn_bwd_dq" + suffix),
           LaunchConfig{grid_of(nb * ((L + 63) / 64)), 128, 0}, stream, L, S, E, Ev, scale, int(causal),
           int(p.vec), q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), lse.data_ptr(), delta.data_ptr(),
           dq.data_ptr());
    return {dq, dk, dv};
  }
  if (dt == ScalarType::Float32 && D > 0 && D <= kAttnSimtMaxBwd) {  // Note [Attention on CUDA cores]
    const std::string suffix = "_simt_d" + std::to_string(D) + "_float32";
    launch(kernel(dev, "attention_simt.cu", "attn_bwd_dkdv" + suffix),
           LaunchConfig{grid_of(nb * ((S + kAttnSimtRows - 1) / kAttnSimtRows)), unsigned(kAttnSimtRows), 0},
           stream, L, S, E, Ev, scale, int(causal), q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(),
           lse.data_ptr(), delta.data_ptr(), dk.data_ptr(), dv.data_ptr());
    launch(kernel(dev, "attention_simt.cu", "attn_bwd_dq" + suffix),
           LaunchConfig{grid_of(nb * ((L + kAttnSimtRows - 1) / kAttnSimtRows)), unsigned(kAttnSimtRows), 0},
           stream, L, S, E, Ev, scale, int(causal), q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(),
           lse.data_ptr(), delta.data_ptr(), dq.data_ptr());
    return {dq, dk, dv};
  }
  launch(kernel(dev, "attention_backward.cu", kname("attn_bwd_dkdv", dt)),
         LaunchConfig{grid_of(nb * ((S + kWarpsPerBlock - 1) / kWarpsPerBlock)), 128, 0}, stream, L, S, E, Ev,
         scale, int(causal), q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), lse.data_ptr(),
         delta.data_ptr(), dk.data_ptr(), dv.data_ptr());
  launch(kernel(dev, "attention_backward.cu", kname("attn_bwd_dq", dt)),
         LaunchConfig{grid_of(nb * ((L + kWarpsPerBlock - 1) / kWarpsPerBlock)), 128, 0}, stream, L, S, E, Ev,
         scale, int(causal), q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), lse.data_ptr(),
         delta.data_ptr(), dq.data_ptr());
  return {dq, dk, dv};
}

TP_LIBRARY(cuda_attention_backward) {
  TP_IMPL(lib, "scaled_dot_product_attention_backward", CUDA, scaled_dot_product_attention_backward);
}

}  // namespace tp::p10::cuda
