// philox.cpp — the per-device CUDA generators (philox.h).
#include "cuda/philox.h"

#include <cstring>
#include <memory>

#include "core/errors.h"
#include "cuda/graphs.h"
#include "dispatch/value.h"

namespace tp::p10::cuda {

void CudaGenerator::set_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t CudaGenerator::seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seed_;
}

uint64_t CudaGenerator::offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return offset_;
}

std::vector<uint8_t> CudaGenerator::get_state() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint8_t> out(kCudaStateBytes);
  std::memcpy(out.data(), &seed_, 8);  // little-endian hosts only (x86-64, aarch64)
  std::memcpy(out.data() + 8, &offset_, 8);
  return out;
}

void CudaGenerator::set_state(const uint8_t *data, size_t n) {
  TP_CHECK(n == kCudaStateBytes, Value, "set_rng_state: a CUDA generator state has ", kCudaStateBytes,
           " bytes (seed, offset), got ", n);
  std::lock_guard<std::mutex> lock(mu_);
  std::memcpy(&seed_, data, 8);
  std::memcpy(&offset_, data + 8, 8);
}

PhiloxArgs CudaGenerator::reserve(uint64_t blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  PhiloxArgs a;
  if (capture_state_) {
    a.offset = capture_offset_;
    a.graph = capture_state_;
    capture_offset_ += blocks;
  } else {
    a.seed = seed_;
    a.offset = offset_;
    offset_ += blocks;
  }
  return a;
}

void CudaGenerator::capture_begin(const uint64_t *device_state) {
  std::lock_guard<std::mutex> lock(mu_);
  TP_CHECK(!capture_state_, Runtime, "CUDAGraph.capture_begin: the device's random generator is already "
           "registered with a graph being captured (captures on one device cannot overlap)");
  capture_state_ = device_state;
  capture_offset_ = 0;
}

uint64_t CudaGenerator::capture_end() {
  std::lock_guard<std::mutex> lock(mu_);
  capture_state_ = nullptr;
  return capture_offset_;
}

PhiloxArgs CudaGenerator::replay_begin(uint64_t blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  PhiloxArgs a;
  a.seed = seed_;
  a.offset = offset_;
  offset_ += blocks;
  return a;
}

namespace {
struct Generators {
  std::mutex mu;
  uint64_t seed = kDefaultCudaSeed;
  std::vector<std::unique_ptr<CudaGenerator>> per_device;
};
Generators &generators() {
  static Generators *g = new Generators();  // never destroyed: kernels may run during interpreter exit
  return *g;
}
}  // namespace

CudaGenerator &default_cuda_generator(int device) {
  Generators &g = generators();
  std::lock_guard<std::mutex> lock(g.mu);
  if (g.per_device.size() <= size_t(device)) g.per_device.resize(size_t(device) + 1);
  auto &slot = g.per_device[size_t(device)];
  if (!slot) slot = std::make_unique<CudaGenerator>(device, g.seed);
  return *slot;
}

void manual_seed_all(uint64_t seed) {
  Generators &g = generators();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  for (auto &gen : g.per_device)
    if (gen) gen->set_seed(seed);
}

// Note [Generators and graph capture]
//   While a graph captures, the device's default generator hands out offsets relative to the graph's start,
//   read with the seed from device memory that replay() rewrites (Note [Graph-safe RNG]), so every replay draws
//   fresh numbers. A generator made by tp.Generator("cuda") is not registered with any graph (PyTorch needs
//   CUDAGraph.register_generator_state for that; TensorPlay has no such call): its (seed, offset) would be
//   baked into the captured launches and every replay would repeat the same numbers, silently. So an op given
//   one while the current stream captures raises, naming the op; captured code draws from the default
//   generator (no generator=, or tp.cuda.default_generators[i] itself). Outside capture it is unrestricted.
CudaGenerator &cuda_generator(const Value &v, int device, const char *op) {
  CudaGenerator &def = default_cuda_generator(device);
  GeneratorImpl *g = generator_arg(v, DeviceType::CUDA, op);
  if (!g || g == &def) return def;
  const int index = g->device().index;
  TP_CHECK(index < 0 || index == device, Runtime, op, ": Expected a generator of device cuda:", device,
           " (the op's device) but found one of cuda:", index, " (a tp.Generator(\"cuda\") without an index serves "
           "any device)");
  TP_CHECK(!(capture_underway() && current_stream_capturing()), Runtime, op, ": a tp.Generator(device=\"cuda\") "
           "cannot be used while a CUDA graph is being captured: its state would be frozen into the graph and "
           "every replay would repeat the same numbers (Note [Generators and graph capture]); inside the capture "
           "draw from the device's default generator (leave generator= out)");
  return static_cast<CudaGenerator &>(*g);
}

}  // namespace tp::p10::cuda
