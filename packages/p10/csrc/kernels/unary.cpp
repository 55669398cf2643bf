// unary.cpp — elementwise functions of one tensor: neg, abs, exp, log, sqrt, sin, cos, tanh, sigmoid.
//
// Where it sits: like binary.cpp, each op is a scalar lambda over the loop helper; one kernel serves CPU and
// Meta. Float functions promote integer inputs to the default float dtype (PyTorch's unary-float rule) and
// compute 16-bit floats in float32.
#include <cmath>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

static Tensor neg(const Tensor &self) {
  TP_CHECK(self.dtype() != ScalarType::Bool, Runtime, "Negation, the `-` operator, on a bool tensor is not "
           "supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  TensorIterator it = TensorIterator::unary("neg", Tensor(), self);
  TP_DISPATCH_ALL(it.common_dtype(), "neg", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) cpu_kernel<T>(it, [](T x) -> T { return T(-opmath_t<T>(x)); });
  });
  return it.output();
}

static Tensor abs(const Tensor &self) {
  TP_CHECK(!is_complex(self.dtype()), NotImplemented, "abs: complex inputs are not supported yet");
  TensorIterator it = TensorIterator::unary("abs", Tensor(), self);
  TP_DISPATCH_ALL(it.common_dtype(), "abs", [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) cpu_kernel<T>(it, [](T x) -> T { return x; });
    else if constexpr (std::is_integral_v<T>) cpu_kernel<T>(it, [](T x) -> T { return x < 0 ? T(-x) : x; });
    else if constexpr (!is_complex_dtype<T>) cpu_kernel<T>(it, [](T x) -> T { return T(std::abs(opmath_t<T>(x))); });
  });
  return it.output();
}

// The float functions share one shape: promote ints to float, run fn on opmath values of float dtypes.
#define TP_UNARY_FLOAT_OP(name, expr)                                                               \
  static Tensor name(const Tensor &self) {                                                          \
    TensorIterator it = TensorIterator::unary(#name, Tensor(), self, /*int_to_float=*/true);        \
    TP_DISPATCH_FLOATING(it.common_dtype(), #name, [&]<typename T>() {                              \
      cpu_kernel<T>(it, [](T v) -> T { using M = opmath_t<T>; M x = M(v); return T(expr); });       \
    });                                                                                             \
    return it.output();                                                                             \
  }

TP_UNARY_FLOAT_OP(exp, std::exp(x))
TP_UNARY_FLOAT_OP(log, std::log(x))
TP_UNARY_FLOAT_OP(sqrt, std::sqrt(x))
TP_UNARY_FLOAT_OP(sin, std::sin(x))
TP_UNARY_FLOAT_OP(cos, std::cos(x))
TP_UNARY_FLOAT_OP(tanh, std::tanh(x))
TP_UNARY_FLOAT_OP(sigmoid, M(1) / (M(1) + std::exp(-x)))

TP_LIBRARY(unary) {
  lib.def("neg(Tensor self) -> Tensor");
  lib.def("abs(Tensor self) -> Tensor");
  lib.def("exp(Tensor self) -> Tensor");
  lib.def("log(Tensor self) -> Tensor");
  lib.def("sqrt(Tensor self) -> Tensor");
  lib.def("sin(Tensor self) -> Tensor");
  lib.def("cos(Tensor self) -> Tensor");
  lib.def("tanh(Tensor self) -> Tensor");
  lib.def("sigmoid(Tensor self) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<neg>(lib, "neg", key, __LINE__);
    impl_typed<abs>(lib, "abs", key, __LINE__);
    impl_typed<exp>(lib, "exp", key, __LINE__);
    impl_typed<log>(lib, "log", key, __LINE__);
    impl_typed<sqrt>(lib, "sqrt", key, __LINE__);
    impl_typed<sin>(lib, "sin", key, __LINE__);
    impl_typed<cos>(lib, "cos", key, __LINE__);
    impl_typed<tanh>(lib, "tanh", key, __LINE__);
    impl_typed<sigmoid>(lib, "sigmoid", key, __LINE__);
  }
}

}  // namespace tp::p10
