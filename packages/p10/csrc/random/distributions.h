// distributions.h — CPU random kernels: fill a contiguous buffer from a CPUGenerator, PyTorch's way.
//
// Where it sits: the random op family (rand, randn, randint, randperm, bernoulli, multinomial and the
// in-place `uniform_`, `normal_`, `random_`, `exponential_`, ... methods) calls these after allocating the
// output. Each function consumes the generator in exactly the order, and with exactly the formula, that
// PyTorch's CPU kernel uses for a CONTIGUOUS tensor of the same dtype and element count, so that
// `tp.manual_seed(s); tp.randn(n)` equals `torch.manual_seed(s); torch.randn(n)` bit for bit.
// For a non-contiguous output PyTorch's TensorIterator visits elements in memory (stride) order, so fill a
// contiguous buffer of n and scatter it in that order — except normal_, which for a non-contiguous tensor
// always takes the per-element path (normal_fill_strided), whatever n is.
//
// All functions lock `gen.mutex` for the whole fill and throw tp::p10::Error on invalid arguments
// (same checks and, where PyTorch has one, the same wording).
#pragma once
#include <cstdint>
#include <vector>

#include "core/scalar_type.h"
#include "random/cpu_generator.h"

namespace tp::p10 {

// rand / uniform_(from, to): floating dtypes.
void uniform_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double from, double to);
// randn / normal_(mean, std) / normal(mean, std, size): floating dtypes. Switches to PyTorch's chunked
// Box-Muller at n >= 16 (Note [normal_fill chunks of 16] in distributions.cpp).
void normal_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double mean, double std);
// normal_ on a tensor PyTorch would not treat as contiguous: always the per-element path.
void normal_fill_strided(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double mean, double std);
// randint(low, high) / random_(from, to): integer, bool and floating dtypes; values in [from, to_exclusive).
void random_from_to_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, int64_t from, int64_t to_exclusive);
// random_() without bounds: [0, max(T)] for integers, [0, 2^mantissa_digits] for floats, {0,1} for bool.
void random_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n);
// random_(from=int64 min, to=None): the full 64-bit range (int64, float32/64, bfloat16).
void random_full_range_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n);
void exponential_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double lambd);
void cauchy_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double median, double sigma);
void log_normal_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double mean, double std);
// geometric_(p): number of trials to the first success, >= 1; any real dtype.
void geometric_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double p);
// bernoulli_(p) with a scalar p; any real dtype or bool.
void bernoulli_scalar_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, double p);
// torch.bernoulli(probs) / bernoulli_(probs): element i uses p[i]; `p` is contiguous with n elements of `pt`.
void bernoulli_tensor_fill(CPUGenerator &gen, ScalarType t, void *data, int64_t n, ScalarType pt, const void *p);
// torch.randperm(n), int64.
std::vector<int64_t> randperm(CPUGenerator &gen, int64_t n);
// torch.multinomial: probs is a contiguous [rows, cats] float32/float64 buffer (rows = 1 for a 1-D input);
// writes rows * num_samples int64 indices, row-major.
void multinomial(CPUGenerator &gen, ScalarType pt, const void *probs, int64_t rows, int64_t cats,
                 int64_t num_samples, bool replacement, int64_t *out);

}  // namespace tp::p10
