// pool.h — what the CUDA pooling and upsampling ops (ops_pool.cpp, ops_pool_adaptive.cpp, ops_upsample.cpp)
// share: the window struct of pool.cu, and the input as planes.
//
// Where it sits: beside kernels/pool.h, whose Note [Pooling planes] it follows: the input is made contiguous
// and seen as [planes, D, H, W], the dims an op lacks being 1. The CPU op, asked on meta tensors first, has
// checked the call and given the output shape (cuda/ops_meta.h); these helpers only read sizes off the
// tensors.
#pragma once
#include "cuda/ops_common.h"
#include "kernels/pool.h"

namespace tp::p10::cuda {

// pool.cu's PoolWindow, field for field: D, H, W sizes of the input plane and the output, and the window's
// kernel, stride, padding and dilation (1, 1, 0, 1 where an op has none).
struct PoolWindow {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0},
          d[3] = {1, 1, 1};
};
static_assert(sizeof(PoolWindow) == 18 * 8, "PoolWindow must match pool.cu");

// The window's sizes: the last `nsp` dims of the input and of the (meta) result, as D, H, W.
inline PoolWindow plane_window(const Tensor &input, const Tensor &result, int nsp) {
  PoolWindow w;
  for (int i = 0; i < nsp; ++i) {
    w.in[3 - nsp + i] = input.size(input.dim() - nsp + i);
    w.out[3 - nsp + i] = result.size(result.dim() - nsp + i);
  }
  return w;
}

// The input as contiguous planes (its own memory when it already is).
inline Tensor contiguous_planes(const Tensor &input) {
  return input.is_contiguous() ? input : contiguous_as(input, input.dtype());
}

// The CUDA device of a pooling call with its out= tensors; RuntimeError naming `op` when they differ.
inline int pool_device(const char *op, const Tensor &self, const Tensor &out = Tensor(),
                       const Tensor &indices = Tensor()) {
  return common_device(op, {self, out, indices}, false);
}

}  // namespace tp::p10::cuda
