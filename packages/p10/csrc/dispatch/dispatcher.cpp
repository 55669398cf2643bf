// dispatcher.cpp — the op registry, key-set computation and kernel lookup (Notes in dispatcher.h).
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_box.h"

#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace tp::p10 {

// ---- operators (key names and KeySet::str live in dispatch_key.cpp) ----------------------------------------
std::string Operator::keys_with_kernels() const {
  std::string s = "[";
  bool first = true;
  for (int i = 0; i < kNumSlots; ++i)
    if (kernels[i].defined()) { s += (first ? "" : ", ") + std::string(dispatch_key_name(DispatchKey(i))); first = false; }
  return s + "]";
}

// ---- registry -----------------------------------------------------------------------------------------------
namespace {
struct Registry {
  // Operators are never freed or moved (TP_Op* handles and Operator& references stay valid forever).
  std::vector<std::unique_ptr<Operator>> ops;
  std::unordered_map<std::string, Operator *> by_name;
  std::unordered_map<std::string, std::vector<Operator *>> overloads;
  Kernel fallbacks[kNumRuntimeKeys];
};
Registry &registry() {
  static Registry *r = new Registry();  // leaked on purpose: kernels may run during interpreter teardown
  return *r;
}
}  // namespace

Operator &define_op(const std::string &schema_text, const std::string &defined_at) {
  Schema schema = parse_schema(schema_text);
  std::string name = schema.qualified_name();
  auto &reg = registry();
  TP_CHECK(!reg.by_name.count(name), Value, "define: op '", name, "' is already defined (at ",
           reg.by_name[name]->defined_at, ")");
  auto op = std::make_unique<Operator>();
  op->schema = std::move(schema);
  op->name = name;
  op->defined_at = defined_at;
  Operator *p = op.get();
  reg.ops.push_back(std::move(op));
  reg.by_name[name] = p;
  reg.overloads[p->schema.base_name()].push_back(p);
  return *p;
}

Operator *find_op(const std::string &name) {
  auto &reg = registry();
  auto it = reg.by_name.find(name);
  if (it != reg.by_name.end()) return it->second;
  auto ov = reg.overloads.find(name);  // a base name with exactly one overload
  if (ov != reg.overloads.end() && ov->second.size() == 1) return ov->second[0];
  return nullptr;
}

const std::vector<Operator *> &find_overloads(const std::string &base_name) {
  static const std::vector<Operator *> none;
  auto &reg = registry();
  auto it = reg.overloads.find(base_name);
  return it == reg.overloads.end() ? none : it->second;
}

std::vector<Operator *> all_ops() {
  std::vector<Operator *> v;
  for (auto &p : registry().ops) v.push_back(p.get());
  return v;
}

void register_kernel(Operator &op, DispatchKey key, Kernel k) { op.kernels[int(key)] = std::move(k); }

void register_fallback(DispatchKey key, Kernel k) {
  TP_CHECK(is_wrapper_key(key), Value, "register_fallback: only wrapper keys ", kWrapperKeys.str(),
           " take fallbacks, got ", dispatch_key_name(key));
  registry().fallbacks[int(key)] = std::move(k);
}

const Kernel *fallback_for(DispatchKey key) {
  const Kernel &k = registry().fallbacks[int(key)];
  return k.defined() ? &k : nullptr;
}

// ---- thread-local state -------------------------------------------------------------------------------------
LocalKeys &local_keys() {
  thread_local LocalKeys keys;
  return keys;
}

namespace {
struct TraceState {
  bool collect = false;
  bool print = std::getenv("TP_TRACE_DISPATCH") && std::getenv("TP_TRACE_DISPATCH")[0] == '1';
  int depth = 0;
  std::vector<TraceRecord> records;
};
TraceState &trace_state() {
  thread_local TraceState s;
  return s;
}
}  // namespace

void set_trace_collect(bool on) { trace_state().collect = on; }
void set_trace_print(bool on) { trace_state().print = on; }
std::vector<TraceRecord> take_trace() {
  std::vector<TraceRecord> r;
  r.swap(trace_state().records);
  return r;
}

