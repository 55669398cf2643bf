// sort.h — the CUDA row sort and the small device helpers that the sort-family ops share.
//
// Where it sits: implemented in ops_sort.cpp (kernels in tensorplay_p10/cuda_kernels/sort.cu); used by
// ops_sort.cpp (sort, topk, kthvalue), ops_order_stats.cpp (median, mode, quantile) and ops_search.cpp
// (unique, searchsorted, histc, bincount). Every op brings its data to rows first — the op's dim moved last,
// contiguous — exactly as the CPU kernels do (Note [Rows] in kernels/sort.cpp).
#pragma once
#include "cuda/ops_common.h"

namespace tp::p10::cuda {

// `self` with dim `d` moved last (a view; a 0-d tensor is returned as it is).
Tensor dim_last(const Tensor &self, int64_t d);
// `self` with dim `d` moved last, as a contiguous tensor on its device (a copy only when needed).
Tensor rows_of(const Tensor &self, int64_t d);

// Sorts each of the `rows` rows of `len` elements of the contiguous device tensor `x` by (value, index), NaN
// last (descending: NaN first), stable; writes the first `keep` of each row into the contiguous `values` (x's
// dtype) and `indices` (int64, the position in the row), each holding rows * keep elements.
void sort_rows(const Tensor &x, int64_t rows, int64_t len, bool descending, int64_t keep, const Tensor &values,
               const Tensor &indices);

// Scan in place of a contiguous int64 device tensor (inclusive or exclusive).
void scan_int64(const Tensor &data, bool inclusive);

// A CPU copy of a device tensor (synchronous), and a device copy of a CPU tensor.
Tensor to_host(const Tensor &t);
Tensor to_device(const Tensor &host, Device device);

}  // namespace tp::p10::cuda
