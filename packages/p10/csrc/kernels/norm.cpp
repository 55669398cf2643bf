// norm.cpp — layer_norm and rms_norm: normalisation over the trailing `normalized_shape` dims.
//
// Where it sits: fused kernels rather than Composites of mean/var/sub/mul (STYLE.md rule 2): both are hot (every
// transformer block runs two) and layer_norm's variance is numerically delicate. They share the row view of
// softmax.cpp: the input made contiguous is [rows, N] with N = prod(normalized_shape), rows split over threads.
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
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// The input as contiguous rows of N = prod(normalized_shape); checks the shapes as PyTorch does.
static int64_t check_normalized_shape(const char *op, const Tensor &input, const Shape &normalized_shape,
                                      const std::optional<Tensor> &weight, const std::optional<Tensor> &bias) {
  const int64_t k = int64_t(normalized_shape.size());
  TP_CHECK(k >= 1, Runtime, op, ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
           "least one element, but got normalized_shape = ", shape_str(normalized_shape));
  for (const auto &[t, name] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}})
    TP_CHECK(!t || t->sizes() == normalized_shape, Runtime, op, ": Expected ", name,
             " to be of same shape as normalized_shape, but got ", name, " of shape ", shape_str(t->sizes()),
             " and normalized_shape = ", shape_str(normalized_shape));
  bool ok = input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == normalized_shape[size_t(i)];
  if (!ok) {
    std::string star = "[*";
    for (int64_t s : normalized_shape) star += ", " + std::to_string(s);
    TP_CHECK(false, Runtime, "Given normalized_shape=", shape_str(normalized_shape), ", expected input with shape ",
             star, "], but got input of size", shape_str(input.sizes()));
  }
  TP_CHECK(is_floating(input.dtype()), Runtime, op, ": expected a floating point input, got ",
           scalar_type_name(input.dtype()));
  return shape_numel(normalized_shape);
}

// A weight or bias as a contiguous tensor of the input's dtype (nullptr data when absent).
static Tensor as_param(const std::optional<Tensor> &t, ScalarType dtype) {
  if (!t) return Tensor();
  Tensor p = t->dtype() == dtype ? *t : cast_to(*t, dtype);
  return p.is_contiguous() ? p : call_op<Tensor>(TP_OP("contiguous"), p);
}

static Tensor contiguous(const Tensor &t) {
  return t.is_contiguous() ? t : call_op<Tensor>(TP_OP("contiguous"), t);
}

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

// torch.finfo(dtype).eps, rms_norm's default epsilon.
static double finfo_eps(ScalarType t) {
  switch (t) {
    case ScalarType::Float16: return 0.0009765625;
    case ScalarType::BFloat16: return 0.0078125;
    case ScalarType::Float32: return 1.1920928955078125e-07;
    default: return 2.220446049250313e-16;
  }
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

TP_LIBRARY(norm) {
  lib.def("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
          "float eps=1e-05, bool cudnn_enable=True) -> Tensor");
  lib.def("rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<layer_norm>(lib, "layer_norm", key, __LINE__);
    impl_typed<rms_norm>(lib, "rms_norm", key, __LINE__);
  }
}

}  // namespace tp::p10
