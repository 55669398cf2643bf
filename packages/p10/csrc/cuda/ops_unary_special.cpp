// ops_unary_special.cpp — CUDA kernels for the special functions of one tensor (erfc, erfinv, lgamma,
// digamma) and frac; sgn, square, nan_to_num (dtype-keeping), isnan, isinf, isfinite, signbit (bool); conj and
// angle of real tensors. (The float family — exp, log, sin, … — is ops_unary_float.cpp's.)
//
// Where it sits: the CUDA twin of kernels/unary_special.cpp and part of unary.cpp and unary_complex.cpp; the
// arithmetic is tensorplay_p10/cuda_kernels/unary_math.cu. Each call asks the CPU op on meta tensors
// (elementwise.h meta_result) for its checks, result dtype (int -> float for erfc) and layout, then launches.
// Each op has the forms the CPU op has (name, name_, name.out: kernels/unary.h).
#include <cfloat>

#include "cuda/elementwise.h"
#include "kernels/unary.h"

namespace tp::p10::cuda {

namespace {
Form form_of(const UnaryCall &c, const char *functional, const Tensor &self) {
  return {c.op, c.op, functional, c.inplace ? self : c.out, c.inplace};
}

// A function of unary_math.cu computed in the result's dtype.
template <typename... Extra>
Tensor unary_fn(const UnaryCall &c, const char *name, const Tensor &self, std::array<double, 3> p,
                const Extra &...extra) {
  const Form f = form_of(c, name, self);
  const Tensor m = meta_result(f, self, extra...);
  const Target t = begin(f, m, {self});
  run(c.op, {"unary_math.cu", name, m.dtype(), m.dtype(), p}, t, {self});
  return t.out;
}
}  // namespace

#define TP_CUDA_FLOAT_FN(name)                                                                              \
  static Tensor name##_impl(const UnaryCall &c, const Tensor &self) { return unary_fn(c, #name, self, {}); } \
  TP_UNARY_VARIANTS(name, , )
TP_CUDA_FLOAT_FN(erfc)
TP_CUDA_FLOAT_FN(erfinv)
TP_CUDA_FLOAT_FN(lgamma)
TP_CUDA_FLOAT_FN(digamma)
TP_CUDA_FLOAT_FN(frac)
TP_CUDA_FLOAT_FN(square)  // bool squares in int64: the meta result's dtype, to which the input is cast

// sgn of a real tensor is its sign; of bool, itself.
static Tensor sgn_impl(const UnaryCall &c, const Tensor &self) {
  const Form f = form_of(c, "sgn", self);
  const Tensor m = meta_result(f, self);
  const Target t = begin(f, m, {self});
  check_real(c.op, m.dtype());
  if (m.dtype() == ScalarType::Bool) copy_into(t, self);
  else run(c.op, {"unary_math.cu", "sgn", m.dtype(), m.dtype()}, t, {self});
  return t.out;
}
TP_UNARY_VARIANTS(sgn, , )

// The largest finite value of a float dtype: what +inf becomes by default (-inf: its negative).
static double max_finite(ScalarType t) {
  switch (t) {
    case ScalarType::Float16: return 65504.0;
    case ScalarType::BFloat16: return 3.3895313892515355e38;  // bits 0x7f7f
    case ScalarType::Float32: return double(FLT_MAX);
    default: return DBL_MAX;
  }
}

// Integers and bool have no NaN or inf: their values pass through.
static Tensor nan_to_num_impl(const UnaryCall &c, const Tensor &self, std::optional<double> nan,
                              std::optional<double> posinf, std::optional<double> neginf) {
  const Form f = form_of(c, "nan_to_num", self);
  const Tensor m = meta_result(f, self, nan, posinf, neginf);
  const Target t = begin(f, m, {self});
  const ScalarType ct = m.dtype();
  check_real(c.op, ct);
  if (!is_floating(ct)) {
    copy_into(t, self);
    return t.out;
  }
  const double big = max_finite(ct);
  run(c.op, {"unary_math.cu", "nan_to_num", ct, ct, {nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big)}},
      t, {self});
  return t.out;
}
TP_UNARY_VARIANTS(nan_to_num,
                  TP_UCOMMA std::optional<double> nan TP_UCOMMA std::optional<double> posinf
                  TP_UCOMMA std::optional<double> neginf,
                  TP_UCOMMA nan TP_UCOMMA posinf TP_UCOMMA neginf)

