// ops_loss.cpp — CUDA kernels for the pointwise losses: mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits and kl_div.
//
// Where it sits: the CUDA twin of kernels/loss.cpp; the arithmetic is tensorplay_p10/cuda_kernels/loss.cu, one
// kernel per loss that also reduces (no per-element loss tensor for 'mean' and 'sum'). The CPU op, asked on
// meta tensors with reduction='none' (cuda/ops_meta.h), checks the call (beta, delta, bce's size rule,
// integer inputs) and gives the unreduced result's shape, dtype and layout: its broadcast shape and promoted
// dtype. Every operand is then brought to that shape and dtype, contiguous (a copy only when it is not
// already), so the kernels walk n flat elements.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10 {
enum class LossReduction { None, Mean, Sum };  // loss.cpp
LossReduction parse_loss_reduction(const std::string &reduction);
}  // namespace tp::p10

namespace tp::p10::cuda {

namespace {

const std::string kNone = "none";

// `t` broadcast to `shape`, contiguous, in `dtype` (as it is when it already is all three).
Tensor operand(const Tensor &t, const Shape &shape, ScalarType dtype) {
  if (!t.defined()) return t;
  if (t.sizes() == shape && t.is_contiguous() && t.dtype() == dtype) return t;
  Tensor o = empty_tensor(shape, dtype, t.device());
  device_copy(o, t);
  return o;
}
Tensor opt(const std::optional<Tensor> &t) { return t ? *t : Tensor(); }

// Runs loss_<name>_<dtype> over inputs {a, b, c, d} (c, d may be undefined). `meta_none` is the CPU op's
// unreduced result on meta tensors. `range_error`, when given, is raised if the kernel flags an input.
Tensor pointwise_loss(const char *op, const char *name, const Tensor &meta_none, LossReduction red,
                      std::initializer_list<Tensor> inputs, double param, int flag, const char *range_error) {
  std::vector<Tensor> in(inputs);
  const int dev = common_device(op, in, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType ct = meta_none.dtype();
  check_real(op, ct);
  const Shape &shape = meta_none.sizes();
  const int64_t n = shape_numel(shape);
  for (Tensor &t : in) t = operand(t, shape, ct);
  in.resize(4);
  const bool reduce = red != LossReduction::None;
  Tensor out = reduce ? empty_tensor(Shape{}, ct, device) : empty_as_meta(meta_none, device);
  const Tensor y = reduce || out.is_contiguous() ? out : empty_tensor(shape, ct, device);
  Tensor bad;
  if (range_error) {
    bad = empty_tensor({1}, ScalarType::Int32, device);
    call_op<Tensor>(TP_OP("fill_"), bad, Scalar(int64_t(0)));
  }
  const Stream stream = stream_for(dev);
  const ScalarType acc = ct == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  LaunchConfig cfg = elementwise_config(dev, n, 4, 256);
  cfg.grid = std::min<unsigned>(cfg.grid, 1024);  // the partials loss_final adds
  const Tensor partial = reduce && n > 0 ? empty_tensor({int64_t(cfg.grid)}, acc, device) : Tensor();
  if (n > 0)
    launch(kernel(dev, "loss.cu", kname((std::string("loss_") + name).c_str(), ct)), cfg, stream, n, int(reduce),
           param, flag, reduce ? nullptr : y.data_ptr(), ptr_or_null(partial), in[0].data_ptr(), in[1].data_ptr(),
           ptr_or_null(in[2]), ptr_or_null(in[3]), ptr_or_null(bad));
  if (reduce)
    launch(kernel(dev, "loss.cu", kname("loss_final", ct)), LaunchConfig{1, 1024, 0}, stream,
           int64_t(n > 0 ? cfg.grid : 0), red == LossReduction::Mean ? double(n) : 1.0, out.data_ptr(),
           ptr_or_null(partial));
  else if (y.impl() != out.impl())
    device_copy(out, y);
  if (bad.defined() && n > 0) {  // Note [Device-side argument checks] in ops_cross_entropy.cpp
    const Tensor h = call_op<Tensor>(TP_OP("to"), bad, std::optional<ScalarType>(), std::optional<Device>(Device{}),
                                     false);
    TP_CHECK(h.data<int32_t>()[0] == 0, Runtime, op, range_error);
  }
  return out;
}

}  // namespace

static Tensor mse_loss(const Tensor &self, const Tensor &target, const std::string &reduction) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("mse_loss"), meta_like(self), meta_like(target), kNone);
  return pointwise_loss("mse_loss", "mse", m, red, {self, target}, 0.0, 0, nullptr);
}

static Tensor l1_loss(const Tensor &self, const Tensor &target, const std::string &reduction) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("l1_loss"), meta_like(self), meta_like(target), kNone);
  return pointwise_loss("l1_loss", "l1", m, red, {self, target}, 0.0, 0, nullptr);
}

static Tensor smooth_l1_loss(const Tensor &self, const Tensor &target, const std::string &reduction, double beta) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("smooth_l1_loss"), meta_like(self), meta_like(target), kNone, beta);
  return pointwise_loss("smooth_l1_loss", "smooth_l1", m, red, {self, target}, beta, 0, nullptr);
}

static Tensor huber_loss(const Tensor &self, const Tensor &target, const std::string &reduction, double delta) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("huber_loss"), meta_like(self), meta_like(target), kNone, delta);
  return pointwise_loss("huber_loss", "huber", m, red, {self, target}, delta, 0, nullptr);
}

static Tensor binary_cross_entropy(const Tensor &self, const Tensor &target, const std::optional<Tensor> &weight,
                                   const std::string &reduction) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("binary_cross_entropy"), meta_like(self), meta_like(target),
                                   meta_like(weight), kNone);
  return pointwise_loss("binary_cross_entropy", "bce", m, red, {self, target, opt(weight)}, 0.0, 0,
                        "(): all elements of input should be between 0 and 1");
}

static Tensor binary_cross_entropy_with_logits(const Tensor &self, const Tensor &target,
                                               const std::optional<Tensor> &weight,
                                               const std::optional<Tensor> &pos_weight,
                                               const std::string &reduction) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("binary_cross_entropy_with_logits"), meta_like(self), meta_like(target),
                                   meta_like(weight), meta_like(pos_weight), kNone);
  return pointwise_loss("binary_cross_entropy_with_logits", "bce_logits", m, red,
                        {self, target, opt(pos_weight), opt(weight)}, 0.0, 0, nullptr);
}

static Tensor kl_div(const Tensor &self, const Tensor &target, const std::string &reduction, bool log_target) {
  const LossReduction red = parse_loss_reduction(reduction);
  const Tensor m = call_op<Tensor>(TP_OP("kl_div"), meta_like(self), meta_like(target), kNone, log_target);
  return pointwise_loss("kl_div", "kl_div", m, red, {self, target}, 0.0, int(log_target), nullptr);
}

TP_LIBRARY(cuda_loss) {
  TP_IMPL(lib, "mse_loss", CUDA, mse_loss);
  TP_IMPL(lib, "l1_loss", CUDA, l1_loss);
  TP_IMPL(lib, "smooth_l1_loss", CUDA, smooth_l1_loss);
  TP_IMPL(lib, "huber_loss", CUDA, huber_loss);
  TP_IMPL(lib, "binary_cross_entropy", CUDA, binary_cross_entropy);
  TP_IMPL(lib, "binary_cross_entropy_with_logits", CUDA, binary_cross_entropy_with_logits);
  TP_IMPL(lib, "kl_div", CUDA, kl_div);
}

}  // namespace tp::p10::cuda
