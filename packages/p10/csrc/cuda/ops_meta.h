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

// A meta tensor with `t`'s sizes, strides and dtype; a wrapped number stays one, so it promotes as it would.
inline Tensor meta_like(const Tensor &t) {
  if (!t.defined()) return t;
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

}  // namespace tp::p10::cuda
