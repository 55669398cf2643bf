// unary_float.cpp — the CPU kernels of the unary float family (ops/unary_float.h: exp, log, sin, sigmoid,
// logit, …): the family's functor run over the loop helper.
//
// Where it sits: impl_unary_float<Cpu> registers the three forms of every row of the table for the CPU key;
// each call takes its iterator from the family's meta rule (Note [The family's meta rule]), then runs the
// functor of tensorplay_p10/cuda_kernels/unary_float.cuh — the very formula unary_float.cu runs on CUDA — in
// the op's math type (float for float16/bfloat16, std::complex for complex inputs).
// Naive beside fast: float32 exp, log, sigmoid and tanh run vectorised polynomial kernels instead
// (kernels/vec_math.h, Note [Vectorised float math]); the functor stays their reference, and test_vec_math.py
// holds them to it within a few ulps.
#include "kernels/vec_math.h"
#include "ops/unary_float.h"

namespace tp::p10 {

// The float32 loops over vec_math.h's kernels, each built for AVX2+FMA and the baseline (TP_SIMD_LOOP).
// Every layout of a float32 tensor goes through the same loop, so a strided result equals the contiguous one
// bit for bit (the two copies may differ in the last bit: FMA).
TP_SIMD_LOOP(void, exp_loop_f32, (const float *x, int64_t sx, float *y, int64_t sy, int64_t n), (x, sx, y, sy, n),
             { map_f32(x, sx, y, sy, n, [](float v) { return exp_f32(v); }); })
TP_SIMD_LOOP(void, log_loop_f32, (const float *x, int64_t sx, float *y, int64_t sy, int64_t n), (x, sx, y, sy, n),
             { map_f32(x, sx, y, sy, n, [](float v) { return log_f32(v); }); })
TP_SIMD_LOOP(void, sigmoid_loop_f32, (const float *x, int64_t sx, float *y, int64_t sy, int64_t n),
             (x, sx, y, sy, n), { map_f32(x, sx, y, sy, n, [](float v) { return sigmoid_f32(v); }); })
TP_SIMD_LOOP(void, tanh_loop_f32, (const float *x, int64_t sx, float *y, int64_t sy, int64_t n), (x, sx, y, sy, n),
             { map_f32(x, sx, y, sy, n, [](float v) { return tanh_f32(v); }); })

// The fast float32 loop of a functor, where it has one.
using F32Loop = void (*)(const float *, int64_t, float *, int64_t, int64_t);
template <typename F> constexpr F32Loop fast_f32 = nullptr;
template <> constexpr F32Loop fast_f32<Exp> = exp_loop_f32;
template <> constexpr F32Loop fast_f32<Log> = log_loop_f32;
template <> constexpr F32Loop fast_f32<Sigmoid> = sigmoid_loop_f32;
template <> constexpr F32Loop fast_f32<Tanh> = tanh_loop_f32;

namespace {
struct Cpu {
  template <typename F, Complex C> static Tensor run(const UnaryCall &c, const Tensor &self, const F &f) {
    TensorIterator it = unary_float_iter(c, self, C);
    TP_DISPATCH_FLOATING_AND_COMPLEX(it.common_dtype(), c.op, [&]<typename T>() {
      using M = opmath_t<T>;
      if constexpr (std::is_same_v<T, float> && fast_f32<F> != nullptr) {
        it.for_each([](char **data, const int64_t *s, int64_t n) {  // byte strides -> element strides
          fast_f32<F>(reinterpret_cast<const float *>(data[1]), s[1] / int64_t(sizeof(float)),
                      reinterpret_cast<float *>(data[0]), s[0] / int64_t(sizeof(float)), n);
        });
      } else if constexpr (!is_complex_dtype<T> || C == Complex::Yes) {
        cpu_kernel<T>(it, [f](T v) -> T { return T(f(M(v))); });
      }
    });
    return it.finish();
  }
};
}  // namespace

TP_LIBRARY(cpu_unary_float) { impl_unary_float<Cpu>(lib, DispatchKey::CPU, __LINE__); }

}  // namespace tp::p10
