// norm_backward.cpp — the fused backward kernels of layer_norm and rms_norm: layer_norm_backward and
// rms_norm_backward, PyTorch's native_layer_norm_backward idea (one pass over the rows instead of ~15 ops).
//
// Where it sits: the derivative formulas of layer_norm and rms_norm (tpx formulas/nn.py) call these when the
// backward pass is not itself recorded; under create_graph they use a composite of tp ops instead (Note
// [Norm backward paths] there). The row layout and shape checks are norm.cpp's (kernels/norm_common.h).
//
// Note [Norm backward]
//   Per row of N elements, with xhat = (x - mean) * rstd (mean = 0 for rms_norm), g = grad_out * weight:
//     grad_input  = rstd * (g - sum(g) / N - xhat * sum(g * xhat) / N)      (layer_norm)
//     grad_input  = rstd * (g - xhat * sum(g * xhat) / N)                   (rms_norm: no mean to move)
//     grad_weight = sum over rows of grad_out * xhat,  grad_bias = sum over rows of grad_out.
//   mean and rstd are recomputed exactly as the forward does (Note [Norm statistics] in norm.cpp): two cheap
//   passes over a row that is about to be read anyway, and nothing extra to keep between forward and backward.
//   Sums run in opmath_t (float32 for half/bfloat16/float32, float64 for float64). Rows are split into at
//   most get_num_threads() chunks; each chunk adds its rows' grad_weight/grad_bias terms into its own partial
//   vector, and the partials are added in chunk order afterwards, so there are no races and the result does
//   not depend on scheduling.
#include <cmath>
#include <tuple>
#include <vector>

#include "kernels/norm_common.h"
#include "loop/parallel.h"
#include "loop/reduce.h"

