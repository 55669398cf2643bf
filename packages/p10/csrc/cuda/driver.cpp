// driver.cpp — dlopen the CUDA driver, resolve its entry points, and turn its error codes into Python errors.
//
// Where it sits: under everything in csrc/cuda/. See driver.h for why the driver is loaded at run time.
#include "cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/errors.h"

namespace tp::p10::cuda {

namespace {
// cuGetProcAddress_v2(symbol, &fn, cudaVersion, flags, &status): Note [Versioned driver symbols].
using GetProcAddressFn = CUresult (*)(const char *, void **, int, unsigned long long, int *);

void *resolve(void *handle, GetProcAddressFn gpa, const char *base, const char *versioned) {
  void *fn = nullptr;
  int status = 0;
  if (gpa && gpa(base, &fn, kCudaApiVersion, 0, &status) == CUDA_SUCCESS && fn) return fn;
  return dlsym(handle, versioned);
}
}  // namespace

DriverApi load_driver(const std::string &path) {
  DriverApi api;
  api.path = path;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace (another framework may load its own).
  api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *why = dlerror();
    fail(ErrorKind::Runtime, "CUDA driver not found: could not load '", path, "' (", why ? why : "unknown error",
         "). Is an NVIDIA driver installed? Set TP_CUDA_DRIVER_LIBRARY to its libcuda.so.1 if it lives elsewhere.");
  }
  auto gpa = reinterpret_cast<GetProcAddressFn>(dlsym(api.handle, "cuGetProcAddress_v2"));
#define TP_CUDA_RESOLVE(name, sym, ret, params)                                                              \
  api.name = reinterpret_cast<ret(*) params>(resolve(api.handle, gpa, #name, sym));                          \
  if (!api.name) {                                                                                           \
    dlclose(api.handle);                                                                                     \
    fail(ErrorKind::Runtime, "the CUDA driver at '", path, "' has no entry point ", sym,                     \
         ": the driver is too old for TensorPlay (CUDA >= 12 needed)");                                      \
  }
  TP_CUDA_DRIVER_FUNCTIONS(TP_CUDA_RESOLVE)
#undef TP_CUDA_RESOLVE
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    api.cuGetErrorName(r, &name);
    dlclose(api.handle);
    fail(ErrorKind::Runtime, "cuInit failed (", name ? name : "unknown error", ", code ", r,
         "): the driver is installed but no usable GPU was found");
  }
  api.cuDriverGetVersion(&api.version);
  return api;
}

namespace {
struct DriverState {
  std::once_flag once;
  DriverApi api;
  std::string error;  // why loading failed; empty when it worked
  int device_count = 0;
};
DriverState &state() {
  static DriverState *s = new DriverState();  // never destroyed: kernels may run during interpreter exit
  return *s;
}
void load_once() {
  DriverState &s = state();
  std::call_once(s.once, [&s] {
    const char *env = std::getenv("TP_CUDA_DRIVER_LIBRARY");
    try {
      s.api = load_driver(env && *env ? env : "libcuda.so.1");
      s.api.cuDeviceGetCount(&s.device_count);
      if (s.device_count == 0) s.error = "the CUDA driver reports no devices";
    } catch (const Error &e) {
      s.error = e.what();
    }
  });
}
}  // namespace

const DriverApi &driver() {
  load_once();
  // A driver without devices still answers queries (device_count() == 0); only a missing driver raises here.
  TP_CHECK(state().api.handle != nullptr, Runtime, "CUDA is not available: ", state().error);
  return state().api;
}

bool cuda_available() {
  load_once();
  return state().api.handle != nullptr && state().device_count > 0;
}

std::string cuda_unavailable_reason() {
  load_once();
  return state().error;
}

std::string error_text(CUresult r) {
  const char *name = nullptr, *text = nullptr;
  const DriverApi &api = state().api;
  if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
  return str_cat(name ? name : "CUDA error", " (", text ? text : "no description", ", code ", r, ")");
}

void check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return;
  const bool capture = r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
                       r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  fail(ErrorKind::Runtime, "CUDA error in ", what, ": ", error_text(r),
       capture ? str_cat(": ", what, " is not allowed while a CUDA graph is being captured (a synchronising call "
                         "such as .item(), .cpu(), .numpy() or tp.cuda.synchronize() invalidates the capture)")
               : std::string());
}

}  // namespace tp::p10::cuda
