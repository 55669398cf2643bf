// philox.cuh — the Philox4x32-10 counter-based generator, and where a kernel finds its (seed, offset).
//
// Where it sits: included by random.cu. The host side is csrc/cuda/philox.h (the per-device generator state)
// and Note [Philox streams] there says how counters map to elements. Kept free of CUDA-only syntax apart from
// __device__ and __umulhi, so the same function can be checked against Random123's known-answer vectors.
#pragma once

// Note [Philox streams] (host side: csrc/cuda/philox.h)
//   One call philox(counter, key) gives four 32-bit words. key = the 64-bit seed; counter = the 64-bit block
//   number (the high 64 counter bits are 0). An op drawing n values with E values per block uses blocks
//   offset .. offset + ceil(n / E) - 1, and element i (in the tensor's logical, row-major order) takes its
//   words from block offset + i / E. So element i's value depends only on (seed, offset, i): not on the
//   grid, the block size or the tensor's strides, and the first N values of a larger draw equal a draw of N.
//   The generator's offset then moves past the blocks used.
//
// Note [Graph-safe RNG]
//   A kernel captured into a CUDA graph must draw new numbers at each replay, but its arguments are frozen at
//   capture. So during capture the host passes `graph`, a device pointer to {seed, offset base}, and `offset`
//   becomes the op's offset relative to the graph's start. replay() writes the generator's current
//   (seed, offset) into that buffer before launching the graph and advances the generator past every block
//   the graph uses (csrc/cuda/graphs.cpp).
struct PhiloxArgs {
  unsigned long long seed;
  unsigned long long offset;
  const unsigned long long *graph;  // non-null under graph capture: {seed, base offset} live on the device
};

struct Philox4 {
  unsigned x, y, z, w;
};

__device__ __forceinline__ void philox_round(Philox4 &c, unsigned k0, unsigned k1) {
  const unsigned m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  const unsigned hi0 = __umulhi(m0, c.x), lo0 = m0 * c.x;
  const unsigned hi1 = __umulhi(m1, c.z), lo1 = m1 * c.z;
  const Philox4 r = {hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
  c = r;
}

// Philox4x32-10 of the 128-bit counter (c0, c1, c2, c3) under the key (k0, k1): Random123's philox4x32_10.
__device__ __forceinline__ Philox4 philox4x32_10(Philox4 c, unsigned k0, unsigned k1) {
  philox_round(c, k0, k1);
#pragma unroll
  for (int r = 1; r < 10; ++r) {
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
    philox_round(c, k0, k1);
  }
  return c;
}

// The four words of block `block` under `seed` (Note [Philox streams]).
__device__ __forceinline__ Philox4 philox_block(unsigned long long seed, unsigned long long block) {
  const Philox4 c = {unsigned(block), unsigned(block >> 32), 0u, 0u};
  return philox4x32_10(c, unsigned(seed), unsigned(seed >> 32));
}

// The seed and first block of this launch (Note [Graph-safe RNG]).
__device__ __forceinline__ void philox_unpack(const PhiloxArgs &a, unsigned long long &seed,
                                              unsigned long long &base) {
  if (a.graph) {
    seed = a.graph[0];
    base = a.graph[1] + a.offset;
  } else {
    seed = a.seed;
    base = a.offset;
  }
}

// ---- words -> uniforms --------------------------------------------------------------------------------------
// [0, 1) from the top 24 bits of a word; (0, 1] adds one step, so its log is finite.
__device__ __forceinline__ float u24(unsigned w) { return float(w >> 8) * 5.9604644775390625e-8f; }
__device__ __forceinline__ float u24_open0(unsigned w) { return float((w >> 8) + 1u) * 5.9604644775390625e-8f; }
// [0, 1) and (0, 1] from 53 bits of two words.
__device__ __forceinline__ double u53(unsigned hi, unsigned lo) {
  const unsigned long long v = ((unsigned long long)hi << 32 | lo) >> 11;
  return double(v) * 1.1102230246251565e-16;
}
__device__ __forceinline__ double u53_open0(unsigned hi, unsigned lo) {
  const unsigned long long v = ((unsigned long long)hi << 32 | lo) >> 11;
  return double(v + 1ull) * 1.1102230246251565e-16;
}
