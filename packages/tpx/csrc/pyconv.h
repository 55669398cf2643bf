// pyconv.h — tensors between Python objects and TPX's TensorRef (through P10's C ABI).
//
// Where it sits: used wherever TPX hands tensors to Python code (formulas, hooks, Functions) or takes them back.
// Undefined TensorRefs are Python's None both ways.
#pragma once
#include <nanobind/nanobind.h>

#include <vector>

#include "abi.h"

namespace tp::tpx {

namespace nb = nanobind;

inline nb::object to_python(TP_Tensor *t) { return t ? nb::steal(api->tensor_to_python(t)) : nb::none(); }
inline nb::object to_python(const TensorRef &t) { return to_python(t.get()); }

// A NEW reference to the tensor behind `h` (undefined for None); a non-tensor raises P10's TypeError.
inline TensorRef from_python(nb::handle h) {
  if (h.is_none()) return TensorRef();
  TP_Tensor *t = api->tensor_from_python(h.ptr());
  if (!t) throw_pending();
  return TensorRef::adopt(t);
}

// The tensor behind `h`, borrowed: valid while the Python object lives (binding arguments).
inline TP_Tensor *borrow_from_python(nb::handle h) {
  if (h.is_none()) return nullptr;
  TP_Tensor *t = api->tensor_from_python(h.ptr());
  if (!t) throw_pending();
  api->tensor_decref(t);
  return t;
}

// A Python sequence of tensors and Nones (what a backward returns).
inline std::vector<TensorRef> tensors_from_python(nb::handle seq) {
  std::vector<TensorRef> out;
  for (nb::handle x : seq) out.push_back(from_python(x));
  return out;
}

}  // namespace tp::tpx
