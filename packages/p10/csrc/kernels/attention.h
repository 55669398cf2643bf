// attention.h — the one piece of the CPU attention op that the CUDA op reuses: the math path taken when
// dropout_p > 0 (Note [Attention dropout] in attention.cpp).
//
// Where it sits: defined in kernels/attention.cpp; called there and by cuda/ops_attention.cpp. It is built from
// dispatched ops only (matmul, softmax, dropout, ...), so on CUDA tensors every step runs on the GPU and the
// dropout mask comes from the device's Philox generator.
#pragma once
#include <cstdint>
#include <optional>

#include "core/tensor.h"

namespace tp::p10 {

// softmax(scale q k^T + mask, causal) with dropout, @ v; kg / vg: the GQA groups of k and v (1 = none).
Tensor attention_with_dropout(Tensor q, Tensor k, Tensor v, const std::optional<Tensor> &mask, double dropout_p,
                              bool causal, double scale, int64_t kg, int64_t vg);

}  // namespace tp::p10