// ---- calling ------------------------------------------------------------------------------------------------
static KeySet backend_key(Device d) {
  switch (d.type) {
    case DeviceType::CPU: return DispatchKey::CPU;
    case DeviceType::CUDA: return DispatchKey::CUDA;
    case DeviceType::Meta: return DispatchKey::Meta;
    case DeviceType::PrivateUse1: return DispatchKey::PrivateUse1;
  }
  return DispatchKey::CPU;
}

KeySet tensor_keys(const Tensor &t) {
  KeySet ks = backend_key(t.device());
  if (t->requires_grad) ks = ks | DispatchKey::Autograd;
  if (t.is_fake()) [[unlikely]] ks = ks | DispatchKey::Fake;  // Note [Fake tensors] (fake_tensor.cpp)
  return ks;
}

KeySet finish_keys(KeySet ks, bool saw_tensor, const Device *device) {
  // Factories have no tensor argument: their `device=` picks the backend (PyTorch's BackendSelect).
  if (!saw_tensor) ks = ks | (device ? backend_key(*device) : KeySet(DispatchKey::CPU));
  const LocalKeys &lk = local_keys();
  return (ks | lk.included) - lk.excluded;
}

KeySet compute_keys(const Operator &op, const Stack &stack) {
  KeySet ks;
  bool saw_tensor = false;
  const Device *device = nullptr;
  for (size_t i = 0; i < op.schema.args.size() && i < stack.size(); ++i) {
    const Value &v = stack[i];
    if (v.tag == Value::Tag::Tensor) {
      ks = ks | tensor_keys(v.tensor);
      saw_tensor = true;
    } else if (v.tag == Value::Tag::TensorList) {
      for (const Tensor &t : v.tensors)
        if (t.defined()) { ks = ks | tensor_keys(t); saw_tensor = true; }
    } else if (v.tag == Value::Tag::Device && !device) {
      device = &v.device;
    }
  }
  return finish_keys(ks, saw_tensor, device);
}

// Which kernel serves `key` for `op` (Note [Kernel lookup]); nullptr = fall through to the next key.
static const Kernel *lookup(const Operator &op, DispatchKey key, const char **slot) {
  const Kernel &own = op.kernels[int(key)];
  *slot = dispatch_key_name(key);
  if (own.defined()) return &own;
  const Kernel &composite = op.kernels[int(DispatchKey::Composite)];
  if (is_backend_key(key)) {
    const Kernel &any = op.kernels[int(DispatchKey::AnyBackend)];
    if (any.defined()) { *slot = "AnyBackend"; return &any; }
    if (composite.defined()) { *slot = "Composite"; return &composite; }
    fail(ErrorKind::NotImplemented, "Could not run '", op.name, "' with arguments from the '",
         dispatch_key_name(key), "' backend: the op has no kernel for that key. Keys with kernels: ",
         op.keys_with_kernels());
  }
  if (key == DispatchKey::Autograd && composite.defined()) { *slot = "Composite"; return &composite; }
  if (const Kernel *fb = fallback_for(key)) { *slot = "fallback"; return fb; }
  return nullptr;
}

KernelChoice select_kernel(const Operator &op, KeySet ks) {
  for (;;) {
    TP_CHECK(!ks.empty(), NotImplemented, "Could not run '", op.name,
             "': every dispatch key was excluded, so no kernel applies. Keys with kernels: ",
             op.keys_with_kernels());
    DispatchKey key = ks.highest();
    const char *slot = nullptr;
    if (const Kernel *k = lookup(op, key, &slot)) return {k, key, slot};
    ks = ks - key;
  }
}

