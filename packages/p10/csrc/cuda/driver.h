// driver.h — the CUDA driver API, loaded at run time: the few types we need and a table of function pointers.
//
// Where it sits: the bottom of P10's CUDA backend. Nothing here comes from a CUDA toolkit: P10 is built on
// machines without one, and the same wheel runs on CPU-only and GPU machines. At first use, driver() dlopens
// `libcuda.so.1` (installed with the NVIDIA driver, never from pip), resolves every entry point below and calls
// cuInit. When that fails — no driver, no GPU — driver() raises a RuntimeError that says why, and
// cuda_available() is false; nothing crashes. The types are the driver's own (cuda.h), declared by hand.
//
// Note [Versioned driver symbols]
//   cuda.h maps names like cuMemAlloc to versioned symbols (cuMemAlloc_v2) with macros, so a plain dlsym must
//   use the versioned names. The driver's own resolver, cuGetProcAddress_v2 (CUDA >= 12.0), takes the base
//   name and the CUDA version whose ABI we were written against (kCudaApiVersion) and returns the matching
//   version. We ask it first and fall back to dlsym of the versioned name, so both old and new drivers work.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tp::p10::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
// Stream capture (CUDA graphs): an operation not allowed on a capturing stream, and a capture it has broken.
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;
// CUstreamCaptureMode: GLOBAL forbids unsafe calls (cuMemAlloc, synchronisation) from any thread during a
// capture, THREAD_LOCAL only from the capturing thread, RELAXED never.
enum CaptureMode : int { kCaptureGlobal = 0, kCaptureThreadLocal = 1, kCaptureRelaxed = 2 };
constexpr int kCudaApiVersion = 12000;  // the ABI our prototypes follow (Note [Versioned driver symbols])

// cuDeviceGetAttribute codes (CUdevice_attribute in cuda.h) that tp.cuda reports.
enum DeviceAttr : int {
  kMaxThreadsPerBlock = 1, kMaxSharedMemoryPerBlock = 8, kWarpSize = 10, kClockRate = 13,
  kMultiprocessorCount = 16, kIntegrated = 18, kMemoryClockRate = 36, kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38, kMaxThreadsPerMultiprocessor = 39, kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76, kMaxSharedMemoryPerMultiprocessor = 81, kMaxRegistersPerMultiprocessor = 82,
  kPciBusId = 33, kPciDeviceId = 34,
};

// cuFuncSetAttribute codes (CUfunction_attribute): a kernel may use more than 48 KiB of dynamic shared memory
// only after it says so.
constexpr int kFuncMaxDynamicSharedBytes = 8;
constexpr unsigned kDefaultSharedBytes = 48 * 1024;

// X(name, versioned symbol for dlsym, return type, parameter list)
#define TP_CUDA_DRIVER_FUNCTIONS(X)                                                                           \
  X(cuInit, "cuInit", CUresult, (unsigned flags))                                                             \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int *version))                                       \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult err, const char **name))                            \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult err, const char **text))                        \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *count))                                             \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice * dev, int ordinal))                                      \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *name, int len, CUdevice dev))                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *value, int attr, CUdevice dev))             \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t * bytes, CUdevice dev))                        \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext * ctx, CUdevice dev))          \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext ctx))                                            \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                                                       \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                                       \
    (CUmodule * mod, const void *image, unsigned n, int *options, void **values))                             \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction * fn, CUmodule mod, const char *name))  \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule mod))                                               \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr * ptr, size_t bytes))                                 \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr ptr))                                                   \
  X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t * free_bytes, size_t * total_bytes))                   \
  X(cuMemHostAlloc, "cuMemHostAlloc", CUresult, (void **ptr, size_t bytes, unsigned flags))                   \
  X(cuMemFreeHost, "cuMemFreeHost", CUresult, (void *ptr))                                                    \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult, (CUdeviceptr dst, const void *src, size_t n, CUstream s)) \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult, (void *dst, CUdeviceptr src, size_t n, CUstream s))       \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)) \
  X(cuMemsetD8Async, "cuMemsetD8Async", CUresult, (CUdeviceptr dst, unsigned char v, size_t n, CUstream s))   \
  X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", CUresult,                                       \
    (CUstream * s, unsigned flags, int priority))                                                             \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream s))                                            \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream s))                                       \
  X(cuStreamQuery, "cuStreamQuery", CUresult, (CUstream s))                                                   \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult, (CUstream s, CUevent e, unsigned flags))                \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent * e, unsigned flags))                                  \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent e))                                               \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent e, CUstream s))                                        \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent e))                                          \
  X(cuEventQuery, "cuEventQuery", CUresult, (CUevent e))                                                      \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float *ms, CUevent start, CUevent end))              \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                               \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,              \
     unsigned shmem, CUstream s, void **params, void **extra))                                                \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction f, int attr, int value))                  \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", CUresult,       \
    (int *blocks, CUfunction f, int block_size, size_t dynamic_shmem))                                        \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", CUresult,                                      \
    (CUdeviceptr * dptr, void *host, unsigned flags))                                                         \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", CUresult, (CUstream s, int mode))                        \
  X(cuStreamEndCapture, "cuStreamEndCapture", CUresult, (CUstream s, CUgraph * graph))                        \
  X(cuStreamIsCapturing, "cuStreamIsCapturing", CUresult, (CUstream s, int *status))                          \
  X(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", CUresult, (int *mode))            \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", CUresult,                                     \
    (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                                            \
  X(cuGraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec exec, CUstream s))                                 \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", CUresult, (CUgraphExec exec))                                   \
  X(cuGraphDestroy, "cuGraphDestroy", CUresult, (CUgraph graph))

struct DriverApi {
#define TP_CUDA_DECLARE(name, sym, ret, params) ret(*name) params = nullptr;
  TP_CUDA_DRIVER_FUNCTIONS(TP_CUDA_DECLARE)
#undef TP_CUDA_DECLARE
  void *handle = nullptr;  // from dlopen
  int version = 0;         // cuDriverGetVersion: 13000 = CUDA 13.0
  std::string path;        // what was loaded
};

// Load a driver library, resolve the table and cuInit. Throws a RuntimeError naming the step that failed.
// Each call makes a new table: the process-wide one is driver(); tests use this to probe a missing path.
DriverApi load_driver(const std::string &path);

// The process-wide driver, loaded once (path: $TP_CUDA_DRIVER_LIBRARY, else libcuda.so.1). Throws the same
// error on every call when loading failed.
const DriverApi &driver();
bool cuda_available();             // driver loaded and at least one device; never throws
std::string cuda_unavailable_reason();  // "" when available

// A driver error as text: "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string error_text(CUresult r);
// Throw a RuntimeError "CUDA error in <what>: <error_text>" unless r is CUDA_SUCCESS.
void check(CUresult r, const char *what);

}  // namespace tp::p10::cuda

// TP_CU(cuFoo(args)): call through the driver table and check the result, naming the call in the error.
#define TP_CU(name, ...) ::tp::p10::cuda::check(::tp::p10::cuda::driver().name(__VA_ARGS__), #name)
