// geometry.h — the host side of Note [Kernel geometry] (tensorplay_p10/cuda_kernels/common.cuh).
//
// Where it sits: CUDA ops hand their operands here before a strided launch. It broadcasts each operand to the
// output's shape (stride 0 on broadcast dims), drops size-1 dims and merges dims that are contiguous for every
// operand, so a contiguous tensor is one flat dim and a transposed matrix two. The struct's layout is the
// kernels' `Geometry`, byte for byte.
#pragma once
#include <initializer_list>

#include "core/tensor.h"

namespace tp::p10::cuda {

constexpr int kMaxDims = 8;
struct KernelGeometry {
  int32_t ndim = 0;
  int32_t pad = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[3][kMaxDims] = {};  // element strides; operand 0 = output, 1 and 2 = inputs
};
static_assert(sizeof(KernelGeometry) == 8 + 8 * kMaxDims * 4, "KernelGeometry must match common.cuh");

// `operands` (at most 3) each broadcast to `shape`; NotImplementedError naming `op` past kMaxDims merged dims.
KernelGeometry make_geometry(const Shape &shape, std::initializer_list<const Tensor *> operands, const char *op);

}  // namespace tp::p10::cuda
