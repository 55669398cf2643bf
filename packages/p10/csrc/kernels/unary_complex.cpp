// unary_complex.cpp — the parts of a complex number: real, imag (views), conj and angle.
//
// Where it sits: real and imag are view ops like those in kernels/view.cpp (AnyBackend kernels, no data
// moves); conj and angle are elementwise kernels over the loop helper. On real tensors real and conj return
// self unchanged and imag is an error, as in PyTorch.
#include <cmath>
#include <numbers>

#include "kernels/unary.h"

namespace tp::p10 {

// Note [Complex part views]
//   A complex tensor's storage holds (re, im) pairs of its real dtype. The real part is therefore a view of
//   that real dtype over the same storage with every stride doubled and the offset doubled (counted in real
//   elements); the imaginary part is the same view shifted by one element. make_view shares the storage and
//   the version counter, so writing `x.real` writes `x` and bumps its version; only the dtype of the new
//   TensorImpl differs from its base, which is why this is not a plain make_view call.
static Tensor complex_part_view(const Tensor &self, int part) {
  Shape strides = self.strides();
  for (int64_t &s : strides) s *= 2;
  Tensor v = make_view(self, self.sizes(), std::move(strides), self.storage_offset() * 2 + part);
  v->dtype = to_real(self.dtype());
  return v;
}

static Tensor real(const Tensor &self) { return is_complex(self.dtype()) ? complex_part_view(self, 0) : self; }

static Tensor imag(const Tensor &self) {
  TP_CHECK(is_complex(self.dtype()), Runtime, "imag is not implemented for tensors with non-complex dtypes.");
  return complex_part_view(self, 1);
}

// PyTorch's conj is lazy (a conjugate bit on a view, resolved later); that machinery is out of scope here, so
// conj of a complex tensor returns a new tensor, like PyTorch's conj_physical. Real tensors come back as is.
static Tensor conj(const Tensor &self) {
  if (!is_complex(self.dtype())) return self;
  TensorIterator it = TensorIterator::unary("conj", Tensor(), self);
  TP_DISPATCH_ALL(it.common_dtype(), "conj", [&]<typename T>() {
    if constexpr (is_complex_dtype<T>) cpu_kernel<T>(it, [](T z) -> T { return std::conj(z); });
  });
  return it.output();
}

// angle: arg(z) in (-pi, pi] for complex (a real result); for reals pi for negatives and 0 otherwise, NaN
// propagated. Integer inputs compute in the default float dtype.
static Tensor angle_impl(const UnaryCall &c, const Tensor &self) {
  const bool cplx = is_complex(self.dtype());
  TensorIterator it = unary_iter(c, self, /*int_to_float=*/true,
                                 cplx ? std::optional<ScalarType>(to_real(self.dtype())) : std::nullopt);
  TP_DISPATCH_FLOATING_AND_COMPLEX(it.common_dtype(), c.op, [&]<typename T>() {
    if constexpr (is_complex_dtype<T>) {
      cpu_kernel<T>(it, [](T z) { return std::arg(z); });
    } else {
      using M = opmath_t<T>;
      cpu_kernel<T>(it, [](T v) -> T {
        M x = M(v);
        return T(std::isnan(x) ? x : x < 0 ? M(std::numbers::pi) : M(0));
      });
    }
  });
  return it.finish();
}

static Tensor angle(const Tensor &self) { return angle_impl({"angle", Tensor(), false}, self); }
static Tensor angle_out(const Tensor &self, const Tensor &out) {
  return angle_impl({"angle.out", out, false}, self);
}

TP_LIBRARY(unary_complex) {
  lib.def("real(Tensor(a) self) -> Tensor(a)");
  lib.def("imag(Tensor(a) self) -> Tensor(a)");
  lib.def("conj(Tensor self) -> Tensor");  // not a view: Note [Alias annotations] in dispatch/schema.h
  lib.def("angle(Tensor self) -> Tensor");
  lib.def("angle.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  TP_IMPL(lib, "real", AnyBackend, real);
  TP_IMPL(lib, "imag", AnyBackend, imag);
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<conj>(lib, "conj", key, __LINE__);
    impl_typed<angle>(lib, "angle", key, __LINE__);
    impl_typed<angle_out>(lib, "angle.out", key, __LINE__);
  }
}

}  // namespace tp::p10
