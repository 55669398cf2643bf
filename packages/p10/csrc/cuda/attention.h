// attention.h — what the two CUDA attention op files share: the kernels' parameter struct and the forward
// launch (the backward reruns the forward for its output and log-sum-exp).
//
// Where it sits: between csrc/cuda/ops_attention.cpp, ops_attention_backward.cpp and the kernels in
// tensorplay_p10/cuda_kernels/attention*.cu. AttnParams is attention_common.cuh's struct, byte for byte.
#pragma once
#include <cstdint>

#include "core/scalar_type.h"

namespace tp::p10::cuda {

constexpr int kAttnMaxDims = 6;  // TP_ATTN_MAX_DIMS in attention_common.cuh
enum AttnMaskKind : int32_t { kAttnMaskNone = 0, kAttnMaskBool = 1, kAttnMaskAdd = 2 };

struct AttnParams {
  const void *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  void *out = nullptr, *lse = nullptr;
  int64_t L = 0, S = 0, E = 0, Ev = 0;
  int64_t q_rs = 0, k_rs = 0, v_rs = 0, m_rs = 0, m_cs = 0;
  int64_t nb = 1;
  int64_t sizes[kAttnMaxDims] = {};
  int64_t qs[kAttnMaxDims] = {}, ks[kAttnMaxDims] = {}, vs[kAttnMaxDims] = {}, ms[kAttnMaxDims] = {};
  double scale = 1.0;
  int32_t nd = 0, kgroup = 1, vgroup = 1, causal = 0, mask_kind = kAttnMaskNone, vec = 0;
};
static_assert(sizeof(AttnParams) == 6 * 8 + 10 * 8 + 5 * kAttnMaxDims * 8 + 8 + 6 * 4,
              "AttnParams must match attention_common.cuh");

// The float32 kernels of attention_simt.cu (Note [Attention on CUDA cores]): a thread per row, blocks of
// kAttnSimtRows rows (kThreads there), head dims rounded up to 16/32/64 in the forward, 16/32 in the backward.
constexpr int64_t kAttnSimtRows = 128;
constexpr int kAttnSimtMaxFwd = 64, kAttnSimtMaxBwd = 32;

// Run the forward kernel that fits `p` (dtype `dt`) on device `dev`'s current stream: tensor cores for
// float16/bfloat16 with head dims up to 256 on compute capability 8.0+, the CUDA-core tiles for float32 with head
// dims up to 64, the warp-per-row kernel otherwise.
void attention_forward_launch(const AttnParams &p, ScalarType dt, int dev);

}  // namespace tp::p10::cuda
