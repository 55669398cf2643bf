// ops_attention.cpp — the CUDA kernel of scaled_dot_product_attention (forward).
//
// Where it sits: the CUDA twin of kernels/attention.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// attention.cu. The CPU op, asked on meta tensors (cuda/ops_meta.h), checks the call (dtypes, shapes, GQA
// groups, the mask's broadcast, causal with a mask) and gives the result's shape. This file then describes
// the operands to the kernels without copying them: the broadcast batch shape with each operand's strides
// (0 where it broadcasts), GQA as a divisor of the head index, and the mask read in place (a float mask of
// another dtype is cast once, at its own size). Only an operand whose last dim is not contiguous is copied.
// dropout_p > 0 takes the CPU op's math path (kernels/attention.h), whose ops run on the GPU.
#include <algorithm>
#include <climits>
#include <cmath>

#include "cuda/attention.h"
#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "kernels/attention.h"

namespace tp::p10::cuda {

namespace {
const char *kOp = "scaled_dot_product_attention";

// Each of the kernels' batch dims (the broadcast batch shape `bs`, size-1 dims dropped: `keep`) as a stride
// of `t`, whose leading dims (all but its last `inner`) align with the end of bs; 0 where t broadcasts.
void batch_strides(const Tensor &t, int64_t inner, const Shape &bs, const std::vector<int64_t> &keep,
                   int64_t *out) {
  const int64_t tb = std::max<int64_t>(t.dim() - inner, 0), nbs = int64_t(bs.size());
  for (size_t n = 0; n < keep.size(); ++n) {
    const int64_t td = keep[n] - (nbs - tb);
    out[n] = (td < 0 || t.size(td) == 1) ? 0 : t.stride(td);
  }
}

// May the mma kernel read t's rows as 16-byte vectors (8 values of 16 bits)?
bool rows_vectorisable(const Tensor &t, const int64_t *bstrides, int nd) {
  if (reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 != 0) return false;
  if (t.size(-1) % 8 != 0 || (t.size(-2) > 1 && t.stride(-2) % 8 != 0)) return false;
  for (int d = 0; d < nd; ++d)
    if (bstrides[d] % 8 != 0) return false;
  return true;
}

// t with its last dim contiguous (the kernels' layout; any other strides are read as they are).
Tensor rows_contiguous(const Tensor &t) {
  return (t.size(-1) <= 1 || t.stride(-1) == 1) ? t : contiguous_as(t, t.dtype());
}

int mma_head_dim(int64_t width) {
  for (int d : {16, 32, 64, 128, 256})
    if (width <= d) return d;
  return 0;
}
}  // namespace

void attention_forward_launch(const AttnParams &p, ScalarType dt, int dev) {
  const bool half = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  const int D = mma_head_dim(std::max(p.E, p.Ev));
  if (dt == ScalarType::Float32 && D > 0 && D <= kAttnSimtMaxFwd) {  // Note [Attention on CUDA cores]
    const int64_t grid = p.nb * ((p.L + kAttnSimtRows - 1) / kAttnSimtRows);
    TP_CHECK(grid <= INT_MAX, NotImplemented, kOp, ": ", p.nb, " batch elements of ", p.L,
             " queries need more CUDA blocks than one launch takes");
    launch(kernel(dev, "attention_simt.cu", "attn_fwd_simt_d" + std::to_string(D) + "_float32"),
           LaunchConfig{unsigned(grid), unsigned(kAttnSimtRows), 0}, stream_for(dev), p);
    return;
  }
  const bool mma = half && D > 0 && properties(dev).major >= 8;  // mma.sync m16n8k16 needs sm_80
  const int64_t rows_per_block = mma ? 64 : 4;                       // attention.cu: BM, kRowsPerBlock
  const int64_t grid = p.nb * ((p.L + rows_per_block - 1) / rows_per_block);
  TP_CHECK(grid <= INT_MAX, NotImplemented, kOp, ": ", p.nb, " batch elements of ", p.L,
           " queries need more CUDA blocks than one launch takes");
  const std::string name = mma ? "attn_fwd_mma_d" + std::to_string(D) + "_" + scalar_type_name(dt)
                               : kname("attn_fwd", dt);
  launch(kernel(dev, "attention.cu", name), LaunchConfig{unsigned(grid), 128, 0}, stream_for(dev), p);
}

static Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key, const Tensor &value,
                                           const std::optional<Tensor> &attn_mask, double dropout_p,
                                           bool is_causal, std::optional<double> scale, bool enable_gqa) {
  const Tensor m = call_op<Tensor>(TP_OP("scaled_dot_product_attention"), meta_like(query), meta_like(key),
                                   meta_like(value), meta_like(attn_mask), dropout_p, is_causal, scale,
                                   enable_gqa);
  std::vector<Tensor> all{query, key, value};
  if (attn_mask) all.push_back(*attn_mask);
  const int dev = common_device(kOp, all, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType dt = query.dtype();
  check_real(kOp, dt);
  Tensor out = empty_as_meta(m, device);
  if (out.numel() == 0) return out;
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1), Ev = value.size(-1);
  if (S == 0) {  // softmax over no keys: zeros, as the CPU op
    call_op<Tensor>(TP_OP("fill_"), out, Scalar(0.0));
    return out;
  }
  // GQA groups (the meta call checked divisibility) and the broadcast batch shape (the result's)
  auto group = [&](const Tensor &t) {
    return (enable_gqa && query.dim() >= 3 && t.dim() >= 3 && t.size(-3) != query.size(-3))
               ? query.size(-3) / t.size(-3) : int64_t(1);
  };
  if (dropout_p > 0)  // the CPU op's math path, every step a CUDA op (Note [Attention dropout])
    return attention_with_dropout(query, key, value, attn_mask, dropout_p, is_causal,
                                  scale ? *scale : 1.0 / std::sqrt(double(E)), group(key), group(value));
  const Tensor q = rows_contiguous(query), k = rows_contiguous(key), v = rows_contiguous(value);
  const Shape bs(m.sizes().begin(), m.sizes().end() - 2);
  std::vector<int64_t> keep;  // the batch dims of size > 1; the heads stay last when GQA needs them
  for (size_t d = 0; d < bs.size(); ++d)
    if (bs[d] != 1) keep.push_back(int64_t(d));
  TP_CHECK(keep.size() <= size_t(kAttnMaxDims), NotImplemented, kOp, ": CUDA takes at most ", kAttnMaxDims,
           " batch dims of size > 1, got the batch shape ", shape_str(bs));

  AttnParams p;
  p.q = q.data_ptr(), p.k = k.data_ptr(), p.v = v.data_ptr(), p.out = out.data_ptr();
  p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.q_rs = q.size(-2) == 1 ? 0 : q.stride(-2);
  p.k_rs = k.size(-2) == 1 ? 0 : k.stride(-2);
  p.v_rs = v.size(-2) == 1 ? 0 : v.stride(-2);
  p.nb = shape_numel(bs);
  p.nd = int32_t(keep.size());
  for (size_t n = 0; n < keep.size(); ++n) p.sizes[n] = bs[size_t(keep[n])];
  batch_strides(q, 2, bs, keep, p.qs);
  batch_strides(k, 2, bs, keep, p.ks);
  batch_strides(v, 2, bs, keep, p.vs);
  p.kgroup = int32_t(group(key)), p.vgroup = int32_t(group(value));
  // a GQA group > 1 means more than one query head, so the heads are the last kept dim (attn_offsets)
  p.scale = scale ? *scale : 1.0 / std::sqrt(double(E));
  p.causal = is_causal;

  Tensor mask;  // kept alive until the launch is queued
  if (attn_mask) {
    const ScalarType mt = dt == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
    mask = *attn_mask;
    if (mask.dtype() == ScalarType::Bool) {
      p.mask_kind = kAttnMaskBool;
    } else {
      if (mask.dtype() != mt) mask = contiguous_as(mask, mt);  // at the mask's own size, not broadcast
      p.mask_kind = kAttnMaskAdd;
    }
    p.mask = mask.data_ptr();
    p.m_cs = (mask.dim() >= 1 && mask.size(-1) != 1) ? mask.stride(-1) : 0;
    p.m_rs = (mask.dim() >= 2 && mask.size(-2) != 1) ? mask.stride(-2) : 0;
    batch_strides(mask, 2, bs, keep, p.ms);
  }
  const bool half = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  p.vec = half && rows_vectorisable(q, p.qs, p.nd) && rows_vectorisable(k, p.ks, p.nd) &&
          rows_vectorisable(v, p.vs, p.nd);
  attention_forward_launch(p, dt, dev);
  return out;
}

TP_LIBRARY(cuda_attention) { TP_IMPL(lib, "scaled_dot_product_attention", CUDA, scaled_dot_product_attention); }

}  // namespace tp::p10::cuda
