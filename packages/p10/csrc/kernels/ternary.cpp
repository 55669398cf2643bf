// ternary.cpp — elementwise ops of three operands: lerp, addcmul, addcdiv, clamp (alias clip) and where.
//
// Where it sits: scalar lambdas over the loop helper (loop/tensor_iterator.h), which broadcasts all three
// operands together and promotes them to one dtype; one kernel serves CPU and Meta. Where PyTorch lets an
// operand be a number (`clamp(x, 0, 1)`, `where(c, x, 0.0)`) the number is a wrapped number
// (Note [Wrapped numbers]), so it promotes exactly as it would on the right of `+`.
#include <cmath>
#include <limits>

#include "kernels/binary_common.h"
#include "kernels/cast.h"

namespace tp::p10 {

// cpu_kernel3 with a plain indexed loop for contiguous operands, which the compiler vectorises (addcmul on
// dense tensors is a hot optimizer step); other layouts go through the strided loop helper.
template <typename T, typename F> static void kernel3(const TensorIterator &it, const F &f) {
  it.for_each([&](char **d, const int64_t *s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == sizeof(T) && s[3] == sizeof(T)) {
      T *o = reinterpret_cast<T *>(d[0]);
      const T *a = reinterpret_cast<const T *>(d[1]), *b = reinterpret_cast<const T *>(d[2]),
              *c = reinterpret_cast<const T *>(d[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i], c[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T *>(d[0] + i * s[0]) = f(*reinterpret_cast<const T *>(d[1] + i * s[1]),
                                                    *reinterpret_cast<const T *>(d[2] + i * s[2]),
                                                    *reinterpret_cast<const T *>(d[3] + i * s[3]));
    }
  });
}

// ---- lerp ---------------------------------------------------------------------------------------------------
// self + weight * (end - self), PyTorch's two-sided formula: for weight >= 0.5 it interpolates from `end`, so
// lerp(a, b, 1) is exactly b.
template <typename M, typename W> static M lerp_value(M self, M end, W w) {
  return std::abs(w) < 0.5 ? M(self + w * (end - self)) : M(end - (end - self) * (W(1) - w));
}

static void check_lerp(const char *op, const Tensor &self, const Tensor &end, const Tensor *weight) {
  TP_CHECK(self.dtype() == end.dtype(), Runtime, op, ": expected dtype ", scalar_type_name(self.dtype()),
           " for `end` but got dtype ", scalar_type_name(end.dtype()));
  TP_CHECK(!weight || weight->dtype() == self.dtype(), Runtime, op, ": expected dtype ",
           scalar_type_name(self.dtype()), " for `weight` but got dtype ", scalar_type_name(weight->dtype()));
}

static Tensor lerp_scalar_impl(const char *op, const Tensor &self, const Tensor &end, const Scalar &weight,
                               const Tensor &out, bool inplace) {
  check_lerp(op, self, end, nullptr);
  TensorIterator it = TensorIterator::binary(op, out, self, end, false, inplace);
  ScalarType ct = it.common_dtype();
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_floating_point_v<M> || is_complex_dtype<M>) {
      // The side of the formula is known once for a scalar weight, so the loop has no branch and vectorises.
      const M w = weight.to<M>();
      if (std::abs(w) < 0.5) cpu_kernel2<T>(it, [w](T a, T b) -> T { return T(M(a) + w * (M(b) - M(a))); });
      else cpu_kernel2<T>(it, [w](T a, T b) -> T { return T(M(b) - (M(b) - M(a)) * (M(1) - w)); });
    } else {
      throw_unsupported_dtype(op, ct);
    }
  });
  return it.finish();
}

static Tensor lerp_tensor_impl(const char *op, const Tensor &self, const Tensor &end, const Tensor &weight,
                               const Tensor &out, bool inplace) {
  check_lerp(op, self, end, &weight);
  TensorIterator it({.op = op, .resize_out = !inplace}, out, {self, end, weight});
  ScalarType ct = it.common_dtype();
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_floating_point_v<M> || is_complex_dtype<M>)
      kernel3<T>(it, [](T a, T b, T w) -> T { return T(lerp_value(M(a), M(b), M(w))); });
    else throw_unsupported_dtype(op, ct);
  });
  return it.finish();
}

