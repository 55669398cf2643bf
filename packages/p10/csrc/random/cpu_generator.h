// cpu_generator.h — the CPU random generator: an MT19937 engine plus PyTorch's cached normal samples.
//
// Where it sits: `tp.manual_seed`, `tp.seed`, `tp.get_rng_state` / `tp.set_rng_state` and `tp.Generator`
// reach this class; the kernels in distributions.h draw from it. It mirrors PyTorch's CPUGeneratorImpl
// field by field so that, for the same seed, TensorPlay's CPU streams are PyTorch's bit for bit, and so that
// a state saved by one framework can be loaded by the other (Note [CPU RNG state layout]).
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "random/generator.h"
#include "random/mt19937.h"

namespace tp::p10 {

constexpr uint64_t kDefaultCPUSeed = 67280421310721ULL;  // PyTorch's default_rng_seed_val
constexpr size_t kCPUStateBytes = 5056;                   // sizeof(CPUGeneratorImplState) on 64-bit PyTorch

class CPUGenerator final : public GeneratorImpl {
 public:
  explicit CPUGenerator(uint64_t seed = kDefaultCPUSeed);
  CPUGenerator(const CPUGenerator &other);  // copies the stream (not the mutex): Generator.clone_state
  CPUGenerator &operator=(const CPUGenerator &other);

  // torch.manual_seed semantics: restart the engine and forget any cached normal sample.
  void set_seed(uint64_t seed) override;
  uint64_t seed() const override { return engine_.seed; }  // torch.initial_seed

  uint32_t random() { return engine_(); }  // the next 32-bit word
  // Two words, the first one in the HIGH half (PyTorch's make64BitsFrom32Bits(hi=first, lo=second)).
  uint64_t random64() {
    uint32_t hi = engine_();
    uint32_t lo = engine_();
    return (uint64_t(hi) << 32) | lo;
  }

  // Box-Muller produces normals in pairs; the spare one is kept here (Note [cached normal sample] in
  // distributions.cpp). Only the double one is used by CPU kernels; the float one exists for state parity.
  std::optional<double> next_double_normal_sample;
  std::optional<float> next_float_normal_sample;

  std::vector<uint8_t> get_state() const override;
  void set_state(const uint8_t *data, size_t n) override;

  const MT19937 &engine() const { return engine_; }

  // Kernels hold this while they draw, so that two threads filling tensors from one generator each get a
  // contiguous run of the stream (PyTorch's Note [Acquire lock when using random generators]).
  mutable std::mutex mutex;

 private:
  MT19937 engine_;
};

// The process-wide generator behind tp.manual_seed / tp.rand without generator=.
CPUGenerator &default_cpu_generator();

// What a CPU kernel draws from: the op's `generator=` argument, or the default generator for None; a CUDA
// generator is a RuntimeError naming `op` (Note [Generator devices] in random/generator.h).
CPUGenerator &cpu_generator(const Value &v, const char *op);

// A fresh 64-bit seed from the OS entropy source, for tp.seed().
uint64_t nondeterministic_seed();

}  // namespace tp::p10
