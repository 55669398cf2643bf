// forward_ad.h — forward-mode AD: tangents carried next to tensors, pushed through each op as it runs.
//
// Where it sits: the recording kernel (record.cpp) calls propagate_tangents() after an op ran when forward AD is
// on (inside `tensorplay.autograd.forward_ad.dual_level()`) and an input carries a tangent. The tangent of each
// output is computed by the op's Python JVP (formulas/__init__.py, Note [JVP from the VJP]).
//
// Note [Forward AD dispatch]
//   A dual tensor need not require grad, so P10 would not route its ops to the Autograd key. While a dual level
//   is open, TPX adds Autograd to the thread-local *included* keys: every op passes through the recording kernel,
//   which looks for tangents. Computing a JVP runs ops itself, so forward AD is switched off meanwhile.
#pragma once
#include <vector>

#include "abi.h"
#include "record.h"

namespace tp::tpx {

bool forward_ad_enabled();
void set_forward_ad_enabled(bool on);
// Does any tensor input of the call carry a tangent?
bool any_tangent(const InputList &inputs);
// Compute and attach the outputs' tangents. `inputs` are the call's tensors (self's value before the op for an
// in-place op), `args` the boxed arguments, `results` the flattened outputs.
void propagate_tangents(const Formula &f, const TP_Value *args, int64_t nargs, const InputList &inputs,
                        TP_Tensor *old_self, const OutputList &results);
// Attach a tangent to `t` for the current dual level (cleared when the level exits).
void set_tangent(TP_Tensor *t, TensorRef tangent);
// Leave the dual level: every tangent attached in it is dropped.
void exit_dual_level();

}  // namespace tp::tpx
