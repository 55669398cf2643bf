// cublas.cpp — dlopen cuBLAS, resolve its entry points, keep its handles and workspaces, and turn its status
// codes into Python errors.
//
// Where it sits: under ops_matmul.cpp; see cublas.h for why cuBLAS is loaded at run time and how handles are
// kept (Note [cuBLAS handles]).
#include "cuda/cublas.h"

#include <dlfcn.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/errors.h"
#include "cuda/runtime.h"

namespace tp::p10::cuda {

namespace {
constexpr const char *kInstall =
    "Install it with `pip install tensorplay-p10[cuda]` (the nvidia-cublas wheel; nvidia-cublas-cu12 for CUDA 12 "
    "drivers), or point TP_CUBLAS_LIBRARY at a libcublas.so.";

// libcublas.so.13 needs libcublasLt.so.13 from the same directory. The wheels set a RUNPATH of $ORIGIN, but a
// system copy may not: loading the sibling first (by path) lets the dynamic linker find it by its soname.
void *load_sibling_lt(const std::string &path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string stem = "libcublas.so";
  if (file.rfind(stem, 0) != 0) return nullptr;
  return dlopen((dir + "libcublasLt.so" + file.substr(stem.size())).c_str(), RTLD_NOW | RTLD_LOCAL);
}
}  // namespace

CublasApi load_cublas(const std::string &path) {
  CublasApi api;
  api.path = path;
  api.lt_handle = load_sibling_lt(path);
  // RTLD_LOCAL: another framework in the process may load its own cuBLAS; ours stays out of its way.
  api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *why = dlerror();
    if (api.lt_handle) dlclose(api.lt_handle);
    fail(ErrorKind::Runtime, "cuBLAS could not be loaded from '", path, "' (", why ? why : "unknown error", "). ",
         kInstall);
  }
#define TP_CUBLAS_RESOLVE(name, ret, params)                                                                 \
  api.name = reinterpret_cast<ret(*) params>(dlsym(api.handle, #name));                                      \
  if (!api.name) {                                                                                           \
    close_cublas(api);                                                                                       \
    fail(ErrorKind::Runtime, "the cuBLAS at '", path, "' has no entry point " #name                          \
         ": it is too old for TensorPlay (cuBLAS >= 12 needed). ", kInstall);                                \
  }
  TP_CUBLAS_FUNCTIONS(TP_CUBLAS_RESOLVE)
#undef TP_CUBLAS_RESOLVE
  // cuBLASLt is optional: without it (or with an old one), products with a bias take the plain path.
  api.has_lt = api.lt_handle != nullptr;
#define TP_CUBLASLT_RESOLVE(name, ret, params)                                                               \
  api.name = api.lt_handle ? reinterpret_cast<ret(*) params>(dlsym(api.lt_handle, #name)) : nullptr;         \
  api.has_lt = api.has_lt && api.name != nullptr;
  TP_CUBLASLT_FUNCTIONS(TP_CUBLASLT_RESOLVE)
#undef TP_CUBLASLT_RESOLVE
  int major = 0, minor = 0, patch = 0;
  api.cublasGetProperty(kMajorVersion, &major);
  api.cublasGetProperty(kMinorVersion, &minor);
  api.cublasGetProperty(kPatchLevel, &patch);
  api.version = major * 10000 + minor * 100 + patch;
  return api;
}

void close_cublas(CublasApi &api) {
  if (api.handle) dlclose(api.handle);
  if (api.lt_handle) dlclose(api.lt_handle);
  api = CublasApi();
}

namespace {
struct CublasState {
  std::mutex mu;
  CublasLocator locator;
  CublasApi api;  // loaded once, never closed: handles live until the process exits
  // Note [cuBLAS handles]: (device, stream, thread) -> handle; workspaces are never freed either.
  struct Handle {
    cublasHandle_t handle;
    Workspace workspace;
  };
  std::map<std::tuple<int, CUstream, std::thread::id>, Handle> handles;
  std::map<std::tuple<int, std::thread::id>, cublasLtHandle_t> lt_handles;
};
CublasState &state() {
  static CublasState *s = new CublasState();  // never destroyed: GEMMs may run during interpreter exit
  return *s;
}
std::atomic<int> g_precision{0};  // "highest", PyTorch's default
}  // namespace

void set_cublas_locator(CublasLocator locator) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().locator = std::move(locator);
}

const CublasApi &cublas() {
  CublasState &s = state();
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.api.handle) return s.api;
  CublasLocator locator = s.locator;
  TP_CHECK(locator, Runtime, "cuBLAS cannot be located: import tensorplay_p10.cuda first (it registers the "
           "cuBLAS locator)");
  lock.unlock();  // the locator calls into Python: never hold the lock across it
  std::string path = locator();
  CublasApi api = load_cublas(path);
  lock.lock();
  if (s.api.handle) {  // another thread loaded it meanwhile: keep theirs
    close_cublas(api);
  } else {
    s.api = api;
  }
  return s.api;
}

cublasHandle_t cublas_handle(int device, CUstream stream) {
  const CublasApi &api = cublas();
  CublasState &s = state();
  auto key = std::make_tuple(device, stream, std::this_thread::get_id());
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.handles.find(key);
    if (it != s.handles.end()) return it->second.handle;
  }
  // Only this thread makes handles under this key, so nobody races us between the lookup and the insert.
  cublasHandle_t h = nullptr;
  cublas_check(api.cublasCreate_v2(&h), "cublasCreate");
  cublas_check(api.cublasSetStream_v2(h, stream), "cublasSetStream");
  // cuBLAS's advice: 32 MiB of workspace on Hopper and newer, 4 MiB before (cuBLAS docs, cublasSetWorkspace).
  const size_t bytes = properties(device).major >= 9 ? (32u << 20) : (4u << 20);
  CUdeviceptr ws = 0;
  TP_CU(cuMemAlloc, &ws, bytes);
  cublas_check(api.cublasSetWorkspace_v2(h, reinterpret_cast<void *>(ws), bytes), "cublasSetWorkspace");
  std::lock_guard<std::mutex> lock(s.mu);
  s.handles.emplace(key, CublasState::Handle{h, Workspace{reinterpret_cast<void *>(ws), bytes}});
  return h;
}

Workspace cublas_workspace(int device, CUstream stream) {
  cublas_handle(device, stream);  // made with its workspace on first use
  CublasState &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.handles.at(std::make_tuple(device, stream, std::this_thread::get_id())).workspace;
}

cublasLtHandle_t cublaslt_handle(int device) {
  const CublasApi &api = cublas();
  CublasState &s = state();
  auto key = std::make_tuple(device, std::this_thread::get_id());
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.lt_handles.find(key);
    if (it != s.lt_handles.end()) return it->second;
  }
  cublasLtHandle_t h = nullptr;
  cublas_check(api.cublasLtCreate(&h), "cublasLtCreate");
  std::lock_guard<std::mutex> lock(s.mu);
  s.lt_handles.emplace(key, h);
  return h;
}

std::string cublas_status_text(cublasStatus_t st) {
  const CublasApi &api = state().api;
  const char *name = api.cublasGetStatusName ? api.cublasGetStatusName(st) : nullptr;
  const char *text = api.cublasGetStatusString ? api.cublasGetStatusString(st) : nullptr;
  return str_cat(name ? name : "cuBLAS status", " (", text ? text : "no description", ", code ", st, ")");
}

void cublas_check(cublasStatus_t st, const std::string &what) {
  if (st != CUBLAS_STATUS_SUCCESS) fail(ErrorKind::Runtime, "cuBLAS error in ", what, ": ", cublas_status_text(st));
}

void set_float32_matmul_precision(int level) {
  TP_CHECK(level >= 0 && level <= 2, Value, "float32 matmul precision level must be 0, 1 or 2, got ", level);
  g_precision.store(level);
}
int float32_matmul_precision() { return g_precision.load(); }

}  // namespace tp::p10::cuda
