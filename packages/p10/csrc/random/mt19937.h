// mt19937.h — the 32-bit Mersenne Twister behind every CPU random number in TensorPlay.
//
// Where it sits: CPUGenerator (cpu_generator.h) owns one MT19937 and hands out its 32-bit words; the
// distributions (distributions.h) turn those words into floats and integers. The engine is the textbook
// MT19937 (Matsumoto & Nishimura, 1998) with one twist of bookkeeping that PyTorch also has: the fields
// `left` and `next` count how far into the current block of 624 words we are, and both travel in
// torch.get_rng_state(). Keeping them identical to PyTorch's is what makes saved states interchangeable.
#pragma once
#include <array>
#include <cstdint>

namespace tp::p10 {

constexpr int kMTStateSize = 624;  // words in one block of the twister

// Note [MT19937 bookkeeping]
//   After seeding, `left == 1` and `next == 0`: the first draw decrements `left` to 0, which regenerates the
//   whole block (twist), sets left = 624, next = 0, and then returns word 0. So a freshly seeded engine has
//   not yet twisted, and a saved state taken right after seeding shows left=1. Each later draw returns
//   state[next++] and the block is regenerated when `left` reaches 0 again. A state is valid when it was
//   seeded, 1 <= left <= 624 and next <= 624 (PyTorch rejects anything else as "Invalid mt19937 state").
struct MT19937 {
  uint64_t seed = 5489;  // the seed as given; only its low 32 bits enter the state
  int left = 1;
  bool seeded = false;
  uint32_t next = 0;
  std::array<uint32_t, kMTStateSize> state{};

  explicit MT19937(uint64_t s = 5489) { init(s); }

  // Knuth's linear recurrence fills the block from the low 32 bits of the seed.
  void init(uint64_t s) {
    seed = s;
    seeded = true;
    state[0] = uint32_t(s & 0xffffffffu);
    for (int j = 1; j < kMTStateSize; ++j)
      state[j] = 1812433253u * (state[j - 1] ^ (state[j - 1] >> 30)) + uint32_t(j);
    left = 1;
    next = 0;
  }

  bool is_valid() const { return seeded && left > 0 && left <= kMTStateSize && next <= uint32_t(kMTStateSize); }

  uint32_t operator()() {
    if (--left == 0) twist();
    uint32_t y = state[next++];
    y ^= y >> 11;  // tempering: spreads the state bits so that consecutive outputs look independent
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
  }

 private:
  static uint32_t mix(uint32_t u, uint32_t v) {
    uint32_t y = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (y >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
  }
  void twist() {
    constexpr int N = kMTStateSize, M = 397;
    left = N;
    next = 0;
    for (int i = 0; i < N - M; ++i) state[i] = state[i + M] ^ mix(state[i], state[i + 1]);
    for (int i = N - M; i < N - 1; ++i) state[i] = state[i + M - N] ^ mix(state[i], state[i + 1]);
    state[N - 1] = state[M - 1] ^ mix(state[N - 1], state[0]);
  }
};

}  // namespace tp::p10
