// philox.cpp — the per-device CUDA generators (philox.h).
#include "cuda/philox.h"

#include <cstring>
#include <memory>

#include "core/errors.h"

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
  if (!slot) slot = std::make_unique<CudaGenerator>(g.seed);
  return *slot;
}

void manual_seed_all(uint64_t seed) {
  Generators &g = generators();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  for (auto &gen : g.per_device)
    if (gen) gen->set_seed(seed);
}

}  // namespace tp::p10::cuda
