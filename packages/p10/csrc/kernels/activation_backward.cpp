// activation_backward.cpp — the backward ops of the hot activations, PyTorch's way: threshold_backward (relu's
// and threshold's), leaky_relu_backward, elu_backward, gelu_backward, silu_backward, mish_backward,
// softplus_backward and hardtanh_backward. Each takes the incoming gradient and the saved input (or result) and
// returns grad * f'(x) in one loop, instead of the chain of elementwise ops a composed derivative would run.
//
// Where it sits: called from TPX's formulas/activation.py (the derivatives of activation.cpp's ops); those
// formulas also give these ops derivatives of their own, written with TensorPlay ops, so double backward works.
// Inputs broadcast and promote like any binary op (loop/tensor_iterator.h); float dtypes only. gelu and silu, the
// two found in transformer MLPs, and threshold_backward (relu) have float32 TP_SIMD_LOOPs over vec_math.h.
#include <array>
#include <cmath>
#include <numbers>

#include "dispatch/kernel_box.h"
#include "kernels/vec_math.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// ---- float32 kernels: f(grad, x, a, b, c) ---------------------------------------------------------------
// x <= threshold ? 0 : grad; a NaN x is not <= anything, so it passes grad (PyTorch's result).
TP_VEC_INLINE float threshold_backward_f32(float g, float x, float threshold, float, float) {
  const float y = vec::select(vec_order_key(x) <= vec_order_key(threshold), 0.0f, g);
  return __builtin_isunordered(x, x) ? g : y;
}
// Phi(x) + x phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, phi(x) = e^(-x^2/2) / sqrt(2 pi).
TP_VEC_INLINE float gelu_backward_f32(float g, float x, float, float, float) {
  const float cdf = 0.5f * erfc_f32(x * -0.70710678118654752f);
  const float pdf = 0.39894228040143268f * exp_f32(-0.5f * x * x);
  return g * (cdf + x * pdf);
}
// d/dx x (1 + tanh u) / 2 = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2, u = k (x + c x^3), u' = k (1 + 3 c x^2).
// In float32 1 + tanh u and 1 - tanh^2 u cancel for |u| large, so they are taken as 2 s and 4 s (1 - s) with
// s = sigmoid(2u): s (1 - s) = e / (1 + e)^2 for e = e^-|2u| has no cancellation on either side.
TP_VEC_INLINE float gelu_tanh_backward_f32(float g, float x, float, float, float) {
  const float k = 0.79788456080286536f, c = 0.044715f;
  const float u2 = 2.0f * k * (x + c * x * x * x);
  const float e = exp_f32(vec::from_bits(vec::bits(u2) | vec::kSignMask));  // e^-|2u|
  const float d = 1.0f + e;
  const float s = vec::select(vec::bits(u2) < 0, e / d, 1.0f / d);
  const float s1ms = e / (d * d);
  return g * (s + 2.0f * x * s1ms * k * (1.0f + 3.0f * c * x * x));
}
// d/dx x s(x) = s (1 + x (1 - s)).
TP_VEC_INLINE float silu_backward_f32(float g, float x, float, float, float) {
  const float s = sigmoid_f32(x);
  return g * s * (1.0f + x * (1.0f - s));
}

using BackwardLoopF32 = void (*)(const float *, int64_t, const float *, int64_t, float *, int64_t, int64_t, float,
                                 float, float);

#define TP_BACKWARD_LOOP_F32(name, fn)                                                                         \
  TP_SIMD_LOOP(void, name, (const float *g, int64_t sg, const float *x, int64_t sx, float *y, int64_t sy,       \
                            int64_t n, float a, float b, float c),                                             \
               (g, sg, x, sx, y, sy, n, a, b, c),                                                               \
               {                                                                                           \
                 /* fn is called directly, not through a lambda: Note [No lambdas in SIMD loops] */              \
                 if (sg == 1 && sx == 1 && sy == 1) {                                                           \
                   for (int64_t i = 0; i < n; ++i) y[i] = fn(g[i], x[i], a, b, c);                              \
                 } else { /* grad is often a stride-0 broadcast of a 0-d gradient */                           \
                   for (int64_t i = 0; i < n; ++i) y[i * sy] = fn(g[i * sg], x[i * sx], a, b, c);               \
                 }                                                                                              \
               })
