// loss.cpp — the pointwise losses of torch.nn.functional: mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, kl_div; and the `reduction` argument they all share.
//
// Where it sits: each loss is one scalar formula run by the loop helper (loop/tensor_iterator.h, which
// broadcasts and promotes), followed by the `sum` or `mean` op (reduce.cpp) for reduction='sum'|'mean'. The
// classification losses (nll_loss, cross_entropy) have their own kernel in loss_ce.cpp. One kernel serves CPU
// and Meta: the iterator skips the loop on meta tensors and the reductions give the 0-d shape.
// kl_div's reduction='batchmean' is not an op argument: torch.nn.functional.kl_div implements it as 'sum'
// divided by the batch size, and so must the Python layer (tensorplay.nn.functional).
#include <atomic>
#include <cmath>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Shared with loss_ce.cpp (same definition there).
enum class LossReduction { None, Mean, Sum };

// `reduction` is a string in our schemas (PyTorch's aten takes an int); anything else is a ValueError.
LossReduction parse_loss_reduction(const std::string &reduction) {
  if (reduction == "mean") return LossReduction::Mean;
  if (reduction == "sum") return LossReduction::Sum;
  if (reduction == "none") return LossReduction::None;
  fail(ErrorKind::Value, reduction, " is not a valid value for reduction");
}

static Tensor reduce_loss(const Tensor &loss, LossReduction red) {
  using Dims = std::optional<std::vector<int64_t>>;
  using DType = std::optional<ScalarType>;
  if (red == LossReduction::None) return loss;
  if (red == LossReduction::Sum) return call_op<Tensor>(TP_OP("sum"), loss, Dims(), false, DType());
  return call_op<Tensor>(TP_OP("mean"), loss, Dims(), false, DType());
}

static Tensor mul(const Tensor &a, const Tensor &b) { return call_op<Tensor>(TP_OP("mul"), a, b); }

// Elementwise f(self, target) in opmath, broadcast, float dtypes only (PyTorch's losses reject integers).
template <typename F> static Tensor pointwise2(const char *op, const Tensor &self, const Tensor &target, const F &f) {
  TensorIterator it = TensorIterator::binary(op, Tensor(), self, target);
  TP_DISPATCH_FLOATING(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu_kernel2<T>(it, [&f](T x, T y) -> T { return T(f(M(x), M(y))); });
  });
  return it.finish();
}

static Tensor mse_loss(const Tensor &self, const Tensor &target, const std::string &reduction) {
  LossReduction red = parse_loss_reduction(reduction);
  return reduce_loss(pointwise2("mse_loss", self, target, [](auto x, auto y) { return (x - y) * (x - y); }), red);
}

static Tensor l1_loss(const Tensor &self, const Tensor &target, const std::string &reduction) {
  LossReduction red = parse_loss_reduction(reduction);
  return reduce_loss(pointwise2("l1_loss", self, target, [](auto x, auto y) { return std::abs(x - y); }), red);
}

// |d| < beta: 0.5 d^2 / beta, else |d| - 0.5 beta; beta = 0 is plain L1 (PyTorch special-cases it too).
static Tensor smooth_l1_loss(const Tensor &self, const Tensor &target, const std::string &reduction, double beta) {
  LossReduction red = parse_loss_reduction(reduction);
  TP_CHECK(beta >= 0, Runtime, "smooth_l1_loss does not support negative values for beta.");
  return reduce_loss(pointwise2("smooth_l1_loss", self, target,
                                [beta](auto x, auto y) {
                                  using M = decltype(x);
                                  M d = std::abs(x - y), b = M(beta);
                                  return d < b ? M(0.5) * d * d / b : d - M(0.5) * b;
                                }),
                     red);
}

// |d| <= delta: 0.5 d^2, else delta (|d| - 0.5 delta) — smooth_l1 scaled by delta.
static Tensor huber_loss(const Tensor &self, const Tensor &target, const std::string &reduction, double delta) {
  LossReduction red = parse_loss_reduction(reduction);
  TP_CHECK(delta > 0, Runtime, "huber_loss does not support non-positive values for delta.");
  return reduce_loss(pointwise2("huber_loss", self, target,
                                [delta](auto x, auto y) {
                                  using M = decltype(x);
                                  M d = std::abs(x - y), dl = M(delta);
                                  return d < dl ? M(0.5) * d * d : dl * (d - M(0.5) * dl);
                                }),
                     red);
}

