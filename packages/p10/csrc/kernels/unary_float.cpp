// unary_float.cpp — the float functions of one tensor: exponentials and logarithms, powers (sqrt, rsqrt,
// reciprocal), trigonometry and its inverses, hyperbolic functions, sigmoid and logit, deg2rad/rad2deg.
//
// Where it sits: each op is a functor `f(M x)` run by float_op() over the loop helper; the three call forms
// (`exp`, `exp_`, `exp.out`) come from kernels/unary.h. PyTorch's rules: bool and integer inputs compute in the
// default float dtype, float16/bfloat16 compute in float32 (M = opmath_t), and the functions marked complex
// also take complex64/complex128 (M is then std::complex). float32 exp, log, sigmoid and tanh run vectorised
// polynomial kernels instead of the C library (kernels/vec_math.h, Note [Vectorised float math]).
#include <cmath>
#include <complex>
#include <numbers>

#include "kernels/unary.h"
#include "kernels/vec_math.h"

namespace tp::p10 {

template <typename M> constexpr bool is_cplx = is_complex_dtype<M>;

// The float32 loops over vec_math.h's kernels, each built for AVX2+FMA and the baseline (TP_SIMD_LOOP).
// Every layout of a float32 tensor goes through the same loop, so a strided result equals the contiguous one
// bit for bit (the two copies may differ in the last bit: FMA).
#define TP_F32_LOOP(name, fn)                                                                          \
  TP_SIMD_LOOP(void, name, (const float *x, int64_t sx, float *y, int64_t sy, int64_t n), (x, sx, y, sy, n), \
               { map_f32(x, sx, y, sy, n, [](float v) { return fn(v); }); })
TP_F32_LOOP(exp_loop_f32, exp_f32)
TP_F32_LOOP(log_loop_f32, log_f32)
TP_F32_LOOP(sigmoid_loop_f32, sigmoid_f32)
TP_F32_LOOP(tanh_loop_f32, tanh_f32)

// An op functor with a `f32_loop(x, sx, y, sy, n)` runs it for float32 instead of `f` element by element.
template <typename Op> concept HasF32Loop = requires(const float *x, float *y) { Op::f32_loop(x, 1, y, 1, 0); };

// Run `Op::f` elementwise; `Op::complex` says whether complex inputs are accepted.
template <typename Op> static Tensor float_op(const UnaryCall &c, const Tensor &self) {
  // Check before the iterator touches out= or self (it resizes out and bumps versions).
  if (!Op::complex && is_complex(self.dtype())) throw_unsupported_dtype(c.op, self.dtype());
  TensorIterator it = unary_iter(c, self, /*int_to_float=*/true);
  TP_DISPATCH_FLOATING_AND_COMPLEX(it.common_dtype(), c.op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, float> && HasF32Loop<Op>) {
      it.for_each([](char **data, const int64_t *s, int64_t n) {  // byte strides -> element strides
        Op::f32_loop(reinterpret_cast<const float *>(data[1]), s[1] / int64_t(sizeof(float)),
                     reinterpret_cast<float *>(data[0]), s[0] / int64_t(sizeof(float)), n);
      });
    } else if constexpr (!is_cplx<T> || Op::complex) {
      cpu_kernel<T>(it, [](T v) -> T { return T(Op::f(M(v))); });
    }
  });
  return it.finish();
}

// One functor per op. Most std functions have real and complex overloads, so one body serves both.
#define TP_FLOAT_FN(Name, takes_complex, body)                    \
  struct Name {                                                   \
    static constexpr bool complex = takes_complex;                \
    template <typename M> static M f(M x) { body }                \
  };

// The same with a float32 loop from vec_math.h.
#define TP_FLOAT_FN_F32(Name, loop, body)                                                              \
  struct Name {                                                                                        \
    static constexpr bool complex = true;                                                              \
    template <typename M> static M f(M x) { body }                                                     \
    static void f32_loop(const float *x, int64_t sx, float *y, int64_t sy, int64_t n) { loop(x, sx, y, sy, n); } \
  };