TP_BACKWARD_LOOP_F32(threshold_backward_loop_f32, threshold_backward_f32)
TP_BACKWARD_LOOP_F32(gelu_backward_loop_f32, gelu_backward_f32)
TP_BACKWARD_LOOP_F32(gelu_tanh_backward_loop_f32, gelu_tanh_backward_f32)
TP_BACKWARD_LOOP_F32(silu_backward_loop_f32, silu_backward_f32)

// grad * f'(x) elementwise: `f(M g, M x)` for every float dtype, or the float32 loop when given.
template <typename F>
static Tensor backward_op(const char *op, const Tensor &grad, const Tensor &x, const F &f,
                          BackwardLoopF32 f32 = nullptr, std::array<float, 3> p = {}) {
  TensorIterator it = TensorIterator::binary(op, Tensor(), grad, x);
  TP_DISPATCH_FLOATING(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, float>) {
      if (f32) {
        it.for_each([&](char **d, const int64_t *s, int64_t n) {  // byte strides -> element strides
          constexpr int64_t k = sizeof(float);
          f32(reinterpret_cast<const float *>(d[1]), s[1] / k, reinterpret_cast<const float *>(d[2]), s[2] / k,
              reinterpret_cast<float *>(d[0]), s[0] / k, n, p[0], p[1], p[2]);
        });
        return;
      }
    }
    cpu_kernel2<T>(it, [&f](T g, T v) -> T { return T(f(M(g), M(v))); });
  });
  return it.finish();
}

// self <= threshold: 0, else grad (relu's backward with threshold 0, taken on relu's result).
static Tensor threshold_backward(const Tensor &grad_output, const Tensor &self, const Scalar &threshold) {
  const double th = threshold.to_double();
  return backward_op("threshold_backward", grad_output, self, [th](auto g, auto x) {
    using M = decltype(g);
    return x <= M(th) ? M(0) : g;
  }, threshold_backward_loop_f32, {float(th)});
}

static Tensor leaky_relu_backward(const Tensor &grad_output, const Tensor &self, const Scalar &negative_slope,
                                  bool self_is_result) {
  // With the result saved instead of the input, a negative slope flips signs and x > 0 cannot be recovered.
  TP_CHECK(!self_is_result || negative_slope.to_double() >= 0, Runtime, "leaky_relu_backward: In-place leakyReLu "
           "backward calculation is triggered with a negative slope which is not supported. This is caused by "
           "calling in-place forward function with a negative slope, please call out-of-place version instead. "
           "Got negative_slope=", negative_slope.to_double());
  const double s = negative_slope.to_double();
  return backward_op("leaky_relu_backward", grad_output, self, [s](auto g, auto x) {
    using M = decltype(g);
    return x > M(0) ? g : g * M(s);
  });
}

// From the input x: x <= 0 gives grad input_scale alpha scale e^(input_scale x); from the result y (in-place elu):
// grad input_scale (y + alpha scale). Positive side: grad scale.
static Tensor elu_backward(const Tensor &grad_output, const Scalar &alpha, const Scalar &scale,
                           const Scalar &input_scale, bool is_result, const Tensor &self_or_result) {
  const double neg = alpha.to_double() * scale.to_double(), pos = scale.to_double(), is = input_scale.to_double();
  return backward_op("elu_backward", grad_output, self_or_result, [=](auto g, auto x) {
    using M = decltype(g);
    // PyTorch tests `x <= 0`, so a NaN input takes the positive side (grad scale), not NaN.
    if (!(x <= M(0))) return g * M(pos);
    return is_result ? g * M(is) * (x + M(neg)) : g * M(is) * M(neg) * std::exp(x * M(is));
  });
}

