// module.cpp — tensorplay_p10._C: module init, exception translation, and small free functions.
//
// Where it sits: the one NB_MODULE of P10. It registers every op (run_library_blocks), binds the Python
// types (py_tensor.cpp, py_ops.cpp, py_random.cpp, py_dlpack.cpp) and exports the C ABI table as the capsule
// other pillars import (Note [ABI evolution] in tp_abi.h).
#include <cstdlib>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "dispatch/dispatcher.h"
#include "loop/parallel.h"
#include "python/py_tensor.h"

namespace nb = nanobind;

namespace tp::p10 {
void bind_tensor(nb::module_ &m);
void bind_ops(nb::module_ &m);
void bind_random(nb::module_ &m);
void bind_dlpack(nb::module_ &m);
void bind_cuda(nb::module_ &m);  // cuda/py_cuda.cpp
const TP_Api *abi_table();
}  // namespace tp::p10

using namespace tp::p10;

NB_MODULE(_C, m) {
  m.doc() = "TensorPlay P10 native core: tensors, the dispatcher, kernels, RNG and the C ABI.";

  // C++ errors become the Python exception their kind names (docs/design.md §7).
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const Error &e) {
      PyObject *type = PyExc_RuntimeError;
      switch (e.kind) {
        case ErrorKind::Type: type = PyExc_TypeError; break;
        case ErrorKind::Value: type = PyExc_ValueError; break;
        case ErrorKind::Index: type = PyExc_IndexError; break;
        case ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
        default: break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  // P10 holds some Python objects for the life of the process on purpose: the Tensor class, the dtype objects
  // and every Python kernel registered with tensorplay.library. nanobind would report those as leaks at exit,
  // drowning real refcount bugs, so its report is opt-in here: TP_NB_LEAK_WARNINGS=1 (our own NB_DOMAIN, so
  // no other extension is affected).
  nb::set_leak_warnings(std::getenv("TP_NB_LEAK_WARNINGS") != nullptr);

  run_library_blocks();
  bind_tensor(m);
  bind_ops(m);
  bind_random(m);
  bind_dlpack(m);
  bind_cuda(m);

  // dtypes are passed as their codes here; tensorplay_p10/_dtype.py wraps these.
  m.def("_promote_types", [](int a, int b) { return int(promote_types(ScalarType(a), ScalarType(b))); });
  m.def("_can_cast", [](int a, int b) { return can_cast(ScalarType(a), ScalarType(b)); });
  m.def("_get_default_dtype", [] { return int(default_dtype()); });
  m.def("_set_default_dtype", [](int t) { set_default_dtype(ScalarType(t)); });
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", &set_num_threads, nb::arg("num"));

  m.attr("_tp_abi") = nb::steal(PyCapsule_New((void *)abi_table(), TP_ABI_CAPSULE_NAME, nullptr));
  m.attr("_abi_version") = nb::make_tuple(TP_ABI_MAJOR, TP_ABI_MINOR);
}
