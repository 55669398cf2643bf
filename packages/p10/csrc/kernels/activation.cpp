// activation.cpp — the activation functions of torch.nn.functional as P10 ops: relu, leaky_relu, elu, gelu,
// silu, mish, softplus, softshrink, hardshrink, threshold, hardtanh, hardsigmoid, hardswish, log_sigmoid,
// heaviside, and the Composites built from them (relu6, selu, celu, tanhshrink, softsign, glu, prelu, rrelu).
//
// Where it sits: each loop op is one scalar formula run by the loop helper (loop/tensor_iterator.h) in three
// forms, `name`, `name_`, `name.out` (kernels/unary.h), where PyTorch has them. Bool and integer inputs are
// refused except by relu, threshold and hardtanh (PyTorch's rule: those are comparisons, the others are float
// functions); float16/bfloat16 compute in float32 (opmath). The float32 path of the hot ones (relu, leaky_relu,
// elu, gelu in both modes, silu, mish, softplus) is a TP_SIMD_LOOP over straight-line functions of
// kernels/vec_math.h (Note [Vectorised float math]); the scalar lambda beside each is the readable reference and
// serves the other dtypes. Their backward kernels are in activation_backward.cpp, their derivatives in TPX's
// formulas/activation.py.
#include <array>
#include <mutex>
#include <cmath>
#include <numbers>

#include "kernels/binary_common.h"
#include "kernels/unary.h"
#include "kernels/vec_math.h"
#include "random/cpu_generator.h"

