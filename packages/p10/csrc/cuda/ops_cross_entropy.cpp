// ops_cross_entropy.cpp — CUDA kernels for nll_loss and cross_entropy (class indices or probabilities, weight,
// ignore_index, label_smoothing, reduction none / mean / sum, inputs [C], [N, C] or [N, C, d1, ...]).
//
// Where it sits: the CUDA twin of kernels/loss_ce.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// cross_entropy.cu: one fused kernel computes each position's loss (log-sum-exp, gather, smoothing, weight)
// without materialising log_softmax, and one block reduces. The CPU op, asked on meta tensors (cuda/ops_meta.h),
// checks the call (target shape and dtype, weight size, label_smoothing range, probabilities with
// ignore_index) with its PyTorch messages and gives the result's shape and dtype.
//
// Note [Device-side argument checks]
//   Whether every class index is in [0, C) (or ignore_index) is a fact about data on the device. PyTorch's
//   CUDA kernels stop with a device-side assert, which poisons the CUDA context. Here the kernel records a bad
//   index in a two-int64 flag (and reads nothing outside the row); the host copies the flag back after the
//   launch and raises the CPU's IndexError("Target k is out of bounds."). That copy waits for the stream: one
//   synchronisation per call with class indices, the price of an error that names the value and leaves the
//   context usable (a training step synchronises on loss.item() anyway). Probability targets need no check.
#include <algorithm>
#include <cstdint>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10 {
enum class LossReduction { None, Mean, Sum };  // loss.cpp
LossReduction parse_loss_reduction(const std::string &reduction);
}  // namespace tp::p10

namespace tp::p10::cuda {

namespace {

// cross_entropy.cu's ClassLossArgs, field for field.
struct ClassLossArgs {
  int64_t P, C, D;
  int64_t ignore_index;
  double smoothing;
  int32_t log_softmax;
  int32_t probs;
};
static_assert(sizeof(ClassLossArgs) == 48, "ClassLossArgs must match cross_entropy.cu");


// Raise the CPU's IndexError when the kernel flagged a target (Note [Device-side argument checks]).
void check_bad_target(const Tensor &bad) {
  const Tensor h = call_op<Tensor>(TP_OP("to"), bad, std::optional<ScalarType>(), std::optional<Device>(Device{}),
                                   false);
  const int64_t *b = h.data<int64_t>();
  TP_CHECK(b[0] == 0, Index, "Target ", b[1], " is out of bounds.");
}

Tensor class_loss(const char *op, const Tensor &meta, const Tensor &self, const Tensor &target,
                  const std::optional<Tensor> &weight, const std::string &reduction, int64_t ignore_index,
                  double smoothing, bool log_softmax) {
  const int dev = common_device(op, {self, target, weight ? *weight : Tensor()}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType dt = self.dtype();
  if (!is_floating(dt)) throw_unsupported_dtype(op, dt);
  const LossReduction red = parse_loss_reduction(reduction);
  Tensor out = empty_as_meta(meta, device);
  // Note [Class layout] in loss_ce.cpp: [N, C, D].
  int64_t n = 1, c = self.size(0), d = 1;
  if (self.dim() >= 2) {
    n = self.size(0), c = self.size(1);
    for (int64_t k = 2; k < self.dim(); ++k) d *= self.size(k);
  }
  const bool probs = log_softmax && target.sizes() == self.sizes();  // PyTorch's rule, as the CPU op
  const ClassLossArgs args{n * d, c, d, ignore_index, smoothing, int32_t(log_softmax), int32_t(probs)};
  if (red == LossReduction::None && args.P == 0) return out;
  const Tensor x = dense(self, dt), t = dense(target, probs ? dt : ScalarType::Int64);
  const Tensor w = weight ? dense(*weight, dt) : Tensor();
  const ScalarType acc = dt == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  Tensor loss, wsum, bad;
  if (red != LossReduction::None) {
    loss = empty_tensor({args.P}, acc, device);
    wsum = empty_tensor({args.P}, acc, device);
  }
  if (!probs) {
    bad = empty_tensor({2}, ScalarType::Int64, device);
    call_op<Tensor>(TP_OP("fill_"), bad, Scalar(int64_t(0)));
  }
  const Stream stream = stream_for(dev);
  const int64_t sms = properties(dev).multi_processor_count;
  if (args.P > 0) {
    // nll_loss reads one element per position, and rows with D > 1 are strided: a thread per position. Rows
    // of D == 1 are contiguous: a warp each up to 1024 classes, a block each beyond.
    std::string form;
    LaunchConfig cfg;
    if (!log_softmax || d > 1) {
      form = "class_loss_thread";
      cfg = {unsigned(std::min<int64_t>((args.P + 255) / 256, sms * 32)), 256, 0};
    } else if (c <= 1024) {
      form = "class_loss_warp";
      cfg = {unsigned(std::min<int64_t>((args.P + 3) / 4, sms * 64)), 128, 0};
    } else {
      form = "class_loss_block";
      cfg = {unsigned(std::min<int64_t>(args.P, sms * 8)), 512, 0};
    }
    const bool none = red == LossReduction::None;
    launch(kernel(dev, "cross_entropy.cu", kname(form.c_str(), dt)), cfg, stream, args, x.data_ptr(),
           probs ? nullptr : t.data_ptr(), probs ? t.data_ptr() : nullptr, ptr_or_null(w), ptr_or_null(loss),
           ptr_or_null(wsum), none ? out.data_ptr() : nullptr, ptr_or_null(bad));
  }
  if (red != LossReduction::None)
    launch(kernel(dev, "cross_entropy.cu", kname("class_loss_reduce", dt)), LaunchConfig{1, 1024, 0}, stream,
           args.P, int(red == LossReduction::Mean), out.data_ptr(), ptr_or_null(loss), ptr_or_null(wsum));
  if (bad.defined() && args.P > 0) check_bad_target(bad);
  return out;
}

}  // namespace

static Tensor nll_loss(const Tensor &self, const Tensor &target, const std::optional<Tensor> &weight,
                       const std::string &reduction, int64_t ignore_index) {
  const Tensor m = call_op<Tensor>(TP_OP("nll_loss"), meta_like(self), meta_like(target), meta_like(weight),
                                   reduction, ignore_index);
  return class_loss("nll_loss", m, self, target, weight, reduction, ignore_index, 0.0, false);
}

static Tensor cross_entropy(const Tensor &self, const Tensor &target, const std::optional<Tensor> &weight,
                            const std::string &reduction, int64_t ignore_index, double label_smoothing) {
  const Tensor m = call_op<Tensor>(TP_OP("cross_entropy"), meta_like(self), meta_like(target), meta_like(weight),
                                   reduction, ignore_index, label_smoothing);
  return class_loss("cross_entropy", m, self, target, weight, reduction, ignore_index, label_smoothing, true);
}

TP_LIBRARY(cuda_cross_entropy) {
  TP_IMPL(lib, "nll_loss", CUDA, nll_loss);
  TP_IMPL(lib, "cross_entropy", CUDA, cross_entropy);
}

}  // namespace tp::p10::cuda