TraceScope::TraceScope(const Operator &op, KeySet ks, const KernelChoice &c, bool unboxed) {
  TraceState &ts = trace_state();
  if (!ts.collect && !ts.print) return;
  std::string ran = dispatch_key_name(c.key);
  if (ran != c.slot) ran += std::string(" -> ") + c.slot;
  TraceRecord r{op.name, ks.str(), ran, c.kernel->source, ts.depth, unboxed};
  if (ts.print)
    std::fprintf(stderr, "[dispatch] %*s%s  keys=%s  ran=%s%s  at %s\n", 2 * r.depth, "", r.op.c_str(),
                 r.keys.c_str(), r.chosen.c_str(), unboxed ? " (unboxed)" : "", r.source.c_str());
  if (ts.collect) ts.records.push_back(std::move(r));
  ++ts.depth;
  active_ = true;
}

TraceScope::~TraceScope() {
  if (active_) --trace_state().depth;
}

static void run(const Operator &op, KeySet ks, Stack &stack) {
  TP_CHECK(int(stack.size()) == op.num_args(), Runtime, op.name, ": expected ", op.num_args(),
           " arguments on the stack, got ", stack.size());
  KernelChoice c = select_kernel(op, ks);
  TraceScope trace(op, ks, c, false);
  c.kernel->fn(op, stack, c.kernel->user_data);
}

void call(const Operator &op, Stack &stack) { run(op, compute_keys(op, stack), stack); }

void redispatch(const Operator &op, DispatchKey key, Stack &stack) {
  KeySet below = compute_keys(op, stack) - KeySet::at_or_above(key);
  // Keep wrapper keys at or above `key` off while the inner kernel runs (Note [Redispatch]).
  KeySet wrappers = KeySet::at_or_above(key) & kWrapperKeys;
  ExcludeKeysGuard guard(wrappers);
  run(op, below, stack);
}

// ---- registration blocks ------------------------------------------------------------------------------------
static std::string short_path(const char *file) {
  std::string f = file;
  auto p = f.rfind("csrc/");
  return p == std::string::npos ? f : "packages/p10/" + f.substr(p);
}

void Library::def(const std::string &schema) { defs.push_back(schema); }
void Library::impl(const std::string &op_name, DispatchKey key, BoxedKernelFn fn, int line, UnboxedFn unboxed,
                   const std::type_info *signature) {
  impls.push_back({op_name, key, fn, line, unboxed, signature});
}

namespace {
std::vector<std::pair<void (*)(Library &), const char *>> &pending_blocks() {
  static auto *v = new std::vector<std::pair<void (*)(Library &), const char *>>();
  return *v;
}
}  // namespace

LibraryRegistrar::LibraryRegistrar(void (*block)(Library &), const char *file) {
  pending_blocks().push_back({block, file});
}

void run_library_blocks() {
  std::vector<Library> libs;
  for (auto &[block, file] : pending_blocks()) {
    Library lib;
    lib.file = file;
    block(lib);
    libs.push_back(std::move(lib));
  }
  pending_blocks().clear();
  for (auto &lib : libs)
    for (auto &schema : lib.defs) define_op(schema, short_path(lib.file));
  for (auto &lib : libs)
    for (auto &im : lib.impls) {
      Operator *op = find_op(im.op);
      TP_CHECK(op != nullptr, Runtime, "internal: ", short_path(lib.file), ":", im.line,
               " implements unknown op '", im.op, "'");
      register_kernel(*op, im.key, Kernel{im.fn, nullptr, short_path(lib.file) + ":" + std::to_string(im.line),
                                          im.unboxed, im.signature});
    }
}

}  // namespace tp::p10

namespace tp::p10 {

const Operator &require_op(const char *name) {
  Operator *op = find_op(name);
  TP_CHECK(op != nullptr, Runtime, "unknown op '", name, "'");
  return *op;
}

void fill_defaults(const Operator &op, Stack &stack) {
  const auto &args = op.schema.args;
  for (size_t i = stack.size(); i < args.size(); ++i) {
    TP_CHECK(args[i].has_default || args[i].optional, Type, op.name, "(): missing required argument '",
             args[i].name, "' (position ", i, ")");
    stack.push_back(args[i].has_default ? args[i].default_value : Value());
  }
}

}  // namespace tp::p10