namespace tp::p10 {

// ---- float32 kernels (vectorisable: integer selects, no float compares, no library calls) -------------------
// max(x, 0) keeping NaN: only negative numbers (sign bit set, not NaN) become 0.
TP_VEC_INLINE float relu_f32(float x, float, float, float) {
  const int32_t b = vec::bits(x);
  return vec::select(b < 0 && (b & vec::kAbsMask) <= vec::kInfBits, 0.0f, x);
}
TP_VEC_INLINE float leaky_relu_f32(float x, float slope, float, float) {
  return vec::select(vec::bits(x) < 0, x * slope, x);  // -0 * slope = -0, as PyTorch's x > 0 ? x : x * slope
}
// x > 0: scale x; else alpha scale expm1(input_scale x). a = alpha scale, b = scale, c = input_scale.
TP_VEC_INLINE float elu_f32(float x, float a, float b, float c) {
  return vec::select(vec_order_key(x) > 0, x * b, expm1_f32(x * c) * a);
}
// x Phi(x) = x erfc(-x / sqrt 2) / 2: the negative tail keeps its relative accuracy (no 1 + erf cancellation).
TP_VEC_INLINE float gelu_f32(float x, float, float, float) {
  return 0.5f * x * erfc_f32(x * -0.70710678118654752f);
}
// x (1 + tanh u) / 2 with u = sqrt(2/pi) (x + 0.044715 x^3), written as x sigmoid(2u): the same function, with
// no cancellation in 1 + tanh u for negative x.
TP_VEC_INLINE float gelu_tanh_f32(float x, float, float, float) {
  const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return x * sigmoid_f32(u + u);
}
TP_VEC_INLINE float silu_f32(float x, float, float, float) { return x * sigmoid_f32(x); }
// x tanh(log(1 + e^x)) = x n (n + 2) / (n (n + 2) + 2) with n = e^x: one exp, no cancellation for negative x;
// above 20 the fraction is 1 in float (and n (n + 2) would overflow from 44 on).
TP_VEC_INLINE float mish_f32(float x, float, float, float) {
  const float n = exp_f32(x);
  const float q = n * (n + 2.0f);
  return vec::select(vec_order_key(x) > vec_order_key(20.0f), x, x * (q / (q + 2.0f)));
}
// beta x > threshold: x; else log(1 + e^(beta x)) / beta, as max(bx, 0) + log1p(e^-|bx|) so that e^ never
// overflows and very negative x keeps its tiny result. a = beta, b = threshold.
TP_VEC_INLINE float softplus_f32(float x, float beta, float threshold, float) {
  const float bx = x * beta;
  const float pos = vec::select(vec::bits(bx) < 0, 0.0f, bx);
  const float e = exp_f32(vec::from_bits(vec::bits(bx) | vec::kSignMask));  // e^-|bx|
  const float y = (pos + log1p_f32(e)) / beta;
  return vec::select(vec_order_key(bx) > vec_order_key(threshold), x, y);
}

// Note [No lambdas in SIMD loops]
//   TP_SIMD_LOOP compiles a loop body twice, for AVX2+FMA and for the baseline. A lambda written in that body
//   is a separate function per copy, and GCC may fold the two copies into one (identical code folding, then
//   constant propagation): the AVX2 loop then *calls the baseline lambda once per element*, which can no
//   longer be inlined (its target is narrower) — so the loop stays scalar and pays a call per element.
//   silu_backward ran 9x and gelu_backward 20x slower than PyTorch that way, while threshold_backward, whose
//   body folded differently, was vectorised. The loops below call the TP_VEC_INLINE function directly.
using ActLoopF32 = void (*)(const float *, int64_t, float *, int64_t, int64_t, float, float, float);

#define TP_ACT_LOOP_F32(name, fn)                                                                          \
  TP_SIMD_LOOP(void, name, (const float *x, int64_t sx, float *y, int64_t sy, int64_t n, float a, float b,  \
                            float c),                                                                      \
               (x, sx, y, sy, n, a, b, c),                                                                  \
               {                                                                                       \
                 /* fn is called directly, not through a lambda: Note [No lambdas in SIMD loops] */          \
                 if (sx == 1 && sy == 1) {                                                                  \
                   for (int64_t i = 0; i < n; ++i) y[i] = fn(x[i], a, b, c);                                \
                 } else {                                                                                   \
                   for (int64_t i = 0; i < n; ++i) y[i * sy] = fn(x[i * sx], a, b, c);                      \
                 }                                                                                          \
               })
TP_ACT_LOOP_F32(relu_loop_f32, relu_f32)
TP_ACT_LOOP_F32(leaky_relu_loop_f32, leaky_relu_f32)
TP_ACT_LOOP_F32(elu_loop_f32, elu_f32)
TP_ACT_LOOP_F32(gelu_loop_f32, gelu_f32)
TP_ACT_LOOP_F32(gelu_tanh_loop_f32, gelu_tanh_f32)
TP_ACT_LOOP_F32(silu_loop_f32, silu_f32)
TP_ACT_LOOP_F32(mish_loop_f32, mish_f32)
TP_ACT_LOOP_F32(softplus_loop_f32, softplus_f32)

// ---- the driver ---------------------------------------------------------------------------------------------
// Run `f(M x)` elementwise over self (float dtypes, and integers when `Integers`), or for float32 the loop
// `f32` with its three parameters when one is given. `f` is a generic lambda: one body serves float, double
// and (for the comparison-like ops) the integer types.
template <bool Integers = false, typename F>
static Tensor activation(const UnaryCall &c, const Tensor &self, const F &f, ActLoopF32 f32 = nullptr,
                         std::array<float, 3> p = {}) {
  // Checked before the iterator touches out= or self (it resizes out and bumps versions).
  const ScalarType t = self.dtype();
  if (!is_floating(t) && !(Integers && is_integral(t, false))) throw_unsupported_dtype(c.op, t);
  TensorIterator it = unary_iter(c, self, /*int_to_float=*/false);
  auto body = [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, float>) {
      if (f32) {
        it.for_each([&](char **data, const int64_t *s, int64_t n) {  // byte strides -> element strides
          f32(reinterpret_cast<const float *>(data[1]), s[1] / int64_t(sizeof(float)),
              reinterpret_cast<float *>(data[0]), s[0] / int64_t(sizeof(float)), n, p[0], p[1], p[2]);
        });
        return;
      }
    }
    cpu_kernel<T>(it, [&f](T v) -> T { return T(f(M(v))); });
  };
  // Only the comparison-like ops instantiate their lambda for the integer types.
  if constexpr (Integers) TP_DISPATCH_REAL(it.common_dtype(), c.op, body);
  else TP_DISPATCH_FLOATING(it.common_dtype(), c.op, body);
  return it.finish();
}