static Tensor lerp(const Tensor &self, const Tensor &end, const Scalar &weight) {
  return lerp_scalar_impl("lerp", self, end, weight, Tensor(), false);
}
static Tensor lerp_(const Tensor &self, const Tensor &end, const Scalar &weight) {
  return lerp_scalar_impl("lerp_", self, end, weight, self, true);
}
static Tensor lerp_out(const Tensor &self, const Tensor &end, const Scalar &weight, const Tensor &out) {
  return lerp_scalar_impl("lerp.out", self, end, weight, out, false);
}
static Tensor lerp_t(const Tensor &self, const Tensor &end, const Tensor &weight) {
  return lerp_tensor_impl("lerp", self, end, weight, Tensor(), false);
}
static Tensor lerp_t_(const Tensor &self, const Tensor &end, const Tensor &weight) {
  return lerp_tensor_impl("lerp_", self, end, weight, self, true);
}
static Tensor lerp_t_out(const Tensor &self, const Tensor &end, const Tensor &weight, const Tensor &out) {
  return lerp_tensor_impl("lerp.Tensor_out", self, end, weight, out, false);
}

// ---- addcmul, addcdiv ---------------------------------------------------------------------------------------
// self + value * tensor1 * tensor2 (or / tensor2), all three promoted together. As in PyTorch, `value` is
// converted to the computation dtype (a float value truncates for integer tensors).
template <bool Div>
static Tensor addc_impl(const char *op, const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value,
                        const Tensor &out, bool inplace) {
  TP_CHECK(!(Div && is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true)), Runtime,
           "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a "
           "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
           "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
           "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  TensorIterator it({.op = op, .resize_out = !inplace}, out, {self, t1, t2});
  ScalarType ct = it.common_dtype();
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      throw_unsupported_dtype(op, ct);
    } else {
      const M v = value.to<M>();
      if constexpr (Div) kernel3<T>(it, [v](T s, T a, T b) -> T { return T(M(s) + v * M(a) / M(b)); });
      else kernel3<T>(it, [v](T s, T a, T b) -> T { return T(M(s) + v * M(a) * M(b)); });
    }
  });
  return it.finish();
}

