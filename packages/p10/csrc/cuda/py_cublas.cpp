// py_cublas.cpp — the cuBLAS bindings of tensorplay_p10._C._cuda: the library locator, a probe that loads
// cuBLAS from a given path, its version, and the float32 matmul precision.
//
// Where it sits: beside py_cuda.cpp (which calls bind_cublas); tensorplay_p10/cuda/_cublas.py registers the
// locator and tensorplay_p10/backends/ wraps the precision setting with PyTorch's names. No logic here.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "cuda/cublas.h"

namespace nb = nanobind;

namespace tp::p10 {

void bind_cublas(nb::module_ &m) {
  using namespace cuda;
  m.def("_set_cublas_locator", [](nb::callable fn) {
    // Called from C++ ops (with or without the GIL held): take it, call Python, copy the path out.
    nb::object keep = fn;
    set_cublas_locator([keep]() -> std::string {
      nb::gil_scoped_acquire gil;
      return nb::cast<std::string>(keep());
    });
  });
  m.def("_load_cublas", [](const std::string &path) {
    CublasApi api = load_cublas(path);  // a separate table: probing never replaces the process-wide one
    const int version = api.version;
    close_cublas(api);
    return version;
  });
  m.def("_cublas_version", [] { return cublas().version; });
  m.def("_cublas_path", [] { return cublas().path; });
  m.def("_set_float32_matmul_precision", &set_float32_matmul_precision);
  m.def("_float32_matmul_precision", &float32_matmul_precision);
}

}  // namespace tp::p10
