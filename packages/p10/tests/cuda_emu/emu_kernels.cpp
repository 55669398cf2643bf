// emu_kernels.cpp — the kernel files the CUDA emulator runs (cuda_emu.h), and emu_launch, which the stand-in
// driver (fake_cuda.c with -DTP_EMU_KERNELS) calls from cuLaunchKernel.
//
// test_cuda_emulated.py compiles this file against a copy of cuda_kernels/ in which the two pieces of PTX
// (common.cuh's float16 conversions) are replaced by emu_half's C and `extern __shared__` by `extern` (the
// dynamic shared memory is tp_emu_shared below). The table names the entry points that may run; any other
// launch fails with error 999 naming the kernel, so a test never passes over a kernel that did not compute.
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_emu.h"

unsigned char tp_emu_shared[1 << 17] __attribute__((aligned(16)));  // a block's dynamic shared memory
#define delta_smem tp_emu_shared

#include "copy.cu"
#include "delta_rule.cu"
#include "delta_rule_backward.cu"
#include "paged_attention.cu"
#include "reduce_sums.cu"

namespace emu {
void run_block(unsigned nthr, unsigned bx, const std::function<void()> &f);
}

// An entry point called with cuLaunchKernel's argument array: each argument read as the parameter's type.
template <class... A, size_t... I> void call_with(void (*f)(A...), void **args, std::index_sequence<I...>) {
  f(*static_cast<std::decay_t<A> *>(args[I])...);
}
template <class... A> std::function<void(void **)> entry(void (*f)(A...)) {
  return [f](void **args) { call_with(f, args, std::index_sequence_for<A...>{}); };
}

#define E(name) {#name, entry(&name)},
#define TP_EMU_DELTA(M)                                                                                      \
  E(delta_fwd_r0_##M) E(delta_fwd_r1_##M) E(delta_fwd_r2_##M) E(delta_fwd_r4_##M) E(delta_fwd_r8_##M)       \
  E(delta_fwd_r16_##M) E(delta_fwd_r32_##M) E(delta_bwd_r0_##M) E(delta_bwd_r1_##M) E(delta_bwd_r2_##M)     \
  E(delta_bwd_r4_##M) E(delta_bwd_r8_##M) E(delta_bwd_r16_##M) E(delta_bwd_r32_##M)
#define TP_EMU_SUM(T) E(sum_inner_##T) E(sum_cols_##T) E(sum_colsv_##T) E(sum_final_##T)
#define TP_EMU_CAST(D) E(cast_##D##_float32) E(cast_##D##_float64) E(cast_##D##_float16) E(cast_##D##_bfloat16)

static const std::map<std::string, std::function<void(void **)>> kernels = {
    TP_EMU_DELTA(float32) TP_EMU_DELTA(float64)
    E(paged_attention_float16) E(paged_attention_bfloat16) E(paged_attention_float32) E(paged_attention_float64)
    TP_EMU_SUM(float32) TP_EMU_SUM(float64)
    E(fill_b1) E(fill_b2) E(fill_b4) E(fill_b8)
    E(copy_strided_b1) E(copy_strided_b2) E(copy_strided_b4) E(copy_strided_b8)
    E(copy_fast_b1) E(copy_fast_b2) E(copy_fast_b4) E(copy_fast_b8) E(copy_fast_b16)
    E(copy_flip_b1) E(copy_flip_b2) E(copy_flip_b4) E(copy_flip_b8)
    TP_EMU_CAST(float32) TP_EMU_CAST(float64) TP_EMU_CAST(float16) TP_EMU_CAST(bfloat16)
};

// Blocks run one after another (so a static is a block's shared memory); shared memory starts as 0xff bytes
// (NaN for floats) in every block, so a read of what the block never wrote shows up in its results.
extern "C" int emu_launch(const char *name, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned shared,
                          void **args) {
  const auto it = kernels.find(name);
  if (it == kernels.end()) {
    fprintf(stderr, "emu: %s is not an emulated kernel\n", name);
    return 999;
  }
  if (shared > sizeof(tp_emu_shared)) return 998;
  gridDim.x = gx, gridDim.y = gy, blockDim.x = bx, blockDim.y = by;
  for (unsigned y = 0; y < gy; ++y)
    for (unsigned x = 0; x < gx; ++x) {
      blockIdx.x = x, blockIdx.y = y;
      memset(tp_emu_shared, 0xff, sizeof(tp_emu_shared));
      emu::run_block(bx * by, bx, [&] { it->second(args); });
    }
  return 0;
}
