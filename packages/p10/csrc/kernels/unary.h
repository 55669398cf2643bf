// unary.h — what the unary kernel files share: the three call forms of an op and their registration.
//
// Where it sits: included by kernels/unary.cpp (sign, rounding, classification), unary_special.cpp (erf,
// erfinv, lgamma, digamma), unary_complex.cpp (real, imag, conj, angle) and the float family's table
// (ops/unary_float.h: exp, log, trigonometry…, whose rows write their three schemas out instead). Each op `name` exists three times, PyTorch's way: `name` (new output), `name_` (in place on self)
// and `name.out` (into a given tensor). A kernel file writes one `name_impl(const UnaryCall &, self, ...)`
// and gets the three typed functions from TP_UNARY_VARIANTS and their schemas and kernels from
// TP_DEF_UNARY_VARIANTS / TP_IMPL_UNARY_VARIANTS.
#pragma once
#include <optional>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// How one unary op was called: `op` is the name errors show ("exp", "exp_" or "exp.out"); `out` is the tensor
// to write (undefined: allocate one); `inplace` means out is self, which then keeps its shape.
struct UnaryCall {
  const char *op;
  Tensor out;
  bool inplace;
};

// The iterator for one unary call. `int_to_float`: bool and integer inputs compute in the default float dtype
// (PyTorch's rule for exp, sin, …); `out_dtype`: a fixed result dtype (bool for isnan, real for abs(complex)).
// A wrong out= or in-place dtype fails in the iterator with PyTorch's "can't be cast" message.
inline TensorIterator unary_iter(const UnaryCall &c, const Tensor &self, bool int_to_float,
                                 std::optional<ScalarType> out_dtype = std::nullopt) {
  IterConfig cfg{.op = c.op, .int_to_float = int_to_float, .out_dtype = out_dtype, .resize_out = !c.inplace};
  return TensorIterator(cfg, c.inplace ? self : c.out, {self});
}

// PyTorch's dtype-keeping ops (neg, sign, floor, …) take an out= of exactly the result dtype; the float
// functions instead accept any out= dtype their result can be cast to (checked by the iterator).
inline void check_out_dtype(const UnaryCall &c, ScalarType expected) {
  TP_CHECK(c.inplace || !c.out.defined() || c.out.dtype() == expected, Runtime, c.op, ": Found dtype ",
           scalar_type_name(c.out.dtype()), " but expected ", scalar_type_name(expected));
}

// The real type inside a complex one (float for complex64); any other type is its own.
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<std::complex<T>> { using type = T; };
template <typename T> using real_of_t = typename RealOf<T>::type;

// The three typed functions of op `name` from `name_impl`. PARAMS/ARGS list extra parameters after self,
// each with a leading TP_UCOMMA (the out= form takes `out` last, as its schema does).
#define TP_UCOMMA ,
#define TP_UNARY_VARIANTS(name, PARAMS, ARGS)                                                      \
  static Tensor name(const Tensor &self PARAMS) { return name##_impl({#name, Tensor(), false}, self ARGS); } \
  static Tensor name##_(const Tensor &self PARAMS) { return name##_impl({#name "_", self, true}, self ARGS); } \
  static Tensor name##_out(const Tensor &self PARAMS, const Tensor &out) {                         \
    return name##_impl({#name ".out", out, false}, self ARGS);                                     \
  }

// The three schemas; `params` is the schema text of the extra parameters, e.g. ", float? eps=None".
#define TP_DEF_UNARY_VARIANTS(lib, name, params)                                                   \
  do {                                                                                             \
    (lib).def(#name "(Tensor self" params ") -> Tensor");                                          \
    (lib).def(#name "_(Tensor(a!) self" params ") -> Tensor(a!)");                                 \
    (lib).def(#name ".out(Tensor self" params ", *, Tensor(a!) out) -> Tensor(a!)");               \
  } while (0)

// The three kernels for one dispatch key (the same functions serve CPU and Meta).
#define TP_IMPL_UNARY_VARIANTS(lib, name, key)                                                     \
  do {                                                                                             \
    impl_typed<name>(lib, #name, key, __LINE__);                                                   \
    impl_typed<name##_>(lib, #name "_", key, __LINE__);                                            \
    impl_typed<name##_out>(lib, #name ".out", key, __LINE__);                                      \
  } while (0)

}  // namespace tp::p10
