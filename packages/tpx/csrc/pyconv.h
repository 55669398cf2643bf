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

// A boxed argument as Python sees it (dtypes and devices stay integer codes): forward-mode JVPs and
// formulas' decompose hooks read a call's arguments this way.
inline nb::object value_to_python(const TP_Value &v) {
  switch (v.tag) {
    case TP_VALUE_TENSOR: return to_python(v.v.tensor);
    case TP_VALUE_INT: case TP_VALUE_DTYPE: case TP_VALUE_DEVICE: return nb::int_(v.v.i);
    case TP_VALUE_DOUBLE: return nb::float_(v.v.d);
    case TP_VALUE_COMPLEX: return nb::steal(PyComplex_FromDoubles(v.v.c.re, v.v.c.im));
    case TP_VALUE_BOOL: return nb::bool_(v.v.i != 0);
    case TP_VALUE_STRING: return nb::str(v.v.s ? v.v.s : "");
    case TP_VALUE_INT_LIST: {
      nb::list l;
      for (int64_t i = 0; i < v.v.ints.len; ++i) l.append(v.v.ints.data[i]);
      return nb::tuple(l);
    }
    case TP_VALUE_TENSOR_LIST: {
      nb::list l;
      for (int64_t i = 0; i < v.v.tensors.len; ++i) l.append(to_python(v.v.tensors.data[i]));
      return l;
    }
    default: return nb::none();
  }
}

}  // namespace tp::tpx
