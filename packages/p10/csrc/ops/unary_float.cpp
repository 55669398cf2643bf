// unary_float.cpp — the unary float family's schemas and its meta rule (Note [The family's meta rule]),
// registered for the Meta key. The CPU and CUDA kernels (kernels/unary_float.cpp, cuda/ops_unary_float.cpp)
// call the same rule before they compute.
#include "ops/unary_float.h"

#include <cstring>

namespace tp::p10 {

ScalarType unary_float_dtype(const char *op, ScalarType self, Complex rule) {
  if (is_complex(self)) {
    TP_CHECK(rule != Complex::NoByName, Runtime, std::string(op, std::strcspn(op, "_.")),
             " is not supported for complex tensors.");  // deg2rad_ and deg2rad.out say "deg2rad"
    if (rule == Complex::No) throw_unsupported_dtype(op, self);
    return self;
  }
  return is_floating(self) ? self : default_dtype();  // bool and integers: the default float dtype
}

TensorIterator unary_float_iter(const UnaryCall &c, const Tensor &self, Complex rule) {
  // Checked before the iterator touches out= or self (it resizes out and bumps versions).
  const ScalarType dtype = unary_float_dtype(c.op, self.dtype(), rule);
  IterConfig cfg{.op = c.op, .compute_dtype = dtype, .resize_out = !c.inplace};
  return TensorIterator(cfg, c.inplace ? self : c.out, {self});
}

Tensor unary_float_meta(const UnaryCall &c, const Tensor &self, Complex rule) {
  return unary_float_iter(c, self, rule).finish();
}

namespace {
struct MetaRule {
  template <typename F, Complex C> static Tensor run(const UnaryCall &c, const Tensor &self, const F &) {
    return unary_float_meta(c, self, C);
  }
};
}  // namespace

TP_LIBRARY(unary_float) {
  for_each_unary_float([&](const auto &op) {
    lib.def(op.schema);
    lib.def(op.inplace_schema);
    lib.def(op.out_schema);
  });
  impl_unary_float<MetaRule>(lib, DispatchKey::Meta, __LINE__);
}

}  // namespace tp::p10
