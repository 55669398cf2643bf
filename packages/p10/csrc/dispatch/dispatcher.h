// dispatcher.h — the op registry and the dispatcher: which kernel runs for a call.
//
// Where it sits: between every caller (Python, the C ABI, C++ kernels that call other ops) and the kernels.
//
// Note [One calling convention]
//   Every kernel can be called boxed: it receives the op's arguments on a Stack of Values (schema order,
//   defaults filled) and leaves the op's results there. Typed C++ kernels are adapted by kernel_box.h, so a
//   kernel author still writes `Tensor add(const Tensor&, const Tensor&, const Scalar&)`. One convention means
//   one path for Python, the C ABI, Python-registered kernels and C++ — a learner follows a single call from end
//   to end. C++ callers with typed arguments take a shortcut around the boxing (Note [Unboxed calls]).
//
// Note [Kernel lookup]
//   A call computes its KeySet: the backend key of each tensor argument (of the Device argument when there is
//   no tensor, else CPU), Autograd when any tensor requires grad, plus the thread-local included keys, minus the
//   thread-local excluded keys. Then, from the highest key down:
//     - the op's kernel for that key, if it has one;
//     - for Autograd: the op's Composite kernel (a decomposition is differentiated through its parts);
//     - for a backend key: the AnyBackend kernel, then the Composite kernel, then a NotImplementedError that
//       names the op, the key and the keys that do have kernels;
//     - for a wrapper key (Python, Tracer, Autocast, Autograd): a fallback registered for the key (for all
//       ops), else fall through to the next key.
//
// Note [Unboxed calls]
//   Boxing costs a Stack and a Value per argument. C++ callers that know the op's types (call_op in
//   kernel_box.h) skip it: a typed kernel registered with impl_typed<fn> also stores a typed entry point and
//   its signature. call_op computes the key set from its typed arguments, picks the kernel exactly as a boxed
//   call would, and calls the entry point directly when the kernel has one whose signature equals the call
//   site's argument types; otherwise (Python or C ABI kernels, a fallback, other argument types) it boxes.
//   tp.explain marks such calls "unboxed".
//
// Note [Redispatch]
//   A wrapper kernel hands on with redispatch(op, key, stack): the call continues with every key at or above
//   `key` masked out, and those keys stay excluded (thread-locally) while the inner kernel runs, so ops that
//   the inner kernel calls do not re-enter the wrapper (autograd does not record the insides of a backend).
#pragma once
#include <functional>
#include <memory>
#include <typeinfo>
#include <string>
#include <vector>

#include "dispatch/dispatch_key.h"
#include "dispatch/schema.h"

