// ops_activation.cpp — CUDA kernels for the activations beyond ops_unary.cpp's: mish, threshold, hardtanh,
// hardsigmoid, hardswish (name, name_, name.out), softshrink, hardshrink, log_sigmoid (name, name.out),
// heaviside (three forms); and leaky_relu_backward, elu_backward, mish_backward, softplus_backward,
// hardtanh_backward.
//
// Where it sits: the CUDA twin of kernels/activation.cpp and activation_backward.cpp; the arithmetic is
// tensorplay_p10/cuda_kernels/activation.cu. Each call asks the CPU op on meta tensors for its checks (bool
// refused by threshold, lambd >= 0, the slope rule of leaky_relu_backward), result dtype and layout
// (elementwise.h), then launches one kernel.
#include "cuda/elementwise.h"
#include "kernels/unary.h"

namespace tp::p10::cuda {

namespace {
constexpr const char *kModule = "activation.cu";

// One input: the family `fn`, computed in the meta result's dtype.
template <typename... Extra>
Tensor act1(const UnaryCall &c, const char *name, const Tensor &self, std::array<double, 3> p,
            const Extra &...extra) {
  const Form f{c.op, c.op, name, c.inplace ? self : c.out, c.inplace};
  const Tensor m = meta_result(f, self, extra...);
  const Target t = begin(f, m, {self});
  run(c.op, {kModule, name, m.dtype(), m.dtype(), p}, t, {self});
  return t.out;
}

// A backward op grad * f'(x): its only form is the functional one.
template <typename... Extra>
Tensor act_backward(const char *op, const std::string &fn, const Tensor &grad, const Tensor &x,
                    std::array<double, 3> p, const Extra &...args) {
  const Form f{op, op, op, Tensor(), false};
  const Tensor m = meta_result(f, args...);
  const Target t = begin(f, m, {grad, x});
  run(op, {kModule, fn, m.dtype(), m.dtype(), p}, t, {grad, x});
  return t.out;
}
}  // namespace

static Tensor mish_impl(const UnaryCall &c, const Tensor &self) { return act1(c, "mish", self, {}); }
static Tensor hardsigmoid_impl(const UnaryCall &c, const Tensor &self) { return act1(c, "hardsigmoid", self, {}); }
static Tensor hardswish_impl(const UnaryCall &c, const Tensor &self) { return act1(c, "hardswish", self, {}); }
static Tensor log_sigmoid_impl(const UnaryCall &c, const Tensor &self) { return act1(c, "log_sigmoid", self, {}); }
static Tensor threshold_impl(const UnaryCall &c, const Tensor &self, const Scalar &threshold, const Scalar &value) {
  return act1(c, "threshold", self, {threshold.to_double(), value.to_double(), 0.0}, threshold, value);
}
static Tensor hardtanh_impl(const UnaryCall &c, const Tensor &self, const Scalar &min_val, const Scalar &max_val) {
  return act1(c, "hardtanh", self, {min_val.to_double(), max_val.to_double(), 0.0}, min_val, max_val);
}
static Tensor softshrink_impl(const UnaryCall &c, const Tensor &self, const Scalar &lambd) {
  return act1(c, "softshrink", self, {lambd.to_double(), 0.0, 0.0}, lambd);
}
static Tensor hardshrink_impl(const UnaryCall &c, const Tensor &self, const Scalar &lambd) {
  return act1(c, "hardshrink", self, {lambd.to_double(), 0.0, 0.0}, lambd);
}

TP_UNARY_VARIANTS(mish, , )
TP_UNARY_VARIANTS(hardsigmoid, , )
TP_UNARY_VARIANTS(hardswish, , )
TP_UNARY_VARIANTS(threshold, TP_UCOMMA const Scalar &threshold TP_UCOMMA const Scalar &value,
                  TP_UCOMMA threshold TP_UCOMMA value)
TP_UNARY_VARIANTS(hardtanh, TP_UCOMMA const Scalar &min_val TP_UCOMMA const Scalar &max_val,
                  TP_UCOMMA min_val TP_UCOMMA max_val)
// PyTorch has no in-place softshrink, hardshrink or log_sigmoid: the functional and out= forms only.
#define TP_CUDA_UNARY_AND_OUT(name, PARAMS, ARGS)                                                            \
  static Tensor name(const Tensor &self PARAMS) { return name##_impl({#name, Tensor(), false}, self ARGS); } \
  static Tensor name##_out(const Tensor &self PARAMS, const Tensor &out) {                                   \
    return name##_impl({#name ".out", out, false}, self ARGS);                                               \
  }
TP_CUDA_UNARY_AND_OUT(softshrink, TP_UCOMMA const Scalar &lambd, TP_UCOMMA lambd)
TP_CUDA_UNARY_AND_OUT(hardshrink, TP_UCOMMA const Scalar &lambd, TP_UCOMMA lambd)
TP_CUDA_UNARY_AND_OUT(log_sigmoid, , )

// heaviside(self, values): one dtype for both (the CPU op checks), every real dtype and bool.
static Tensor heaviside_impl(const char *op, const Tensor &self, const Tensor &values, const Tensor &out,
                             bool inplace) {
  const Form f{op, op, "heaviside", inplace ? self : out, inplace};
  const Tensor m = meta_result(f, self, values);
  const Target t = begin(f, m, {self, values});
  run(op, {kModule, "heaviside", m.dtype(), m.dtype()}, t, {self, values});
  return t.out;
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

// ---- backward ops ------------------------------------------------------------------------------------------
static Tensor leaky_relu_backward(const Tensor &grad, const Tensor &self, const Scalar &negative_slope,
                                  bool self_is_result) {
  return act_backward("leaky_relu_backward", "leaky_relu_backward", grad, self,
                      {negative_slope.to_double(), 0.0, 0.0}, grad, self, negative_slope, self_is_result);
}
static Tensor elu_backward(const Tensor &grad, const Scalar &alpha, const Scalar &scale, const Scalar &input_scale,
                           bool is_result, const Tensor &self_or_result) {
  const double neg = alpha.to_double() * scale.to_double();
  return act_backward("elu_backward", is_result ? "elu_backward_result" : "elu_backward", grad, self_or_result,
                      {neg, scale.to_double(), input_scale.to_double()}, grad, alpha, scale, input_scale, is_result,
                      self_or_result);
}
static Tensor mish_backward(const Tensor &grad, const Tensor &self) {
  return act_backward("mish_backward", "mish_backward", grad, self, {}, grad, self);
}
static Tensor softplus_backward(const Tensor &grad, const Tensor &self, const Scalar &beta, const Scalar &threshold) {
  return act_backward("softplus_backward", "softplus_backward", grad, self,
                      {beta.to_double(), threshold.to_double(), 0.0}, grad, self, beta, threshold);
}
static Tensor hardtanh_backward(const Tensor &grad, const Tensor &self, const Scalar &min_val, const Scalar &max_val) {
  return act_backward("hardtanh_backward", "hardtanh_backward", grad, self,
                      {min_val.to_double(), max_val.to_double(), 0.0}, grad, self, min_val, max_val);
}

TP_LIBRARY(cuda_activation) {
  const DispatchKey key = DispatchKey::CUDA;
  TP_IMPL_UNARY_VARIANTS(lib, mish, key);
  TP_IMPL_UNARY_VARIANTS(lib, threshold, key);
  TP_IMPL_UNARY_VARIANTS(lib, hardtanh, key);
  TP_IMPL_UNARY_VARIANTS(lib, hardsigmoid, key);
  TP_IMPL_UNARY_VARIANTS(lib, hardswish, key);
  TP_IMPL(lib, "softshrink", CUDA, softshrink);
  TP_IMPL(lib, "softshrink.out", CUDA, softshrink_out);
  TP_IMPL(lib, "hardshrink", CUDA, hardshrink);
  TP_IMPL(lib, "hardshrink.out", CUDA, hardshrink_out);
  TP_IMPL(lib, "log_sigmoid", CUDA, log_sigmoid);
  TP_IMPL(lib, "log_sigmoid.out", CUDA, log_sigmoid_out);
  TP_IMPL(lib, "heaviside", CUDA, heaviside);
  TP_IMPL(lib, "heaviside_", CUDA, heaviside_);
  TP_IMPL(lib, "heaviside.out", CUDA, heaviside_out);
  TP_IMPL(lib, "leaky_relu_backward", CUDA, leaky_relu_backward);
  TP_IMPL(lib, "elu_backward", CUDA, elu_backward);
  TP_IMPL(lib, "mish_backward", CUDA, mish_backward);
  TP_IMPL(lib, "softplus_backward", CUDA, softplus_backward);
  TP_IMPL(lib, "hardtanh_backward", CUDA, hardtanh_backward);
}

}  // namespace tp::p10::cuda
