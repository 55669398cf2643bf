// binary.cpp — elementwise arithmetic on two tensors: add, sub, mul, div (true_divide), floor_divide, remainder
// and fmod, with in-place and out= forms.
//
// Where it sits: each op is one scalar lambda run by the loop helper (loop/tensor_iterator.h), which does
// broadcasting, type promotion and output handling. The same kernel serves CPU and Meta: on meta tensors
// the iterator computes the result's shape and dtype and the loop does nothing.
// Each op `name` is defined three times, PyTorch's way: `name` (new output), `name_` (in place on self) and
// `name.out` (into a given tensor) — see TP_BINARY_VARIANTS below. The other binary families live beside it:
// binary_special.cpp (pow, atan2, maximum, ...), compare.cpp, logical.cpp and ternary.cpp.
#include <cmath>
#include <limits>

#include "kernels/binary_common.h"

namespace tp::p10 {

static Tensor add_impl(const char *op, const Tensor &self, const Tensor &other, const Scalar &alpha,
                       const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  check_add_alpha(op, it.common_dtype(), alpha);
  TP_DISPATCH_ALL(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {  // a + alpha b in bool: PyTorch's add, so alpha=False gives a
      const bool al = alpha.to<bool>();
      cpu_kernel2<T>(it, [al](T a, T b) -> T { return a || (al && b); });
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
  check_sub_bool(self, other);
  Scalar neg = alpha.is_floating() ? Scalar(-alpha.d) : alpha.is_complex() ? Scalar(-alpha.c) : Scalar(-alpha.to_int());
  return add_impl(op, self, other, neg, out, inplace);
}

// Note [Complex products]
//   PyTorch multiplies complex numbers by the textbook formula (ac - bd) + (ad + bc)i. std::complex's operator*
//   follows C99 Annex G, which recovers infinities: (inf+infj) * 1 is inf+infj there but nan+nanj in PyTorch.
//   We follow PyTorch.
template <typename M> static M mul_values(M a, M b) {
  if constexpr (std::is_same_v<M, complex64> || std::is_same_v<M, complex128>)
    return M(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  else
    return a * b;
}

static Tensor mul_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  TP_DISPATCH_ALL(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) cpu_kernel2<T>(it, [](T a, T b) -> T { return a && b; });
    else cpu_kernel2<T>(it, [](T a, T b) -> T { return T(mul_values<M>(M(a), M(b))); });
  });
  return it.finish();
}

// Python's floor division for integers (the quotient rounds toward -inf). `min / -1` overflows: it wraps, as
// in NumPy, instead of trapping the CPU.
template <typename T> static T floor_div_int(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
    T q = T(a / b);
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return T(a / b);
  }
}

template <typename T> static T trunc_div_int(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  }
  return T(a / b);
}

// Python's floor division for floats, PyTorch's formula (div_floor_floating): going through fmod keeps
// `1.0 // 0.1 == 9.0` exact where floor(a / b) would round the quotient up to 10 first.
template <typename M> static M floor_div_float(M a, M b) {
  if (b == M(0)) return a / b;
  M mod = std::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != M(0) && (b < M(0)) != (mod < M(0))) div -= M(1);
  if (div == M(0)) return std::copysign(M(0), a / b);
  M fl = std::floor(div);
  if (div - fl > M(0.5)) fl += M(1);
  return fl;
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
        check_no_zero_divisor<T>(it, op);
        if (floor) cpu_kernel2<T>(it, [](T a, T b) -> T { return floor_div_int(a, b); });
        else cpu_kernel2<T>(it, [](T a, T b) -> T { return trunc_div_int(a, b); });
      } else if (floor) {
        cpu_kernel2<T>(it, [](T a, T b) -> T { return T(floor_div_float(M(a), M(b))); });
      } else {
        cpu_kernel2<T>(it, [](T a, T b) -> T { return T(std::trunc(M(a) / M(b))); });
      }
    });
  }
  return it.finish();
}

static Tensor true_divide_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,
                               bool inplace) {
  return div_impl(op, self, other, std::nullopt, out, inplace);
}

static Tensor floor_divide_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,
                                bool inplace) {
  return div_impl(op, self, other, std::string("floor"), out, inplace);
}

// remainder is Python's `%` (the result has the divisor's sign); fmod is C's (the dividend's sign).
template <typename T> static T remainder_int(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);  // `min % -1` would trap
    T r = T(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
    return r;
  } else {
    return T(a % b);
  }
}

static Tensor remainder_or_fmod(const char *op, bool python_style, const Tensor &self, const Tensor &other,
                                const Tensor &out, bool inplace) {
  TensorIterator it = TensorIterator::binary(op, out, self, other, false, inplace);
  TP_DISPATCH_REAL(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      check_no_zero_divisor<T>(it, op);
      if (python_style) cpu_kernel2<T>(it, [](T a, T b) -> T { return remainder_int(a, b); });
      else cpu_kernel2<T>(it, [](T a, T b) -> T { return b == T(-1) ? T(0) : T(a % b); });
    } else if (python_style) {
      cpu_kernel2<T>(it, [](T a, T b) -> T {
        M mod = std::fmod(M(a), M(b));
        if (mod != M(0) && ((M(b) < M(0)) != (mod < M(0)))) mod += M(b);
        return T(mod);
      });
    } else {
      cpu_kernel2<T>(it, [](T a, T b) -> T { return T(std::fmod(M(a), M(b))); });
    }
  });
  return it.finish();
}

static Tensor remainder_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,
                             bool inplace) {
  return remainder_or_fmod(op, true, self, other, out, inplace);
}

static Tensor fmod_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool inplace) {
  return remainder_or_fmod(op, false, self, other, out, inplace);
}

TP_BINARY_FORMS(true_divide)
TP_BINARY_FORMS(floor_divide)
TP_BINARY_FORMS(remainder)
TP_BINARY_FORMS(fmod)

// `2 % t`: the number on the left is a wrapped number, so it promotes like the number on the right would.
static Tensor remainder_scalar_tensor(const Scalar &self, const Tensor &other) {
  return remainder_impl("remainder", wrapped_scalar(self), other, Tensor(), false);
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
  TP_DEF_BINARY_FORMS(lib, true_divide, "other")
  TP_DEF_BINARY_FORMS(lib, floor_divide, "other")
  TP_DEF_BINARY_FORMS(lib, remainder, "other")
  lib.def("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor");
  TP_DEF_BINARY_FORMS(lib, fmod, "other")
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    impl_typed<remainder_scalar_tensor>(lib, "remainder.Scalar_Tensor", key, __LINE__);
}

}  // namespace tp::p10
