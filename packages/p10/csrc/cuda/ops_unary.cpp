// ops_unary.cpp — CUDA kernels for the elementwise functions of one tensor: erf, abs, neg, sign, floor, ceil,
// round, trunc, the activations relu, leaky_relu, elu, gelu, silu, softplus, clamp/clip, and
// threshold_backward, silu_backward, gelu_backward. (The float family — exp, log, sin, … — is
// ops_unary_float.cpp's.)
//
// Where it sits: the CUDA twin of kernels/unary*.cpp, kernels/activation*.cpp and clamp in kernels/ternary.cpp;
// the arithmetic is tensorplay_p10/cuda_kernels/unary.cu. Each call first asks the CPU op on meta tensors
// (cuda/ops_meta.h) for its checks, result dtype and layout, so the rules (int -> float for erf, bool refused
// by relu, out= casting) are the CPU's own. Then: the input is cast to the result dtype, the kernel runs in its
// contig form (result and input contiguous) or strided form (Note [Kernel geometry]), and an out= of another
// dtype gets a cast copy. Each op has PyTorch's three forms (name, name_, name.out: kernels/unary.h).
// clamp with tensor bounds is maximum then minimum (ops_compare.cpp), the same values as the CPU's clamp_value.
#include <array>
#include <cmath>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "kernels/unary.h"