static double scalar(const Scalar &s) { return s.to_double(); }

// ---- the loop ops -------------------------------------------------------------------------------------------
static Tensor relu_impl(const UnaryCall &c, const Tensor &self) {
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, c.op, ": Boolean inputs not supported for relu");
  return activation<true>(c, self, [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; }, relu_loop_f32);
}

static Tensor leaky_relu_impl(const UnaryCall &c, const Tensor &self, const Scalar &negative_slope) {
  const double s = scalar(negative_slope);
  return activation(c, self, [s](auto x) { using M = decltype(x); return x > M(0) ? x : x * M(s); },
                    leaky_relu_loop_f32, {float(s)});
}

static Tensor elu_impl(const UnaryCall &c, const Tensor &self, const Scalar &alpha, const Scalar &scale,
                       const Scalar &input_scale) {
  const double a = scalar(alpha) * scalar(scale), b = scalar(scale), is = scalar(input_scale);
  return activation(
      c, self, [a, b, is](auto x) { using M = decltype(x); return x > M(0) ? x * M(b) : std::expm1(x * M(is)) * M(a); },
      elu_loop_f32, {float(a), float(b), float(is)});
}

// approximate='none' | 'tanh'; anything else is PyTorch's RuntimeError.
static bool gelu_is_tanh(const char *op, const std::string &approximate) {
  TP_CHECK(approximate == "none" || approximate == "tanh", Runtime, op,
           ": approximate argument must be either none or tanh, got '", approximate, "'");
  return approximate == "tanh";
}

static Tensor gelu_impl(const UnaryCall &c, const Tensor &self, const std::string &approximate) {
  if (gelu_is_tanh(c.op, approximate)) {
    return activation(c, self, [](auto x) {
      using M = decltype(x);
      const M u = M(std::numbers::sqrt2 * std::numbers::inv_sqrtpi) * (x + M(0.044715) * x * x * x);
      return M(0.5) * x * (M(1) + std::tanh(u));
    }, gelu_tanh_loop_f32);
  }
  return activation(c, self, [](auto x) {
    using M = decltype(x);
    return M(0.5) * x * std::erfc(-x * M(std::numbers::sqrt2 / 2));
  }, gelu_loop_f32);
}

static Tensor silu_impl(const UnaryCall &c, const Tensor &self) {
  return activation(c, self, [](auto x) { return x / (decltype(x)(1) + std::exp(-x)); }, silu_loop_f32);
}

static Tensor mish_impl(const UnaryCall &c, const Tensor &self) {
  return activation(c, self, [](auto x) { return x * std::tanh(std::log1p(std::exp(x))); }, mish_loop_f32);
}

static Tensor softplus_impl(const UnaryCall &c, const Tensor &self, const Scalar &beta, const Scalar &threshold) {
  const double b = scalar(beta), th = scalar(threshold);
  return activation(c, self, [b, th](auto x) {
    using M = decltype(x);
    return x * M(b) > M(th) ? x : std::log1p(std::exp(x * M(b))) / M(b);
  }, softplus_loop_f32, {float(b), float(th)});
}

static void check_lambd(const char *op, double lambd) {
  TP_CHECK(lambd >= 0, Runtime, op, ": lambda must be greater or equal to 0, but found to be ", lambd, ".");
}

// x - lambd above lambd, x + lambd below -lambd, else 0 (x * 0: NaN stays NaN).
static Tensor softshrink_impl(const UnaryCall &c, const Tensor &self, const Scalar &lambd) {
  const double l = scalar(lambd);
  check_lambd(c.op, l);
  return activation(c, self, [l](auto x) {
    using M = decltype(x);
    return x > M(l) ? x - M(l) : (x < -M(l) ? x + M(l) : x * M(0));
  });
}

static Tensor hardshrink_impl(const UnaryCall &c, const Tensor &self, const Scalar &lambd) {
  const double l = scalar(lambd);
  return activation(c, self, [l](auto x) { using M = decltype(x); return x >= -M(l) && x <= M(l) ? M(0) : x; });
}

