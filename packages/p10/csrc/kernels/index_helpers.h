// index_helpers.h — what the indexing kernels (index.cpp, index_advanced.cpp) share: index validation, wrapping
// of negative indices, an iterator set-up that leaves dtypes alone, and moving elements by size.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Walk operands of different dtypes without promotion (index tensors next to data); `out` keeps its shape.
inline IterConfig raw_iter_config(const char *op, ScalarType out_dtype) {
  return IterConfig{.op = op, .promote_inputs = false, .out_dtype = out_dtype, .compute_dtype = out_dtype,
                    .resize_out = false};
}

// Note [Index error types]
//   PyTorch code catches a bad index by type, and PyTorch is not uniform: gather and the scatter family check
//   their indices with TORCH_CHECK (RuntimeError), every other indexing op (x[idx], index_select, index_add_,
//   index_copy_, index_fill_, take, put_) with TORCH_CHECK_INDEX (IndexError). The op's name decides, here, for
//   the CPU check below and for the CUDA kernels' error flag (cuda/index_common.cpp), so the two agree. Ops
//   built on scatter_ (index_add_, index_copy_) check their index under their own name first.
inline ErrorKind index_error_kind(const char *op) {
  const std::string_view name(op);
  const bool runtime = name.starts_with("gather") || name.starts_with("scatter");
  return runtime ? ErrorKind::Runtime : ErrorKind::Index;
}

// Every index value in [0, size) (or [-size, size) when negatives are allowed); an error of
// index_error_kind(op) naming the first bad value, the dim and the size otherwise. Runs before any kernel loop:
// loops must never throw.
void check_index_range(const Tensor &index, int64_t size, int64_t dim, const char *op, bool allow_negative);

// An int64 index with negative values wrapped (x < 0 -> x + size), after check_index_range(allow_negative).
Tensor wrap_negative(const Tensor &index, int64_t size, const char *op = "index", int64_t dim = 0);

// Run f.template operator()<T>() with T an unsigned type of `itemsize` bytes: kernels that only move elements
// need one instantiation per element size, not per dtype.
struct Bytes16 {
  uint64_t lo, hi;
};
template <typename F> void dispatch_by_size(int64_t itemsize, const F &f) {
  switch (itemsize) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
    case 16: return f.template operator()<Bytes16>();
    default: fail(ErrorKind::Runtime, "internal: unexpected element size ", itemsize);
  }
}

}  // namespace tp::p10
