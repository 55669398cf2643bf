// norm.cpp — the normalisation layers: layer_norm and rms_norm (fused kernels), group_norm, batch_norm and
// instance_norm (Composites).
//
// Where it sits: fused kernels rather than Composites of mean/var/sub/mul (STYLE.md rule 2): both are hot (every
// transformer block runs two) and layer_norm's variance is numerically delicate. They share the row view of
// softmax.cpp: the input made contiguous is [rows, N] with N = prod(normalized_shape), rows split over threads.
//
// group_norm, batch_norm and instance_norm are Composites (autograd differentiates them through their parts):
// group_norm is layer_norm's kernel applied to [N, G, C/G * spatial] plus a per-channel affine; batch_norm
// takes var_mean over every dim but the channel dim; instance_norm is batch_norm on [1, N * C, *], as in PyTorch.
//
// Note [Norm statistics]
//   Two passes per row, each a pairwise sum (loop/reduce.h, Note [Pairwise summation]) in opmath_t (float32
//   for float16/bfloat16/float32, float64 for float64): mean = sum(x) / N, then var = sum((x - mean)^2) / N
//   (biased, as PyTorch). Subtracting the mean before squaring avoids the cancellation of E[x^2] - E[x]^2; the
//   row is in cache for the second pass, so this costs little over Welford's one pass and is simpler to read.
//   rms_norm needs one pass: ms = sum(x^2) / N.
#include <cmath>

#include "dispatch/kernel_box.h"
#include "loop/parallel.h"
#include "loop/reduce.h"
#include "kernels/binary_common.h"
#include "loop/tensor_iterator.h"
#include "kernels/norm_common.h"

namespace tp::p10 {

// y = (x - mean) / sqrt(var + eps) * weight + bias over each row (Note [Norm statistics]).
static Tensor layer_norm(const Tensor &input, Shape normalized_shape, std::optional<Tensor> weight,
                         std::optional<Tensor> bias, double eps, bool cudnn_enable) {
  (void)cudnn_enable;  // in PyTorch's schema; no meaning on CPU
  const int64_t n = check_normalized_shape("layer_norm", input, normalized_shape, weight, bias);
  Tensor x = contiguous(input);
  Tensor w = as_param(weight, x.dtype()), b = as_param(bias, x.dtype());
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  if (x.device().is_meta() || x.numel() == 0) return out;
  const int64_t rows = x.numel() / n;
  TP_DISPATCH_FLOATING(x.dtype(), "layer_norm", [&]<typename T>() {
    using M = opmath_t<T>;
    const T *in = x.data<T>(), *wp = w.defined() ? w.data<T>() : nullptr, *bp = b.defined() ? b.data<T>() : nullptr;
    T *o = out.data<T>();
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / n), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T *xr = in + r * n;
        T *yr = o + r * n;
        const M mean = pairwise_sum<M>(xr, n, 1, [](T v) { return M(v); }) / M(n);
        const M var = pairwise_sum<M>(xr, n, 1, [mean](T v) { return (M(v) - mean) * (M(v) - mean); }) / M(n);
        const M rstd = M(1) / std::sqrt(var + M(eps));
        if (wp && bp)
          for (int64_t k = 0; k < n; ++k) yr[k] = T((M(xr[k]) - mean) * rstd * M(wp[k]) + M(bp[k]));
        else if (wp)
          for (int64_t k = 0; k < n; ++k) yr[k] = T((M(xr[k]) - mean) * rstd * M(wp[k]));
        else if (bp)
          for (int64_t k = 0; k < n; ++k) yr[k] = T((M(xr[k]) - mean) * rstd + M(bp[k]));
        else
          for (int64_t k = 0; k < n; ++k) yr[k] = T((M(xr[k]) - mean) * rstd);
      }
    });
  });
  return out;
}

// y = x / sqrt(mean(x^2) + eps) * weight over each row.
static Tensor rms_norm(const Tensor &input, Shape normalized_shape, std::optional<Tensor> weight,
                       std::optional<double> eps) {
  const int64_t n = check_normalized_shape("rms_norm", input, normalized_shape, weight, std::nullopt);
  Tensor x = contiguous(input);
  Tensor w = as_param(weight, x.dtype());
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  if (x.device().is_meta() || x.numel() == 0) return out;
  const double e = eps.value_or(finfo_eps(x.dtype()));
  const int64_t rows = x.numel() / n;
  TP_DISPATCH_FLOATING(x.dtype(), "rms_norm", [&]<typename T>() {
    using M = opmath_t<T>;
    const T *in = x.data<T>(), *wp = w.defined() ? w.data<T>() : nullptr;
    T *o = out.data<T>();
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / n), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T *xr = in + r * n;
        T *yr = o + r * n;
        const M ms = pairwise_sum<M>(xr, n, 1, [](T v) { return M(v) * M(v); }) / M(n);
        const M rstd = M(1) / std::sqrt(ms + M(e));
        if (wp)
          for (int64_t k = 0; k < n; ++k) yr[k] = T(M(xr[k]) * rstd * M(wp[k]));
        else
          for (int64_t k = 0; k < n; ++k) yr[k] = T(M(xr[k]) * rstd);
      }
    });
  });
  return out;
}

