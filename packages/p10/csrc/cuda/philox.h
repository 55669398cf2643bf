// philox.h — the CUDA random generator: a Philox4x32-10 (seed, offset) state; one default per device, and any
// number made by tp.Generator(device="cuda").
//
// Where it sits: ops_random.cpp asks the op's generator (cuda_generator(): `generator=` or the device's default) for the (seed, offset) of each launch and the
// generator moves its offset past the Philox blocks the op uses (Note [Philox streams] in
// tensorplay_p10/cuda_kernels/philox.cuh). tp.cuda.manual_seed / get_rng_state / set_rng_state (py_cuda.cpp)
// read and write it; graphs.cpp switches it to device-side state during capture (Note [Graph-safe RNG]).
// There is no cuRAND and no per-thread state: a counter-based generator needs only the two numbers.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "random/generator.h"

namespace tp::p10 {
struct Value;
}

namespace tp::p10::cuda {

constexpr uint64_t kDefaultCudaSeed = 67280421310721ULL;  // PyTorch's default_rng_seed_val
constexpr size_t kCudaStateBytes = 16;                     // get_rng_state(): seed, offset (little-endian u64)

// What a random kernel receives; byte for byte the PhiloxArgs of philox.cuh.
struct PhiloxArgs {
  uint64_t seed = 0;
  uint64_t offset = 0;                // in Philox blocks (four 32-bit words each)
  const uint64_t *graph = nullptr;    // a device pointer under graph capture (Note [Graph-safe RNG])
};
static_assert(sizeof(PhiloxArgs) == 24, "PhiloxArgs must match philox.cuh");

class CudaGenerator final : public GeneratorImpl {
 public:
  // `device`: a device index, or -1 for a tp.Generator("cuda") that serves any device (Note [Generator devices]
  // in random/generator.h). Making one needs no driver.
  explicit CudaGenerator(int device, uint64_t seed = kDefaultCudaSeed)
      : GeneratorImpl(Device{DeviceType::CUDA, int8_t(device)}), seed_(seed) {}
  void set_seed(uint64_t seed) override;  // and offset 0, as torch.cuda.manual_seed
  uint64_t seed() const override;
  uint64_t offset() const;
  std::vector<uint8_t> get_state() const override;
  void set_state(const uint8_t *data, size_t n) override;  // ValueError unless n == kCudaStateBytes

  // The arguments for a launch that uses `blocks` Philox blocks; the offset moves past them.
  PhiloxArgs reserve(uint64_t blocks);

  // Note [Graph-safe RNG]: between capture_begin and capture_end, reserve() hands out offsets relative to
  // the graph's start, read with the seed from `device_state` ({seed, base offset}, two u64 on the device).
  void capture_begin(const uint64_t *device_state);
  uint64_t capture_end();  // the number of blocks one replay uses
  // Before a replay: the (seed, base offset) to write into the graph's state; the offset moves past `blocks`.
  PhiloxArgs replay_begin(uint64_t blocks);

 private:
  mutable std::mutex mu_;
  uint64_t seed_, offset_ = 0;
  const uint64_t *capture_state_ = nullptr;
  uint64_t capture_offset_ = 0;
};

// The default generator of `device` (an index already resolved), made on first use with the seed of the last
// manual_seed_all (or the default seed).
CudaGenerator &default_cuda_generator(int device);
// Seed every device's generator, including those not made yet; needs no driver (tp.manual_seed calls it).
void manual_seed_all(uint64_t seed);

// What a CUDA random op on `device` draws from: its `generator=` argument, or the device's default generator for
// None. RuntimeError naming `op` for a CPU generator, a generator of another CUDA device, and a generator other
// than the default one while the current stream is capturing a graph (Note [Generators and graph capture]).
CudaGenerator &cuda_generator(const Value &generator, int device, const char *op);

}  // namespace tp::p10::cuda
