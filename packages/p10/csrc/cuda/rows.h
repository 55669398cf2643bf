// rows.h — the host side of Note [Register rows] (tensorplay_p10/cuda_kernels/rows_common.cuh): which form of
// a row kernel runs a [rows, cols] matrix, with how many threads, and whether it may load 16-byte packs.
//
// Where it sits: shared by ops_softmax.cpp and ops_norm.cpp, whose kernels (softmax.cu, norm.cu) come in the
// forms named here: <op>_<form>_<vec|scalar>_<dtype>, or <op>_long_<dtype> past kRegisterRowMax.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "cuda/launch.h"
#include "cuda/runtime.h"

namespace tp::p10::cuda {

// The block form's most threads: its kernels are compiled with __launch_bounds__(512), as a thread holding 16
// row elements needs more than the 64 registers a 1024-thread block allows (Note [Row kernel registers] in
// norm.cu). block16 at 512 threads holds the longest row kept in registers.
constexpr unsigned kRegisterBlockMax = 512;
constexpr int64_t kRegisterRowMax = 16 * kRegisterBlockMax;

struct RowForm {
  std::string suffix;  // "_warp8_vec", "_block16_scalar", "_long"
  LaunchConfig config;
  bool is_long = false;
};

// Can the rows be loaded in 16-byte packs? Every pointer 16-byte aligned and cols a multiple of the pack.
inline bool rows_vec_ok(int64_t cols, int64_t itemsize, std::initializer_list<const void *> ptrs) {
  for (const void *p : ptrs)
    if (p && (reinterpret_cast<uintptr_t>(p) & 15) != 0) return false;
  return cols % (16 / itemsize) == 0;
}

// Rows up to 256 elements: a warp per row, 8 a lane (4 rows per 128-thread block); up to 1024: a warp with 32
// a lane (when `warp32`; kernels that hold two rows' worth of registers skip it); up to kBlock32RowMax, when
// `block32` (16-bit floats in 16-byte packs, where the kernel has that form): one block of 64 or 128 threads
// per row with 32 a thread (Note [Row kernel registers] in norm.cu: as many bytes in flight per thread as a
// float32 row); up to kRegisterRowMax: one block per row with 16 a thread, the fewest threads (a power of
// two, 64..512) that hold the row; longer: the "_long" form, one 512-thread block per row re-reading global
// memory. Grids stop at a few waves of the SMs; the kernels step over the remaining rows.
constexpr int64_t kBlock32RowMax = 32 * 128;

inline RowForm row_form(int dev, int64_t rows, int64_t cols, bool vec, bool warp32 = true, bool block32 = false) {
  const int64_t sms = properties(dev).multi_processor_count;
  static_assert(kRegisterRowMax == 16 * kRegisterBlockMax, "block16: 16 elements a thread");
  const std::string pack = vec ? "_vec" : "_scalar";
  RowForm f;
  if (cols <= 256 || (warp32 && cols <= 1024)) {
    const unsigned block = 128, rows_per_block = block / 32;
    f.suffix = (cols <= 256 ? "_warp8" : "_warp32") + pack;
    f.config = {unsigned(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, sms * 64)), block, 0};
  } else if (block32 && vec && cols <= kBlock32RowMax) {
    const unsigned block = cols <= 32 * 64 ? 64 : 128;
    f.suffix = "_block32" + pack;
    f.config = {unsigned(std::min<int64_t>(rows, sms * (2048 / block) * 8)), block, 0};
  } else if (cols <= kRegisterRowMax) {
    unsigned block = 64;
    while (int64_t(block) * 16 < cols) block *= 2;
    f.suffix = "_block16" + pack;
    f.config = {unsigned(std::min<int64_t>(rows, sms * (2048 / block) * 8)), block, 0};
  } else {
    f.suffix = "_long";
    f.config = {unsigned(std::min<int64_t>(rows, sms * 4)), 512, 0};
    f.is_long = true;
  }
  return f;
}

}  // namespace tp::p10::cuda