namespace tp::p10::cuda {

namespace {
// The numbers an op passes to its kernel (p0..p2). `through_t`: cast to the result dtype first, then to the
// arithmetic type, as the CPU's clamp does with its bounds; otherwise (activation parameters) double -> A.
struct Params {
  std::array<Scalar, 3> p{Scalar(0.0), Scalar(0.0), Scalar(0.0)};
  bool through_t = false;
};

template <typename T> opmath_t<T> param(const Scalar &s, bool through_t) {
  using A = opmath_t<T>;
  if (!through_t) return A(s.to_double());
  return s.is_floating() ? A(cast_value<T>(s.d)) : A(cast_value<T>(s.i));
}

// The CPU op's answer for this call, on meta copies: the called form's checks run, and the functional form's
// result (dtype and layout) comes back.
template <typename... Extra>
Tensor ask_meta(const UnaryCall &c, const char *functional, const Tensor &self, const Extra &...extra) {
  const Tensor ms = meta_like(self);
  if (c.inplace) call_op<Tensor>(require_op(c.op), ms, extra...);
  else if (c.out.defined()) call_op<Tensor>(require_op(c.op), ms, extra..., meta_like(c.out));
  return call_op<Tensor>(require_op(functional), ms, extra...);
}

// Run unary.cu's family `fn` (empty: the identity, a copy) on self; `meta` is ask_meta's answer.
Tensor unary(const UnaryCall &c, const Tensor &self, const Tensor &meta, const std::string &fn, const Params &p) {
  const int dev = common_device(c.op, {self, c.out}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType ct = meta.dtype();
  check_real(c.op, ct);
  Tensor out = result_tensor(c.op, c.inplace ? self : c.out, meta, device);
  if (out.numel() == 0) return out;
  Tensor res = out.dtype() == ct ? out : empty_tensor(out.sizes(), ct, device);
  const Tensor x = self.dtype() == ct ? self : contiguous_as(self, ct);
  if (fn.empty()) {
    if (res.impl() != x.impl()) device_copy(res, x);
  } else {
    const Stream stream = stream_for(dev);
    const int64_t n = res.numel();
    TP_DISPATCH_REAL(ct, c.op, [&]<typename T>() {
      const auto p0 = param<T>(p.p[0], p.through_t), p1 = param<T>(p.p[1], p.through_t),
                 p2 = param<T>(p.p[2], p.through_t);
      if (res.is_contiguous() && x.is_contiguous() && x.sizes() == res.sizes()) {
        launch(kernel(dev, "unary.cu", kname((fn + "_contig").c_str(), ct)), elementwise_config(dev, n, 4), stream,
               n, res.data_ptr(), x.data_ptr(), p0, p1, p2);
      } else {
        const KernelGeometry g = make_geometry(res.sizes(), {&res, &x}, c.op);
        launch(kernel(dev, "unary.cu", kname((fn + "_strided").c_str(), ct)), elementwise_config(dev, n), stream,
               n, g, res.data_ptr(), x.data_ptr(), p0, p1, p2);
      }
    });
  }
  if (res.impl() != out.impl()) device_copy(out, res);
  return out;
}

Params numbers(double a, double b = 0, double c = 0) { return Params{{Scalar(a), Scalar(b), Scalar(c)}, false}; }
}  // namespace

// ---- erf (integers and bool compute in the default float dtype, the CPU's rule) and abs, neg, relu --------
#define TP_CUDA_UNARY(name)                                                                                 \
  static Tensor name##_impl(const UnaryCall &c, const Tensor &self) {                                      \
    return unary(c, self, ask_meta(c, #name, self), #name, {});                                             \
  }                                                                                                         \
  TP_UNARY_VARIANTS(name, , )
TP_CUDA_UNARY(erf)
TP_CUDA_UNARY(abs)
TP_CUDA_UNARY(neg)
TP_CUDA_UNARY(relu)

// sign of a bool is itself.
static Tensor sign_impl(const UnaryCall &c, const Tensor &self) {
  return unary(c, self, ask_meta(c, "sign", self), self.dtype() == ScalarType::Bool ? "" : "sign", {});
}
TP_UNARY_VARIANTS(sign, , )

// Integers are already whole: floor, ceil, trunc and round copy them.
#define TP_CUDA_ROUNDING(name)                                                                              \
  static Tensor name##_impl(const UnaryCall &c, const Tensor &self) {                                      \
    const Tensor m = ask_meta(c, #name, self);                                                              \
    return unary(c, self, m, is_floating(m.dtype()) ? #name : "", {});                                     \
  }                                                                                                         \
  TP_UNARY_VARIANTS(name, , )
TP_CUDA_ROUNDING(floor)
TP_CUDA_ROUNDING(ceil)
TP_CUDA_ROUNDING(trunc)

// decimals = d: rint(x 10^d) / 10^d, or rint(x / 10^-d) 10^-d for d < 0 (Note [round half to even]).
static Tensor round_impl(const UnaryCall &c, const Tensor &self, int64_t decimals) {
  const Tensor m = ask_meta(c, "round", self, decimals);
  if (!is_floating(m.dtype())) return unary(c, self, m, "", {});
  if (decimals == 0) return unary(c, self, m, "round", {});
  const double scale = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  return unary(c, self, m, "round_decimals", numbers(scale, decimals < 0 ? 1.0 : 0.0));
}
TP_UNARY_VARIANTS(round, TP_UCOMMA int64_t decimals, TP_UCOMMA decimals)

// ---- activations -------------------------------------------------------------------------------------------
static Tensor leaky_relu_impl(const UnaryCall &c, const Tensor &self, const Scalar &negative_slope) {
  return unary(c, self, ask_meta(c, "leaky_relu", self, negative_slope), "leaky_relu",
               numbers(negative_slope.to_double()));
}
TP_UNARY_VARIANTS(leaky_relu, TP_UCOMMA const Scalar &negative_slope, TP_UCOMMA negative_slope)

static Tensor elu_impl(const UnaryCall &c, const Tensor &self, const Scalar &alpha, const Scalar &scale,
                       const Scalar &input_scale) {
  const Tensor m = ask_meta(c, "elu", self, alpha, scale, input_scale);
  return unary(c, self, m, "elu",
               numbers(alpha.to_double() * scale.to_double(), scale.to_double(), input_scale.to_double()));
}
TP_UNARY_VARIANTS(elu, TP_UCOMMA const Scalar &alpha TP_UCOMMA const Scalar &scale TP_UCOMMA const Scalar &input_scale,
                  TP_UCOMMA alpha TP_UCOMMA scale TP_UCOMMA input_scale)

static Tensor gelu_impl(const UnaryCall &c, const Tensor &self, const std::string &approximate) {
  const Tensor m = ask_meta(c, "gelu", self, approximate);  // checks approximate is 'none' or 'tanh'
  return unary(c, self, m, approximate == "tanh" ? "gelu_tanh" : "gelu", {});
}
TP_UNARY_VARIANTS(gelu, TP_UCOMMA const std::string &approximate, TP_UCOMMA approximate)

TP_CUDA_UNARY(silu)

// PyTorch has no softplus_: the functional and out= forms only.
static Tensor softplus_impl(const UnaryCall &c, const Tensor &self, const Scalar &beta, const Scalar &threshold) {
  return unary(c, self, ask_meta(c, "softplus", self, beta, threshold), "softplus",
               numbers(beta.to_double(), threshold.to_double()));
}
static Tensor softplus(const Tensor &self, const Scalar &beta, const Scalar &threshold) {
  return softplus_impl({"softplus", Tensor(), false}, self, beta, threshold);
}
static Tensor softplus_out(const Tensor &self, const Scalar &beta, const Scalar &threshold, const Tensor &out) {
  return softplus_impl({"softplus.out", out, false}, self, beta, threshold);
}

// ---- clamp / clip ------------------------------------------------------------------------------------------
// Number bounds: one pass of unary.cu's clamp (both bounds), clamp_min or clamp_max, bounds cast to the result
// dtype first as on the CPU. `name` is "clamp" or "clip" (the op the user called, for messages).
static Tensor clamp_scalar(const UnaryCall &c, const char *name, const Tensor &self,
                           const std::optional<Scalar> &min, const std::optional<Scalar> &max) {
  const Tensor m = ask_meta(c, name, self, min, max);  // "At least one of 'min' or 'max' must not be None"
  Params p{{min.value_or(Scalar(0.0)), max.value_or(Scalar(0.0)), Scalar(0.0)}, true};
  return unary(c, self, m, min && max ? "clamp" : (min ? "clamp_min" : "clamp_max"), p);
}

// Tensor bounds: maximum(x, min) then minimum(·, max) in the result dtype; NaN in x or a bound gives NaN and
// min > max gives max, as the CPU's clamp_value.
static Tensor clamp_tensor(const UnaryCall &c, const char *name, const Tensor &self,
                           const std::optional<Tensor> &min, const std::optional<Tensor> &max) {
  const Tensor ms = meta_like(self);
  const auto mmin = meta_like(min), mmax = meta_like(max);
  if (c.inplace) call_op<Tensor>(require_op(c.op), ms, mmin, mmax);
  else if (c.out.defined()) call_op<Tensor>(require_op(c.op), ms, mmin, mmax, meta_like(c.out));
  const Tensor m = call_op<Tensor>(require_op(str_cat(name, ".Tensor").c_str()), ms, mmin, mmax);
  const int dev = common_device(c.op, {self, c.out, min.value_or(Tensor()), max.value_or(Tensor())}, true);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  check_real(c.op, m.dtype());
  Tensor r = self.dtype() == m.dtype() ? self : contiguous_as(self, m.dtype());
  if (min && min->defined()) r = call_op<Tensor>(TP_OP("maximum"), r, *min);
  if (max && max->defined()) r = call_op<Tensor>(TP_OP("minimum"), r, *max);
  Tensor out = result_tensor(c.op, c.inplace ? self : c.out, m, device);
  if (out.numel() > 0) device_copy(out, r);
  return out;
}

#define TP_CUDA_CLAMP(name)                                                                                 \
  static Tensor name(const Tensor &self, const std::optional<Scalar> &min, const std::optional<Scalar> &max) { \
    return clamp_scalar({#name, Tensor(), false}, #name, self, min, max);                                   \
  }                                                                                                         \
  static Tensor name##_(const Tensor &self, const std::optional<Scalar> &min, const std::optional<Scalar> &max) { \
    return clamp_scalar({#name "_", self, true}, #name, self, min, max);                                    \
  }                                                                                                         \
  static Tensor name##_out(const Tensor &self, const std::optional<Scalar> &min, const std::optional<Scalar> &max, \
                           const Tensor &out) {                                                             \
    return clamp_scalar({#name ".out", out, false}, #name, self, min, max);                                 \
  }                                                                                                         \
  static Tensor name##_t(const Tensor &self, const std::optional<Tensor> &min, const std::optional<Tensor> &max) { \
    return clamp_tensor({#name ".Tensor", Tensor(), false}, #name, self, min, max);                         \
  }                                                                                                         \
  static Tensor name##_t_(const Tensor &self, const std::optional<Tensor> &min, const std::optional<Tensor> &max) { \
    return clamp_tensor({#name "_.Tensor", self, true}, #name, self, min, max);                             \
  }                                                                                                         \
  static Tensor name##_t_out(const Tensor &self, const std::optional<Tensor> &min,                          \
                             const std::optional<Tensor> &max, const Tensor &out) {                         \
    return clamp_tensor({#name ".Tensor_out", out, false}, #name, self, min, max);                          \
  }
TP_CUDA_CLAMP(clamp)
TP_CUDA_CLAMP(clip)

// ---- backward ops: grad * f'(x), grad and x broadcast together (the CPU's binary iterator) ---------------
static Tensor grad_op(const char *op, const std::string &fn, const Tensor &grad, const Tensor &self,
                      const Tensor &meta, double p0) {
  const int dev = common_device(op, {grad, self}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType ct = meta.dtype();
  Tensor res = empty_as_meta(meta, device);
  if (res.numel() == 0) return res;
  const Tensor g = grad.dtype() == ct ? grad : contiguous_as(grad, ct);
  const Tensor x = self.dtype() == ct ? self : contiguous_as(self, ct);
  const Stream stream = stream_for(dev);
  const int64_t n = res.numel();
  TP_DISPATCH_FLOATING(ct, op, [&]<typename T>() {
    using A = opmath_t<T>;
    if (res.is_contiguous() && g.is_contiguous() && x.is_contiguous() && g.sizes() == res.sizes() &&
        x.sizes() == res.sizes()) {
      launch(kernel(dev, "unary.cu", kname((fn + "_contig").c_str(), ct)), elementwise_config(dev, n), stream, n,
             res.data_ptr(), g.data_ptr(), x.data_ptr(), A(p0));
    } else {
      const KernelGeometry geo = make_geometry(res.sizes(), {&res, &g, &x}, op);
      launch(kernel(dev, "unary.cu", kname((fn + "_strided").c_str(), ct)), elementwise_config(dev, n), stream,
             n, geo, res.data_ptr(), g.data_ptr(), x.data_ptr(), A(p0));
    }
  });
  return res;
}

static Tensor threshold_backward(const Tensor &grad, const Tensor &self, const Scalar &threshold) {
  const Tensor m = call_op<Tensor>(TP_OP("threshold_backward"), meta_like(grad), meta_like(self), threshold);
  return grad_op("threshold_backward", "threshold_backward", grad, self, m, threshold.to_double());
}
static Tensor silu_backward(const Tensor &grad, const Tensor &self) {
  const Tensor m = call_op<Tensor>(TP_OP("silu_backward"), meta_like(grad), meta_like(self));
  return grad_op("silu_backward", "silu_backward", grad, self, m, 0.0);
}
static Tensor gelu_backward(const Tensor &grad, const Tensor &self, const std::string &approximate) {
  const Tensor m = call_op<Tensor>(TP_OP("gelu_backward"), meta_like(grad), meta_like(self), approximate);
  return grad_op("gelu_backward", approximate == "tanh" ? "gelu_tanh_backward" : "gelu_backward", grad, self, m,
                 0.0);
}

TP_LIBRARY(cuda_unary) {
  const DispatchKey key = DispatchKey::CUDA;
  TP_IMPL_UNARY_VARIANTS(lib, erf, key);
  TP_IMPL_UNARY_VARIANTS(lib, abs, key);
  TP_IMPL_UNARY_VARIANTS(lib, neg, key);
  TP_IMPL_UNARY_VARIANTS(lib, sign, key);
  TP_IMPL_UNARY_VARIANTS(lib, floor, key);
  TP_IMPL_UNARY_VARIANTS(lib, ceil, key);
  TP_IMPL_UNARY_VARIANTS(lib, trunc, key);
  TP_IMPL_UNARY_VARIANTS(lib, round, key);
  TP_IMPL_UNARY_VARIANTS(lib, relu, key);
  TP_IMPL_UNARY_VARIANTS(lib, leaky_relu, key);
  TP_IMPL_UNARY_VARIANTS(lib, elu, key);
  TP_IMPL_UNARY_VARIANTS(lib, gelu, key);
  TP_IMPL_UNARY_VARIANTS(lib, silu, key);
  TP_IMPL(lib, "softplus", CUDA, softplus);
  TP_IMPL(lib, "softplus.out", CUDA, softplus_out);
#define TP_IMPL_CLAMP(name)                                                                                 \
  TP_IMPL(lib, #name, CUDA, name);                                                                          \
  TP_IMPL(lib, #name "_", CUDA, name##_);                                                                   \
  TP_IMPL(lib, #name ".out", CUDA, name##_out);                                                             \
  TP_IMPL(lib, #name ".Tensor", CUDA, name##_t);                                                            \
  TP_IMPL(lib, #name "_.Tensor", CUDA, name##_t_);                                                          \
  TP_IMPL(lib, #name ".Tensor_out", CUDA, name##_t_out);
  TP_IMPL_CLAMP(clamp)
  TP_IMPL_CLAMP(clip)
  TP_IMPL(lib, "threshold_backward", CUDA, threshold_backward);
  TP_IMPL(lib, "silu_backward", CUDA, silu_backward);
  TP_IMPL(lib, "gelu_backward", CUDA, gelu_backward);
}

}  // namespace tp::p10::cuda