// ---- Composites: group_norm, batch_norm, instance_norm ------------------------------------------------------
static Tensor op_mul(const Tensor &a, const Tensor &b) { return call_op<Tensor>(TP_OP("mul"), a, b); }
static Tensor op_add(const Tensor &a, const Tensor &b) { return call_op<Tensor>(TP_OP("add"), a, b, Scalar(int64_t(1))); }
static Tensor op_view(const Tensor &a, const Shape &s) { return call_op<Tensor>(TP_OP("reshape"), a, s); }

// [1, C, 1, ...] for an input of `dim` dims: the shape per-channel parameters broadcast from.
static Shape channel_shape(int64_t c, int64_t dim) {
  Shape s(size_t(std::max<int64_t>(dim, 2)), 1);
  s[1] = c;
  return s;
}

// y * weight + bias with per-channel weight and bias of `c` elements.
static Tensor channel_affine(Tensor y, const std::optional<Tensor> &weight, const std::optional<Tensor> &bias,
                             int64_t c, const Shape &input_shape, const char *op) {
  for (const auto &[t, name] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}})
    TP_CHECK(!t || t->numel() == c, Runtime, op, ": Expected ", name, " to be a vector of size equal to the number "
             "of channels in input, but got ", name, " of shape ", shape_str(t->sizes()), " and input of shape ",
             shape_str(input_shape));
  const Shape cs = channel_shape(c, int64_t(input_shape.size()));
  if (weight) y = op_mul(y, op_view(*weight, cs));
  if (bias) y = op_add(y, op_view(*bias, cs));
  return y;
}

// Normalise each of num_groups groups of channels of each sample, then scale and shift per channel.
static Tensor group_norm(const Tensor &input, int64_t num_groups, std::optional<Tensor> weight,
                         std::optional<Tensor> bias, double eps, bool cudnn_enabled) {
  (void)cudnn_enabled;
  TP_CHECK(input.dim() >= 2, Runtime, "group_norm: Expected at least 2 dimensions for input tensor but received ",
           input.dim());
  const int64_t n = input.size(0), c = input.size(1);
  TP_CHECK(num_groups > 0 && c % num_groups == 0, Runtime, "Expected number of channels in input to be divisible "
           "by num_groups, but got input of shape ", shape_str(input.sizes()), " and num_groups=", num_groups);
  const int64_t group_size = n * num_groups == 0 ? 0 : input.numel() / (n * num_groups);
  Tensor grouped = op_view(input, Shape{n, num_groups, group_size});
  Tensor y = call_op<Tensor>(TP_OP("layer_norm"), grouped, Shape{group_size}, std::optional<Tensor>(),
                             std::optional<Tensor>(), eps, true);
  return channel_affine(op_view(y, input.sizes()), weight, bias, c, input.sizes(), "group_norm");
}

