// random_poisson.cpp — poisson(input, generator): a Poisson sample for each rate in `input`.
//
// Where it sits: beside kernels/random.cpp (the in-place samplers) as a file of its own, one distribution
// whose sampler is a small algorithm rather than a formula. It draws from the same CPUGenerator
// (random/cpu_generator.h) and is meant to give PyTorch's CPU stream bit for bit under the same seed.
//
// Note [Poisson sampler]
//   PyTorch's CPU poisson (aten/src/ATen/native/Distributions.cpp, sample_poisson, adapted from NumPy)
//   visits the rates in logical (C) order under the generator's lock and draws uniform doubles from it:
//   each is the low 53 bits of a 64-bit draw (two 32-bit words, the first in the high half) times 2^-53.
//     lambda >= 10: Hormann's transformed rejection (PTRS, "The transformed rejection method for generating
//       Poisson random variables", 1993). Each try draws U - 0.5 and V, proposes
//       k = floor((2a / us + b) U + lambda + 0.43) with us = 0.5 - |U|, accepts at once in the "squeeze"
//       region (us >= 0.07 and V <= v_r), and otherwise compares log V + log(1/alpha) - log(a / us^2 + b)
//       with k log(lambda) - lambda - lgamma(k + 1).
//     0 < lambda < 10: multiply uniforms until the product falls to e^-lambda or below; the sample is the
//       number of factors before that (Knuth's product method: exponential gaps of a Poisson process).
//     lambda == 0: 0, with no draw.
//   We use the same constants, the same comparisons in the same order and the same draws.
#include <cmath>
#include <mutex>

#include "dispatch/kernel_box.h"
#include "random/cpu_generator.h"

namespace tp::p10 {

// A uniform double in [0, 1), PyTorch's uniform_real_distribution<double>(0, 1) on the CPU generator.
static inline double standard_uniform(CPUGenerator &g) {
  return double(g.random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

// One Poisson(lambda) sample (Note [Poisson sampler]); lambda >= 0 is checked by the caller.
static int64_t sample_poisson(double lambda, CPUGenerator &g) {
  if (lambda >= 10) {
    const double slam = std::sqrt(lambda), loglam = std::log(lambda);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    while (true) {
      const double U = standard_uniform(g) - 0.5, V = standard_uniform(g);
      const double us = 0.5 - std::fabs(U);
      const int64_t k = int64_t(std::floor((2 * a / us + b) * U + lambda + 0.43));
      if (us >= 0.07 && V <= vr) return k;
      if (k < 0 || (us < 0.013 && V > us)) continue;
      if (std::log(V) + std::log(invalpha) - std::log(a / (us * us) + b) <=
          -lambda + double(k) * loglam - std::lgamma(double(k) + 1))
        return k;
    }
  }
  if (lambda == 0) return 0;
  const double enlam = std::exp(-lambda);
  int64_t x = 0;
  double prod = 1.0;
  while (true) {
    prod *= standard_uniform(g);
    if (prod > enlam) ++x;
    else return x;
  }
}

// Boxed: the generator comes straight off the stack (like the samplers in random.cpp).
static void poisson(const Operator &, Stack &s, void *) {
  Tensor rates = s[0].tensor;
  CPUGenerator &g = cpu_generator(s[1], "poisson");
  TP_CHECK(is_floating(rates.dtype()), Runtime, "poisson: expected a floating point tensor of rates, got ",
           scalar_type_name(rates.dtype()));
  Tensor out = empty_tensor(rates.sizes(), rates.dtype(), rates.device());
  if (!rates.device().is_meta() && rates.numel() > 0) {
    Tensor lam = rates.is_contiguous() ? rates : call_op<Tensor>(TP_OP("contiguous"), rates);
    TP_DISPATCH_FLOATING(lam.dtype(), "poisson", [&]<typename T>() {
      const T *in = lam.data<T>();
      T *o = out.data<T>();
      const int64_t n = lam.numel();
      for (int64_t i = 0; i < n; ++i)  // check all first: nothing is drawn for an invalid input
        TP_CHECK(double(in[i]) >= 0, Runtime, "invalid Poisson rate, expected rate to be non-negative, got ",
                 double(in[i]));
      std::lock_guard<std::mutex> lock(g.mutex);
      for (int64_t i = 0; i < n; ++i) o[i] = T(double(sample_poisson(double(in[i]), g)));
    });
  }
  s.clear();
  s.push_back(Value(out));
}

TP_LIBRARY(random_poisson) {
  lib.def("poisson(Tensor input, Generator? generator=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) lib.impl("poisson", key, &poisson, __LINE__);
}

}  // namespace tp::p10
