// binary_common.h — small pieces the binary-op kernel files share (binary.cpp, binary_special.cpp,
// compare.cpp, logical.cpp, ternary.cpp; add/sub's argument checks also serve cuda/ops_binary.cpp).
//
// Where it sits: between the loop helper (loop/tensor_iterator.h) and the kernel files. It holds what every
// family of two-input ops needs besides its scalar lambda: turning a Scalar argument into a wrapped-number
// tensor (so `2 ** t` promotes exactly like `t ** 2`), the "no integer division by zero" check that must run
// before a parallel loop, and the macro that stamps out an op's three PyTorch forms (name, name_, name.out).
#pragma once
#include <atomic>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// add/sub's argument checks, the same on every backend: alpha must fit the result's dtype, and subtraction
// refuses bool operands, as PyTorch's sub_check: bool - bool points to xor, a bool with anything else (`1 - mask`,
// `x - mask`, Tensor.__rsub__) to `~`, since that is what such code usually means.
inline void check_add_alpha(const char *op, ScalarType common, const Scalar &alpha) {
  TP_CHECK(!(common == ScalarType::Bool && !alpha.is_bool() && alpha.to_double() != 1), Runtime, op,
           ": Boolean alpha only supported for Boolean results.");
  TP_CHECK(!(is_integral(common, true) && alpha.is_floating()), Runtime, op,
           ": For integral input tensors, argument alpha must not be a floating point number.");
}
inline void check_sub_bool(const Tensor &a, const Tensor &b) {
  const bool ba = a.dtype() == ScalarType::Bool, bb = b.dtype() == ScalarType::Bool;
  TP_CHECK(!(ba && bb), Runtime,
           "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
           "operator instead.");
  TP_CHECK(!(ba || bb), Runtime,
           "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.");
}

// A Python-number-like 0-d tensor (Note [Wrapped numbers] in python/py_ops.cpp): promotion ranks it below
// every real tensor. Used by the overloads whose schema takes `Scalar self` or `Scalar other`.
inline Tensor wrapped_scalar(const Scalar &s) {
  Tensor t;
  if (s.is_bool()) {
    t = empty_tensor({}, ScalarType::Bool, Device{});
    *t.data<bool>() = s.i != 0;
  } else if (s.is_integral()) {
    t = empty_tensor({}, ScalarType::Int64, Device{});
    *t.data<int64_t>() = s.i;
  } else if (s.is_floating()) {
    t = empty_tensor({}, ScalarType::Float64, Device{});
    *t.data<double>() = s.d;
  } else {
    t = empty_tensor({}, ScalarType::Complex128, Device{});
    *t.data<complex128>() = s.c;
  }
  t->is_wrapped_number = true;
  return t;
}

// Integer division and remainder by zero raise like PyTorch ("ZeroDivisionError"). The scan runs before the
// arithmetic loop because a kernel must never throw from inside a parallel loop. `divisor` is the iterator
// operand index of the divisor (2 for `a / b`).
template <typename T> void check_no_zero_divisor(const TensorIterator &it, const char *op, int divisor = 2) {
  std::atomic<bool> zero{false};
  it.for_each([&zero, divisor](char **d, const int64_t *s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      if (*reinterpret_cast<const T *>(d[divisor] + i * s[divisor]) == T(0)) zero = true;
  });
  TP_CHECK(!zero, Runtime, "ZeroDivisionError: integer division or modulo by zero in ", op);
}

// The three forms of a binary op, PyTorch's way: `name` (new output), `name_` (in place on self, which keeps
// its shape and dtype) and `name.out` (into a given tensor). `name##_impl(op, self, other, out, inplace)` does
// the work; the op string names the form in error messages.
#define TP_BINARY_FORMS(name)                                                                        \
  static Tensor name(const Tensor &self, const Tensor &other) {                                      \
    return name##_impl(#name, self, other, Tensor(), false);                                         \
  }                                                                                                  \
  static Tensor name##_(const Tensor &self, const Tensor &other) {                                   \
    return name##_impl(#name "_", self, other, self, true);                                          \
  }                                                                                                  \
  static Tensor name##_out(const Tensor &self, const Tensor &other, const Tensor &out) {             \
    return name##_impl(#name ".out", self, other, out, false);                                       \
  }

// Schemas and CPU+Meta kernels for the three forms made by TP_BINARY_FORMS. `other` names the second argument
// as PyTorch does ("other", "exponent").
#define TP_DEF_BINARY_FORMS(lib, name, other)                                                        \
  (lib).def(#name "(Tensor self, Tensor " other ") -> Tensor");                                      \
  (lib).def(#name "_(Tensor(a!) self, Tensor " other ") -> Tensor(a!)");                             \
  (lib).def(#name ".out(Tensor self, Tensor " other ", *, Tensor(a!) out) -> Tensor(a!)");           \
  for (auto key_ : {DispatchKey::CPU, DispatchKey::Meta}) {                                          \
    impl_typed<name>(lib, #name, key_, __LINE__);                                                    \
    impl_typed<name##_>(lib, #name "_", key_, __LINE__);                                             \
    impl_typed<name##_out>(lib, #name ".out", key_, __LINE__);                                       \
  }

}  // namespace tp::p10
