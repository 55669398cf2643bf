// unary_float.h — the unary float family declared once: exp, exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt,
// reciprocal, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, sigmoid, deg2rad,
// rad2deg, logit. One row per op: its functor (the formula, tensorplay_p10/cuda_kernels/unary_float.cuh), its
// three schemas written out, and what it says about complex inputs.
//
// Where it sits: the three registration blocks walk the table — ops/unary_float.cpp defines the schemas and
// registers the family's meta rule for Meta, kernels/unary_float.cpp the CPU loops, cuda/ops_unary_float.cpp
// the CUDA kernels — so a new op of the family is one row here, its functor, and its op-database entry (tests/
// opdb/unary.py). The family's dtype rule is PyTorch's: bool and integer inputs compute in the default float
// dtype, float16/bfloat16 compute in float32 (the functor's M), and complex inputs are taken where the row says
// so (on the CPU; CUDA has no complex kernels yet).
#pragma once
#include <optional>
#include <string>
#include <type_traits>

#include "kernels/unary.h"
#include "tensorplay_p10/cuda_kernels/unary_float.cuh"

namespace tp::p10 {

// What an op does with a complex input: computes it (Yes), refuses it with the generic dtype error (No), or
// refuses it with "<op> is not supported for complex tensors." as PyTorch's deg2rad/rad2deg do (NoByName).
enum class Complex { Yes, No, NoByName };

// One row: functor F, complex rule C, and the types of the parameters after self (logit's eps).
template <typename F, Complex C, typename... Extra> struct UnaryFloatOp {
  const char *schema, *inplace_schema, *out_schema;
};

// The functor for a call's parameters: F{} for the plain functions, logit's clamp bounds from eps.
template <typename F> F functor_of() { return F{}; }
template <typename F>
  requires std::is_same_v<F, Logit>
F functor_of(std::optional<double> eps) {
  const bool clamp = eps && *eps >= 0;  // PyTorch ignores a negative eps
  return Logit{clamp, clamp ? *eps : 0.0, clamp ? 1 - *eps : 1.0};
}

// The table: visit(row) for each op of the family, in the order of the file header.
template <typename Visit> void for_each_unary_float(Visit &&visit) {
  constexpr Complex Yes = Complex::Yes;
  visit(UnaryFloatOp<Exp, Yes>{"exp(Tensor self) -> Tensor", "exp_(Tensor(a!) self) -> Tensor(a!)",
                               "exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Exp2, Yes>{"exp2(Tensor self) -> Tensor", "exp2_(Tensor(a!) self) -> Tensor(a!)",
                                "exp2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Expm1, Yes>{"expm1(Tensor self) -> Tensor", "expm1_(Tensor(a!) self) -> Tensor(a!)",
                                 "expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Log, Yes>{"log(Tensor self) -> Tensor", "log_(Tensor(a!) self) -> Tensor(a!)",
                               "log.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Log2, Yes>{"log2(Tensor self) -> Tensor", "log2_(Tensor(a!) self) -> Tensor(a!)",
                                "log2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Log10, Yes>{"log10(Tensor self) -> Tensor", "log10_(Tensor(a!) self) -> Tensor(a!)",
                                 "log10.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Log1p, Yes>{"log1p(Tensor self) -> Tensor", "log1p_(Tensor(a!) self) -> Tensor(a!)",
                                 "log1p.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Sqrt, Yes>{"sqrt(Tensor self) -> Tensor", "sqrt_(Tensor(a!) self) -> Tensor(a!)",
                                "sqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Rsqrt, Yes>{"rsqrt(Tensor self) -> Tensor", "rsqrt_(Tensor(a!) self) -> Tensor(a!)",
                                 "rsqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Reciprocal, Yes>{"reciprocal(Tensor self) -> Tensor",
                                      "reciprocal_(Tensor(a!) self) -> Tensor(a!)",
                                      "reciprocal.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Sin, Yes>{"sin(Tensor self) -> Tensor", "sin_(Tensor(a!) self) -> Tensor(a!)",
                               "sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Cos, Yes>{"cos(Tensor self) -> Tensor", "cos_(Tensor(a!) self) -> Tensor(a!)",
                               "cos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Tan, Yes>{"tan(Tensor self) -> Tensor", "tan_(Tensor(a!) self) -> Tensor(a!)",
                               "tan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Asin, Yes>{"asin(Tensor self) -> Tensor", "asin_(Tensor(a!) self) -> Tensor(a!)",
                                "asin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Acos, Yes>{"acos(Tensor self) -> Tensor", "acos_(Tensor(a!) self) -> Tensor(a!)",
                                "acos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Atan, Yes>{"atan(Tensor self) -> Tensor", "atan_(Tensor(a!) self) -> Tensor(a!)",
                                "atan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Sinh, Yes>{"sinh(Tensor self) -> Tensor", "sinh_(Tensor(a!) self) -> Tensor(a!)",
                                "sinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Cosh, Yes>{"cosh(Tensor self) -> Tensor", "cosh_(Tensor(a!) self) -> Tensor(a!)",
                                "cosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Tanh, Yes>{"tanh(Tensor self) -> Tensor", "tanh_(Tensor(a!) self) -> Tensor(a!)",
                                "tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Asinh, Yes>{"asinh(Tensor self) -> Tensor", "asinh_(Tensor(a!) self) -> Tensor(a!)",
                                 "asinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Acosh, Yes>{"acosh(Tensor self) -> Tensor", "acosh_(Tensor(a!) self) -> Tensor(a!)",
                                 "acosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Atanh, Yes>{"atanh(Tensor self) -> Tensor", "atanh_(Tensor(a!) self) -> Tensor(a!)",
                                 "atanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Sigmoid, Yes>{"sigmoid(Tensor self) -> Tensor", "sigmoid_(Tensor(a!) self) -> Tensor(a!)",
                                   "sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Deg2rad, Complex::NoByName>{"deg2rad(Tensor self) -> Tensor",
                                                 "deg2rad_(Tensor(a!) self) -> Tensor(a!)",
                                                 "deg2rad.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Rad2deg, Complex::NoByName>{"rad2deg(Tensor self) -> Tensor",
                                                 "rad2deg_(Tensor(a!) self) -> Tensor(a!)",
                                                 "rad2deg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"});
  visit(UnaryFloatOp<Logit, Complex::No, std::optional<double>>{
      "logit(Tensor self, float? eps=None) -> Tensor", "logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)",
      "logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)"});
}

// ---- the meta rule ------------------------------------------------------------------------------------------
// Note [The family's meta rule]
//   Every check of a call and its result's dtype, shape and layout, with no arithmetic: the complex rule, then
//   the loop helper's own rules (out= castability and resizing, in-place shape, layout preservation) through
//   a TensorIterator over the given tensors, computing in unary_float_dtype. The CPU kernel builds its loop
//   from it; the Meta kernel is it and nothing more; the CUDA kernel asks it on meta copies of its arguments.
ScalarType unary_float_dtype(const char *op, ScalarType self, Complex rule);
TensorIterator unary_float_iter(const UnaryCall &c, const Tensor &self, Complex rule);
// The result of a call on meta tensors (in-place: self; out=: the resized out).
Tensor unary_float_meta(const UnaryCall &c, const Tensor &self, Complex rule);

// ---- the three call forms of every op ----------------------------------------------------------------------
// Backend::run<F, C>(call, self, functor) computes one call; these are the typed kernels the dispatcher
// holds: `exp(self)`, `exp_(self)` and `exp.out(self, *, out)` (plus the row's Extra parameters).
template <typename Backend, typename F, Complex C, typename... Extra> struct UnaryFloatForms {
  static Tensor functional(const Tensor &self, Extra... extra) {
    return Backend::template run<F, C>(UnaryCall{F::name, Tensor(), false}, self, functor_of<F>(extra...));
  }
  static Tensor inplace(const Tensor &self, Extra... extra) {
    static const std::string op = std::string(F::name) + "_";
    return Backend::template run<F, C>(UnaryCall{op.c_str(), self, true}, self, functor_of<F>(extra...));
  }
  static Tensor out(const Tensor &self, Extra... extra, const Tensor &out) {
    static const std::string op = std::string(F::name) + ".out";
    return Backend::template run<F, C>(UnaryCall{op.c_str(), out, false}, self, functor_of<F>(extra...));
  }
};

// Register Backend's three kernels of every op of the family for `key`.
template <typename Backend> void impl_unary_float(Library &lib, DispatchKey key, int line) {
  for_each_unary_float([&]<typename F, Complex C, typename... Extra>(const UnaryFloatOp<F, C, Extra...> &) {
    using Forms = UnaryFloatForms<Backend, F, C, Extra...>;
    const std::string name = F::name;
    impl_typed<&Forms::functional>(lib, name.c_str(), key, line);
    impl_typed<&Forms::inplace>(lib, (name + "_").c_str(), key, line);
    impl_typed<&Forms::out>(lib, (name + ".out").c_str(), key, line);
  });
}

}  // namespace tp::p10
