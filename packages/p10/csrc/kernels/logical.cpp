// logical.cpp — truth-value and bit operations: logical_and/or/xor/not (bool results from any dtype),
// bitwise_and/or/xor/not (bool and integer tensors), bitwise_left_shift and bitwise_right_shift (integers).
//
// Where it sits: scalar lambdas over the loop helper (loop/tensor_iterator.h), one kernel for CPU and Meta,
// each op in PyTorch's forms (name, name_, name.out; see kernels/binary_common.h). The Python operators
// `& | ^ ~ << >>` call the bitwise ops (src/tensorplay_p10/_tensor.py).
#include "kernels/binary_common.h"
#include "kernels/cast.h"

namespace tp::p10 {

// A value's truth: nonzero (for complex, either part nonzero).
template <typename T> static bool truth(T v) {
  if constexpr (is_complex_dtype<T>) return v != T(0);
  else return opmath_t<T>(v) != opmath_t<T>(0);
}

// ---- logical_* ----------------------------------------------------------------------------------------------
// Computed in the inputs' common dtype; the result is bool, or 0/1 in self's dtype for the in-place forms.
template <typename Fn>
static Tensor logical(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace, Fn fn) {
  TensorIterator it({.op = op, .out_dtype = ScalarType::Bool, .resize_out = !inplace}, out, {self, other});
  TP_DISPATCH_ALL(it.common_dtype(), op, [&]<typename T>() {
    cpu_kernel2<T>(it, [fn](T a, T b) -> bool { return fn(truth(a), truth(b)); });
  });
  return it.finish();
}

#define TP_LOGICAL(name, expr)                                                                                  \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,       \
                            bool inplace) {                                                                   \
    return logical(op, self, other, out, inplace, [](bool a, bool b) { return expr; });                       \
  }                                                                                                           \
  TP_BINARY_FORMS(name)
TP_LOGICAL(logical_and, a && b)
TP_LOGICAL(logical_or, a || b)
TP_LOGICAL(logical_xor, a != b)

static Tensor logical_not_impl(const char *op, const Tensor &self, const Tensor &out, bool inplace) {
  TensorIterator it({.op = op, .out_dtype = ScalarType::Bool, .resize_out = !inplace}, out, {self});
  TP_DISPATCH_ALL(it.common_dtype(), op,
                  [&]<typename T>() { cpu_kernel<T>(it, [](T a) -> bool { return !truth(a); }); });
  return it.finish();
}
static Tensor logical_not(const Tensor &self) { return logical_not_impl("logical_not", self, Tensor(), false); }
static Tensor logical_not_(const Tensor &self) { return logical_not_impl("logical_not_", self, self, true); }
static Tensor logical_not_out(const Tensor &self, const Tensor &out) {
  return logical_not_impl("logical_not.out", self, out, false);
}

// ---- bitwise_* ----------------------------------------------------------------------------------------------
// Bool and integer dtypes only; a float or complex common dtype is a dtype error naming the op.
template <typename Fn>
static Tensor bitwise(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace, Fn fn) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  ScalarType ct = it.common_dtype();
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) cpu_kernel2<T>(it, [fn](T a, T b) -> T { return T(fn(a, b)); });
    else throw_unsupported_dtype(op, ct);
  });
  return it.finish();
}

#define TP_BITWISE(name, expr)                                                                                  \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,       \
                            bool inplace) {                                                                   \
    return bitwise(op, self, other, out, inplace, [](auto a, auto b) { return expr; });                       \
  }                                                                                                           \
  TP_BINARY_FORMS(name)
TP_BITWISE(bitwise_and, a & b)
TP_BITWISE(bitwise_or, a | b)
TP_BITWISE(bitwise_xor, a ^ b)

// Shifts, PyTorch's rules for amounts outside [0, bits): a left shift gives 0; a right shift gives what
// shifting out every bit gives (0, or -1 for negative signed values). Left shifts work on the unsigned
// pattern, so they wrap instead of overflowing.
template <typename T> static T shift_left(T a, T b) {
  constexpr int bits = int(sizeof(T) * 8);
  if (std::make_signed_t<T>(b) < 0 || int64_t(b) >= bits) return T(0);
  return T(std::make_unsigned_t<T>(a) << b);
}
template <typename T> static T shift_right(T a, T b) {
  constexpr int max_shift = int(sizeof(T) * 8) - (std::is_signed_v<T> ? 1 : 0);
  if (std::make_signed_t<T>(b) < 0 || int64_t(b) >= max_shift) return T(a >> max_shift);
  return T(a >> b);
}

