// graphs.h — CUDA graphs: record the kernels a stream runs once, replay them with one launch.
//
// Where it sits: tp.cuda.CUDAGraph (tensorplay_p10/cuda/graphs.py) wraps CudaGraph through py_cuda.cpp. A
// capture is the driver's stream capture (cuStreamBeginCapture .. cuStreamEndCapture) of the current stream;
// while it runs, the caching allocator serves that stream from the graph's private pool (Note [Graph private
// pools] in caching_allocator.h) and the device's random generator hands out graph-relative offsets (Note
// [Graph-safe RNG] in cuda_kernels/philox.cuh). replay() writes the generator's (seed, offset) for the graph,
// then launches it on the current stream.
//
// Note [Illegal operations during capture]
//   A synchronisation (cuStreamSynchronize, a copy to pageable host memory: .item(), .cpu()) on a capturing
//   stream fails in the driver with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture; the
//   error names the driver call and says why (driver.cpp check()). tp.cuda.synchronize() and empty_cache()
//   refuse up front (capture_underway()), naming themselves. capture_end() then reports the broken capture.
#pragma once
#include <cstdint>

#include "cuda/caching_allocator.h"
#include "cuda/runtime.h"

namespace tp::p10::cuda {

class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(const CudaGraph &) = delete;
  CudaGraph &operator=(const CudaGraph &) = delete;

  // Capture the current stream of the current device (not its default stream). `pool`: (0, 0) for a pool of
  // the graph's own, or a pool shared with other graphs (graph_pool_handle() or another graph's pool()).
  void capture_begin(PoolId pool, int mode);
  void capture_end();
  void replay();
  void reset();  // free the graph; its pool loses one use
  PoolId pool() const { return pool_; }

 private:
  int device_ = -1;
  Stream stream_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  PoolId pool_{0, 0};
  bool capturing_ = false, has_pool_ = false;
  void *rng_state_ = nullptr;  // {seed, offset} on the device (Note [Graph-safe RNG])
  uint64_t rng_blocks_ = 0;    // Philox blocks one replay uses
};

// A new pool id for graphs to share: pass it as `pool` to several captures.
PoolId graph_pool_handle();
// True while any capture is underway in this process (tp.cuda.synchronize and empty_cache refuse then).
bool capture_underway();
// RuntimeError "<what> is not allowed while a CUDA graph is being captured" when one is.
void check_not_capturing(const char *what);
// Whether the current stream of the current device is capturing (tp.cuda.is_current_stream_capturing).
bool current_stream_capturing();

}  // namespace tp::p10::cuda