#define TP_ADDC(name, div)                                                                                      \
  static Tensor name(const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value) {           \
    return addc_impl<div>(#name, self, t1, t2, value, Tensor(), false);                                       \
  }                                                                                                           \
  static Tensor name##_(const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value) {        \
    return addc_impl<div>(#name "_", self, t1, t2, value, self, true);                                        \
  }                                                                                                           \
  static Tensor name##_out(const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value,       \
                           const Tensor &out) {                                                               \
    return addc_impl<div>(#name ".out", self, t1, t2, value, out, false);                                     \
  }
TP_ADDC(addcmul, false)
TP_ADDC(addcdiv, true)

// ---- clamp / clip -------------------------------------------------------------------------------------------
// min(max(x, lo), hi): when lo > hi every element becomes hi, as in PyTorch. NaN in x or in a bound gives NaN.
template <typename M> static M clamp_value(M x, const M *lo, const M *hi) {
  if constexpr (std::is_floating_point_v<M>) {
    if (x != x) return x;
    if (lo && *lo != *lo) return *lo;
    if (hi && *hi != *hi) return *hi;
  }
  if (lo && x < *lo) x = *lo;
  if (hi && x > *hi) x = *hi;
  return x;
}

// Bounds are optional tensors (numbers arrive wrapped). Bounds that are 0-d CPU tensors are read once and the
// loop runs over self alone — the common `clamp(x, 0, 6)` — otherwise they are full operands of the iterator.
static Tensor clamp_impl(const char *op, const Tensor &self, const Tensor &min, const Tensor &max, const Tensor &out,
                         bool inplace) {
  TP_CHECK(min.defined() || max.defined(), Runtime, op, ": At least one of 'min' or 'max' must not be None");
  std::vector<Tensor> all{self};
  for (const Tensor &b : {min, max})
    if (b.defined()) all.push_back(b);
  const ScalarType ct = result_type(all);
  TP_CHECK(!is_complex(ct), NotImplemented, op, ": clamp is not supported for complex types");  // as PyTorch
  auto scalar_bound = [](const Tensor &b) { return !b.defined() || (b.dim() == 0 && b.device().is_cpu()); };
  const bool scalar_bounds = scalar_bound(min) && scalar_bound(max);
  std::vector<Tensor> inputs{self};
  if (!scalar_bounds) inputs = all;
  TensorIterator it({.op = op, .compute_dtype = ct, .resize_out = !inplace}, out, inputs);
  TP_DISPATCH_REAL(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    if (scalar_bounds) {
      M lo{}, hi{};
      if (min.defined()) TP_DISPATCH_ALL(min.dtype(), op, [&]<typename S>() { lo = M(cast_value<T>(*min.data<S>())); });
      if (max.defined()) TP_DISPATCH_ALL(max.dtype(), op, [&]<typename S>() { hi = M(cast_value<T>(*max.data<S>())); });
      const M *plo = min.defined() ? &lo : nullptr, *phi = max.defined() ? &hi : nullptr;
      cpu_kernel<T>(it, [lo, hi, plo, phi](T x) -> T {
        return T(clamp_value(M(x), plo ? &lo : nullptr, phi ? &hi : nullptr));
      });
    } else if (min.defined() && max.defined()) {
      kernel3<T>(it, [](T x, T l, T h) -> T { M lo = M(l), hi = M(h); return T(clamp_value(M(x), &lo, &hi)); });
    } else if (min.defined()) {
      cpu_kernel2<T>(it, [](T x, T l) -> T { M lo = M(l); return T(clamp_value<M>(M(x), &lo, nullptr)); });
    } else {
      cpu_kernel2<T>(it, [](T x, T h) -> T { M hi = M(h); return T(clamp_value<M>(M(x), nullptr, &hi)); });
    }
  });
  return it.finish();
}

static Tensor opt(const std::optional<Tensor> &t) { return t ? *t : Tensor(); }
static Tensor opt(const std::optional<Scalar> &s) { return s ? wrapped_scalar(*s) : Tensor(); }

