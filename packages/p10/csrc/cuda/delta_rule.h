// delta_rule.h — how the CUDA delta-rule kernels are launched: block shapes, column tiles, the backward's
// checkpoint interval, scratch sizes and grid (pure arithmetic, no CUDA calls).
//
// Where it sits: used by ops_delta_rule.cpp; kept apart so that the numbers the kernels depend on
// (tensorplay_p10/cuda_kernels/delta_rule.cuh, Notes [Delta rule on CUDA], [Delta rule forward on CUDA] and
// [Delta rule backward on CUDA]) are written once and can be read, and checked, without a GPU.
#pragma once
#include <algorithm>
#include <cstdint>

namespace tp::p10::cuda {

// The R of the register kernels (delta_fwd_r<R>, delta_bwd_r<R>): the smallest of 1, 2, 4, 8, 16, 32 that holds
// ceil(Dk / 8) rows per lane; 0 (rows in a scratch slot) past Dk = 256.
inline int delta_rows_kernel(int64_t Dk) {
  const int64_t nr = (Dk + 7) / 8;
  for (int R : {1, 2, 4, 8, 16, 32})
    if (nr <= R) return R;
  return 0;
}

struct DeltaPlan {
  int R = 0;                       // the kernel (delta_rows_kernel)
  int warps = 1;                   // W: a block is 32 W threads over 4 W columns
  int tiles = 0;                   // column tiles per (b, h)
  int groups = 1;                  // backward: blocks sharing one (b, h)'s tiles (each with its own partial sums)
  int64_t chunk = 1;               // backward: steps between checkpoints
  int64_t scratch_per_block = 0;   // values of the compute dtype
  int64_t grid = 0;                // blocks
  bool red_shared = true;          // backward: the per-step cross-warp sums in shared memory
  unsigned shared_bytes = 0;       // dynamic shared memory of a block
};

inline int64_t delta_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Forward (Note [Delta rule forward on CUDA]): blocks of up to 4 warps (16 columns), fewer when that leaves
// fewer than two blocks per multiprocessor; one block per (b, h, tile).
inline DeltaPlan delta_forward_plan(int64_t B, int64_t H, int64_t Dk, int64_t Dv, int sms) {
  DeltaPlan p;
  p.R = delta_rows_kernel(Dk);
  p.warps = int(std::clamp<int64_t>(delta_ceil_div(Dv, 4), 1, 4));
  while (p.warps > 1 && B * H * delta_ceil_div(Dv, 4 * p.warps) < 2 * int64_t(sms)) p.warps /= 2;
  p.tiles = int(delta_ceil_div(Dv, 4 * p.warps));
  p.grid = B * H * p.tiles;
  p.scratch_per_block = p.R == 0 ? delta_ceil_div(Dk, 8) * 32 * p.warps : 0;  // one slot
  return p;
}

// Backward (Note [Delta rule backward on CUDA]): blocks of up to 8 warps (32 columns); the tiles of one (b, h)
// spread over `groups` blocks when B H alone gives fewer than two blocks per multiprocessor; the grid is cut
// so that the scratch stays under `budget_bytes` (blocks then loop over their work items).
inline DeltaPlan delta_backward_plan(int64_t B, int64_t T, int64_t H, int64_t Dk, int64_t Dv, bool per_channel,
                                     int64_t chunk_size, int item_bytes, int sms, int64_t budget_bytes) {
  DeltaPlan p;
  p.R = delta_rows_kernel(Dk);
  p.warps = int(std::clamp<int64_t>(delta_ceil_div(Dv, 4), 1, 8));
  p.tiles = int(delta_ceil_div(Dv, 4 * p.warps));
  const int64_t tasks = B * H;
  if (tasks > 0 && p.tiles > 0)
    p.groups = int(std::clamp<int64_t>(delta_ceil_div(2 * int64_t(sms), tasks), 1, p.tiles));
  p.chunk = std::max<int64_t>(1, std::min(chunk_size, T));
  const int64_t nchunks = T > 0 ? delta_ceil_div(T, p.chunk) : 0, nthr = 32 * int64_t(p.warps);
  const int64_t slot = delta_ceil_div(Dk, 8) * nthr;
  const int64_t record = 2 * Dk + (per_channel ? Dk : 1) + 1;  // delta_rule_backward.cu red_record
  const int64_t red = 2 * p.warps * record;
  p.red_shared = red * item_bytes <= 48 * 1024;
  p.shared_bytes = p.red_shared ? unsigned(red * item_bytes) : 0u;
  p.scratch_per_block = (nchunks + p.chunk + 1) * slot + 2 * p.chunk * nthr + (p.R == 0 ? 2 * slot : 0) +
                        (p.red_shared ? 0 : red);
  const int64_t works = tasks * p.groups;
  const int64_t fit = std::max<int64_t>(1, budget_bytes / std::max<int64_t>(1, p.scratch_per_block * item_bytes));
  p.grid = p.tiles > 0 ? std::min(works, fit) : 0;
  return p;
}

}  // namespace tp::p10::cuda