// -(t log x + (1 - t) log(1 - x)) with each log clamped at -100 (PyTorch's rule, so x = 0 or 1 stays finite).
// x outside [0, 1] is an error: the loop only records it, the check runs after (loops never throw).
static Tensor binary_cross_entropy(const Tensor &self, const Tensor &target, const std::optional<Tensor> &weight,
                                   const std::string &reduction) {
  const char *op = "binary_cross_entropy";
  LossReduction red = parse_loss_reduction(reduction);
  TP_CHECK(self.sizes() == target.sizes(), Value, op, "(): Using a target size (", shape_str(target.sizes()),
           ") that is different to the input size (", shape_str(self.sizes()), ") is deprecated. Please ensure "
           "they have the same size.");
  std::atomic<bool> out_of_range{false};
  TensorIterator it = TensorIterator::binary(op, Tensor(), self, target);
  TP_DISPATCH_FLOATING(it.common_dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu_kernel2<T>(it, [&out_of_range](T x_, T y_) -> T {
      M x = M(x_), y = M(y_);
      if (!(x >= M(0) && x <= M(1))) out_of_range.store(true, std::memory_order_relaxed);
      M lx = std::max(std::log(x), M(-100)), l1x = std::max(std::log1p(-x), M(-100));
      return T((y - M(1)) * l1x - y * lx);
    });
  });
  TP_CHECK(!out_of_range.load(), Runtime, op, "(): all elements of input should be between 0 and 1");
  Tensor loss = it.finish();
  if (weight && weight->defined()) loss = mul(loss, *weight);
  return reduce_loss(loss, red);
}

// Note [Stable BCE with logits]
//   log(1 + exp(-x)) overflows for very negative x, so PyTorch writes the loss as
//     (1 - t) x + lw (log1p(exp(-|x|)) + max(-x, 0)),   lw = 1 + (pos_weight - 1) t
//   which equals -(pos_weight t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))) and never exponentiates a
//   positive number.
static Tensor binary_cross_entropy_with_logits(const Tensor &self, const Tensor &target,
                                               const std::optional<Tensor> &weight,
                                               const std::optional<Tensor> &pos_weight,
                                               const std::string &reduction) {
  const char *op = "binary_cross_entropy_with_logits";
  LossReduction red = parse_loss_reduction(reduction);
  TP_CHECK(self.sizes() == target.sizes(), Value, op, "(): Target size (", shape_str(target.sizes()),
           ") must be the same as input size (", shape_str(self.sizes()), ")");
  Tensor loss;
  if (pos_weight && pos_weight->defined()) {
    IterConfig cfg{.op = op};
    TensorIterator it(cfg, Tensor(), {self, target, *pos_weight});
    TP_DISPATCH_FLOATING(it.common_dtype(), op, [&]<typename T>() {
      using M = opmath_t<T>;
      cpu_kernel3<T>(it, [](T x_, T y_, T pw) -> T {
        M x = M(x_), y = M(y_);
        M lw = M(1) + (M(pw) - M(1)) * y;
        return T((M(1) - y) * x + lw * (std::log1p(std::exp(-std::abs(x))) + std::max(-x, M(0))));
      });
    });
    loss = it.finish();
  } else {
    loss = pointwise2(op, self, target, [](auto x, auto y) {
      using M = decltype(x);
      return (M(1) - y) * x + std::log1p(std::exp(-std::abs(x))) + std::max(-x, M(0));
    });
  }
  if (weight && weight->defined()) loss = mul(loss, *weight);
  return reduce_loss(loss, red);
}

// KL(target || exp(self)) pointwise, `self` being log-probabilities:
//   log_target=False: xlogy(t, t) - t x  (0 where t = 0, as xlogy defines it)
//   log_target=True:  exp(t) (t - x)
static Tensor kl_div(const Tensor &self, const Tensor &target, const std::string &reduction, bool log_target) {
  LossReduction red = parse_loss_reduction(reduction);
  Tensor loss = log_target ? pointwise2("kl_div", self, target, [](auto x, auto t) { return std::exp(t) * (t - x); })
                           : pointwise2("kl_div", self, target, [](auto x, auto t) {
                               using M = decltype(x);
                               M tlogt = t == M(0) ? M(0) : t * std::log(t);
                               return tlogt - t * x;
                             });
  return reduce_loss(loss, red);
}

TP_LIBRARY(loss) {
  lib.def("mse_loss(Tensor self, Tensor target, str reduction=\"mean\") -> Tensor");
  lib.def("l1_loss(Tensor self, Tensor target, str reduction=\"mean\") -> Tensor");
  lib.def("smooth_l1_loss(Tensor self, Tensor target, str reduction=\"mean\", float beta=1.0) -> Tensor");
  lib.def("huber_loss(Tensor self, Tensor target, str reduction=\"mean\", float delta=1.0) -> Tensor");
  lib.def("binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\") "
          "-> Tensor");
  lib.def("binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
          "Tensor? pos_weight=None, str reduction=\"mean\") -> Tensor");
  lib.def("kl_div(Tensor self, Tensor target, str reduction=\"mean\", *, bool log_target=False) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<mse_loss>(lib, "mse_loss", key, __LINE__);
    impl_typed<l1_loss>(lib, "l1_loss", key, __LINE__);
    impl_typed<smooth_l1_loss>(lib, "smooth_l1_loss", key, __LINE__);
    impl_typed<huber_loss>(lib, "huber_loss", key, __LINE__);
    impl_typed<binary_cross_entropy>(lib, "binary_cross_entropy", key, __LINE__);
    impl_typed<binary_cross_entropy_with_logits>(lib, "binary_cross_entropy_with_logits", key, __LINE__);
    impl_typed<kl_div>(lib, "kl_div", key, __LINE__);
  }
}

}  // namespace tp::p10