// x <= threshold: value; else x. The bounds are first cast to the tensor's dtype, as PyTorch does.
static Tensor threshold_impl(const UnaryCall &c, const Tensor &self, const Scalar &threshold, const Scalar &value) {
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, c.op, ": Boolean inputs not supported for threshold");
  const double th = scalar(threshold), v = scalar(value);
  return activation<true>(c, self, [th, v](auto x) {
    using M = decltype(x);
    return x <= M(th) ? M(v) : x;  // integers: both numbers truncated to the dtype first, as PyTorch
  });
}

// clamp(x, min_val, max_val): NaN stays NaN; min_val > max_val gives max_val everywhere (as clamp does).
static Tensor hardtanh_impl(const UnaryCall &c, const Tensor &self, const Scalar &min_val, const Scalar &max_val) {
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, c.op, ": Bool inputs not supported for hardtanh");
  const double lo = scalar(min_val), hi = scalar(max_val);
  return activation<true>(c, self, [lo, hi](auto x) {
    using M = decltype(x);
    if constexpr (std::is_integral_v<M>) {  // compare in double: a bound like -1 must not wrap for uint8
      const double y = double(x) < lo ? lo : double(x);
      return M(y > hi ? hi : y);
    } else {
      M y = x < M(lo) ? M(lo) : x;
      return y > M(hi) ? M(hi) : y;
    }
  });
}

// relu6(x + 3) / 6 and x relu6(x + 3) / 6; NaN propagates through both.
template <typename M> static M hardsigmoid_value(M x) {
  M y = x + M(3);
  y = y < M(0) ? M(0) : y;
  return (y > M(6) ? M(6) : y) / M(6);
}

static Tensor hardsigmoid_impl(const UnaryCall &c, const Tensor &self) {
  return activation(c, self, [](auto x) { return hardsigmoid_value(x); });
}

static Tensor hardswish_impl(const UnaryCall &c, const Tensor &self) {
  return activation(c, self, [](auto x) { return x * hardsigmoid_value(x); });
}

// log(sigmoid x) = min(x, 0) - log1p(e^-|x|): finite for every finite x.
static Tensor log_sigmoid_impl(const UnaryCall &c, const Tensor &self) {
  return activation(c, self, [](auto x) {
    using M = decltype(x);
    return (x < M(0) ? x : M(0)) - std::log1p(std::exp(-std::abs(x)));
  });
}

TP_UNARY_VARIANTS(relu, , )
// softplus, the shrinks and log_sigmoid have .out but no in-place form in PyTorch.
#define TP_UNARY_AND_OUT(name, PARAMS, ARGS)                                                           \
  static Tensor name(const Tensor &self PARAMS) { return name##_impl({#name, Tensor(), false}, self ARGS); } \
  static Tensor name##_out(const Tensor &self PARAMS, const Tensor &out) {                             \
    return name##_impl({#name ".out", out, false}, self ARGS);                                         \
  }
TP_UNARY_VARIANTS(leaky_relu, TP_UCOMMA const Scalar &negative_slope, TP_UCOMMA negative_slope)
TP_UNARY_VARIANTS(elu, TP_UCOMMA const Scalar &alpha TP_UCOMMA const Scalar &scale TP_UCOMMA const Scalar &input_scale,
                  TP_UCOMMA alpha TP_UCOMMA scale TP_UCOMMA input_scale)
TP_UNARY_VARIANTS(gelu, TP_UCOMMA const std::string &approximate, TP_UCOMMA approximate)
TP_UNARY_VARIANTS(silu, , )
TP_UNARY_VARIANTS(mish, , )
TP_UNARY_AND_OUT(softplus, TP_UCOMMA const Scalar &beta TP_UCOMMA const Scalar &threshold,
                  TP_UCOMMA beta TP_UCOMMA threshold)
TP_UNARY_AND_OUT(softshrink, TP_UCOMMA const Scalar &lambd, TP_UCOMMA lambd)
TP_UNARY_AND_OUT(hardshrink, TP_UCOMMA const Scalar &lambd, TP_UCOMMA lambd)
TP_UNARY_VARIANTS(threshold, TP_UCOMMA const Scalar &threshold TP_UCOMMA const Scalar &value,
                  TP_UCOMMA threshold TP_UCOMMA value)
