// emu_runtime.cpp — the scheduler of the CUDA emulator (cuda_emu.h), libtpemu_rt.so: runs a launch's blocks
// one after another, and one block's threads as cooperative contexts (ucontext) on the calling OS thread,
// switching whenever a thread waits at a barrier.
//
// A barrier (the block's __syncthreads, or a warp's for a shuffle) opens when all of its live threads have
// arrived; a thread that returns leaves its barriers (as an exited thread does on the device). The scheduler
// resumes the live threads in turn; a full round in which no thread arrives anywhere, opens a barrier or
// finishes means every live thread waits at a barrier that cannot open: a deadlock (on a GPU, a barrier in
// divergent code), reported on stderr before abort(). The stand-in driver (fake_cuda_launch.c) calls tp_emu_run
// from cuLaunchKernel, one launch at a time.
#include <sys/mman.h>
#include <ucontext.h>

#include <vector>

#include "cuda_emu.h"
#include "emu_module.h"

dim3 threadIdx, blockIdx, blockDim, gridDim;
unsigned char tp_emu_shared[kEmuSharedBytes] __attribute__((aligned(16)));

namespace emu {
namespace {
constexpr size_t kStackBytes = 256 * 1024;  // per thread; mapped once and reused (pages commit on first use)
struct Thread {
  ucontext_t ctx;
  char *stack = nullptr;
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
const TpEmuKernel *kernel;
void **kernel_args;
Barrier block_barrier;
std::vector<Barrier> warp_barriers;
std::vector<std::vector<unsigned char>> warp_buffers;

void open_if_full(Barrier &b) {
  if (b.arrived > 0 && b.arrived >= b.count) {
    b.arrived = 0;
    ++b.generation;
    ++progress;
  }
}

void thread_entry() {
  kernel->body(kernel_args);
  threads[size_t(current)].done = true;
  ++progress;
  --block_barrier.count;  // an exited thread no longer holds its barriers back
  --warp_barriers[size_t(current / 32)].count;
  open_if_full(block_barrier);
  open_if_full(warp_barriers[size_t(current / 32)]);
  swapcontext(&threads[size_t(current)].ctx, &scheduler);
}

void wait(Barrier &b) {
  const long g = b.generation;
  ++progress;
  ++b.arrived;
  open_if_full(b);
  while (b.generation == g) swapcontext(&threads[size_t(current)].ctx, &scheduler);
}

// Run every thread of the current block (threadIdx.x fastest, then y, then z, as on the device).
void run_block() {
  const unsigned nthr = blockDim.x * blockDim.y * blockDim.z;
  if (threads.size() < nthr) threads.resize(nthr);
  block_barrier = Barrier{int(nthr), 0, 0};
  const unsigned nwarps = (nthr + 31) / 32;
  warp_barriers.assign(nwarps, Barrier{});
  warp_buffers.resize(nwarps, std::vector<unsigned char>(32 * 8));
  for (unsigned w = 0; w < nwarps; ++w) warp_barriers[w].count = int(nthr - 32 * w < 32 ? nthr - 32 * w : 32);
  for (unsigned t = 0; t < nthr; ++t) {
    Thread &th = threads[t];
    if (!th.stack) {
      void *s = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (s == MAP_FAILED) abort();
      th.stack = static_cast<char *>(s);
    }
    th.done = false;
    getcontext(&th.ctx);
    th.ctx.uc_stack.ss_sp = th.stack;
    th.ctx.uc_stack.ss_size = kStackBytes;
    th.ctx.uc_link = nullptr;
    makecontext(&th.ctx, thread_entry, 0);
  }
  unsigned alive = nthr;
  while (alive > 0) {
    const long before = progress;
    for (unsigned t = 0; t < nthr; ++t) {
      if (threads[t].done) continue;
      current = int(t);
      threadIdx.x = t % blockDim.x, threadIdx.y = t / blockDim.x % blockDim.y;
      threadIdx.z = t / (blockDim.x * blockDim.y);
      swapcontext(&scheduler, &threads[t].ctx);
      if (threads[t].done) --alive;
    }
    if (alive > 0 && progress == before) {
      fprintf(stderr, "emu: deadlock in block (%u, %u, %u): %u threads wait at barriers that cannot open\n",
              blockIdx.x, blockIdx.y, blockIdx.z, alive);
      abort();
    }
  }
}
}  // namespace

void sync_block() { wait(block_barrier); }
void sync_warp() { wait(warp_barriers[size_t(current / 32)]); }
unsigned char (*warp_buffer())[8] {
  return reinterpret_cast<unsigned char(*)[8]>(warp_buffers[size_t(current / 32)].data());
}
int lane() { return current & 31; }
unsigned warp_live_mask() {
  const unsigned first = unsigned(current) & ~31u;
  unsigned m = 0;
  for (unsigned l = 0; l < 32 && first + l < threads.size(); ++l)
    if (first + l < blockDim.x * blockDim.y * blockDim.z && !threads[first + l].done) m |= 1u << l;
  return m;
}
}  // namespace emu

// Blocks run one after another (so a static is a block's shared memory); shared memory starts as 0xff bytes
// (NaN for floats) in every block, so a read of what the block never wrote shows up in its results.
extern "C" __attribute__((visibility("default"))) int tp_emu_run(const TpEmuKernel *k, void **args,
                                                                 const unsigned g[3], const unsigned b[3],
                                                                 unsigned shared) {
  if (shared > sizeof(tp_emu_shared)) return 1;
  emu::kernel = k, emu::kernel_args = args;
  gridDim.x = g[0], gridDim.y = g[1], gridDim.z = g[2];
  blockDim.x = b[0], blockDim.y = b[1], blockDim.z = b[2];
  for (unsigned z = 0; z < g[2]; ++z)
    for (unsigned y = 0; y < g[1]; ++y)
      for (unsigned x = 0; x < g[0]; ++x) {
        blockIdx.x = x, blockIdx.y = y, blockIdx.z = z;
        memset(tp_emu_shared, 0xff, shared);
        emu::run_block();
      }
  return 0;
}