TP_FLOAT_FN_F32(ExpFn, exp_loop_f32, return std::exp(x);)
TP_FLOAT_FN_F32(LogFn, log_loop_f32, return std::log(x);)
TP_FLOAT_FN(Log10Fn, true, return std::log10(x);)
TP_FLOAT_FN(SqrtFn, true, return std::sqrt(x);)
TP_FLOAT_FN(RsqrtFn, true, return M(1) / std::sqrt(x);)
TP_FLOAT_FN(ReciprocalFn, true, return M(1) / x;)
TP_FLOAT_FN(SinFn, true, return std::sin(x);)
TP_FLOAT_FN(CosFn, true, return std::cos(x);)
TP_FLOAT_FN(TanFn, true, return std::tan(x);)
TP_FLOAT_FN(AsinFn, true, return std::asin(x);)
TP_FLOAT_FN(AcosFn, true, return std::acos(x);)
TP_FLOAT_FN(AtanFn, true, return std::atan(x);)
TP_FLOAT_FN(SinhFn, true, return std::sinh(x);)
TP_FLOAT_FN(CoshFn, true, return std::cosh(x);)
TP_FLOAT_FN_F32(TanhFn, tanh_loop_f32, return std::tanh(x);)
TP_FLOAT_FN(AsinhFn, true, return std::asinh(x);)
TP_FLOAT_FN(AcoshFn, true, return std::acosh(x);)
TP_FLOAT_FN(AtanhFn, true, return std::atanh(x);)
TP_FLOAT_FN_F32(SigmoidFn, sigmoid_loop_f32, return M(1) / (M(1) + std::exp(-x));)

// Real-only in std, and complex by formula: log2 z = log z / log 2, 2^z = exp(z log 2).
TP_FLOAT_FN(Log2Fn, true, if constexpr (is_cplx<M>) return std::log(x) / typename M::value_type(std::numbers::ln2);
                          else return std::log2(x);)
TP_FLOAT_FN(Exp2Fn, true, if constexpr (is_cplx<M>) return std::exp(x * typename M::value_type(std::numbers::ln2));
                          else return std::exp2(x);)

// expm1 and log1p of a complex z keep their accuracy near 0 the way PyTorch does: rewrite the part that
// cancels with the real expm1/log1p instead of computing exp(z) - 1 or log(1 + z).
struct Expm1Fn {
  static constexpr bool complex = true;
  template <typename M> static M f(M z) {
    if constexpr (is_cplx<M>) {
      // exp(x+iy) - 1 = (expm1(x) cos y - 2 sin²(y/2)) + i exp(x) sin y
      auto x = z.real(), y = z.imag();
      auto s = std::sin(y / 2);
      return M(std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y));
    } else {
      return std::expm1(z);
    }
  }
};

struct Log1pFn {
  static constexpr bool complex = true;
  template <typename M> static M f(M z) {
    if constexpr (is_cplx<M>) {
      // log(1+z) = log|1+z| + i arg(1+z); for small |z|, log|1+z| = log1p(x(x+2) + y²) / 2 avoids the
      // cancellation in 1 + x.
      using R = typename M::value_type;
      R x = z.real(), y = z.imag();
      R theta = std::atan2(y, x + R(1));
      if (std::abs(z) < R(0.5)) {
        R r = x * (R(2) + x) + y * y;
        if (r == 0) return M(x, theta);  // r underflowed: log1p(r)/2 ≈ x to first order
        return M(std::log1p(r) / 2, theta);
      }
      return M(std::log(std::hypot(x + R(1), y)), theta);
    } else {
      return std::log1p(z);
    }
  }
};

// PyTorch multiplies by the constant (computed in the op's math type), so deg2rad(180) is float32(pi).
TP_FLOAT_FN(Deg2radFn, false, return x * M(std::numbers::pi / 180.0);)
TP_FLOAT_FN(Rad2degFn, false, return x * M(180.0 / std::numbers::pi);)

#define TP_FLOAT_IMPL(name, Fn) \
  static Tensor name##_impl(const UnaryCall &c, const Tensor &self) { return float_op<Fn>(c, self); }

