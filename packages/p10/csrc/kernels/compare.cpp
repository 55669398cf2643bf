// compare.cpp — comparisons: eq, ne, lt, le, gt, ge (bool results), isclose, and the two that answer with one
// Python bool, allclose and equal.
//
// Where it sits: each comparison is a scalar lambda over the loop helper (loop/tensor_iterator.h). The inputs
// promote to their common dtype (so `int_tensor < 2.5` compares as float) and the output is bool; the in-place
// forms (`x.lt_(y)`) write 0/1 in self's own dtype through the iterator's output casting. Complex numbers
// have no order: only eq and ne accept them.
#include <cmath>

#include "kernels/binary_common.h"
#include "kernels/cast.h"

namespace tp::p10 {

template <typename Cmp>
static Tensor compare(const char *op, bool ordered, const Tensor &self, const Tensor &other, const Tensor &out,
                      bool inplace, Cmp cmp) {
  TensorIterator it({.op = op, .out_dtype = ScalarType::Bool, .resize_out = !inplace}, out, {self, other});
  ScalarType ct = it.common_dtype();
  if (ordered && is_complex(ct)) throw_unsupported_dtype(op, ct);  // complex numbers have no order
  TP_DISPATCH_ALL(ct, op, [&]<typename T>() {
    if constexpr (is_complex_dtype<T>) {
      if constexpr (requires(T a, T b) { cmp(a, b); })
        if (!ordered) cpu_kernel2<T>(it, [cmp](T a, T b) -> bool { return cmp(a, b); });
    } else {
      using M = opmath_t<T>;
      cpu_kernel2<T>(it, [cmp](T a, T b) -> bool { return cmp(M(a), M(b)); });
    }
  });
  return it.finish();
}

// eq and ne are also defined on complex numbers; the four orderings are not. The lambda's return type names
// `expr`, so `requires` in compare() sees that `<` on complex does not exist instead of failing to compile.
#define TP_COMPARE(name, ordered, expr)                                                                         \
  static Tensor name##_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out,       \
                            bool inplace) {                                                                   \
    auto cmp = [](auto a, auto b) -> decltype(bool(expr)) { return expr; };                                  \
    return compare(op, ordered, self, other, out, inplace, cmp);                                              \
  }                                                                                                           \
  TP_BINARY_FORMS(name)

TP_COMPARE(eq, false, a == b)
TP_COMPARE(ne, false, a != b)
TP_COMPARE(lt, true, a < b)
TP_COMPARE(le, true, a <= b)
TP_COMPARE(gt, true, a > b)
TP_COMPARE(ge, true, a >= b)

// isclose: |self - other| <= atol + rtol * |other|, or exactly equal (which covers equal infinities), or both
// NaN when equal_nan. PyTorch's formula and its dtype rule: self and other must have the same dtype, and
// integers are compared in the default float dtype so that `self - other` cannot overflow.
static Tensor isclose(const Tensor &self, const Tensor &other, double rtol, double atol, bool equal_nan) {
  TP_CHECK(self.dtype() == other.dtype(), Runtime, "isclose(): expected self and other to have the same dtype, but "
           "got self.dtype = ", scalar_type_name(self.dtype()), " and other.dtype = ", scalar_type_name(other.dtype()));
  TP_CHECK(rtol >= 0, Value, "isclose(): rtol must be greater than or equal to zero, but got ", rtol);
  TP_CHECK(atol >= 0, Value, "isclose(): atol must be greater than or equal to zero, but got ", atol);
  ScalarType ct = self.dtype();
  if (!is_floating(ct) && !is_complex(ct)) ct = default_dtype();
  TensorIterator it({.op = "isclose", .out_dtype = ScalarType::Bool, .compute_dtype = ct}, Tensor(), {self, other});
  TP_DISPATCH_ALL(ct, "isclose", [&]<typename T>() {
    if constexpr (is_complex_dtype<T>) {
      using R = typename T::value_type;
      cpu_kernel2<T>(it, [rtol, atol, equal_nan](T a, T b) -> bool {
        if (a == b) return true;
        auto nan = [](T z) { return z.real() != z.real() || z.imag() != z.imag(); };  // either part NaN
        if (equal_nan && nan(a) && nan(b)) return true;
        R err = std::abs(a - b);
        return std::isfinite(err) && err <= R(atol) + R(rtol) * std::abs(b);
      });
    } else if constexpr (std::is_floating_point_v<opmath_t<T>>) {
      using M = opmath_t<T>;
      cpu_kernel2<T>(it, [rtol, atol, equal_nan](T va, T vb) -> bool {
        M a = M(va), b = M(vb);
        if (a == b) return true;
        if (equal_nan && a != a && b != b) return true;
        M err = std::abs(a - b);
        return std::isfinite(err) && err <= M(atol) + std::abs(M(rtol) * b);
      });
    }
  });
  return it.output();
}

// The one-bool answers read the data, so on meta tensors (no data) they are an error, as in PyTorch.
static bool all_true(const Tensor &b, const char *op) {
  TP_CHECK(!b.device().is_meta(), Runtime, op, ": meta tensors have no data to compare");
  // A fresh result of the loop helper: dense (maybe in a permuted order, which does not matter for "all").
  const bool *p = b.data<bool>();
  for (int64_t i = 0; i < b.numel(); ++i)
    if (!p[i]) return false;
  return true;
}

static bool allclose(const Tensor &self, const Tensor &other, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(self, other, rtol, atol, equal_nan), "allclose");
}

// equal: same shape and the same values (compared in the common dtype; NaN is never equal to itself).
static bool equal(const Tensor &self, const Tensor &other) {
  TP_CHECK(self.device() == other.device(), Runtime, "equal: Expected all tensors to be on the same device, but "
           "found at least two devices, ", device_str(self.device()), " and ", device_str(other.device()), "!");
  if (self.sizes() != other.sizes()) return false;
  return all_true(eq_impl("equal", self, other, Tensor(), false), "equal");
}

TP_LIBRARY(compare) {
  TP_DEF_BINARY_FORMS(lib, eq, "other")
  TP_DEF_BINARY_FORMS(lib, ne, "other")
  TP_DEF_BINARY_FORMS(lib, lt, "other")
  TP_DEF_BINARY_FORMS(lib, le, "other")
  TP_DEF_BINARY_FORMS(lib, gt, "other")
  TP_DEF_BINARY_FORMS(lib, ge, "other")
  lib.def("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor");
  lib.def("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool");
  lib.def("equal(Tensor self, Tensor other) -> bool");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<isclose>(lib, "isclose", key, __LINE__);
    impl_typed<allclose>(lib, "allclose", key, __LINE__);
    impl_typed<equal>(lib, "equal", key, __LINE__);
  }
}

}  // namespace tp::p10
