// generator.h — GeneratorImpl, what every random generator is: a device plus seed and state access.
//
// Where it sits: `tp.Generator` (python/py_random.cpp) wraps one; an op's `Generator?` argument carries one in
// Value::generator. The CPU generator (random/cpu_generator.h, mt19937) and the CUDA generator (cuda/philox.h,
// Philox seed + offset) derive from it. Kernels never guess what a generator is from its pointer: they ask for
// their own kind with cpu_generator() / cuda::cuda_generator(), which check device() (Note [Generator devices]).
//
// Note [Generator devices]
//   As in PyTorch, a generator belongs to a device type and an op accepts only generators of its own type:
//   a CPU kernel given a CUDA generator (or the reverse) is a RuntimeError naming the op, with PyTorch's text
//   "Expected a 'cpu' device type for generator but found 'cuda'". A CUDA generator made for "cuda" (no index)
//   serves whichever device the op runs on, as PyTorch's does; one made for "cuda:i" serves only device i (a
//   stricter rule than PyTorch's, which never checks the index, so that a generator is not silently shared).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/device.h"

namespace tp::p10 {

struct Value;

class GeneratorImpl {
 public:
  virtual ~GeneratorImpl() = default;
  Device device() const { return device_; }

  // torch.Generator.manual_seed semantics: restart the stream from `seed`.
  virtual void set_seed(uint64_t seed) = 0;
  virtual uint64_t seed() const = 0;  // initial_seed()
  // The bytes of get_state() / set_state(): PyTorch's layout for each kind (5056 CPU bytes, 16 CUDA ones).
  virtual std::vector<uint8_t> get_state() const = 0;
  virtual void set_state(const uint8_t *data, size_t n) = 0;

 protected:
  explicit GeneratorImpl(Device device) : device_(device) {}
  GeneratorImpl(const GeneratorImpl &) = default;
  GeneratorImpl &operator=(const GeneratorImpl &) = default;

 private:
  Device device_;
};

// The generator passed as an op's `generator=` argument, or nullptr for None; RuntimeError naming `op` when it
// is not of device type `type` (Note [Generator devices]).
GeneratorImpl *generator_arg(const Value &v, DeviceType type, const char *op);

}  // namespace tp::p10
