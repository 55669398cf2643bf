// tensorplay_tpx._C — TPX's native module.
//
// Where it sits: TPX (autograd) is a client of P10. It never links P10's C++; at init it imports P10's C ABI
// table (native/include/tensorplay/tp_abi.h) and from then on reaches tensors, ops and the dispatcher only
// through that table. The autograd engine will live here; today the module holds the ABI proof for wrapper
// keys: a boxed kernel registered at the Tracer key that counts its calls and hands on with op_redispatch —
// the same shape TPX's Autograd kernels will have (record, then redispatch below the key).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <tensorplay/tp_abi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_set>

namespace nb = nanobind;

namespace tp::tpx {
namespace {

// P10's table; set once at module init, valid for the life of the process.
const TP_Api *api = nullptr;

// Turn the error pending in P10's error channel into a Python exception and leave C++.
[[noreturn]] void raise_pending_error() {
  api->raise_python_error();
  throw nb::python_error();
}

// ---- ABI proof: a counting wrapper at the Tracer key ----

std::atomic<int64_t> wrapper_calls{0};
std::unordered_set<const TP_Op *> wrapped_ops;  // touched only with the GIL held

// A boxed wrapper kernel: count, then hand the same arguments to the next key below Tracer. Outputs written
// by the kernel below are already NEW references, which is what our caller expects (Note [ABI ownership]).
int counting_wrapper(void * /*user_data*/, const TP_Op *op, const TP_Value *args, int64_t num_args,
                     TP_Value *outs, int64_t num_outs) noexcept {
  wrapper_calls.fetch_add(1, std::memory_order_relaxed);
  return api->op_redispatch(op, TP_KEY_TRACER, args, num_args, outs, num_outs);
}

// Register the counting wrapper for `op_name` at TP_KEY_TRACER. Registering the same op twice is a no-op.
void abi_register_counting_wrapper(const std::string &op_name) {
  const TP_Op *op = api->op_find(op_name.c_str());
  if (!op) throw nb::value_error(("tensorplay_tpx: no op named '" + op_name + "' is registered").c_str());
  if (wrapped_ops.count(op)) return;
  if (api->op_register_kernel(op, TP_KEY_TRACER, counting_wrapper, nullptr, __FILE__, __LINE__) != 0)
    raise_pending_error();
  wrapped_ops.insert(op);
}

int64_t abi_wrapper_calls() { return wrapper_calls.load(std::memory_order_relaxed); }

}  // namespace
}  // namespace tp::tpx

NB_MODULE(_C, m) {
  using namespace tp::tpx;
  // Importing the table imports tensorplay_p10._C; on a missing or too-old P10 it leaves an ImportError set.
  api = tp_import_api();
  if (!api) throw nb::python_error();

  m.doc() = "TPX's native module: the autograd engine's C++ side, talking to P10 through tp_abi.h.";
  m.def(
      "_abi_info", [] { return nb::make_tuple(api->abi_major, api->abi_minor, api->struct_size); },
      "(abi_major, abi_minor, struct_size) of the P10 C ABI table this module imported.");
  m.def("_abi_register_counting_wrapper", &abi_register_counting_wrapper, nb::arg("op_name"),
        "ABI test: register a boxed kernel for op_name at the Tracer key that counts calls and "
        "redispatches.");
  m.def("_abi_wrapper_calls", &abi_wrapper_calls, "ABI test: how many times the counting wrapper has run.");
}