static Tensor gelu_backward(const Tensor &grad_output, const Tensor &self, const std::string &approximate) {
  const char *op = "gelu_backward";
  TP_CHECK(approximate == "none" || approximate == "tanh", Runtime, op,
           ": approximate argument must be either none or tanh, got '", approximate, "'");
  if (approximate == "tanh") {
    return backward_op(op, grad_output, self, [](auto g, auto x) {
      using M = decltype(g);
      const M k = M(std::numbers::sqrt2 * std::numbers::inv_sqrtpi), c = M(0.044715);
      const M t = std::tanh(k * (x + c * x * x * x));
      return g * (M(0.5) * (M(1) + t) + M(0.5) * x * (M(1) - t * t) * k * (M(1) + M(3) * c * x * x));
    }, gelu_tanh_backward_loop_f32);
  }
  return backward_op(op, grad_output, self, [](auto g, auto x) {
    using M = decltype(g);
    const M cdf = M(0.5) * std::erfc(-x * M(std::numbers::sqrt2 / 2));
    const M pdf = M(std::numbers::inv_sqrtpi / std::numbers::sqrt2) * std::exp(M(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }, gelu_backward_loop_f32);
}

static Tensor silu_backward(const Tensor &grad_output, const Tensor &self) {
  return backward_op("silu_backward", grad_output, self, [](auto g, auto x) {
    using M = decltype(g);
    const M s = M(1) / (M(1) + std::exp(-x));
    return g * s * (M(1) + x * (M(1) - s));
  }, silu_backward_loop_f32);
}

// d/dx x tanh(sp(x)) = tanh(sp) + x sigmoid(x) (1 - tanh^2(sp)), sp = log(1 + e^x).
static Tensor mish_backward(const Tensor &grad_output, const Tensor &self) {
  return backward_op("mish_backward", grad_output, self, [](auto g, auto x) {
    using M = decltype(g);
    const M t = std::tanh(std::log1p(std::exp(x)));
    const M s = M(1) / (M(1) + std::exp(-x));
    return g * (t + x * s * (M(1) - t * t));
  });
}

// beta x > threshold: grad (the forward is x there); else grad sigmoid(beta x).
static Tensor softplus_backward(const Tensor &grad_output, const Tensor &self, const Scalar &beta,
                                const Scalar &threshold) {
  const double b = beta.to_double(), th = threshold.to_double();
  return backward_op("softplus_backward", grad_output, self, [b, th](auto g, auto x) {
    using M = decltype(g);
    const M bx = x * M(b);
    return bx > M(th) ? g : g / (M(1) + std::exp(-bx));
  });
}

// Zero where the clamp is active (x <= min_val or x >= max_val), grad in between.
static Tensor hardtanh_backward(const Tensor &grad_output, const Tensor &self, const Scalar &min_val,
                                const Scalar &max_val) {
  const double lo = min_val.to_double(), hi = max_val.to_double();
  return backward_op("hardtanh_backward", grad_output, self, [lo, hi](auto g, auto x) {
    using M = decltype(g);
    return x <= M(lo) || x >= M(hi) ? M(0) : g;
  });
}

TP_LIBRARY(activation_backward) {
  lib.def("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor");
  lib.def("leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) "
          "-> Tensor");
  lib.def("elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, "
          "Tensor self_or_result) -> Tensor");
  lib.def("gelu_backward(Tensor grad_output, Tensor self, *, str approximate=\"none\") -> Tensor");
  lib.def("silu_backward(Tensor grad_output, Tensor self) -> Tensor");
  lib.def("mish_backward(Tensor grad_output, Tensor self) -> Tensor");
  lib.def("softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor");
  lib.def("hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<threshold_backward>(lib, "threshold_backward", key, __LINE__);
    impl_typed<leaky_relu_backward>(lib, "leaky_relu_backward", key, __LINE__);
    impl_typed<elu_backward>(lib, "elu_backward", key, __LINE__);
    impl_typed<gelu_backward>(lib, "gelu_backward", key, __LINE__);
    impl_typed<silu_backward>(lib, "silu_backward", key, __LINE__);
    impl_typed<mish_backward>(lib, "mish_backward", key, __LINE__);
    impl_typed<softplus_backward>(lib, "softplus_backward", key, __LINE__);
    impl_typed<hardtanh_backward>(lib, "hardtanh_backward", key, __LINE__);
  }
}

}  // namespace tp::p10
