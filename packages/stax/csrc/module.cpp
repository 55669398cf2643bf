// tensorplay_stax._C — Stax's native module.
//
// Where it sits: Stax (capture and compile) is a client of P10 and TPX. Like every pillar it imports P10's
// C ABI table (native/include/tensorplay/tp_abi.h) at init and reaches tensors only through it. The native
// graph executor and fused CPU kernels will live here; today the module holds ABI proofs: tensor metadata (a
// Python Tensor turned into a handle: sizes, strides, offset, dtype, device) and dispatch keys (names by code,
// and the thread-local key sets as TP_KEY_* bitsets).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <tensorplay/tp_abi.h>

#include <cstdint>
#include <string>

namespace nb = nanobind;

namespace tp::stax {
namespace {

// P10's table; set once at module init, valid for the life of the process.
const TP_Api *api = nullptr;

[[noreturn]] void raise_pending_error() {
  api->raise_python_error();
  throw nb::python_error();
}

// Owns one NEW TP_Tensor reference and releases it on every path out, exceptions included.
class TensorRef {
 public:
  explicit TensorRef(TP_Tensor *t) : t_(t) {}
  TensorRef(const TensorRef &) = delete;
  TensorRef &operator=(const TensorRef &) = delete;
  ~TensorRef() {
    if (t_) api->tensor_decref(t_);
  }
  TP_Tensor *get() const { return t_; }

 private:
  TP_Tensor *t_;
};

nb::tuple int64_tuple(const int64_t *data, int64_t n) {
  nb::list out;
  for (int64_t i = 0; i < n; ++i) out.append(data[i]);
  return nb::tuple(out);
}

// ABI test: (sizes, strides, storage_offset, dtype code, device type code) of a Python Tensor.
nb::tuple abi_tensor_meta(nb::handle obj) {
  TensorRef t(api->tensor_from_python(obj.ptr()));
  if (!t.get()) raise_pending_error();
  const int64_t ndim = api->tensor_dim(t.get());
  return nb::make_tuple(int64_tuple(api->tensor_sizes(t.get()), ndim),
                        int64_tuple(api->tensor_strides(t.get()), ndim), api->tensor_storage_offset(t.get()),
                        api->tensor_dtype(t.get()), api->tensor_device_type(t.get()));
}

// ABI test: [(code, name)] for every code below key_count(); name is None for a code no key has.
nb::list abi_keys() {
  nb::list out;
  for (int code = 0; code < api->key_count(); ++code) {
    const char *name = api->key_name(code);
    out.append(nb::make_tuple(code, name ? nb::object(nb::str(name)) : nb::none()));
  }
  return out;
}

// ABI test: the thread-local (included, excluded) key sets, bitsets of TP_KEY_* codes.
nb::tuple abi_tls_keys() { return nb::make_tuple(api->tls_included(), api->tls_excluded()); }
void abi_set_tls_keys(TP_KeySet included, TP_KeySet excluded) {
  api->tls_set_included(included);
  api->tls_set_excluded(excluded);
}

}  // namespace
}  // namespace tp::stax

NB_MODULE(_C, m) {
  using namespace tp::stax;
  // Importing the table imports tensorplay_p10._C; on a missing or too-old P10 it leaves an ImportError set.
  api = tp_import_api();
  if (!api) throw nb::python_error();

  m.doc() = "Stax's native module: the graph executor's C++ side, talking to P10 through tp_abi.h.";
  m.def(
      "_abi_info", [] { return nb::make_tuple(api->abi_major, api->abi_minor, api->struct_size); },
      "(abi_major, abi_minor, struct_size) of the P10 C ABI table this module imported.");
  m.def("_abi_tensor_meta", &abi_tensor_meta, nb::arg("tensor"),
        "ABI test: (sizes, strides, storage_offset, dtype code, device type code) read through the C ABI.");
  m.def("_abi_keys", &abi_keys, "ABI test: [(TP_KEY_* code, name or None)] from key_count and key_name.");
  m.def(
      "_abi_key_find", [](const std::string &name) { return api->key_find(name.c_str()); }, nb::arg("name"),
      "ABI test: the TP_KEY_* code of a key name through key_find, -1 when unknown.");
  m.def("_abi_tls_keys", &abi_tls_keys, "ABI test: (included, excluded) thread-local key sets as TP_KEY_* bits.");
  m.def("_abi_set_tls_keys", &abi_set_tls_keys, nb::arg("included"), nb::arg("excluded"),
        "ABI test: set both thread-local key sets from TP_KEY_* bitsets.");
}
