// ops_ternary.cpp — CUDA kernels for lerp (Scalar and Tensor weights; in-place and out= forms), addcmul and
// addcdiv (three forms each), and the closeness ops isclose, allclose and equal (the last two answer with one
// Python bool: a device pass, then one value read back).
//
// Where it sits: the CUDA twin of lerp/addcmul/addcdiv in kernels/ternary.cpp and isclose/allclose/equal in
// kernels/compare.cpp; the arithmetic is tensorplay_p10/cuda_kernels/ternary.cu and close.cu. Each call asks
// the CPU op on meta tensors for its checks (lerp's dtype rule, addcdiv's integer refusal, isclose's rtol and
// atol), result dtype and layout (elementwise.h), then launches one kernel.
#include "cuda/elementwise.h"

namespace tp::p10::cuda {

namespace {
Tensor ternary_fn(const Form &f, const char *fn, std::array<double, 3> p, const std::vector<Tensor> &inputs,
                  const Tensor &meta) {
  const Target t = begin(f, meta, inputs);
  run(f.op, {"ternary.cu", fn, meta.dtype(), meta.dtype(), p}, t, inputs);
  return t.out;
}

// lerp with a number weight: a two-input kernel with the weight as p0.
Tensor lerp_scalar(const Form &f, const Tensor &self, const Tensor &end, const Scalar &weight) {
  return ternary_fn(f, "lerp_scalar", {weight.to_double(), 0.0, 0.0}, {self, end},
                    meta_result(f, self, end, weight));
}
Tensor lerp_tensor(const Form &f, const Tensor &self, const Tensor &end, const Tensor &weight) {
  return ternary_fn(f, "lerp_tensor", {}, {self, end, weight}, meta_result(f, self, end, weight));
}
Tensor addc(const Form &f, const char *fn, const Tensor &self, const Tensor &t1, const Tensor &t2,
            const Scalar &value) {
  return ternary_fn(f, fn, {value.to_double(), 0.0, 0.0}, {self, t1, t2}, meta_result(f, self, t1, t2, value));
}
}  // namespace

static Tensor lerp(const Tensor &self, const Tensor &end, const Scalar &weight) {
  return lerp_scalar({"lerp", "lerp.Scalar", "lerp.Scalar", Tensor(), false}, self, end, weight);
}
static Tensor lerp_(const Tensor &self, const Tensor &end, const Scalar &weight) {
  return lerp_scalar({"lerp_", "lerp_.Scalar", "lerp.Scalar", self, true}, self, end, weight);
}
static Tensor lerp_out(const Tensor &self, const Tensor &end, const Scalar &weight, const Tensor &out) {
  return lerp_scalar({"lerp.out", "lerp.Scalar_out", "lerp.Scalar", out, false}, self, end, weight);
}
static Tensor lerp_t(const Tensor &self, const Tensor &end, const Tensor &weight) {
  return lerp_tensor({"lerp", "lerp.Tensor", "lerp.Tensor", Tensor(), false}, self, end, weight);
}
static Tensor lerp_t_(const Tensor &self, const Tensor &end, const Tensor &weight) {
  return lerp_tensor({"lerp_", "lerp_.Tensor", "lerp.Tensor", self, true}, self, end, weight);
}
static Tensor lerp_t_out(const Tensor &self, const Tensor &end, const Tensor &weight, const Tensor &out) {
  return lerp_tensor({"lerp.Tensor_out", "lerp.Tensor_out", "lerp.Tensor", out, false}, self, end, weight);
}

#define TP_CUDA_ADDC(name)                                                                                  \
  static Tensor name(const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value) {         \
    return addc({#name, #name, #name, Tensor(), false}, #name, self, t1, t2, value);                        \
  }                                                                                                         \
  static Tensor name##_(const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value) {      \
    return addc({#name "_", #name "_", #name, self, true}, #name, self, t1, t2, value);                     \
  }                                                                                                         \
  static Tensor name##_out(const Tensor &self, const Tensor &t1, const Tensor &t2, const Scalar &value,     \
                           const Tensor &out) {                                                             \
    return addc({#name ".out", #name ".out", #name, out, false}, #name, self, t1, t2, value);               \
  }
TP_CUDA_ADDC(addcmul)
TP_CUDA_ADDC(addcdiv)

// ---- closeness ---------------------------------------------------------------------------------------------
// isclose: integers compare in the default float dtype (so that self - other cannot overflow), as on the CPU.
static Tensor isclose(const Tensor &self, const Tensor &other, double rtol, double atol, bool equal_nan) {
  const Form f{"isclose", "isclose", "isclose", Tensor(), false};
  const Tensor m = meta_result(f, self, other, rtol, atol, equal_nan);
  const Target t = begin(f, m, {self, other});
  const ScalarType ct = is_floating(self.dtype()) || is_complex(self.dtype()) ? self.dtype() : default_dtype();
  run("isclose", {"close.cu", "isclose", ct, ScalarType::Bool, {rtol, atol, equal_nan ? 1.0 : 0.0}}, t,
      {self, other});
  return t.out;
}

static bool allclose(const Tensor &self, const Tensor &other, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(self, other, rtol, atol, equal_nan));
}

// equal: same shape and the same values in the common dtype (NaN is never equal to itself).
static bool equal(const Tensor &self, const Tensor &other) {
  TP_CHECK(self.device() == other.device(), Runtime, "equal: Expected all tensors to be on the same device, but "
           "found at least two devices, ", device_str(self.device()), " and ", device_str(other.device()), "!");
  if (self.sizes() != other.sizes()) return false;
  return all_true(call_op<Tensor>(TP_OP("eq"), self, other));
}

TP_LIBRARY(cuda_ternary) {
  TP_IMPL(lib, "lerp.Scalar", CUDA, lerp);
  TP_IMPL(lib, "lerp.Tensor", CUDA, lerp_t);
  TP_IMPL(lib, "lerp_.Scalar", CUDA, lerp_);
  TP_IMPL(lib, "lerp_.Tensor", CUDA, lerp_t_);
  TP_IMPL(lib, "lerp.Scalar_out", CUDA, lerp_out);
  TP_IMPL(lib, "lerp.Tensor_out", CUDA, lerp_t_out);
  TP_IMPL(lib, "addcmul", CUDA, addcmul);
  TP_IMPL(lib, "addcmul_", CUDA, addcmul_);
  TP_IMPL(lib, "addcmul.out", CUDA, addcmul_out);
  TP_IMPL(lib, "addcdiv", CUDA, addcdiv);
  TP_IMPL(lib, "addcdiv_", CUDA, addcdiv_);
  TP_IMPL(lib, "addcdiv.out", CUDA, addcdiv_out);
  TP_IMPL(lib, "isclose", CUDA, isclose);
  TP_IMPL(lib, "allclose", CUDA, allclose);
  TP_IMPL(lib, "equal", CUDA, equal);
}

}  // namespace tp::p10::cuda