namespace tp::p10 {

struct Operator;
using BoxedKernelFn = void (*)(const Operator &op, Stack &stack, void *user_data);

using UnboxedFn = void (*)();  // a typed entry point, cast back to its real type by call_op (Note [Unboxed calls])

struct Kernel {
  BoxedKernelFn fn = nullptr;
  void *user_data = nullptr;
  std::string source;  // "csrc/kernels/binary.cpp:120" or "my_ops.py:12": shown by tp.explain
  UnboxedFn unboxed = nullptr;                 // typed kernels only
  const std::type_info *signature = nullptr;   // the real type of `unboxed`
  bool defined() const { return fn != nullptr; }
};

struct Operator {
  Schema schema;
  std::string name;     // qualified, with overload: "add.Tensor"
  Kernel kernels[kNumSlots];
  std::string defined_at;
  int num_args() const { return int(schema.args.size()); }
  int num_returns() const { return int(schema.returns.size()); }
  bool has_kernel(DispatchKey k) const { return kernels[int(k)].defined(); }
  std::string keys_with_kernels() const;  // "[CPU, Meta, Composite]"
};

// --- registry ------------------------------------------------------------------------------------------------
Operator &define_op(const std::string &schema, const std::string &defined_at);  // ValueError if already defined
Operator *find_op(const std::string &qualified_name);  // "add.Tensor"; nullptr if unknown
// All overloads of "add" (or "mylib::add"), in definition order.
const std::vector<Operator *> &find_overloads(const std::string &base_name);
std::vector<Operator *> all_ops();
void register_kernel(Operator &op, DispatchKey key, Kernel k);  // replaces any earlier kernel for the slot
void register_fallback(DispatchKey key, Kernel k);              // for a wrapper key, every op without a kernel
const Kernel *fallback_for(DispatchKey key);

// --- calling -------------------------------------------------------------------------------------------------
void call(const Operator &op, Stack &stack);                       // the stack holds exactly num_args values
void redispatch(const Operator &op, DispatchKey key, Stack &stack);  // Note [Redispatch]
KeySet compute_keys(const Operator &op, const Stack &stack);
// The pieces compute_keys is made of, for callers with typed arguments (call_op):
KeySet tensor_keys(const Tensor &t);  // backend key, plus Autograd when t requires grad
// Keys of a call from its tensors' keys, or (no tensor) its first Device argument, plus/minus the TLS sets.
KeySet finish_keys(KeySet from_tensors, bool saw_tensor, const Device *device);

// Which kernel serves a call with key set `ks` (Note [Kernel lookup]).
struct KernelChoice {
  const Kernel *kernel;
  DispatchKey key;
  const char *slot;  // the slot that served the key: its own name, "Composite", "AnyBackend" or "fallback"
};
KernelChoice select_kernel(const Operator &op, KeySet ks);

// Records one dispatch decision for tp.explain / TP_TRACE_DISPATCH while it is alive (nesting = depth).
class TraceScope {
 public:
  TraceScope(const Operator &op, KeySet ks, const KernelChoice &c, bool unboxed);
  ~TraceScope();
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;

 private:
  bool active_ = false;
};

// --- thread-local include / exclude --------------------------------------------------------------------------
struct LocalKeys { KeySet included, excluded; };
LocalKeys &local_keys();

// RAII: add keys to the thread-local excluded set for a scope.
struct ExcludeKeysGuard {
  KeySet saved;
  explicit ExcludeKeysGuard(KeySet ks) : saved(local_keys().excluded) { local_keys().excluded = saved | ks; }
  ~ExcludeKeysGuard() { local_keys().excluded = saved; }
};
struct IncludeKeysGuard {
  KeySet saved;
  explicit IncludeKeysGuard(KeySet ks) : saved(local_keys().included) { local_keys().included = saved | ks; }
  ~IncludeKeysGuard() { local_keys().included = saved; }
};

// --- tracing (tp.explain, TP_TRACE_DISPATCH=1) ------------------------------------------------------------------
struct TraceRecord {
  std::string op, keys, chosen, source;
  int depth;
  bool unboxed;
};
void set_trace_collect(bool on);            // collect records for tp.explain
std::vector<TraceRecord> take_trace();      // returns and clears the collected records
void set_trace_print(bool on);              // print each record to stderr as it happens

// --- registration blocks -------------------------------------------------------------------------------------
// Each kernel file has one registration block (TP_LIBRARY below). All blocks run at module init in two
// phases — every def() first, then every impl() — so a kernel file may implement an op defined in another.
struct Library {
  const char *file;
  void def(const std::string &schema);
  void impl(const std::string &op_name, DispatchKey key, BoxedKernelFn fn, int line, UnboxedFn unboxed = nullptr,
            const std::type_info *signature = nullptr);
  // internal: the queued work
  std::vector<std::string> defs;
  struct Impl {
    std::string op;
    DispatchKey key;
    BoxedKernelFn fn;
    int line;
    UnboxedFn unboxed;
    const std::type_info *signature;
  };
  std::vector<Impl> impls;
};
struct LibraryRegistrar {
  LibraryRegistrar(void (*block)(Library &), const char *file);
};
void run_library_blocks();  // called once from the module's init

#define TP_LIBRARY(tag)                                                                         \
  static void tp_library_block_##tag(::tp::p10::Library &lib);                                  \
  static ::tp::p10::LibraryRegistrar tp_library_registrar_##tag(tp_library_block_##tag, __FILE__); \
  static void tp_library_block_##tag(::tp::p10::Library &lib)

}  // namespace tp::p10
