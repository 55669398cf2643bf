// launch.cpp — the per-device module and function caches behind launch.h.
#include "cuda/launch.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/errors.h"

namespace tp::p10::cuda {

namespace {
struct Loaded {
  CUmodule module;
  std::map<std::string, std::string> lowered;  // name expression -> lowered name (template modules)
};
struct Modules {
  std::mutex mu;
  ModuleProvider provider;
  std::map<std::string, std::vector<std::string>> names;                   // template module -> expressions
  std::map<std::pair<int, std::string>, Loaded> modules;                   // (device, module)
  std::map<std::tuple<int, std::string, std::string>, CUfunction> functions;  // (device, module, name)
  std::map<std::tuple<CUfunction, unsigned, unsigned>, int> occupancy;         // resident_blocks_per_sm
};
Modules &modules() {
  static Modules *m = new Modules();
  return *m;
}

constexpr int CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

Loaded load_module(int device, const std::string &name, const std::vector<std::string> &names,
                   ModuleProvider &provider) {
  TP_CHECK(provider, Runtime, "CUDA kernels cannot be compiled: import tensorplay_p10.cuda first (it registers the "
           "NVRTC compiler)");
  const DeviceProperties &p = properties(device);
  ModuleImage built = provider(name, names, p.major, p.minor);
  TP_CHECK(built.lowered.size() == names.size(), Runtime, "the module provider gave ", built.lowered.size(),
           " lowered names for the ", names.size(), " name expressions of ", name);
  Loaded loaded;
  for (size_t i = 0; i < names.size(); ++i) loaded.lowered.emplace(names[i], built.lowered[i]);
  const std::string &image = built.image;
  char log[4096] = {0};
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log) - 1))};
  DeviceGuard g(device);
  CUmodule mod = nullptr;
  CUresult r = driver().cuModuleLoadDataEx(&mod, image.data(), 2, options, values);
  TP_CHECK(r == CUDA_SUCCESS, Runtime, "loading the CUDA kernels of ", name, " on cuda:", device, " failed: ",
           error_text(r), log[0] ? str_cat("\n", log) : std::string(),
           r == 222 ? "\n(the driver is older than the NVRTC that made this PTX: install an NVRTC wheel no newer "
                      "than the driver's CUDA version)"
                    : "");
  loaded.module = mod;
  return loaded;
}
}  // namespace

void set_module_provider(ModuleProvider p) {
  std::lock_guard<std::mutex> lock(modules().mu);
  modules().provider = std::move(p);
}

void register_kernel_names(const std::string &module, const std::vector<std::string> &names) {
  Modules &m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  std::vector<std::string> &list = m.names[module];
  list.insert(list.end(), names.begin(), names.end());
}

std::vector<std::pair<std::string, std::vector<std::string>>> template_modules() {
  Modules &m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  return {m.names.begin(), m.names.end()};
}

CUfunction kernel(int device, const char *module, const std::string &name) {
  Modules &m = modules();
  std::unique_lock<std::mutex> lock(m.mu);
  auto key = std::make_tuple(device, std::string(module), name);
  auto it = m.functions.find(key);
  if (it != m.functions.end()) return it->second;
  auto mkey = std::make_pair(device, std::string(module));
  auto mit = m.modules.find(mkey);
  const Loaded *loaded;
  if (mit != m.modules.end()) {
    loaded = &mit->second;
  } else {
    ModuleProvider provider = m.provider;
    auto nit = m.names.find(module);
    const std::vector<std::string> names = nit == m.names.end() ? std::vector<std::string>() : nit->second;
    lock.unlock();  // compiling can take seconds and calls into Python; never hold the lock across it
    Loaded fresh_module = load_module(device, module, names, provider);
    lock.lock();
    auto [pos, fresh] = m.modules.emplace(mkey, fresh_module);
    if (!fresh) driver().cuModuleUnload(fresh_module.module);  // another thread loaded it meanwhile: keep theirs
    loaded = &pos->second;
  }
  auto lowered = loaded->lowered.find(name);
  const std::string &symbol = lowered == loaded->lowered.end() ? name : lowered->second;
  CUfunction f = nullptr;
  CUresult r = driver().cuModuleGetFunction(&f, loaded->module, symbol.c_str());
  TP_CHECK(r == CUDA_SUCCESS, NotImplemented, "no CUDA kernel '", name, "' in ", module, " (", error_text(r),
           "): this op does not support that dtype on CUDA yet");
  m.functions.emplace(key, f);
  return f;
}

void unload_modules() {
  Modules &m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  for (auto &[key, loaded] : m.modules) {
    DeviceGuard g(key.first);
    driver().cuModuleUnload(loaded.module);
  }
  m.modules.clear();
  m.functions.clear();
  m.occupancy.clear();  // the handles are gone; new ones may reuse their values
}

int resident_blocks_per_sm(CUfunction f, unsigned block, unsigned shared_bytes) {
  Modules &m = modules();
  const auto key = std::make_tuple(f, block, shared_bytes);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.occupancy.find(key);
    if (it != m.occupancy.end()) return it->second;
  }
  int blocks = 0;
  TP_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, f, int(block), size_t(shared_bytes));
  blocks = std::max(blocks, 1);
  std::lock_guard<std::mutex> lock(m.mu);
  m.occupancy.emplace(key, blocks);
  return blocks;
}

LaunchConfig elementwise_config(int device, int64_t n, int per_thread, unsigned block) {
  const int64_t sms = properties(device).multi_processor_count;
  const int64_t needed = (n + int64_t(block) * per_thread - 1) / (int64_t(block) * per_thread);
  // 2048 resident threads per SM on recent GPUs: 8 blocks of 256 fill one; 4 waves hide the tail.
  const int64_t cap = sms * (2048 / int64_t(block)) * 4;
  LaunchConfig c;
  c.block = block;
  c.grid = unsigned(std::max<int64_t>(1, std::min(needed, cap)));
  return c;
}

}  // namespace tp::p10::cuda