// Angle conversions of complex numbers are refused by name in PyTorch (not a generic dtype error).
#define TP_ANGLE_IMPL(name, Fn)                                                                            \
  static Tensor name##_impl(const UnaryCall &c, const Tensor &self) {                                      \
    TP_CHECK(!is_complex(self.dtype()), Runtime, #name " is not supported for complex tensors.");          \
    return float_op<Fn>(c, self);                                                                          \
  }

TP_FLOAT_IMPL(exp, ExpFn)
TP_FLOAT_IMPL(exp2, Exp2Fn)
TP_FLOAT_IMPL(expm1, Expm1Fn)
TP_FLOAT_IMPL(log, LogFn)
TP_FLOAT_IMPL(log2, Log2Fn)
TP_FLOAT_IMPL(log10, Log10Fn)
TP_FLOAT_IMPL(log1p, Log1pFn)
TP_FLOAT_IMPL(sqrt, SqrtFn)
TP_FLOAT_IMPL(rsqrt, RsqrtFn)
TP_FLOAT_IMPL(reciprocal, ReciprocalFn)
TP_FLOAT_IMPL(sin, SinFn)
TP_FLOAT_IMPL(cos, CosFn)
TP_FLOAT_IMPL(tan, TanFn)
TP_FLOAT_IMPL(asin, AsinFn)
TP_FLOAT_IMPL(acos, AcosFn)
TP_FLOAT_IMPL(atan, AtanFn)
TP_FLOAT_IMPL(sinh, SinhFn)
TP_FLOAT_IMPL(cosh, CoshFn)
TP_FLOAT_IMPL(tanh, TanhFn)
TP_FLOAT_IMPL(asinh, AsinhFn)
TP_FLOAT_IMPL(acosh, AcoshFn)
TP_FLOAT_IMPL(atanh, AtanhFn)
TP_FLOAT_IMPL(sigmoid, SigmoidFn)
TP_ANGLE_IMPL(deg2rad, Deg2radFn)
TP_ANGLE_IMPL(rad2deg, Rad2degFn)

// logit(x) = log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps is given (NaN stays NaN).
static Tensor logit_impl(const UnaryCall &c, const Tensor &self, std::optional<double> eps) {
  if (is_complex(self.dtype())) throw_unsupported_dtype(c.op, self.dtype());
  TensorIterator it = unary_iter(c, self, /*int_to_float=*/true);
  TP_DISPATCH_FLOATING(it.common_dtype(), c.op, [&]<typename T>() {
    using M = opmath_t<T>;
    const bool clamp = eps && *eps >= 0;  // PyTorch ignores a negative eps
    const M lo = clamp ? M(*eps) : M(0), hi = clamp ? M(1 - *eps) : M(1);
    cpu_kernel<T>(it, [clamp, lo, hi](T v) -> T {
      M x = M(v);
      if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
      return T(std::log(x / (M(1) - x)));
    });
  });
  return it.finish();
}

TP_UNARY_VARIANTS(exp, , )
TP_UNARY_VARIANTS(exp2, , )
TP_UNARY_VARIANTS(expm1, , )
TP_UNARY_VARIANTS(log, , )
TP_UNARY_VARIANTS(log2, , )
TP_UNARY_VARIANTS(log10, , )
TP_UNARY_VARIANTS(log1p, , )
TP_UNARY_VARIANTS(sqrt, , )
TP_UNARY_VARIANTS(rsqrt, , )
TP_UNARY_VARIANTS(reciprocal, , )
TP_UNARY_VARIANTS(sin, , )
TP_UNARY_VARIANTS(cos, , )
TP_UNARY_VARIANTS(tan, , )
TP_UNARY_VARIANTS(asin, , )
TP_UNARY_VARIANTS(acos, , )
TP_UNARY_VARIANTS(atan, , )
TP_UNARY_VARIANTS(sinh, , )
TP_UNARY_VARIANTS(cosh, , )
TP_UNARY_VARIANTS(tanh, , )
TP_UNARY_VARIANTS(asinh, , )
TP_UNARY_VARIANTS(acosh, , )
TP_UNARY_VARIANTS(atanh, , )
TP_UNARY_VARIANTS(sigmoid, , )
TP_UNARY_VARIANTS(deg2rad, , )
TP_UNARY_VARIANTS(rad2deg, , )
TP_UNARY_VARIANTS(logit, TP_UCOMMA std::optional<double> eps, TP_UCOMMA eps)

