// tensor_iterator.cpp — broadcasting, promotion, output allocation and stride set-up for elementwise ops.
#include "loop/tensor_iterator.h"

#include "dispatch/kernel_box.h"

namespace tp::p10 {

// See Note [Result type] in the header.
static int category(ScalarType t) {
  if (t == ScalarType::Bool) return 0;
  if (is_integral(t, false)) return 1;
  if (is_floating(t)) return 2;
  return 3;
}

// `higher` is the dtype of a higher tier, `lower` of a lower one; -1 encodes "no operand in this tier".
static int combine_tiers(int higher, int lower) {
  if (higher < 0) return lower;
  if (lower < 0) return higher;
  ScalarType h = ScalarType(higher), l = ScalarType(lower);
  if (is_complex(h)) return higher;
  if (is_complex(l)) return int(is_floating(h) ? to_complex(h) : l);
  if (is_floating(h)) return higher;
  if (h == ScalarType::Bool || is_floating(l)) return int(promote_types(h, l));
  return higher;
}

ScalarType result_type(const std::vector<Tensor> &operands) {
  int tiers[3] = {-1, -1, -1};  // dims, zero-dim, wrapped numbers
  for (const Tensor &t : operands) {
    if (!t.defined()) continue;
    int tier = t->is_wrapped_number ? 2 : t.dim() == 0 ? 1 : 0;
    ScalarType st = t.dtype();
    if (tier == 2) {  // a Python float/complex counts as the default dtype, not as float64
      if (is_floating(st)) st = default_dtype();
      else if (is_complex(st)) st = to_complex(default_dtype());
    }
    tiers[tier] = tiers[tier] < 0 ? int(st) : int(promote_types(ScalarType(tiers[tier]), st));
  }
  int r = combine_tiers(tiers[0], combine_tiers(tiers[1], tiers[2]));
  return r < 0 ? default_dtype() : ScalarType(r);
}

// The layout of a new output (Note [Layout preservation] in core/tensor.h), PyTorch's rule for elementwise ops:
// order the dims outer-to-inner by the inputs' strides. For each pair of dims the first input that tells them
// apart decides (a broadcast dim, stride 0, tells nothing); equal strides put the larger size outside.
static Shape output_strides(const Shape &shape, const std::vector<Tensor> &inputs) {
  const int64_t nd = int64_t(shape.size());
  auto stride_of = [&](const Tensor &t, int64_t d) -> int64_t {
    int64_t td = d - (nd - t.dim());
    return (td < 0 || t.sizes()[td] == 1) ? 0 : t.strides()[td];
  };
  // true when dim `a` should sit inside dim `b` (a has the smaller stride for the first deciding input)
  auto inner = [&](int64_t a, int64_t b) {
    for (const Tensor &t : inputs) {
      int64_t sa = stride_of(t, a), sb = stride_of(t, b);
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb;
      if (shape[a] != shape[b]) return shape[a] < shape[b];
    }
    return false;
  };
  std::vector<int64_t> perm(nd);
  for (int64_t d = 0; d < nd; ++d) perm[d] = d;
  for (int64_t i = 1; i < nd; ++i)  // insertion sort: stable, and no reordering unless an input asks for it
    for (int64_t j = i; j > 0 && inner(perm[j - 1], perm[j]); --j) std::swap(perm[j - 1], perm[j]);
  return strides_in_order(shape, perm);
}

TensorIterator::TensorIterator(const IterConfig &cfg, Tensor out, std::vector<Tensor> inputs) : op_(cfg.op) {
  TP_CHECK(inputs.size() + 1 <= size_t(kMaxOperands), Runtime, "internal: too many operands for ", cfg.op);
  // 1. broadcast shape and device
  Shape shape;
  Device device = inputs.empty() ? (out.defined() ? out.device() : Device{}) : inputs[0].device();
  for (const Tensor &t : inputs) {
    shape = broadcast_shapes(shape, t.sizes(), cfg.op);
    // Wrapped numbers and zero-dim CPU tensors may mix with any device, as in PyTorch.
    if (t.device() != device && !(t.dim() == 0 && t.device().is_cpu())) {
      if (device.is_cpu() && inputs[0].dim() == 0) device = t.device();
      else fail(ErrorKind::Runtime, cfg.op, ": Expected all tensors to be on the same device, but found at least "
                "two devices, ", device_str(device), " and ", device_str(t.device()), "!");
    }
  }
  // Note [No host reads of device memory]: these loops run on the host.
  if (device.type == DeviceType::CUDA || (out.defined() && out.device().type == DeviceType::CUDA)) [[unlikely]]
    fail(ErrorKind::NotImplemented, cfg.op, ": no CUDA kernel yet (the CPU loop was reached with a ",
         device_str(out.defined() && out.device().type == DeviceType::CUDA ? out.device() : device), " tensor)");
  // In place (and fill_/copy_): the inputs must broadcast *to* the output, which keeps its shape.
  if (out.defined() && !cfg.resize_out) {
    Shape full = broadcast_shapes(shape, out.sizes(), cfg.op);
    TP_CHECK(full == out.sizes(), Runtime, cfg.op, ": output with shape ", shape_str(out.sizes()),
             " doesn't match the broadcast shape ", shape_str(full));
    shape = out.sizes();
  }
  is_meta_ = device.is_meta();

  // 2. dtypes
  common_dtype_ = cfg.compute_dtype ? *cfg.compute_dtype : result_type(inputs);
  if (cfg.int_to_float && !cfg.compute_dtype && is_integral(common_dtype_, true)) common_dtype_ = default_dtype();
  ScalarType out_dtype = cfg.out_dtype ? *cfg.out_dtype : common_dtype_;

  ntensors_ = int(inputs.size()) + 1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor t = inputs[i];
    if (cfg.promote_inputs && t.dtype() != common_dtype_) t = cast_to(t, common_dtype_);
    operands_[i + 1] = std::move(t);
  }

