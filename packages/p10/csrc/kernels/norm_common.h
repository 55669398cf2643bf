// norm_common.h — what the layer_norm / rms_norm forward kernels (norm.cpp) and their fused backward kernels
// (norm_backward.cpp) share: the shape checks, the row layout and rms_norm's default epsilon.
//
// Where it sits: both files see the input made contiguous as [rows, N], N = prod(normalized_shape), the
// weight and bias as contiguous vectors of N elements of the input's dtype.
#pragma once
#include <string>
#include <utility>

#include "dispatch/kernel_box.h"
#include "kernels/binary_common.h"

namespace tp::p10 {

// N = prod(normalized_shape), after checking the shapes as PyTorch does (op names the caller in messages).
inline int64_t check_normalized_shape(const char *op, const Tensor &input, const Shape &normalized_shape,
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

inline Tensor contiguous(const Tensor &t) {
  return t.is_contiguous() ? t : call_op<Tensor>(TP_OP("contiguous"), t);
}

// A weight or bias as a contiguous tensor of `dtype` (undefined when absent).
inline Tensor as_param(const std::optional<Tensor> &t, ScalarType dtype) {
  if (!t) return Tensor();
  return contiguous(t->dtype() == dtype ? *t : cast_to(*t, dtype));
}

// torch.finfo(dtype).eps, rms_norm's default epsilon.
inline double finfo_eps(ScalarType t) {
  switch (t) {
    case ScalarType::Float16: return 0.0009765625;
    case ScalarType::BFloat16: return 0.0078125;
    case ScalarType::Float32: return 1.1920928955078125e-07;
    default: return 2.220446049250313e-16;
  }
}

}  // namespace tp::p10
