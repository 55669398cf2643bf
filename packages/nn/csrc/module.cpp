// tensorplay_nn._C — NN's native module.
//
// Where it sits: NN is a client of P10 and TPX. It imports P10's C ABI table
// (native/include/tensorplay/tp_abi.h) at init. Hot NN ops (attention, rms_norm, cross_entropy, ...) will be
// defined here as real ops with their own kernels (docs/design.md §6); today the module holds the ABI proof for
// that path: define a brand-new op from a schema string and register a boxed CPU kernel for it, without
// touching P10's source.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <tensorplay/tp_abi.h>

#include <cstdint>
#include <exception>
#include <string>

namespace nb = nanobind;

namespace tp::nn {

// P10's table; set once at module init, valid for the life of the process (fused_optim.cpp uses it too).
const TP_Api *api = nullptr;

int register_fused_optim_ops();                        // fused_optim.cpp
void set_cuda_kernel_dir(const std::string &dir);  // fused_optim.cpp

namespace {

[[noreturn]] void raise_pending_error() {
  api->raise_python_error();
  throw nb::python_error();
}

// ---- ABI proof: nn_abi_test::scale ----

constexpr const char *kScaleName = "nn_abi_test::scale";
constexpr const char *kScaleSchema = "nn_abi_test::scale(Tensor self, float factor) -> Tensor";

template <typename T>
void scale_loop(const T *x, T *out, int64_t n, double factor) {
  const T f = static_cast<T>(factor);
  for (int64_t i = 0; i < n; ++i) out[i] = f * x[i];
}

// The boxed CPU kernel: out = factor * self. Follows the header's conventions: args are borrowed, the output
// is a NEW reference, failures go through set_error + return 1, and no C++ exception leaves the function.
int scale_cpu(void * /*user_data*/, const TP_Op * /*op*/, const TP_Value *args, int64_t num_args,
              TP_Value *outs, int64_t num_outs) noexcept {
  try {
    if (num_args != 2 || num_outs != 1 || args[0].tag != TP_VALUE_TENSOR ||
        (args[1].tag != TP_VALUE_DOUBLE && args[1].tag != TP_VALUE_INT)) {
      api->set_error(TP_ERR_RUNTIME, "nn_abi_test::scale: expected (Tensor self, float factor) -> Tensor");
      return 1;
    }
    const TP_Tensor *self = args[0].v.tensor;
    const double factor = args[1].tag == TP_VALUE_DOUBLE ? args[1].v.d : static_cast<double>(args[1].v.i);
    const int dtype = api->tensor_dtype(self);
    if (dtype != TP_FLOAT32 && dtype != TP_FLOAT64) {
      const std::string msg =
          "nn_abi_test::scale: expected a float32 or float64 tensor for 'self', got dtype code " +
          std::to_string(dtype);
      api->set_error(TP_ERR_TYPE, msg.c_str());
      return 1;
    }
    if (!tp_tensor_is_contiguous(api, self)) {
      api->set_error(TP_ERR_NOT_IMPLEMENTED,
                     "nn_abi_test::scale: 'self' must be contiguous (this test kernel has no strided loop)");
      return 1;
    }
    const int64_t ndim = api->tensor_dim(self);
    TP_Tensor *out = api->tensor_empty(api->tensor_sizes(self), ndim, dtype, TP_DEVICE_CPU, 0);
    if (!out) return 1;  // tensor_empty already set the error
    const int64_t n = api->tensor_numel(self);
    void *dst = api->tensor_data_ptr(out);
    const void *src = api->tensor_data_ptr(self);
    if (dtype == TP_FLOAT32)
      scale_loop(static_cast<const float *>(src), static_cast<float *>(dst), n, factor);
    else
      scale_loop(static_cast<const double *>(src), static_cast<double *>(dst), n, factor);
    outs[0].tag = TP_VALUE_TENSOR;
    outs[0].v.tensor = out;  // hand our NEW reference to the caller
    return 0;
  } catch (const std::exception &e) {
    api->set_error(TP_ERR_RUNTIME, e.what());
    return 1;
  } catch (...) {
    api->set_error(TP_ERR_RUNTIME, "nn_abi_test::scale: unknown C++ exception");
    return 1;
  }
}

// Define nn_abi_test::scale and register its CPU kernel. Safe to call any number of times: the op is looked
// up first, and the kernel is registered once per process.
std::string abi_define_scale_op() {
  static bool kernel_registered = false;
  const TP_Op *op = api->op_find(kScaleName);
  if (!op) {
    op = api->op_define(kScaleSchema);
    if (!op) raise_pending_error();
  }
  if (!kernel_registered) {
    if (api->op_register_kernel(op, TP_KEY_CPU, scale_cpu, nullptr, __FILE__, __LINE__) != 0)
      raise_pending_error();
    kernel_registered = true;
  }
  return api->op_name(op);
}

}  // namespace
}  // namespace tp::nn

NB_MODULE(_C, m) {
  using namespace tp::nn;
  using namespace nb::literals;
  // Importing the table imports tensorplay_p10._C; on a missing or too-old P10 it leaves an ImportError set.
  api = tp_import_api();
  if (!api) throw nb::python_error();
  if (register_fused_optim_ops() != 0) raise_pending_error();  // nn::_fused_sgd_, nn::_fused_adam_ (optim)

  m.doc() = "NN's native module: hot NN ops registered through P10's C ABI (tp_abi.h).";
  m.def(
      "_abi_info", [] { return nb::make_tuple(api->abi_major, api->abi_minor, api->struct_size); },
      "(abi_major, abi_minor, struct_size) of the P10 C ABI table this module imported.");
  m.def("_set_cuda_kernel_dir", &set_cuda_kernel_dir, "dir"_a,
        "Where NN's .cu sources are (tensorplay_nn/cuda_kernels); the package sets it at import.");
  m.def("_abi_define_scale_op", &abi_define_scale_op,
        "ABI test: define nn_abi_test::scale(Tensor self, float factor) -> Tensor with a boxed CPU kernel; "
        "returns the op's name. Calling it again does nothing.");
}
