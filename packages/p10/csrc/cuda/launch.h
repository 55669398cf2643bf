// launch.h — finding a kernel of the package's .cu files on a device, and launching it.
//
// Where it sits: every CUDA op (ops_*.cpp) calls launch(). The first time a module (a .cu file) is needed on a
// device, its binary comes from the module provider — tensorplay_p10/cuda/_compiler.py, registered at import,
// which compiles the source with NVRTC for the device's architecture and caches the result on disk — and is
// loaded with cuModuleLoadDataEx. Functions are then looked up once per (device, module, name) and kept.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cuda/runtime.h"

namespace tp::p10::cuda {

// Note [Template kernels]
//   A module's kernels are either `extern "C"` functions, found by their plain names (add_contig_float32), or
//   templates (unary_float.cu's unary_contig<F, T>). A template module's host code registers, once, every
//   name expression it may launch (register_kernel_names: "unary_contig<Exp, bfloat16>"); the module is then
//   compiled as one NVRTC program with all of them (nvrtcAddNameExpression), the provider returns the lowered
//   (mangled) name NVRTC gave each (nvrtcGetLoweredName), and kernel(device, module, expression) looks the
//   function up by it. The disk cache is keyed by the list too (Note [Kernel cache] in cuda/_compiler.py).

// A module's image and, for a template module, the lowered name of each of its name expressions (in order).
struct ModuleImage {
  std::string image;
  std::vector<std::string> lowered;
};
// (module file name, e.g. "binary.cu", its name expressions (empty: an extern "C" module), compute capability
// major, minor) -> CUBIN or PTX image.
using ModuleProvider =
    std::function<ModuleImage(const std::string &, const std::vector<std::string> &, int, int)>;
void set_module_provider(ModuleProvider p);

// Add name expressions to template module `module` (before its first launch: static initialisation).
void register_kernel_names(const std::string &module, const std::vector<std::string> &names);
// Every template module and its name expressions (the NVRTC test and the CUDA emulator compile them all).
std::vector<std::pair<std::string, std::vector<std::string>>> template_modules();

// The function `name` of `module` on `device` (a name expression for a template module); RuntimeError naming
// both when it does not exist.
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
