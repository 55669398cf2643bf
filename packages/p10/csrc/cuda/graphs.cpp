// graphs.cpp — CUDA graphs through stream capture (graphs.h).
#include "cuda/graphs.h"

#include <atomic>

#include "cuda/launch.h"
#include "cuda/memory.h"
#include "cuda/philox.h"

namespace tp::p10::cuda {

namespace {
std::atomic<uint64_t> g_next_pool_id{1};
constexpr int kCaptureStatusActive = 1;  // CU_STREAM_CAPTURE_STATUS_ACTIVE
}  // namespace

PoolId graph_pool_handle() { return PoolId{0, g_next_pool_id.fetch_add(1)}; }

bool capture_underway() { return cuda_available() && device_allocator().capture_underway(); }

void check_not_capturing(const char *what) {
  TP_CHECK(!capture_underway(), Runtime, what, " is not allowed while a CUDA graph is being captured: it would "
           "synchronise with (or free memory of) work that is only being recorded (Note [Illegal operations "
           "during capture])");
}

bool current_stream_capturing() {
  if (!cuda_available()) return false;
  const int dev = current_device();
  DeviceGuard g(dev);
  int status = 0;
  TP_CU(cuStreamIsCapturing, current_stream(dev).handle, &status);
  return status == kCaptureStatusActive;
}

CudaGraph::~CudaGraph() {
  try {
    reset();
  } catch (...) {  // a destructor must not throw
  }
}

void CudaGraph::capture_begin(PoolId pool, int mode) {
  TP_CHECK(!capturing_ && !exec_, Runtime, "CUDAGraph.capture_begin: this graph already holds a capture; call "
           "reset() before capturing again");
  TP_CHECK(mode == kCaptureGlobal || mode == kCaptureThreadLocal || mode == kCaptureRelaxed, Value,
           "CUDAGraph.capture_begin: unknown capture_error_mode ", mode);
  const int dev = current_device();
  DeviceGuard guard(dev);
  const Stream stream = current_stream(dev);
  TP_CHECK(stream.handle != nullptr, Runtime, "CUDA graphs must be captured on a non-default stream. (However, "
           "after capture, it's ok to replay them on the default stream.) Use `with tp.cuda.graph(g):`, which "
           "captures on a side stream, or capture inside `with tp.cuda.stream(s):`");
  CachingAllocator &alloc = device_allocator();
  const uintptr_t handle = reinterpret_cast<uintptr_t>(stream.handle);
  // The RNG state buffer comes from the general pool, before the capture routes allocations elsewhere.
  void *state = alloc.malloc(2 * sizeof(uint64_t), dev, handle);
  const PoolId id = (pool.first || pool.second) ? pool : PoolId{g_next_pool_id.fetch_add(1), 0};
  CudaGenerator &gen = default_cuda_generator(dev);
  try {
    gen.capture_begin(static_cast<const uint64_t *>(state));
  } catch (...) {
    alloc.free(state);
    throw;
  }
  alloc.begin_allocate_to_pool(dev, id, handle);
  const CUresult r = driver().cuStreamBeginCapture(stream.handle, mode);
  if (r != CUDA_SUCCESS) {
    gen.capture_end();
    alloc.end_allocate_to_pool(dev, id);
    alloc.release_pool(dev, id);
    alloc.free(state);
    check(r, "cuStreamBeginCapture");
  }
  device_ = dev;
  stream_ = stream;
  pool_ = id;
  has_pool_ = true;
  rng_state_ = state;
  capturing_ = true;
}

void CudaGraph::capture_end() {
  TP_CHECK(capturing_, Runtime, "CUDAGraph.capture_end: no capture in progress (call capture_begin first)");
  DeviceGuard guard(device_);
  CUgraph graph = nullptr;
  const CUresult r = driver().cuStreamEndCapture(stream_.handle, &graph);
  capturing_ = false;
  device_allocator().end_allocate_to_pool(device_, pool_);
  rng_blocks_ = default_cuda_generator(device_).capture_end();
  if (r != CUDA_SUCCESS || !graph) {
    if (graph) driver().cuGraphDestroy(graph);
    const std::string why = error_text(r);
    reset();
    fail(ErrorKind::Runtime, "CUDAGraph.capture_end: the capture failed (", why, "). An operation that is not "
         "allowed during capture invalidated it: a synchronisation such as .item(), .cpu() or "
         "tp.cuda.synchronize(), or work on another stream that did not wait on the capturing one");
  }
  graph_ = graph;
  const CUresult ri = driver().cuGraphInstantiateWithFlags(&exec_, graph_, 0);
  if (ri != CUDA_SUCCESS) {
    exec_ = nullptr;
    reset();
    check(ri, "cuGraphInstantiateWithFlags");
  }
}

void CudaGraph::replay() {
  TP_CHECK(exec_, Runtime, "CUDAGraph.replay: the graph holds no capture (call capture_begin and capture_end "
           "first)");
  DeviceGuard guard(device_);
  const Stream stream = current_stream(device_);
  if (rng_blocks_ > 0) {  // Note [Graph-safe RNG]
    const PhiloxArgs a = default_cuda_generator(device_).replay_begin(rng_blocks_);
    launch(kernel(device_, "random.cu", "rng_graph_state_set"), LaunchConfig{1, 32, 0}, stream, rng_state_,
           (unsigned long long)a.seed, (unsigned long long)a.offset);
  }
  TP_CU(cuGraphLaunch, exec_, stream.handle);
}

void CudaGraph::reset() {
  TP_CHECK(!capturing_, Runtime, "CUDAGraph.reset: a capture is in progress (call capture_end first)");
  if (device_ < 0) return;
  DeviceGuard guard(device_);
  if (exec_) driver().cuGraphExecDestroy(exec_);
  if (graph_) driver().cuGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
  // Note [Graph private pools]: a replay still queued keeps using the pool; the driver orders the frees of
  // whole segments after it (cuMemFree synchronises), and blocks are only reused by captures into this pool.
  if (has_pool_) device_allocator().release_pool(device_, pool_);
  has_pool_ = false;
  if (rng_state_) device_allocator().free(rng_state_);
  rng_state_ = nullptr;
  rng_blocks_ = 0;
}

}  // namespace tp::p10::cuda
