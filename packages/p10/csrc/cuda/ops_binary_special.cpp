// ops_binary_special.cpp — CUDA kernels for the two-tensor functions beyond add/sub/mul/div and
// compare.cu's: true_divide, floor_divide, remainder (+ remainder.Scalar_Tensor), fmod, float_power (+ its
// Scalar and Tensor_Scalar overloads), atan2, hypot, logaddexp, logaddexp2, fmax, fmin, copysign, nextafter,
// xlogy (+ xlogy.Scalar_Self), each with its in-place and out= forms.
//
// Where it sits: the CUDA twin of kernels/binary.cpp (the division family) and kernels/binary_special.cpp;
// the arithmetic is tensorplay_p10/cuda_kernels/binary_math.cu. Each call asks the CPU op on meta tensors for
// its checks, result dtype (promotion, int -> float for atan2, float64 for float_power) and layout
// (elementwise.h), then launches one kernel. Integer division and remainder by zero raise the CPU op's
// "ZeroDivisionError" after one device scan of the divisor (elementwise.h check_no_zero_divisor).
#include "cuda/elementwise.h"
#include "kernels/binary_common.h"

namespace tp::p10::cuda {

namespace {
// One op of binary_math.cu: `fn` names its kernel family and its functional overload.
Tensor binary_fn(const char *op, const char *fn, const Tensor &self, const Tensor &other, const Tensor &out,
                 bool inplace, bool int_division) {
  const Form f{op, op, fn, inplace ? self : out, inplace};
  const Tensor m = meta_result(f, self, other);
  const Target t = begin(f, m, {self, other});
  const ScalarType ct = m.dtype();
  check_real(op, ct);
  if (int_division && is_integral(ct, false) && t.out.numel() > 0) check_no_zero_divisor(op, other, ct);
  run(op, {"binary_math.cu", fn, ct, ct}, t, {self, other});
  return t.out;
}
}  // namespace

#define TP_CUDA_BINARY_FN(name, int_division)                                                               \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,    \
                            bool inplace) {                                                                 \
    return binary_fn(op, #name, self, other, out, inplace, int_division);                                   \
  }                                                                                                         \
  TP_BINARY_FORMS(name)
TP_CUDA_BINARY_FN(true_divide, false)
TP_CUDA_BINARY_FN(floor_divide, true)
TP_CUDA_BINARY_FN(remainder, true)
TP_CUDA_BINARY_FN(fmod, true)
TP_CUDA_BINARY_FN(float_power, false)
TP_CUDA_BINARY_FN(atan2, false)
TP_CUDA_BINARY_FN(hypot, false)
TP_CUDA_BINARY_FN(logaddexp, false)
TP_CUDA_BINARY_FN(logaddexp2, false)
TP_CUDA_BINARY_FN(fmax, false)
TP_CUDA_BINARY_FN(fmin, false)
TP_CUDA_BINARY_FN(copysign, false)
TP_CUDA_BINARY_FN(nextafter, false)
TP_CUDA_BINARY_FN(xlogy, false)

// The overloads with a Python number: it becomes a wrapped number, promoting as on the CPU.
static Tensor remainder_scalar_tensor(const Scalar &self, const Tensor &other) {
  return remainder_impl("remainder", wrapped_scalar(self), other, Tensor(), false);
}
static Tensor float_power_scalar(const Scalar &self, const Tensor &exponent) {
  return float_power_impl("float_power", wrapped_scalar(self), exponent, Tensor(), false);
}
static Tensor float_power_tensor_scalar(const Tensor &self, const Scalar &exponent) {
  return float_power_impl("float_power", self, wrapped_scalar(exponent), Tensor(), false);
}
static Tensor xlogy_scalar_self(const Scalar &self, const Tensor &other) {
  return xlogy_impl("xlogy", wrapped_scalar(self), other, Tensor(), false);
}

TP_LIBRARY(cuda_binary_special) {
#define TP_IMPL_FORMS(name)                                                                                 \
  TP_IMPL(lib, #name, CUDA, name);                                                                          \
  TP_IMPL(lib, #name "_", CUDA, name##_);                                                                   \
  TP_IMPL(lib, #name ".out", CUDA, name##_out);
  TP_IMPL_FORMS(true_divide)
  TP_IMPL_FORMS(floor_divide)
  TP_IMPL_FORMS(remainder)
  TP_IMPL_FORMS(fmod)
  TP_IMPL_FORMS(float_power)
  TP_IMPL_FORMS(atan2)
  TP_IMPL_FORMS(hypot)
  TP_IMPL_FORMS(logaddexp)
  TP_IMPL_FORMS(logaddexp2)
  TP_IMPL_FORMS(fmax)
  TP_IMPL_FORMS(fmin)
  TP_IMPL_FORMS(copysign)
  TP_IMPL_FORMS(nextafter)
  TP_IMPL_FORMS(xlogy)
#undef TP_IMPL_FORMS
  TP_IMPL(lib, "remainder.Scalar_Tensor", CUDA, remainder_scalar_tensor);
  TP_IMPL(lib, "float_power.Scalar", CUDA, float_power_scalar);
  TP_IMPL(lib, "float_power.Tensor_Scalar", CUDA, float_power_tensor_scalar);
  TP_IMPL(lib, "xlogy.Scalar_Self", CUDA, xlogy_scalar_self);
}

}  // namespace tp::p10::cuda