// clamp and clip share kernels; the op string in errors is the one the user called.
#define TP_CLAMP_FORMS(name, Bound, suffix)                                                                     \
  static Tensor name##suffix(const Tensor &self, const std::optional<Bound> &min,                             \
                             const std::optional<Bound> &max) {                                               \
    return clamp_impl(#name, self, opt(min), opt(max), Tensor(), false);                                      \
  }                                                                                                           \
  static Tensor name##suffix##_(const Tensor &self, const std::optional<Bound> &min,                          \
                                const std::optional<Bound> &max) {                                            \
    return clamp_impl(#name "_", self, opt(min), opt(max), self, true);                                       \
  }                                                                                                           \
  static Tensor name##suffix##_out(const Tensor &self, const std::optional<Bound> &min,                       \
                                   const std::optional<Bound> &max, const Tensor &out) {                      \
    return clamp_impl(#name ".out", self, opt(min), opt(max), out, false);                                    \
  }
TP_CLAMP_FORMS(clamp, Scalar, )
TP_CLAMP_FORMS(clamp, Tensor, _tensor)
TP_CLAMP_FORMS(clip, Scalar, )
TP_CLAMP_FORMS(clip, Tensor, _tensor)

// ---- where --------------------------------------------------------------------------------------------------
// condition ? self : other. The result dtype is that of self and other alone; the bool condition only selects.
static Tensor where_impl(const Tensor &condition, const Tensor &self, const Tensor &other, const Tensor &out) {
  // PyTorch still takes a uint8 condition (deprecated, nonzero is true); both are one byte per element.
  TP_CHECK(condition.dtype() == ScalarType::Bool || condition.dtype() == ScalarType::UInt8, Runtime,
           "where expected condition to be a boolean tensor, but got a tensor with dtype ",
           scalar_type_name(condition.dtype()));
  const ScalarType ct = result_type({self, other});
  Tensor a = self.dtype() == ct ? self : cast_to(self, ct), b = other.dtype() == ct ? other : cast_to(other, ct);
  TensorIterator it({.op = out.defined() ? "where.self_out" : "where", .promote_inputs = false, .out_dtype = ct},
                    out, {condition, a, b});
  TP_DISPATCH_ALL(ct, "where", [&]<typename T>() {
    it.for_each([](char **d, const int64_t *s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        bool c = *reinterpret_cast<const uint8_t *>(d[1] + i * s[1]) != 0;
        *reinterpret_cast<T *>(d[0] + i * s[0]) = *reinterpret_cast<const T *>(d[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
  });
  return it.finish();
}
static Tensor where(const Tensor &condition, const Tensor &self, const Tensor &other) {
  return where_impl(condition, self, other, Tensor());
}
static Tensor where_out(const Tensor &condition, const Tensor &self, const Tensor &other, const Tensor &out) {
  return where_impl(condition, self, other, out);
}

TP_LIBRARY(ternary) {
  lib.def("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor");
  lib.def("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor");
  lib.def("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)");
  lib.def("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)");
  lib.def("lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)");
  for (const char *n : {"addcmul", "addcdiv"}) {
    lib.def(str_cat(n, "(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"));
    lib.def(str_cat(n, "_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)"));
    lib.def(str_cat(n, ".out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> "
                       "Tensor(a!)"));
  }
  for (const char *n : {"clamp", "clip"}) {
    lib.def(str_cat(n, "(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"));
    lib.def(str_cat(n, ".Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"));
    lib.def(str_cat(n, "_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)"));
    lib.def(str_cat(n, "_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)"));
    lib.def(str_cat(n, ".out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)"));
    lib.def(str_cat(n, ".Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> "
                       "Tensor(a!)"));
  }
  // Named `where`, not PyTorch's `where.self`: the overload name would make ops.py take `condition` for self.
  lib.def("where(Tensor condition, Tensor self, Tensor other) -> Tensor");
  lib.def("where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<lerp>(lib, "lerp.Scalar", key, __LINE__);
    impl_typed<lerp_t>(lib, "lerp.Tensor", key, __LINE__);
    impl_typed<lerp_>(lib, "lerp_.Scalar", key, __LINE__);
    impl_typed<lerp_t_>(lib, "lerp_.Tensor", key, __LINE__);
    impl_typed<lerp_out>(lib, "lerp.Scalar_out", key, __LINE__);
    impl_typed<lerp_t_out>(lib, "lerp.Tensor_out", key, __LINE__);
    impl_typed<addcmul>(lib, "addcmul", key, __LINE__);
    impl_typed<addcmul_>(lib, "addcmul_", key, __LINE__);
    impl_typed<addcmul_out>(lib, "addcmul.out", key, __LINE__);
    impl_typed<addcdiv>(lib, "addcdiv", key, __LINE__);
    impl_typed<addcdiv_>(lib, "addcdiv_", key, __LINE__);
    impl_typed<addcdiv_out>(lib, "addcdiv.out", key, __LINE__);
    impl_typed<clamp>(lib, "clamp", key, __LINE__);
    impl_typed<clamp_tensor>(lib, "clamp.Tensor", key, __LINE__);
    impl_typed<clamp_>(lib, "clamp_", key, __LINE__);
    impl_typed<clamp_tensor_>(lib, "clamp_.Tensor", key, __LINE__);
    impl_typed<clamp_out>(lib, "clamp.out", key, __LINE__);
    impl_typed<clamp_tensor_out>(lib, "clamp.Tensor_out", key, __LINE__);
    impl_typed<clip>(lib, "clip", key, __LINE__);
    impl_typed<clip_tensor>(lib, "clip.Tensor", key, __LINE__);
    impl_typed<clip_>(lib, "clip_", key, __LINE__);
    impl_typed<clip_tensor_>(lib, "clip_.Tensor", key, __LINE__);
    impl_typed<clip_out>(lib, "clip.out", key, __LINE__);
    impl_typed<clip_tensor_out>(lib, "clip.Tensor_out", key, __LINE__);
    impl_typed<where>(lib, "where", key, __LINE__);
    impl_typed<where_out>(lib, "where.self_out", key, __LINE__);
  }
}

}  // namespace tp::p10
