// strided32.h — the host half of Note [Fast strided offsets] (tensorplay_p10/cuda_kernels/strided32.cuh):
// a KernelGeometry re-expressed with 32-bit sizes, strides and precomputed divisors, when it fits.
//
// Where it sits: ops_copy.cpp (the strided copy) and index_common.cpp (gather) build one after make_geometry
// and launch the fast kernel; when it does not fit (more than 6 merged dims, 2^31 elements or more, an offset
// past an int32) they launch the int64 kernel as before. Header-only: a few lines of arithmetic.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "cuda/geometry.h"

namespace tp::p10::cuda {

constexpr int kFastDims = 6;
struct Strided32 {
  int32_t ndim = 0;  // innermost first
  uint32_t sizes[kFastDims] = {};
  uint32_t magic[kFastDims] = {};
  uint32_t shift[kFastDims] = {};
  int32_t strides[3][kFastDims] = {};
};
static_assert(sizeof(Strided32) == 4 + 4 * kFastDims * 6, "Strided32 must match strided32.cuh");

// `g`'s first `nops` operands in 32-bit form (dims reversed: innermost first), or nullopt when some number
// does not fit. Each dim's divisor gets its magic number (Note [Fast strided offsets]).
inline std::optional<Strided32> make_strided32(const KernelGeometry &g, int nops) {
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (g.ndim < 1 || g.ndim > kFastDims) return std::nullopt;
  int64_t numel = 1;
  for (int d = 0; d < g.ndim; ++d) numel *= g.sizes[d];
  if (numel >= kLimit) return std::nullopt;
  for (int k = 0; k < nops; ++k) {  // the farthest offset either way stays inside an int32
    int64_t reach = 0;
    for (int d = 0; d < g.ndim; ++d) reach += (g.sizes[d] - 1) * std::llabs(g.strides[k][d]);
    if (reach >= kLimit) return std::nullopt;
  }
  Strided32 s;
  s.ndim = g.ndim;
  for (int d = 0; d < g.ndim; ++d) {
    const int src = g.ndim - 1 - d;
    const uint64_t size = uint64_t(g.sizes[src]);
    uint32_t shift = 0;
    while ((uint64_t(1) << shift) < size) ++shift;
    s.sizes[d] = uint32_t(size);
    s.shift[d] = shift;
    s.magic[d] = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - size)) / size + 1);
    for (int k = 0; k < nops; ++k) s.strides[k][d] = int32_t(g.strides[k][src]);
  }
  return s;
}

}  // namespace tp::p10::cuda
