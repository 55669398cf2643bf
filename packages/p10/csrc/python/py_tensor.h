// py_tensor.h — the bridge between C++ Tensors and Python `tensorplay_p10.Tensor` objects.
//
// Where it sits: used by the bindings (python/*.cpp) and the C ABI (abi/abi_table.cpp, for tensor_to_python
// and tensor_from_python). Note [Python object identity] in core/tensor.h explains the pyobj back-pointer.
#pragma once
#include <nanobind/nanobind.h>

#include "dispatch/value.h"

namespace tp::p10 {

// The C++ payload of a Python tensor object.
struct PyTensor {
  Tensor t;
  explicit PyTensor(Tensor x) : t(std::move(x)) {}
  ~PyTensor();
};

nanobind::object wrap(Tensor t);          // the tensor's Python object (the existing one if alive)
nanobind::object wrap_as(Tensor t, nanobind::handle cls);  // a new object of class `cls` (a Tensor subclass)
bool is_tensor(nanobind::handle h);
const Tensor &unwrap(nanobind::handle h);  // TypeError if h is not a Tensor

// dtype / device objects are Python classes (tensorplay_p10/_dtype.py, _device.py); C++ keeps their instances.
nanobind::object dtype_object(ScalarType t);
bool is_dtype(nanobind::handle h);
ScalarType dtype_from_object(nanobind::handle h);  // TypeError if not a dtype
nanobind::object device_object(Device d);
Device device_from_object(nanobind::handle h);     // accepts a device, "cuda:0", "cpu" or an int (cuda index)

// Python value <-> boxed Value according to a schema argument (python/py_ops.cpp).
struct Argument;
bool python_to_value(nanobind::handle obj, const Argument &arg, Value &out, bool no_number_as_tensor);
nanobind::object value_to_python(const Value &v);

}  // namespace tp::p10
