// ops_meta.h — asking the CPU op, on meta tensors, what a CUDA call must produce.
//
// Where it sits: used by ops_unary.cpp, ops_compare.cpp and ops_softmax.cpp. Every CPU kernel also serves the
// Meta key (it checks and shapes its result, then skips the loop), so calling the same op on meta copies of
// the CUDA arguments gives, with no arithmetic: the argument checks and their PyTorch messages, the result's
// shape, its dtype (type promotion, int -> float for exp, bool for eq) and its layout (Note [Layout
// preservation]). The CUDA kernels then only compute; the rules live once, in the CPU op.
#pragma once
#include "dispatch/kernel_box.h"

namespace tp::p10::cuda {

// A meta tensor with `t`'s sizes, strides and dtype. A CPU 0-d tensor (a number, `x * 2`) is passed as it is:
// the CPU ops take it beside meta tensors as beside CUDA ones, it promotes as a number, and value checks such
// as pow's "Integers to negative integer powers" still see its value.
inline Tensor meta_like(const Tensor &t) {
  if (!t.defined() || (t.device().is_cpu() && t.dim() == 0)) return t;
  Tensor m = empty_strided_tensor(t.sizes(), t.strides(), t.dtype(), Device{DeviceType::Meta, -1});
  m->is_wrapped_number = t->is_wrapped_number;
  return m;
}
inline std::optional<Tensor> meta_like(const std::optional<Tensor> &t) {
  return t ? std::optional<Tensor>(meta_like(*t)) : std::nullopt;
}

// A new CUDA tensor laid out as the meta result `m` (same sizes and strides), in `m`'s dtype.
inline Tensor empty_as_meta(const Tensor &m, Device device) {
  return empty_strided_tensor(m.sizes(), m.strides(), m.dtype(), device);
}

// The tensor a call writes: the given `out` (checked against the meta result `meta`), or a new one laid out as
// `meta`. CUDA ops do not resize an out= of another shape: they raise, naming `op` and both shapes.
inline Tensor result_tensor(const char *op, const Tensor &out, const Tensor &meta, Device device) {
  if (!out.defined()) return empty_as_meta(meta, device);
  TP_CHECK(out.sizes() == meta.sizes(), Runtime, op, ": out has shape ", shape_str(out.sizes()),
           " but the result has shape ", shape_str(meta.sizes()));
  TP_CHECK(out.device() == device, Runtime, op, ": the result is on ", device_str(device),
           " but the output tensor is on ", device_str(out.device()));
  out.bump_version();
  return out;
}

}  // namespace tp::p10::cuda
