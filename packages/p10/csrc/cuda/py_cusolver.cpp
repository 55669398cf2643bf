// py_cusolver.cpp — the cuSOLVER bindings of tensorplay_p10._C._cuda: the library locator, a probe that loads
// cuSOLVER from given files, and the version and path of the process-wide copy.
//
// Where it sits: beside py_cublas.cpp (py_cuda.cpp calls bind_cusolver); tensorplay_p10/cuda/_cusolver.py
// registers the locator and wraps the probe. No logic here.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "cuda/cusolver.h"

namespace nb = nanobind;

namespace tp::p10 {

void bind_cusolver(nb::module_ &m) {
  using namespace cuda;
  m.def("_set_cusolver_locator", [](nb::callable fn) {
    // Called from C++ ops (with or without the GIL held): take it, call Python, copy the paths out.
    nb::object keep = fn;
    set_cusolver_locator([keep]() -> std::vector<std::string> {
      nb::gil_scoped_acquire gil;
      return nb::cast<std::vector<std::string>>(keep());
    });
  });
  m.def("_load_cusolver", [](const std::vector<std::string> &files) {
    CusolverApi api = load_cusolver(files);  // a separate table: probing never replaces the process-wide one
    const int version = api.version;
    close_cusolver(api);
    return version;
  });
  m.def("_cusolver_version", [] { return cusolver().version; });
  m.def("_cusolver_path", [] { return cusolver().path; });
}

}  // namespace tp::p10