TP_LIBRARY(unary_float) {
  TP_DEF_UNARY_VARIANTS(lib, exp, "");
  TP_DEF_UNARY_VARIANTS(lib, exp2, "");
  TP_DEF_UNARY_VARIANTS(lib, expm1, "");
  TP_DEF_UNARY_VARIANTS(lib, log, "");
  TP_DEF_UNARY_VARIANTS(lib, log2, "");
  TP_DEF_UNARY_VARIANTS(lib, log10, "");
  TP_DEF_UNARY_VARIANTS(lib, log1p, "");
  TP_DEF_UNARY_VARIANTS(lib, sqrt, "");
  TP_DEF_UNARY_VARIANTS(lib, rsqrt, "");
  TP_DEF_UNARY_VARIANTS(lib, reciprocal, "");
  TP_DEF_UNARY_VARIANTS(lib, sin, "");
  TP_DEF_UNARY_VARIANTS(lib, cos, "");
  TP_DEF_UNARY_VARIANTS(lib, tan, "");
  TP_DEF_UNARY_VARIANTS(lib, asin, "");
  TP_DEF_UNARY_VARIANTS(lib, acos, "");
  TP_DEF_UNARY_VARIANTS(lib, atan, "");
  TP_DEF_UNARY_VARIANTS(lib, sinh, "");
  TP_DEF_UNARY_VARIANTS(lib, cosh, "");
  TP_DEF_UNARY_VARIANTS(lib, tanh, "");
  TP_DEF_UNARY_VARIANTS(lib, asinh, "");
  TP_DEF_UNARY_VARIANTS(lib, acosh, "");
  TP_DEF_UNARY_VARIANTS(lib, atanh, "");
  TP_DEF_UNARY_VARIANTS(lib, sigmoid, "");
  TP_DEF_UNARY_VARIANTS(lib, deg2rad, "");
  TP_DEF_UNARY_VARIANTS(lib, rad2deg, "");
  TP_DEF_UNARY_VARIANTS(lib, logit, ", float? eps=None");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    TP_IMPL_UNARY_VARIANTS(lib, exp, key);
    TP_IMPL_UNARY_VARIANTS(lib, exp2, key);
    TP_IMPL_UNARY_VARIANTS(lib, expm1, key);
    TP_IMPL_UNARY_VARIANTS(lib, log, key);
    TP_IMPL_UNARY_VARIANTS(lib, log2, key);
    TP_IMPL_UNARY_VARIANTS(lib, log10, key);
    TP_IMPL_UNARY_VARIANTS(lib, log1p, key);
    TP_IMPL_UNARY_VARIANTS(lib, sqrt, key);
    TP_IMPL_UNARY_VARIANTS(lib, rsqrt, key);
    TP_IMPL_UNARY_VARIANTS(lib, reciprocal, key);
    TP_IMPL_UNARY_VARIANTS(lib, sin, key);
    TP_IMPL_UNARY_VARIANTS(lib, cos, key);
    TP_IMPL_UNARY_VARIANTS(lib, tan, key);
    TP_IMPL_UNARY_VARIANTS(lib, asin, key);
    TP_IMPL_UNARY_VARIANTS(lib, acos, key);
    TP_IMPL_UNARY_VARIANTS(lib, atan, key);
    TP_IMPL_UNARY_VARIANTS(lib, sinh, key);
    TP_IMPL_UNARY_VARIANTS(lib, cosh, key);
    TP_IMPL_UNARY_VARIANTS(lib, tanh, key);
    TP_IMPL_UNARY_VARIANTS(lib, asinh, key);
    TP_IMPL_UNARY_VARIANTS(lib, acosh, key);
    TP_IMPL_UNARY_VARIANTS(lib, atanh, key);
    TP_IMPL_UNARY_VARIANTS(lib, sigmoid, key);
    TP_IMPL_UNARY_VARIANTS(lib, deg2rad, key);
    TP_IMPL_UNARY_VARIANTS(lib, rad2deg, key);
    TP_IMPL_UNARY_VARIANTS(lib, logit, key);
  }
}

}  // namespace tp::p10