// Normalise each channel over the batch and spatial dims. training: batch statistics, and the running ones
// (when given) move toward them in place, the variance unbiased as in PyTorch; eval: the running statistics.
static Tensor batch_norm(const Tensor &input, std::optional<Tensor> weight, std::optional<Tensor> bias,
                         std::optional<Tensor> running_mean, std::optional<Tensor> running_var, bool training,
                         double momentum, double eps, bool cudnn_enabled) {
  (void)cudnn_enabled;
  TP_CHECK(input.dim() >= 2, Runtime, "batch_norm: Expected at least 2 dimensions for input tensor but received ",
           input.dim());
  const int64_t c = input.size(1), count = c == 0 ? 0 : input.numel() / c;
  for (const auto &[t, name] : {std::pair{running_mean, "running_mean"}, std::pair{running_var, "running_var"}})
    TP_CHECK(!t || t->numel() == c, Runtime, name, " should contain ", c, " elements not ", t->numel());
  const Shape cs = channel_shape(c, input.dim());
  Tensor mean, var;
  if (training) {
    TP_CHECK(count > 1 || input.device().is_meta(), Value, "Expected more than 1 value per channel when training, "
             "got input size ", shape_str(input.sizes()));
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
    std::tie(var, mean) = call_op<std::tuple<Tensor, Tensor>>(TP_OP("var_mean.correction"), input,
                                                               std::optional<std::vector<int64_t>>(dims),
                                                               std::optional<Scalar>(Scalar(int64_t(0))), true);
    // Note [Running statistics have no history]
    //   The running statistics are state, not results: PyTorch updates them outside autograd. Recorded, the
    //   in-place add would give running_mean/var a grad_fn reaching back into this batch's graph, so that an
    //   eval-mode backward later flows through them into stale graphs: wrong gradients upstream (the layers
    //   before the norm), or "backward through the graph a second time" once this step's graph is freed.
    //   Excluding the Autograd key for the update is grad mode off (tpx's no_grad) for these ops only.
    ExcludeKeysGuard no_grad(DispatchKey::Autograd);
    if (running_mean) {
      call_op<Tensor>(TP_OP("mul_"), *running_mean, wrapped_scalar(Scalar(1.0 - momentum)));
      call_op<Tensor>(TP_OP("add_"), *running_mean, op_view(mean, Shape{c}), Scalar(momentum));
    }
    if (running_var) {
      const double unbias = double(count) / double(std::max<int64_t>(count - 1, 1));
      call_op<Tensor>(TP_OP("mul_"), *running_var, wrapped_scalar(Scalar(1.0 - momentum)));
      call_op<Tensor>(TP_OP("add_"), *running_var, op_view(var, Shape{c}), Scalar(momentum * unbias));
    }
  } else {
    TP_CHECK(running_mean && running_var, Runtime,
             "batch_norm: running_mean and running_var must be defined in evaluation mode");
    mean = op_view(*running_mean, cs);
    var = op_view(*running_var, cs);
  }
  Tensor rstd = call_op<Tensor>(TP_OP("rsqrt"), op_add(var, wrapped_scalar(Scalar(eps))));
  Tensor y = op_mul(call_op<Tensor>(TP_OP("sub"), input, mean, Scalar(int64_t(1))), rstd);
  return channel_affine(y, weight, bias, c, input.sizes(), "batch_norm");
}

// Normalise each channel of each sample over its spatial dims: batch_norm on [1, N * C, *] with the
// parameters and running statistics repeated N times; the running statistics become the mean over samples.
static Tensor instance_norm(const Tensor &input, std::optional<Tensor> weight, std::optional<Tensor> bias,
                            std::optional<Tensor> running_mean, std::optional<Tensor> running_var,
                            bool use_input_stats, double momentum, double eps, bool cudnn_enabled) {
  TP_CHECK(input.dim() >= 2, Runtime, "instance_norm: Expected at least 2 dimensions for input tensor but "
           "received ", input.dim());
  const int64_t n = input.size(0), c = input.size(1);
  Shape flat = input.sizes();
  flat[0] = 1;
  flat[1] = n * c;
  auto repeated = [&](const std::optional<Tensor> &t) -> std::optional<Tensor> {
    if (!t) return std::nullopt;
    return call_op<Tensor>(TP_OP("repeat"), *t, Shape{n});
  };
  std::optional<Tensor> rm = repeated(running_mean), rv = repeated(running_var);
  Tensor y = batch_norm(op_view(input, flat), repeated(weight), repeated(bias), rm, rv, use_input_stats, momentum,
                        eps, cudnn_enabled);
  for (const auto &[mine, rep] : {std::pair{running_mean, rm}, std::pair{running_var, rv}})
    if (mine && use_input_stats) {
      Tensor avg = call_op<Tensor>(TP_OP("mean"), op_view(*rep, Shape{n, c}),
                                   std::optional<std::vector<int64_t>>(std::vector<int64_t>{0}), false,
                                   std::optional<ScalarType>());
      call_op<Tensor>(TP_OP("copy_"), *mine, avg, false);
    }
  return op_view(y, input.sizes());
}

TP_LIBRARY(norm) {
  lib.def("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
          "float eps=1e-05, bool cudnn_enable=True) -> Tensor");
  lib.def("rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor");
  lib.def("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
          "bool cudnn_enabled=True) -> Tensor");
  lib.def("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
          "bool training, float momentum, float eps, bool cudnn_enabled=True) -> Tensor");
  lib.def("instance_norm(Tensor input, Tensor? weight=None, Tensor? bias=None, Tensor? running_mean=None, "
          "Tensor? running_var=None, bool use_input_stats=True, float momentum=0.1, float eps=1e-05, "
          "bool cudnn_enabled=True) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<layer_norm>(lib, "layer_norm", key, __LINE__);
    impl_typed<rms_norm>(lib, "rms_norm", key, __LINE__);
  }
  TP_IMPL(lib, "group_norm", Composite, group_norm);
  TP_IMPL(lib, "batch_norm", Composite, batch_norm);
  TP_IMPL(lib, "instance_norm", Composite, instance_norm);
}

}  // namespace tp::p10