// ---- the parts of a complex number, on real tensors (kernels/unary_complex.cpp) -----------------------------
// conj of a real tensor is the tensor itself, as on the CPU; complex dtypes have no CUDA kernels (check_real).
static Tensor conj(const Tensor &self) {
  check_real("conj", self.dtype());
  return self;
}

// angle: pi for negative numbers, 0 otherwise, NaN kept; integers and bool compute in the default float dtype
// (the meta result's). A complex input is refused by its own dtype (its result, the real part's, would pass).
static Tensor angle_impl(const UnaryCall &c, const Tensor &self) {
  check_real(c.op, self.dtype());
  return unary_fn(c, "angle", self, {});
}
static Tensor angle(const Tensor &self) { return angle_impl({"angle", Tensor(), false}, self); }
static Tensor angle_out(const Tensor &self, const Tensor &out) { return angle_impl({"angle.out", out, false}, self); }

// ---- classification: bool results, computed on self's dtype; integers answer without reading --------------
static Tensor classify(const UnaryCall &c, const char *name, const Tensor &self, bool int_answer) {
  const Form f = form_of(c, name, self);
  const Tensor m = meta_result(f, self);
  const Target t = begin(f, m, {self});
  const ScalarType ct = self.dtype();
  check_real(c.op, ct);
  if (is_floating(ct)) run(c.op, {"unary_math.cu", name, ct, ScalarType::Bool}, t, {self});
  else fill_into(t, Scalar(int_answer));
  return t.out;
}
static Tensor isnan(const Tensor &self) { return classify({"isnan", Tensor(), false}, "isnan", self, false); }
static Tensor isinf(const Tensor &self) { return classify({"isinf", Tensor(), false}, "isinf", self, false); }
static Tensor isfinite(const Tensor &self) { return classify({"isfinite", Tensor(), false}, "isfinite", self, true); }

// signbit: negative values, -0.0 and sign-bit NaNs; unsigned and bool never.
static Tensor signbit_impl(const UnaryCall &c, const Tensor &self) {
  const ScalarType ct = self.dtype();
  if (ct == ScalarType::Bool || ct == ScalarType::UInt8) return classify(c, "signbit", self, false);
  const Form f = form_of(c, "signbit", self);
  const Tensor m = meta_result(f, self);
  const Target t = begin(f, m, {self});
  run(c.op, {"unary_math.cu", "signbit", ct, ScalarType::Bool}, t, {self});
  return t.out;
}
static Tensor signbit(const Tensor &self) { return signbit_impl({"signbit", Tensor(), false}, self); }
static Tensor signbit_out(const Tensor &self, const Tensor &out) {
  return signbit_impl({"signbit.out", out, false}, self);
}

TP_LIBRARY(cuda_unary_special) {
  const DispatchKey key = DispatchKey::CUDA;
  TP_IMPL_UNARY_VARIANTS(lib, erfc, key);
  TP_IMPL_UNARY_VARIANTS(lib, erfinv, key);
  TP_IMPL_UNARY_VARIANTS(lib, lgamma, key);
  TP_IMPL_UNARY_VARIANTS(lib, digamma, key);
  TP_IMPL_UNARY_VARIANTS(lib, frac, key);
  TP_IMPL_UNARY_VARIANTS(lib, square, key);
  TP_IMPL_UNARY_VARIANTS(lib, sgn, key);
  TP_IMPL_UNARY_VARIANTS(lib, nan_to_num, key);
  TP_IMPL(lib, "isnan", CUDA, isnan);
  TP_IMPL(lib, "isinf", CUDA, isinf);
  TP_IMPL(lib, "isfinite", CUDA, isfinite);
  TP_IMPL(lib, "signbit", CUDA, signbit);
  TP_IMPL(lib, "signbit.out", CUDA, signbit_out);
  TP_IMPL(lib, "conj", CUDA, conj);
  TP_IMPL(lib, "angle", CUDA, angle);
  TP_IMPL(lib, "angle.out", CUDA, angle_out);
}

}  // namespace tp::p10::cuda
