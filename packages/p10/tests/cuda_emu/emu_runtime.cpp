// emu_runtime.cpp — the scheduler of the CUDA emulator (cuda_emu.h): runs one block's threads as cooperative
// contexts (ucontext) on the calling OS thread, switching whenever a thread waits at a barrier.
//
// A barrier (the block's __syncthreads, or a warp's for a shuffle) opens when all of its threads have arrived.
// The scheduler resumes the live threads in turn; a full round in which no thread arrives anywhere, opens a
// barrier or finishes means every live thread waits at a barrier that cannot open: a deadlock (on a GPU, a
// barrier in divergent code), reported on stderr before abort().
#include <functional>
#include <vector>
#include <ucontext.h>

#include "cuda_emu.h"

dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace emu {
namespace {
struct Thread {
  ucontext_t ctx;
  std::vector<char> stack;
  bool done = false;
};
struct Barrier {
  int count = 0, arrived = 0;
  long generation = 0;
};
std::vector<Thread> threads;
ucontext_t scheduler;
int current = -1;
long progress = 0;  // arrivals, openings and exits: the deadlock check compares it across a round
std::function<void()> body;
Barrier block_barrier;
std::vector<Barrier> warp_barriers;
std::vector<std::vector<unsigned char>> warp_buffers;

void thread_entry() {
  body();
  threads[size_t(current)].done = true;
  ++progress;
  swapcontext(&threads[size_t(current)].ctx, &scheduler);
}

void wait(Barrier &b) {
  const long g = b.generation;
  ++progress;
  if (++b.arrived == b.count) {
    b.arrived = 0;
    ++b.generation;
    return;
  }
  while (b.generation == g) swapcontext(&threads[size_t(current)].ctx, &scheduler);
}
}  // namespace

void sync_block() { wait(block_barrier); }
void sync_warp() { wait(warp_barriers[size_t(current / 32)]); }
unsigned char (*warp_buffer())[8] {
  return reinterpret_cast<unsigned char(*)[8]>(warp_buffers[size_t(current / 32)].data());
}
int lane() { return current & 31; }

// Run `f` as each of the nthr threads of the current block (threadIdx.x fastest, then y, as on the device).
void run_block(unsigned nthr, unsigned bx, const std::function<void()> &f) {
  body = f;
  threads.assign(nthr, Thread());
  block_barrier = Barrier{int(nthr), 0, 0};
  const unsigned nwarps = (nthr + 31) / 32;
  warp_barriers.assign(nwarps, Barrier{});
  warp_buffers.assign(nwarps, std::vector<unsigned char>(32 * 8));
  for (unsigned w = 0; w < nwarps; ++w) warp_barriers[w].count = int(nthr - 32 * w < 32 ? nthr - 32 * w : 32);
  for (Thread &t : threads) {
    t.stack.resize(256 * 1024);
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = t.stack.data();
    t.ctx.uc_stack.ss_size = t.stack.size();
    t.ctx.uc_link = nullptr;
    makecontext(&t.ctx, thread_entry, 0);
  }
  unsigned alive = nthr;
  while (alive > 0) {
    const long before = progress;
    for (unsigned t = 0; t < nthr; ++t) {
      if (threads[t].done) continue;
      current = int(t);
      threadIdx.x = t % bx, threadIdx.y = t / bx;
      swapcontext(&scheduler, &threads[t].ctx);
      if (threads[t].done) --alive;
    }
    if (alive > 0 && progress == before) {
      fprintf(stderr, "emu: deadlock in block (%u, %u): %u threads wait at barriers that cannot open\n",
              blockIdx.x, blockIdx.y, alive);
      abort();
    }
  }
}
}  // namespace emu
