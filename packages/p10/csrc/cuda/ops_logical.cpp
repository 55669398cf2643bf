// ops_logical.cpp — CUDA kernels for logical_and/or/xor/not, bitwise_and/or/xor/not and
// bitwise_left_shift/right_shift (+ their Scalar_Tensor overloads), each with its in-place and out= forms.
//
// Where it sits: the CUDA twin of kernels/logical.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// logical.cu. Each call asks the CPU op on meta tensors for its checks (bitwise ops refuse floats, shifts
// refuse bool), result dtype and layout (elementwise.h). The logical ops compute in the operands' common
// dtype and store bool; an in-place or out= result of another dtype gets the 0/1 values cast.
#include "cuda/elementwise.h"
#include "kernels/binary_common.h"
#include "loop/tensor_iterator.h"

namespace tp::p10::cuda {

namespace {
constexpr const char *kModule = "logical.cu";

Tensor logical_fn(const char *op, const char *fn, const Tensor &self, const Tensor &other, const Tensor &out,
                  bool inplace) {
  const Form f{op, op, fn, inplace ? self : out, inplace};
  const Tensor m = meta_result(f, self, other);
  const Target t = begin(f, m, {self, other});
  run(op, {kModule, fn, result_type({self, other}), ScalarType::Bool}, t, {self, other});
  return t.out;
}

// bitwise ops and shifts: computed and stored in the result's dtype.
Tensor bitwise_fn(const char *op, const char *fn, const Tensor &self, const Tensor &other, const Tensor &out,
                  bool inplace) {
  const Form f{op, op, fn, inplace ? self : out, inplace};
  const Tensor m = meta_result(f, self, other);
  const Target t = begin(f, m, {self, other});
  run(op, {kModule, fn, m.dtype(), m.dtype()}, t, {self, other});
  return t.out;
}

// One-input forms: logical_not (bool result from self's dtype), bitwise_not (self's dtype).
Tensor not_fn(const char *op, const char *fn, const Tensor &self, const Tensor &out, bool inplace, bool logical) {
  const Form f{op, op, fn, inplace ? self : out, inplace};
  const Tensor m = meta_result(f, self);
  const Target t = begin(f, m, {self});
  const ScalarType ct = logical ? self.dtype() : m.dtype();
  run(op, {kModule, fn, ct, logical ? ScalarType::Bool : ct}, t, {self});
  return t.out;
}
}  // namespace

#define TP_CUDA_LOGICAL(name, impl)                                                                         \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,    \
                            bool inplace) {                                                                 \
    return impl(op, #name, self, other, out, inplace);                                                      \
  }                                                                                                         \
  TP_BINARY_FORMS(name)
TP_CUDA_LOGICAL(logical_and, logical_fn)
TP_CUDA_LOGICAL(logical_or, logical_fn)
TP_CUDA_LOGICAL(logical_xor, logical_fn)
TP_CUDA_LOGICAL(bitwise_and, bitwise_fn)
TP_CUDA_LOGICAL(bitwise_or, bitwise_fn)
TP_CUDA_LOGICAL(bitwise_xor, bitwise_fn)
TP_CUDA_LOGICAL(bitwise_left_shift, bitwise_fn)
TP_CUDA_LOGICAL(bitwise_right_shift, bitwise_fn)

static Tensor bitwise_left_shift_scalar_tensor(const Scalar &self, const Tensor &other) {
  return bitwise_left_shift_impl("bitwise_left_shift", wrapped_scalar(self), other, Tensor(), false);
}
static Tensor bitwise_right_shift_scalar_tensor(const Scalar &self, const Tensor &other) {
  return bitwise_right_shift_impl("bitwise_right_shift", wrapped_scalar(self), other, Tensor(), false);
}

#define TP_CUDA_NOT(name, logical)                                                                          \
  static Tensor name(const Tensor &self) { return not_fn(#name, #name, self, Tensor(), false, logical); }  \
  static Tensor name##_(const Tensor &self) { return not_fn(#name "_", #name, self, self, true, logical); } \
  static Tensor name##_out(const Tensor &self, const Tensor &out) {                                        \
    return not_fn(#name ".out", #name, self, out, false, logical);                                          \
  }
TP_CUDA_NOT(logical_not, true)
TP_CUDA_NOT(bitwise_not, false)

TP_LIBRARY(cuda_logical) {
#define TP_IMPL_FORMS(name)                                                                                 \
  TP_IMPL(lib, #name, CUDA, name);                                                                          \
  TP_IMPL(lib, #name "_", CUDA, name##_);                                                                   \
  TP_IMPL(lib, #name ".out", CUDA, name##_out);
  TP_IMPL_FORMS(logical_and)
  TP_IMPL_FORMS(logical_or)
  TP_IMPL_FORMS(logical_xor)
  TP_IMPL_FORMS(logical_not)
  TP_IMPL_FORMS(bitwise_and)
  TP_IMPL_FORMS(bitwise_or)
  TP_IMPL_FORMS(bitwise_xor)
  TP_IMPL_FORMS(bitwise_not)
  TP_IMPL_FORMS(bitwise_left_shift)
  TP_IMPL_FORMS(bitwise_right_shift)
#undef TP_IMPL_FORMS
  TP_IMPL(lib, "bitwise_left_shift.Scalar_Tensor", CUDA, bitwise_left_shift_scalar_tensor);
  TP_IMPL(lib, "bitwise_right_shift.Scalar_Tensor", CUDA, bitwise_right_shift_scalar_tensor);
}

}  // namespace tp::p10::cuda
