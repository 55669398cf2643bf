// normal_avx2.h — PyTorch's AVX2 block of 16 float32 normals, all 8 lanes at once (normal_avx2.cpp).
//
// Where it sits: random/distributions.cpp calls normal16_avx2_simd for float32 normal_ / randn on CPUs with
// AVX2 and FMA (float_normal_uses_avx2); its lane-by-lane replay normal16_avx2_float there is the readable
// reference, and both give PyTorch's bits (Note [normal_fill chunks of 16]).
#pragma once
#include <cstdint>

namespace tp::p10 {

// Turn d[0..16) (uniforms in [0, 1)) in place into 16 normals, as PyTorch's AVX2 normal_fill_16: lane j takes
// u1 = 1 - d[j], u2 = d[j + 8] and writes mean + std * r cos(2 pi u2) to d[j] and ... sin ... to d[j + 8].
// Call only where the CPU has AVX2 and FMA. `blocks` blocks of 16 in a row, starting at d.
void normal16_avx2_simd(float *d, int64_t blocks, float mean, float stdv);

}  // namespace tp::p10
