// geometry.cpp — broadcasting and dim coalescing for strided CUDA launches (geometry.h).
#include "cuda/geometry.h"

#include <array>
#include <vector>

namespace tp::p10::cuda {

KernelGeometry make_geometry(const Shape &shape, std::initializer_list<const Tensor *> operands, const char *op) {
  const int nd = int(shape.size()), nops = int(operands.size());
  // Per dim (outer to inner): size, and each operand's stride over the broadcast shape.
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, 3>> strides;
  for (int d = 0; d < nd; ++d) {
    if (shape[size_t(d)] == 1) continue;  // a size-1 dim never moves the index
    std::array<int64_t, 3> st{0, 0, 0};
    int k = 0;
    for (const Tensor *t : operands) {
      const int td = d - (nd - int(t->dim()));  // operands align on their trailing dims
      st[size_t(k++)] = (td < 0 || t->size(td) == 1) ? 0 : t->stride(td);
    }
    sizes.push_back(shape[size_t(d)]);
    strides.push_back(st);
  }
  // Merge an outer dim into the next inner one when every operand steps over the inner dim contiguously.
  std::vector<int64_t> msizes;
  std::vector<std::array<int64_t, 3>> mstrides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!msizes.empty()) {
      bool merge = true;
      for (int k = 0; k < nops; ++k)
        if (mstrides.back()[size_t(k)] != strides[d][size_t(k)] * sizes[d]) merge = false;
      if (merge) {
        msizes.back() *= sizes[d];
        mstrides.back() = strides[d];
        continue;
      }
    }
    msizes.push_back(sizes[d]);
    mstrides.push_back(strides[d]);
  }
  KernelGeometry g;
  if (msizes.empty()) {  // one element: a flat dim of size 1
    g.ndim = 1;
    g.sizes[0] = 1;
    for (int k = 0; k < 3; ++k) g.strides[k][0] = 1;
    return g;
  }
  TP_CHECK(msizes.size() <= size_t(kMaxDims), NotImplemented, op, ": CUDA kernels take at most ", kMaxDims,
           " dims after merging contiguous ones; this call needs ", msizes.size());
  g.ndim = int32_t(msizes.size());
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = msizes[size_t(d)];
    for (int k = 0; k < 3; ++k) g.strides[k][d] = mstrides[size_t(d)][size_t(k)];
  }
  return g;
}

}  // namespace tp::p10::cuda