  // 3. output
  if (out.defined()) {
    TP_CHECK(out.device() == device || is_meta_, Runtime, cfg.op, ": output is on ", device_str(out.device()),
             " but the inputs are on ", device_str(device));
    TP_CHECK(can_cast(out_dtype, out.dtype()), Runtime, cfg.op, ": result type ", scalar_type_name(out_dtype),
             " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
    if (out.sizes() != shape) {
      TP_CHECK(cfg.resize_out, Runtime, cfg.op, ": output with shape ", shape_str(out.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
      TP_CHECK(out.numel() == 0 || out.is_contiguous(), Runtime, cfg.op,
               ": cannot resize a non-contiguous out= tensor from ", shape_str(out.sizes()), " to ", shape_str(shape));
      auto fresh = empty_tensor(shape, out.dtype(), out.device());
      out->storage = fresh->storage;
      out->set_geometry(shape, contiguous_strides(shape), 0);
    }
    if (out.dtype() != out_dtype) {  // Note [Output casting]: compute into a temporary, copy back in finish()
      user_out_ = out;
      out = empty_tensor(shape, out_dtype, device);
    }
    out.bump_version();
  } else {
    out = empty_strided_tensor(shape, output_strides(shape, inputs), out_dtype, device);
  }
  operands_[0] = out;
  numel_ = shape_numel(shape);
  shape_ = shape;
  compute_strides();
  coalesce();
}

// Note [Output casting]
//   When out= (or an in-place self) has another dtype than the computation, the loop writes a temporary of the
//   computation dtype and finish() casts it into the user's tensor. Kernels therefore always see one output
//   type, which keeps the number of template instantiations down.
Tensor TensorIterator::finish() {
  if (!user_out_.defined()) return operands_[0];
  if (!is_meta_) call_op(TP_OP("copy_"), user_out_, operands_[0]);  // casts and handles any layout in one pass
  return user_out_;
}

TensorIterator TensorIterator::unary(const char *op, Tensor out, const Tensor &a, bool int_to_float) {
  return TensorIterator({.op = op, .int_to_float = int_to_float}, std::move(out), {a});
}

TensorIterator TensorIterator::binary(const char *op, Tensor out, const Tensor &a, const Tensor &b,
                                      bool int_to_float, bool inplace) {
  return TensorIterator({.op = op, .int_to_float = int_to_float, .resize_out = !inplace}, std::move(out), {a, b});
}

void TensorIterator::compute_strides() {
  const int nd = int(shape_.size());
  strides_.assign(nd, {});
  for (int k = 0; k < ntensors_; ++k) {
    const Tensor &t = operands_[k];
    const int64_t item = t.impl()->itemsize();
    const int off = nd - int(t.dim());  // operand dims align to the right
    for (int d = 0; d < nd; ++d) {
      int td = d - off;
      strides_[d][k] = (td < 0 || t.sizes()[td] == 1) ? 0 : t.strides()[td] * item;
    }
  }
}

// Merge neighbouring dims that every operand steps through as one (d+1's run continues into d).
void TensorIterator::coalesce() {
  if (shape_.size() <= 1) return;
  Shape shape{shape_[0]};
  std::vector<std::array<int64_t, kMaxOperands>> strides{strides_[0]};
  for (size_t d = 1; d < shape_.size(); ++d) {
    bool mergeable = true;
    for (int k = 0; k < ntensors_; ++k)
      if (shape_[d] != 1 && shape.back() != 1 && strides.back()[k] != strides_[d][k] * shape_[d]) mergeable = false;
    if (mergeable) {
      // take the inner dim's strides (or the outer ones if the inner dim is size 1)
      if (shape_[d] != 1) strides.back() = strides_[d];
      shape.back() *= shape_[d];
    } else {
      shape.push_back(shape_[d]);
      strides.push_back(strides_[d]);
    }
  }
  shape_ = std::move(shape);
  strides_ = std::move(strides);
}

}  // namespace tp::p10