TP_UNARY_VARIANTS(hardtanh, TP_UCOMMA const Scalar &min_val TP_UCOMMA const Scalar &max_val,
                  TP_UCOMMA min_val TP_UCOMMA max_val)
TP_UNARY_VARIANTS(hardsigmoid, , )
TP_UNARY_VARIANTS(hardswish, , )
TP_UNARY_AND_OUT(log_sigmoid, , )

// ---- heaviside: self < 0 -> 0, self == 0 -> values, self > 0 -> 1 -------------------------------------------
// PyTorch's rules: one dtype for both operands (no promotion), no complex; NaN in self gives 0.
static Tensor heaviside_impl(const char *op, const Tensor &self, const Tensor &values, const Tensor &out,
                             bool inplace) {
  TP_CHECK(!is_complex(self.dtype()) && !is_complex(values.dtype()), Runtime, op,
           ": heaviside is not yet implemented for complex tensors.");
  TP_CHECK(self.dtype() == values.dtype(), Runtime, op, ": heaviside is not yet implemented for tensors with "
           "different dtypes, got ", scalar_type_name(self.dtype()), " and ", scalar_type_name(values.dtype()));
  TensorIterator it = TensorIterator::binary(op, inplace ? self : out, self, values, false, inplace);
  TP_DISPATCH_ALL(it.common_dtype(), op, [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      cpu_kernel2<T>(it, [](T x, T v) -> T { return x == T(0) ? v : T(x > T(0)); });
    }
  });
  return it.finish();
}
static Tensor heaviside(const Tensor &self, const Tensor &values) {
  return heaviside_impl("heaviside", self, values, Tensor(), false);
}
static Tensor heaviside_(const Tensor &self, const Tensor &values) {
  return heaviside_impl("heaviside_", self, values, self, true);
}
static Tensor heaviside_out(const Tensor &self, const Tensor &values, const Tensor &out) {
  return heaviside_impl("heaviside.out", self, values, out, false);
}

// ---- Composites (STYLE.md rule 2: no loop and no derivative of their own) ----------------------------------
static void check_float(const char *op, const Tensor &t) {
  if (!is_floating(t.dtype())) throw_unsupported_dtype(op, t.dtype());
}
static Tensor relu6(const Tensor &self) { return call_op<Tensor>(TP_OP("hardtanh"), self, Scalar(0.0), Scalar(6.0)); }
static Tensor relu6_(const Tensor &self) {
  return call_op<Tensor>(TP_OP("hardtanh_"), self, Scalar(0.0), Scalar(6.0));
}

// selu = scale elu(x, alpha) with the constants of Klambauer et al. (2017); celu = elu(x, alpha, 1, 1/alpha).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
static Tensor selu(const Tensor &self) {
  check_float("selu", self);
  return call_op<Tensor>(TP_OP("elu"), self, Scalar(kSeluAlpha), Scalar(kSeluScale), Scalar(1.0));
}
static Tensor selu_(const Tensor &self) {
  check_float("selu_", self);
  return call_op<Tensor>(TP_OP("elu_"), self, Scalar(kSeluAlpha), Scalar(kSeluScale), Scalar(1.0));
}
static void check_celu_alpha(const char *op, const Scalar &alpha) {
  TP_CHECK(alpha.to_double() != 0, Runtime, op, ": ZeroDivisionError: alpha cannot be 0 for CELU");
}
static Tensor celu(const Tensor &self, const Scalar &alpha) {
  check_float("celu", self);
  check_celu_alpha("celu", alpha);
  return call_op<Tensor>(TP_OP("elu"), self, alpha, Scalar(1.0), Scalar(1.0 / alpha.to_double()));
}
static Tensor celu_(const Tensor &self, const Scalar &alpha) {
  check_float("celu_", self);
  check_celu_alpha("celu_", alpha);
  return call_op<Tensor>(TP_OP("elu_"), self, alpha, Scalar(1.0), Scalar(1.0 / alpha.to_double()));
}

