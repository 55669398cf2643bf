// cusolver.cpp — dlopen cuSOLVER (after its dependencies), resolve its entry points, keep its handles, and turn
// its status codes into Python errors.
//
// Where it sits: under the linear-algebra ops (cuda/linalg.h); see cusolver.h for why cuSOLVER is loaded at
// run time, how its dependencies are found (Note [cuSOLVER dependencies]) and how handles are kept (Note
// [cuSOLVER handles]). The structure follows cublas.cpp.
#include "cuda/cusolver.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/errors.h"

namespace tp::p10::cuda {

namespace {
constexpr const char *kInstall =
    "Install it with `pip install tensorplay-p10[cuda]` (the nvidia-cusolver wheel, which brings nvidia-cublas, "
    "nvidia-cusparse and nvidia-nvjitlink; nvidia-cusolver-cu12 for CUDA 12 drivers), or point "
    "TP_CUSOLVER_LIBRARY at a libcusolver.so whose folder also holds libcublas, libcublasLt, libcusparse and "
    "libnvJitLink.";
// libraryPropertyType, for cusolverGetProperty
constexpr int kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2;
}  // namespace

CusolverApi load_cusolver(const std::vector<std::string> &files) {
  TP_CHECK(!files.empty(), Runtime, "cuSOLVER could not be loaded: no library was given. ", kInstall);
  CusolverApi api;
  api.path = files.back();
  // Note [cuSOLVER dependencies]: each by path, RTLD_LOCAL; a failure here is reported only if libcusolver itself
  // then fails to load (the dynamic loader may still find that library elsewhere).
  std::string missed;
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    if (void *h = dlopen(files[i].c_str(), RTLD_NOW | RTLD_LOCAL)) {
      api.dependencies.push_back(h);
    } else {
      const char *why = dlerror();
      missed += str_cat(" Its dependency '", files[i], "' did not load either (", why ? why : "unknown error", ").");
    }
  }
  api.handle = dlopen(api.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *why = dlerror();
    const std::string reason = why ? why : "unknown error";
    close_cusolver(api);
    fail(ErrorKind::Runtime, "cuSOLVER could not be loaded from '", files.back(), "' (", reason, ").", missed, " ",
         kInstall);
  }
#define TP_CUSOLVER_RESOLVE(name, ret, params)                                                               \
  api.name = reinterpret_cast<ret(*) params>(dlsym(api.handle, #name));                                      \
  if (!api.name) {                                                                                           \
    const std::string where = api.path;                                                                      \
    close_cusolver(api);                                                                                     \
    fail(ErrorKind::Runtime, "the cuSOLVER at '", where, "' has no entry point " #name                       \
         ": it is too old for TensorPlay (cuSOLVER >= 11 needed). ", kInstall);                              \
  }
  TP_CUSOLVER_FUNCTIONS(TP_CUSOLVER_RESOLVE)
#undef TP_CUSOLVER_RESOLVE
  int major = 0, minor = 0, patch = 0;
  api.cusolverGetProperty(kMajorVersion, &major);
  api.cusolverGetProperty(kMinorVersion, &minor);
  api.cusolverGetProperty(kPatchLevel, &patch);
  api.version = major * 10000 + minor * 100 + patch;
  return api;
}

void close_cusolver(CusolverApi &api) {
  if (api.handle) dlclose(api.handle);
  for (auto it = api.dependencies.rbegin(); it != api.dependencies.rend(); ++it) dlclose(*it);
  api = CusolverApi();
}

namespace {
struct CusolverState {
  std::mutex mu;
  CusolverLocator locator;
  CusolverApi api;  // loaded once, never closed: handles live until the process exits
  std::map<std::tuple<int, CUstream, std::thread::id>, cusolverDnHandle_t> handles;  // Note [cuSOLVER handles]
};
CusolverState &state() {
  static CusolverState *s = new CusolverState();  // never destroyed: solves may run during interpreter exit
  return *s;
}
}  // namespace

void set_cusolver_locator(CusolverLocator locator) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().locator = std::move(locator);
}

const CusolverApi &cusolver() {
  CusolverState &s = state();
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.api.handle) return s.api;
  CusolverLocator locator = s.locator;
  TP_CHECK(locator, Runtime, "cuSOLVER cannot be located: import tensorplay_p10.cuda first (it registers the "
           "cuSOLVER locator)");
  lock.unlock();  // the locator calls into Python: never hold the lock across it
  const std::vector<std::string> files = locator();
  CusolverApi api = load_cusolver(files);
  lock.lock();
  if (s.api.handle) {  // another thread loaded it meanwhile: keep theirs
    close_cusolver(api);
  } else {
    s.api = api;
  }
  return s.api;
}

cusolverDnHandle_t cusolver_handle(int device, CUstream stream) {
  const CusolverApi &api = cusolver();
  CusolverState &s = state();
  auto key = std::make_tuple(device, stream, std::this_thread::get_id());
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.handles.find(key);
    if (it != s.handles.end()) return it->second;
  }
  // Only this thread makes handles under this key, so nobody races us between the lookup and the insert.
  cusolverDnHandle_t h = nullptr;
  cusolver_check(api.cusolverDnCreate(&h), "cusolverDnCreate");
  cusolver_check(api.cusolverDnSetStream(h, stream), "cusolverDnSetStream");
  std::lock_guard<std::mutex> lock(s.mu);
  s.handles.emplace(key, h);
  return h;
}

std::string cusolver_status_text(cusolverStatus_t st) {
  // cusolverStatus_t (cusolver_common.h); cuSOLVER has no function that names them.
  static const char *const names[] = {
      "CUSOLVER_STATUS_SUCCESS",        "CUSOLVER_STATUS_NOT_INITIALIZED",
      "CUSOLVER_STATUS_ALLOC_FAILED",   "CUSOLVER_STATUS_INVALID_VALUE",
      "CUSOLVER_STATUS_ARCH_MISMATCH",  "CUSOLVER_STATUS_MAPPING_ERROR",
      "CUSOLVER_STATUS_EXECUTION_FAILED", "CUSOLVER_STATUS_INTERNAL_ERROR",
      "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "CUSOLVER_STATUS_NOT_SUPPORTED",
      "CUSOLVER_STATUS_ZERO_PIVOT",     "CUSOLVER_STATUS_INVALID_LICENSE"};
  const char *name = st >= 0 && st < int(sizeof(names) / sizeof(names[0])) ? names[st] : "cuSOLVER status";
  return str_cat(name, " (code ", st, ")");
}

void cusolver_check(cusolverStatus_t st, const char *what) {
  if (st != CUSOLVER_STATUS_SUCCESS)
    fail(ErrorKind::Runtime, "cuSOLVER error in ", what, ": ", cusolver_status_text(st));
}

}  // namespace tp::p10::cuda