template <bool Left>
static Tensor shift(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  ScalarType ct = it.common_dtype();
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (Left) cpu_kernel2<T>(it, [](T a, T b) -> T { return shift_left(a, b); });
      else cpu_kernel2<T>(it, [](T a, T b) -> T { return shift_right(a, b); });
    } else {
      throw_unsupported_dtype(op, ct);
    }
  });
  return it.finish();
}

#define TP_SHIFT(name, left)                                                                                    \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,       \
                            bool inplace) {                                                                   \
    return shift<left>(op, self, other, out, inplace);                                                        \
  }                                                                                                           \
  TP_BINARY_FORMS(name)                                                                                       \
  static Tensor name##_scalar_tensor(const Scalar &self, const Tensor &other) {                               \
    return name##_impl(#name, wrapped_scalar(self), other, Tensor(), false);                                  \
  }
TP_SHIFT(bitwise_left_shift, true)
TP_SHIFT(bitwise_right_shift, false)

static Tensor bitwise_not_impl(const char *op, const Tensor &self, const Tensor &out, bool inplace) {
  TensorIterator it({.op = op, .resize_out = !inplace}, out, {self});
  ScalarType ct = it.common_dtype();
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) cpu_kernel<T>(it, [](T a) -> T { return !a; });
    else if constexpr (std::is_integral_v<T>) cpu_kernel<T>(it, [](T a) -> T { return T(~a); });
    else throw_unsupported_dtype(op, ct);
  });
  return it.finish();
}
static Tensor bitwise_not(const Tensor &self) { return bitwise_not_impl("bitwise_not", self, Tensor(), false); }
static Tensor bitwise_not_(const Tensor &self) { return bitwise_not_impl("bitwise_not_", self, self, true); }
static Tensor bitwise_not_out(const Tensor &self, const Tensor &out) {
  return bitwise_not_impl("bitwise_not.out", self, out, false);
}

#define TP_DEF_SCALAR_TENSOR(lib, name)                                                                         \
  (lib).def(#name ".Scalar_Tensor(Scalar self, Tensor other) -> Tensor");                                     \
  for (auto key_ : {DispatchKey::CPU, DispatchKey::Meta})                                                     \
    impl_typed<name##_scalar_tensor>(lib, #name ".Scalar_Tensor", key_, __LINE__);

#define TP_DEF_UNARY_FORMS(lib, name)                                                                           \
  (lib).def(#name "(Tensor self) -> Tensor");                                                                 \
  (lib).def(#name "_(Tensor(a!) self) -> Tensor(a!)");                                                        \
  (lib).def(#name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");                                      \
  for (auto key_ : {DispatchKey::CPU, DispatchKey::Meta}) {                                                   \
    impl_typed<name>(lib, #name, key_, __LINE__);                                                             \
    impl_typed<name##_>(lib, #name "_", key_, __LINE__);                                                      \
    impl_typed<name##_out>(lib, #name ".out", key_, __LINE__);                                                \
  }

TP_LIBRARY(logical) {
  TP_DEF_BINARY_FORMS(lib, logical_and, "other")
  TP_DEF_BINARY_FORMS(lib, logical_or, "other")
  TP_DEF_BINARY_FORMS(lib, logical_xor, "other")
  TP_DEF_UNARY_FORMS(lib, logical_not)
  TP_DEF_BINARY_FORMS(lib, bitwise_and, "other")
  TP_DEF_BINARY_FORMS(lib, bitwise_or, "other")
  TP_DEF_BINARY_FORMS(lib, bitwise_xor, "other")
  TP_DEF_UNARY_FORMS(lib, bitwise_not)
  TP_DEF_BINARY_FORMS(lib, bitwise_left_shift, "other")
  TP_DEF_SCALAR_TENSOR(lib, bitwise_left_shift)
  TP_DEF_BINARY_FORMS(lib, bitwise_right_shift, "other")
  TP_DEF_SCALAR_TENSOR(lib, bitwise_right_shift)
}

}  // namespace tp::p10