// x - tanh x and x / (1 + |x|) (torch.nn.functional's definitions).
static Tensor tanhshrink(const Tensor &self) {
  check_float("tanhshrink", self);
  return call_op<Tensor>(TP_OP("sub"), self, call_op<Tensor>(TP_OP("tanh"), self), Scalar(int64_t(1)));
}
static Tensor softsign(const Tensor &self) {
  check_float("softsign", self);
  Tensor denom = call_op<Tensor>(TP_OP("add"), call_op<Tensor>(TP_OP("abs"), self), wrapped_scalar(Scalar(int64_t(1))),
                                 Scalar(int64_t(1)));
  return call_op<Tensor>(TP_OP("div"), self, denom, std::optional<std::string>());
}

// glu(x, dim) = a * sigmoid(b), where a and b are the two halves of x along dim.
static Tensor glu(const Tensor &self, int64_t dim) {
  TP_CHECK(self.dim() > 0, Runtime, "glu: glu does not support scalars because halving size must be even");
  check_float("glu", self);
  const int64_t d = wrap_dim(dim, self.dim(), "glu");
  const int64_t n = self.sizes()[size_t(d)];
  TP_CHECK(n % 2 == 0, Runtime, "glu: Halving dimension must be even, but dimension ", d, " is size ", n);
  Tensor a = call_op<Tensor>(TP_OP("narrow"), self, d, int64_t(0), n / 2);
  Tensor b = call_op<Tensor>(TP_OP("narrow"), self, d, n / 2, n / 2);
  return call_op<Tensor>(TP_OP("mul"), a, call_op<Tensor>(TP_OP("sigmoid"), b));
}

// prelu(x, w) = x where x > 0, w x elsewhere; w has one element or one per channel (dim 1 of x).
static Tensor prelu(const Tensor &self, const Tensor &weight) {
  TP_CHECK(weight.dim() <= 1, Runtime, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = ",
           weight.dim());
  check_float("prelu", self);
  const int64_t nw = weight.numel();
  Shape wshape;  // 0-d: one weight for everything
  if (nw != 1) {
    TP_CHECK(self.dim() > 0, Runtime, "prelu: Not allow zero-dim input tensor.");
    const int64_t channels = self.dim() >= 2 ? self.sizes()[1] : 1;
    TP_CHECK(channels == nw, Runtime, "prelu: Mismatch of parameter numbers and input channel size. Found "
             "parameter numbers = ", nw, " and channel size = ", channels, ".");
    wshape = Shape(size_t(self.dim() - 1), 1);
    wshape[0] = nw;
  }
  Tensor w = call_op<Tensor>(TP_OP("reshape"), weight, std::vector<int64_t>(wshape.begin(), wshape.end()));
  Tensor pos = call_op<Tensor>(TP_OP("gt"), self, wrapped_scalar(Scalar(int64_t(0))));
  return call_op<Tensor>(TP_OP("where"), pos, self, call_op<Tensor>(TP_OP("mul"), w, self));
}

// Note [rrelu]
//   rrelu(x) = x for x >= 0 and r x below, with one slope r ~ U(lower, upper) drawn per element in training
//   and r = (lower + upper) / 2 in evaluation (which is leaky_relu). The training draws come from
//   _rrelu_with_noise (below), which returns the slopes as a second, non-differentiable
//   output so the derivative (grad * noise) needs no mutable argument. rrelu_ writes that result into self.
static void check_rrelu_bounds(const char *op, double lower, double upper) {
  TP_CHECK(lower <= upper, Runtime, op, ": Lower bound should be less than or equal to the upper bound, got lower=",
           lower, " and upper=", upper);
}