namespace tp::p10 {

namespace {

struct NormGrads {
  Tensor input, weight, bias;
};

// The three gradients of layer_norm (centered) or rms_norm over rows of n elements (Note [Norm backward]).
NormGrads norm_backward(const char *op, bool centered, const Tensor &grad_out, const Tensor &input,
                        const Shape &normalized_shape, const std::optional<Tensor> &weight, double eps,
                        bool want_input, bool want_weight, bool want_bias) {
  const int64_t n = check_normalized_shape(op, input, normalized_shape, weight, std::nullopt);
  TP_CHECK(grad_out.sizes() == input.sizes(), Runtime, op, ": Expected grad_out of the input's shape ",
           shape_str(input.sizes()), ", but got grad_out of shape ", shape_str(grad_out.sizes()));
  TP_CHECK(is_floating(grad_out.dtype()), Runtime, op, ": expected a floating point grad_out, got ",
           scalar_type_name(grad_out.dtype()));
  Tensor x = contiguous(input);
  Tensor dy = contiguous(grad_out.dtype() == x.dtype() ? grad_out : cast_to(grad_out, x.dtype()));
  Tensor w = as_param(weight, x.dtype());
  want_weight = want_weight && weight.has_value();
  const ScalarType param_dtype = weight ? weight->dtype() : x.dtype();
  NormGrads out;
  if (want_input) out.input = empty_tensor(x.sizes(), x.dtype(), x.device());
  if (want_weight) out.weight = empty_tensor(normalized_shape, x.dtype(), x.device());
  if (want_bias) out.bias = empty_tensor(normalized_shape, x.dtype(), x.device());
  if (x.device().is_meta()) {
    for (Tensor *t : {&out.weight, &out.bias})
      if (t->defined() && param_dtype != x.dtype()) *t = empty_tensor(normalized_shape, param_dtype, x.device());
    return out;
  }
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  const int64_t grain_rows = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), (rows + grain_rows - 1) / grain_rows));
  TP_DISPATCH_FLOATING(x.dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    const T *xp = x.data<T>(), *gp = dy.data<T>(), *wp = w.defined() ? w.data<T>() : nullptr;
    T *dx = want_input ? out.input.data<T>() : nullptr;
    std::vector<M> part_w(want_weight ? size_t(chunks * n) : 0), part_b(want_bias ? size_t(chunks * n) : 0);
    const M inv_n = n ? M(1) / M(n) : M(0);
    parallel_for(0, chunks, 1, [&](int64_t c_lo, int64_t c_hi) {
      for (int64_t c = c_lo; c < c_hi; ++c) {
        M *pw = want_weight ? part_w.data() + c * n : nullptr, *pb = want_bias ? part_b.data() + c * n : nullptr;
        for (int64_t r = rows * c / chunks; r < rows * (c + 1) / chunks; ++r) {
          const T *xr = xp + r * n, *gr = gp + r * n;
          M mean(0), var;
          if (centered) {
            mean = pairwise_sum<M>(xr, n, 1, [](T v) { return M(v); }) / M(n);
            var = pairwise_sum<M>(xr, n, 1, [mean](T v) { return (M(v) - mean) * (M(v) - mean); }) / M(n);
          } else {
            var = pairwise_sum<M>(xr, n, 1, [](T v) { return M(v) * M(v); }) / M(n);
          }
          const M rstd = M(1) / std::sqrt(var + M(eps));
          if (dx) {
            M sum_g(0), sum_gx(0);
            for (int64_t k = 0; k < n; ++k) {
              const M g = wp ? M(gr[k]) * M(wp[k]) : M(gr[k]);
              sum_g += g;
              sum_gx += g * ((M(xr[k]) - mean) * rstd);
            }
            const M a = centered ? sum_g * inv_n : M(0), b = sum_gx * inv_n;
            T *dr = dx + r * n;
            for (int64_t k = 0; k < n; ++k) {
              const M g = wp ? M(gr[k]) * M(wp[k]) : M(gr[k]);
              dr[k] = T(rstd * (g - a - (M(xr[k]) - mean) * rstd * b));
            }
          }
          if (pw)
            for (int64_t k = 0; k < n; ++k) pw[k] += M(gr[k]) * ((M(xr[k]) - mean) * rstd);
          if (pb)
            for (int64_t k = 0; k < n; ++k) pb[k] += M(gr[k]);
        }
      }
    });
    // Partials added in chunk order (Note [Norm backward]).
    for (const auto &[part, t] : {std::pair{&part_w, &out.weight}, std::pair{&part_b, &out.bias}}) {
      if (!t->defined()) continue;
      T *o = t->template data<T>();
      for (int64_t k = 0; k < n; ++k) {
        M s(0);
        for (int64_t c = 0; c < chunks; ++c) s += (*part)[size_t(c * n + k)];
        o[k] = T(s);
      }
    }
  });
  for (Tensor *t : {&out.weight, &out.bias})
    if (t->defined() && param_dtype != x.dtype()) *t = cast_to(*t, param_dtype);
  return out;
}

}  // namespace

// (grad_input, grad_weight, grad_bias) of layer_norm; each is None when its flag is off (grad_weight also
// when weight is None).
static std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor &grad_out, const Tensor &input,
                                                              Shape normalized_shape, std::optional<Tensor> weight,
                                                              double eps, bool input_grad, bool weight_grad,
                                                              bool bias_grad) {
  NormGrads g = norm_backward("layer_norm_backward", true, grad_out, input, normalized_shape, weight, eps,
                              input_grad, weight_grad, bias_grad);
  return {g.input, g.weight, g.bias};
}

// (grad_input, grad_weight) of rms_norm; eps=None is the forward's default, finfo(input.dtype).eps.
static std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor &grad_out, const Tensor &input,
                                                    Shape normalized_shape, std::optional<Tensor> weight,
                                                    std::optional<double> eps, bool input_grad, bool weight_grad) {
  NormGrads g = norm_backward("rms_norm_backward", false, grad_out, input, normalized_shape, weight,
                              eps.value_or(finfo_eps(input.dtype())), input_grad, weight_grad, false);
  return {g.input, g.weight};
}

TP_LIBRARY(norm_backward) {
  lib.def("layer_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor? weight, float eps, "
          "bool input_grad=True, bool weight_grad=True, bool bias_grad=True) -> (Tensor, Tensor, Tensor)");
  lib.def("rms_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor? weight, "
          "float? eps=None, bool input_grad=True, bool weight_grad=True) -> (Tensor, Tensor)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<layer_norm_backward>(lib, "layer_norm_backward", key, __LINE__);
    impl_typed<rms_norm_backward>(lib, "rms_norm_backward", key, __LINE__);
  }
}

}  // namespace tp::p10
