// binary.cpp — elementwise arithmetic on two tensors: add, sub, mul, div, with in-place and out= forms.
//
// Where it sits: each op is one scalar lambda run by the loop helper (loop/tensor_iterator.h), which does
// broadcasting, type promotion and output handling. The same kernel serves CPU and Meta: on meta tensors
// the iterator computes the result's shape and dtype and the loop does nothing.
// Each op `name` is defined three times, PyTorch's way: `name` (new output), `name_` (in place on self) and
// `name.out` (into a given tensor) — see TP_BINARY_VARIANTS below.
#include <atomic>
#include <cmath>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

static Tensor add_impl(const char *op, const Tensor &self, const Tensor &other, const Scalar &alpha,
                       const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  TP_CHECK(!(it.common_dtype() == ScalarType::Bool && !alpha.is_bool() && alpha.to_double() != 1), Runtime,
           op, ": Boolean alpha only supported for Boolean results.");
  TP_CHECK(!(is_integral(it.common_dtype(), true) && alpha.is_floating()), Runtime, op,
           ": For integral input tensors, argument alpha must not be a floating point number.");
  TP_DISPATCH_ALL(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel2<T>(it, [](T a, T b) -> T { return a || b; });
    } else {
      const M a = alpha.to<M>();
      if (alpha.to_double() == 1 && !alpha.is_complex())
        cpu_kernel2<T>(it, [](T x, T y) -> T { return T(M(x) + M(y)); });
      else
        cpu_kernel2<T>(it, [a](T x, T y) -> T { return T(M(x) + a * M(y)); });
    }
  });
  return it.finish();
}

static Tensor sub_impl(const char *op, const Tensor &self, const Tensor &other, const Scalar &alpha,
                       const Tensor &out, bool inplace) {
  TP_CHECK(self.dtype() != ScalarType::Bool || other.dtype() != ScalarType::Bool, Runtime,
           "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
           "operator instead.");
  Scalar neg = alpha.is_floating() ? Scalar(-alpha.d) : alpha.is_complex() ? Scalar(-alpha.c) : Scalar(-alpha.to_int());
  return add_impl(op, self, other, neg, out, inplace);
}

static Tensor mul_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  TP_DISPATCH_ALL(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) cpu_kernel2<T>(it, [](T a, T b) -> T { return a && b; });
    else cpu_kernel2<T>(it, [](T a, T b) -> T { return T(M(a) * M(b)); });
  });
  return it.finish();
}

// Python's floor division and modulo semantics for integers (the result rounds toward -inf).
template <typename T> static T floor_div_int(T a, T b) {
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// div with rounding_mode None (true division, ints promote to float), "trunc" or "floor".
static Tensor div_impl(const char *op, const Tensor &self, const Tensor &other, std::optional<std::string> mode,
                       const Tensor &out, bool inplace) {
  TP_CHECK(!mode || *mode == "trunc" || *mode == "floor", Value, op,
           " expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
  TensorIterator it = TensorIterator::binary(op, out, self, other, /*int_to_float=*/!mode, inplace);
  ScalarType ct = it.common_dtype();
  if (!mode) {
    TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
      using M = opmath_t<T>;
      if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) throw_unsupported_dtype(op, ct);
      else cpu_kernel2<T>(it, [](T a, T b) -> T { return T(M(a) / M(b)); });
    });
  } else {
    bool floor = *mode == "floor";
    TP_DISPATCH_REAL(ct, op, [&]<typename T>() {
      using M = opmath_t<T>;
      if constexpr (std::is_integral_v<T>) {
        // Check for zero divisors first: a kernel must never throw from inside a parallel loop.
        std::atomic<bool> zero{false};
        it.for_each([&zero](char **d, const int64_t *s, int64_t n) {
          for (int64_t i = 0; i < n; ++i)
            if (*reinterpret_cast<const T *>(d[2] + i * s[2]) == 0) zero = true;
        });
        TP_CHECK(!zero, Runtime, "ZeroDivisionError: integer division by zero in ", op);
        cpu_kernel2<T>(it, [floor](T a, T b) -> T { return floor ? floor_div_int(a, b) : T(a / b); });
      } else {
        cpu_kernel2<T>(it, [floor](T a, T b) -> T {
          M q = M(a) / M(b);
          return T(floor ? std::floor(q) : std::trunc(q));
        });
      }
    });
  }
  return it.finish();
}

// The three forms of each op. `ARGS`/`CALL` list the op's extra parameters after self and other.
#define TP_BINARY_VARIANTS(name, PARAMS, ARGS)                                                         \
  static Tensor name(const Tensor &self, const Tensor &other PARAMS) {                                \
    return name##_impl(#name, self, other ARGS, Tensor(), false);                                     \
  }                                                                                                   \
  static Tensor name##_(const Tensor &self, const Tensor &other PARAMS) {                             \
    return name##_impl(#name "_", self, other ARGS, self, true);                                      \
  }                                                                                                   \
  static Tensor name##_out(const Tensor &self, const Tensor &other PARAMS, const Tensor &out) {       \
    return name##_impl(#name ".out", self, other ARGS, out, false);                                   \
  }

#define TP_COMMA ,
TP_BINARY_VARIANTS(add, TP_COMMA const Scalar &alpha, TP_COMMA alpha)
TP_BINARY_VARIANTS(sub, TP_COMMA const Scalar &alpha, TP_COMMA alpha)
TP_BINARY_VARIANTS(mul, , )
TP_BINARY_VARIANTS(div, TP_COMMA std::optional<std::string> rounding_mode, TP_COMMA rounding_mode)

TP_LIBRARY(binary) {
  lib.def("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  lib.def("add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  lib.def("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  lib.def("sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  lib.def("sub_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  lib.def("sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  lib.def("mul(Tensor self, Tensor other) -> Tensor");
  lib.def("mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  lib.def("mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor");
  lib.def("div_(Tensor(a!) self, Tensor other, *, str? rounding_mode=None) -> Tensor(a!)");
  lib.def("div.out(Tensor self, Tensor other, *, str? rounding_mode=None, Tensor(a!) out) -> Tensor(a!)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<add>(lib, "add", key, __LINE__);
    impl_typed<add_>(lib, "add_", key, __LINE__);
    impl_typed<add_out>(lib, "add.out", key, __LINE__);
    impl_typed<sub>(lib, "sub", key, __LINE__);
    impl_typed<sub_>(lib, "sub_", key, __LINE__);
    impl_typed<sub_out>(lib, "sub.out", key, __LINE__);
    impl_typed<mul>(lib, "mul", key, __LINE__);
    impl_typed<mul_>(lib, "mul_", key, __LINE__);
    impl_typed<mul_out>(lib, "mul.out", key, __LINE__);
    impl_typed<div>(lib, "div", key, __LINE__);
    impl_typed<div_>(lib, "div_", key, __LINE__);
    impl_typed<div_out>(lib, "div.out", key, __LINE__);
  }
}

}  // namespace tp::p10