// _rrelu_with_noise(self, lower, upper, generator) -> (out, noise): the training draws of rrelu. PyTorch's
// loop, for bit-equal draws under one seed: self in memory order (a contiguous copy), and for each x <= 0 one
// uniform double in [lower, upper) from a 64-bit word (53 bits kept, then u (upper - lower) + lower, with the
// bounds first rounded to the opmath type); the slope is that double rounded to opmath. Elements x > 0 draw
// nothing and get slope 1.
static void rrelu_with_noise(const Operator &, Stack &s, void *) {
  const char *op = "_rrelu_with_noise";
  Tensor self = s[0].tensor;
  const double lower = s[1].to_double(), upper = s[2].to_double();
  check_float(op, self);
  check_rrelu_bounds(op, lower, upper);
  CPUGenerator &g = cpu_generator(s[3], "_rrelu_with_noise");
  Tensor out = empty_tensor(self.sizes(), self.dtype(), self.device());
  Tensor noise = empty_tensor(self.sizes(), self.dtype(), self.device());
  if (!self.device().is_meta() && self.numel() > 0) {
    Tensor x = self.is_contiguous() ? self : call_op<Tensor>(TP_OP("contiguous"), self);
    TP_DISPATCH_FLOATING(self.dtype(), op, [&]<typename T>() {
      using M = opmath_t<T>;
      const double lo = double(M(lower)), width = double(M(upper)) - double(M(lower));
      const T *px = x.data<T>();
      T *po = out.data<T>(), *pn = noise.data<T>();
      std::lock_guard<std::mutex> lock(g.mutex);
      for (int64_t i = 0; i < self.numel(); ++i) {
        if (M(px[i]) <= M(0)) {
          const double u = double(g.random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
          const M r = M(u * width + lo);
          po[i] = T(M(px[i]) * r);
          pn[i] = T(r);
        } else {
          po[i] = px[i];
          pn[i] = T(1);
        }
      }
    });
  }
  s.clear();
  s.push_back(Value(out));
  s.push_back(Value(noise));
}

static Tensor rrelu_train(const Value &self, const Value &lower, const Value &upper, const Value &generator) {
  Stack s{self, lower, upper, generator};
  call(TP_OP("_rrelu_with_noise"), s);
  return s.at(0).tensor;
}

// Boxed (the generator is not a typed argument): rrelu(self, lower, upper, training, generator).
static void rrelu_boxed(const char *op, bool inplace, Stack &s) {
  Tensor self = s[0].tensor;
  const double lower = s[1].to_double(), upper = s[2].to_double();
  const bool training = s[3].to_bool();
  check_rrelu_bounds(op, lower, upper);
  check_float(op, self);
  Tensor r;
  if (!training) {
    const Scalar slope((lower + upper) / 2);
    r = inplace ? call_op<Tensor>(TP_OP("leaky_relu_"), self, slope)
                : call_op<Tensor>(TP_OP("leaky_relu"), self, slope);
  } else {
    r = rrelu_train(s[0], s[1], s[2], s[4]);
    if (inplace) r = call_op<Tensor>(TP_OP("copy_"), self, r, false);
  }
  s.clear();
  s.push_back(Value(r));
}
static void rrelu(const Operator &, Stack &s, void *) { rrelu_boxed("rrelu", false, s); }
static void rrelu_(const Operator &, Stack &s, void *) { rrelu_boxed("rrelu_", true, s); }

TP_LIBRARY(activation) {
  TP_DEF_UNARY_VARIANTS(lib, leaky_relu, ", Scalar negative_slope=0.01");
  TP_DEF_UNARY_VARIANTS(lib, elu, ", Scalar alpha=1, Scalar scale=1, Scalar input_scale=1");
  lib.def("gelu(Tensor self, *, str approximate=\"none\") -> Tensor");
  lib.def("gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)");
  lib.def("gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> Tensor(a!)");
  TP_DEF_UNARY_VARIANTS(lib, silu, "");
  TP_DEF_UNARY_VARIANTS(lib, mish, "");
  TP_DEF_UNARY_VARIANTS(lib, threshold, ", Scalar threshold, Scalar value");
  TP_DEF_UNARY_VARIANTS(lib, hardtanh, ", Scalar min_val=-1, Scalar max_val=1");
  TP_DEF_UNARY_VARIANTS(lib, hardsigmoid, "");
  TP_DEF_UNARY_VARIANTS(lib, hardswish, "");
  TP_DEF_UNARY_VARIANTS(lib, relu, "");
  // PyTorch has no softplus_, softshrink_, hardshrink_ or log_sigmoid_.
  lib.def("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor");
  lib.def("softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor");
  lib.def("softshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor");
  lib.def("hardshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("log_sigmoid(Tensor self) -> Tensor");
  lib.def("log_sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("heaviside(Tensor self, Tensor values) -> Tensor");
  lib.def("heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)");
  lib.def("heaviside.out(Tensor self, Tensor values, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("relu6(Tensor self) -> Tensor");
  lib.def("relu6_(Tensor(a!) self) -> Tensor(a!)");
  lib.def("selu(Tensor self) -> Tensor");
  lib.def("selu_(Tensor(a!) self) -> Tensor(a!)");
  lib.def("celu(Tensor self, Scalar alpha=1.0) -> Tensor");
  lib.def("celu_(Tensor(a!) self, Scalar alpha=1.0) -> Tensor(a!)");
  lib.def("tanhshrink(Tensor self) -> Tensor");
  lib.def("softsign(Tensor self) -> Tensor");
  lib.def("glu(Tensor self, int dim=-1) -> Tensor");
  lib.def("prelu(Tensor self, Tensor weight) -> Tensor");
  lib.def("rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
          "Generator? generator=None) -> Tensor");
  lib.def("rrelu_(Tensor(a!) self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
          "Generator? generator=None) -> Tensor(a!)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    TP_IMPL_UNARY_VARIANTS(lib, leaky_relu, key);
    TP_IMPL_UNARY_VARIANTS(lib, elu, key);
    TP_IMPL_UNARY_VARIANTS(lib, gelu, key);
    TP_IMPL_UNARY_VARIANTS(lib, silu, key);
    TP_IMPL_UNARY_VARIANTS(lib, mish, key);
    TP_IMPL_UNARY_VARIANTS(lib, threshold, key);
    TP_IMPL_UNARY_VARIANTS(lib, hardtanh, key);
    TP_IMPL_UNARY_VARIANTS(lib, hardsigmoid, key);
    TP_IMPL_UNARY_VARIANTS(lib, hardswish, key);
    TP_IMPL_UNARY_VARIANTS(lib, relu, key);
    impl_typed<softplus>(lib, "softplus", key, __LINE__);
    impl_typed<softplus_out>(lib, "softplus.out", key, __LINE__);
    impl_typed<softshrink>(lib, "softshrink", key, __LINE__);
    impl_typed<softshrink_out>(lib, "softshrink.out", key, __LINE__);
    impl_typed<hardshrink>(lib, "hardshrink", key, __LINE__);
    impl_typed<hardshrink_out>(lib, "hardshrink.out", key, __LINE__);
    impl_typed<log_sigmoid>(lib, "log_sigmoid", key, __LINE__);
    impl_typed<log_sigmoid_out>(lib, "log_sigmoid.out", key, __LINE__);
    impl_typed<heaviside>(lib, "heaviside", key, __LINE__);
    impl_typed<heaviside_>(lib, "heaviside_", key, __LINE__);
    impl_typed<heaviside_out>(lib, "heaviside.out", key, __LINE__);
  }
  TP_IMPL(lib, "relu6", Composite, relu6);
  TP_IMPL(lib, "relu6_", Composite, relu6_);
  TP_IMPL(lib, "selu", Composite, selu);
  TP_IMPL(lib, "selu_", Composite, selu_);
  TP_IMPL(lib, "celu", Composite, celu);
  TP_IMPL(lib, "celu_", Composite, celu_);
  TP_IMPL(lib, "tanhshrink", Composite, tanhshrink);
  TP_IMPL(lib, "softsign", Composite, softsign);
  TP_IMPL(lib, "glu", Composite, glu);
  TP_IMPL(lib, "prelu", Composite, prelu);
  lib.def("_rrelu_with_noise(Tensor self, Scalar lower, Scalar upper, Generator? generator=None) -> (Tensor, Tensor)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    lib.impl("_rrelu_with_noise", key, &rrelu_with_noise, __LINE__);
  TP_IMPL_BOXED(lib, "rrelu", Composite, &rrelu);
  TP_IMPL_BOXED(lib, "rrelu_", Composite, &rrelu_);
}

}  // namespace tp::p10
