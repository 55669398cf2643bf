// launch.h — finding a kernel of the package's .cu files on a device, and launching it.
//
// Where it sits: every CUDA op (ops_*.cpp) calls launch(). The first time a module (a .cu file) is needed on a
// device, its binary comes from the module provider — tensorplay_p10/cuda/_compiler.py, registered at import,
// which compiles the source with NVRTC for the device's architecture and caches the result on disk — and is
// loaded with cuModuleLoadDataEx. Functions are then looked up once per (device, module, name) and kept.
#pragma once
#include <functional>
#include <string>

#include "cuda/runtime.h"

namespace tp::p10::cuda {

// (module file name, e.g. "binary.cu", compute capability major, minor) -> CUBIN or PTX image.
using ModuleProvider = std::function<std::string(const std::string &, int, int)>;
void set_module_provider(ModuleProvider p);

// The function `name` of `module` on `device`; RuntimeError naming both when it does not exist.
CUfunction kernel(int device, const char *module, const std::string &name);
void unload_modules();  // drop every loaded module (the next launch recompiles or re-reads the cache)

struct LaunchConfig {
  unsigned grid = 1, block = 256, shared_bytes = 0;
};
// Blocks for a grid-stride loop over n items, `per_thread` items per thread per step: enough to fill the
// device a few times over, never more than the work needs.
LaunchConfig elementwise_config(int device, int64_t n, int per_thread = 1, unsigned block = 256);

// How many blocks of `block` threads (and `shared_bytes` of dynamic shared memory) of `f` are resident on one SM
// at once, as the driver works it out from the kernel's registers and shared memory; at least 1. Cached per
// (f, block, shared_bytes). For grids sized to one wave (Note [One wave of blocks] in reduce_common.cuh).
int resident_blocks_per_sm(CUfunction f, unsigned block, unsigned shared_bytes = 0);

// Launch on `stream`. Arguments are passed by value; their C++ types must match the kernel's parameters.
// A launch asking for more than 48 KiB of dynamic shared memory first raises the kernel's limit (the call is
// cheap, and the limit is the function's, so asking every time keeps no state).
template <typename... Args>
void launch(CUfunction f, const LaunchConfig &c, Stream stream, Args... args) {
  void *params[] = {static_cast<void *>(&args)..., nullptr};
  if (c.shared_bytes > kDefaultSharedBytes)
    TP_CU(cuFuncSetAttribute, f, kFuncMaxDynamicSharedBytes, int(c.shared_bytes));
  TP_CU(cuLaunchKernel, f, c.grid, 1, 1, c.block, 1, 1, c.shared_bytes, stream.handle, params, nullptr);
}

}  // namespace tp::p10::cuda
