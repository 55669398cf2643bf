// sort.h — what sort.cpp shares with the CUDA sort family: moving the dim an op works along.
//
// Where it sits: defined in kernels/sort.cpp (unique, sort along a dim); also used by cuda/ops_unique_dim.cpp,
// whose unique over slices walks the same rows as the CPU's (Note [unique]).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace tp::p10 {

// `t` with dim `from` moved to position `to` (a permute: a view, no copy).
Tensor move_dim(const Tensor &t, int64_t from, int64_t to);

}  // namespace tp::p10
