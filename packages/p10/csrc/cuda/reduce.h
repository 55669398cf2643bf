// reduce.h — the host side of the generic CUDA reductions (tensorplay_p10/cuda_kernels/reduce_common.cuh).
//
// Where it sits: ops_reduce_sums.cpp, ops_reduce_order.cpp and ops_reduce_stats.cpp ask the CPU op on meta
// tensors for the checks and the result (ops_meta.h), then describe the input with reduce_layout() and launch
// the op's kernels with run_reduce(); ops_reduce_plan.cpp implements both.
//
// Note [Reduce layout]
//   Every reduction is brought to a contiguous [outer, red, inner] block whose middle dim is reduced; output
//   element o = (outer index) * inner + (inner index) in the row-major order of the kept dims. In order of
//   preference (size-1 dims ignored):
//     - the kept dims then the reduced dims, as a view, are contiguous (x.sum(-1), or x.T.sum(0) on a
//       contiguous x): inner = 1, the input as it is;
//     - the input is contiguous and the reduced dims are adjacent (x.sum(0), x.sum((1, 2)) of a 4-d x): outer
//       = the kept dims before them, inner = those after, the input as it is;
//     - otherwise a contiguous copy of the kept-then-reduced view: inner = 1.
//   The reduced dims keep their logical order within a row in every case, so an index into the row is the
//   flattened index over the reduced dims (argmax with dim=None, max.dim).
#pragma once
#include <optional>
#include <vector>

#include "cuda/ops_common.h"

namespace tp::p10::cuda {

constexpr int64_t kStateBytes = 32;  // TP_RED_STATE_BYTES in reduce_common.cuh

struct ReduceLayout {
  Tensor x;  // what the kernels read (x.data_ptr() is element 0 of the block)
  int64_t outer = 1, red = 1, inner = 1;
  int64_t out_numel() const { return outer * inner; }
};

// Which dims of an nd-dim tensor a `dim` list reduces: none given, or an empty list, means all of them. The CPU
// op has already checked the list (range, duplicates) on meta.
std::vector<bool> reduced_dims(int64_t nd, const std::optional<std::vector<int64_t>> &dim);

// Note [Reduce layout], with the input cast to `dtype` first when it differs.
ReduceLayout reduce_layout(const Tensor &self, const std::vector<bool> &reduced, ScalarType dtype);

// Launch `<base>_inner_<T>` or `<base>_cols_<T>` of `module` (and `<base>_final_<T>` when a long reduction is
// split over blocks) on `layout`, T = layout.x's dtype. out0/out1: the op's outputs, contiguous, out_numel
// elements each (out1 may be null); p and mode: the op's parameters.
// A launch with a 2-d grid and block (launch.h's launch() is 1-d); arguments as there, by value.
template <typename... Args>
void launch_2d(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by, Stream stream, Args... args) {
  void *params[] = {static_cast<void *>(&args)..., nullptr};
  TP_CU(cuLaunchKernel, f, gx, gy, 1, bx, by, 1, 0, stream.handle, params, nullptr);
}

void run_reduce(int dev, const char *module, const char *base, const ReduceLayout &layout, void *out0, void *out1,
                double p, int mode);

// The common case: a new tensor shaped as the meta result `meta`, filled by `<base>` of `module` reducing
// `dim` of `self` (taken in dtype `in_t`). Checks self's device and that in_t is real (NotImplementedError
// naming `op` for complex).
Tensor reduce_new(const char *op, const Tensor &meta, const Tensor &self, const std::optional<std::vector<int64_t>> &dim,
                  ScalarType in_t, const char *module, const char *base, double p = 0.0, int mode = 0);

}  // namespace tp::p10::cuda
