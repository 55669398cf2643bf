// node.cpp — Node's common machinery (sequence numbers, saved-variable checks, teardown) and AccumulateGrad.
//
// Where it sits: below the engine (engine.cpp) and the recording kernel (record.cpp); see node.h for the model.
#include "node.h"
#include "pyconv.h"

#include <sstream>

#include "meta.h"

namespace tp::tpx {

std::atomic<uint64_t> Node::next_seq{0};

Node::Node() : seq_nr(next_seq.fetch_add(1, std::memory_order_relaxed)) {}

// ---- Note [Iterative graph teardown] -----------------------------------------------------------------------------
namespace {
struct Parked {
  EdgeList edges;
  SmallVector<SavedVariable, 2> saved;
};
struct Teardown {
  bool draining = false;
  std::vector<Parked> parked;
};
Teardown &teardown() {
  thread_local Teardown t;
  return t;
}
}  // namespace

Node::~Node() {
  Teardown &td = teardown();
  td.parked.push_back(Parked{std::move(next_edges), std::move(saved)});
  if (td.draining) return;  // an outer destructor is draining: it will release what we parked
  td.draining = true;
  while (!td.parked.empty()) {
    Parked p = std::move(td.parked.back());
    td.parked.pop_back();
    // Releasing these may destroy more Nodes; their destructors only park (draining is set).
  }
  td.draining = false;
  if (py && Py_IsInitialized()) {
    nb::gil_scoped_acquire gil;
    py.reset();
  } else {
    (void)py.release();  // interpreter gone: leak the Python objects rather than touch a dead runtime
  }
}

NodePyState &Node::pystate() {
  if (!py) py = std::make_unique<NodePyState>();
  return *py;
}

std::vector<SavedHooks> &saved_hooks_stack() {
  thread_local std::vector<SavedHooks> s;
  return s;
}

// Python objects must be released with the GIL held.
struct GilDeleter {
  void operator()(SavedVariable::Packed *o) const {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      delete o;
    }
  }
};

void pack_saved(SavedVariable &sv) {
  std::vector<SavedHooks> &stack = saved_hooks_stack();
  if (stack.empty() || !sv.data) return;
  nb::gil_scoped_acquire gil;
  SavedHooks h = stack.back();
  TensorRef t = sv.data;
  // The hook's own ops must not be packed again (that would recurse): hooks are off while it runs.
  std::vector<SavedHooks> outer;
  outer.swap(stack);
  nb::object packed;
  try {
    packed = h.pack(to_python(t));
  } catch (...) {
    stack.swap(outer);
    throw;
  }
  stack.swap(outer);
  sv.packed = std::shared_ptr<SavedVariable::Packed>(new SavedVariable::Packed{std::move(packed), h.unpack},
                                                     GilDeleter());
  sv.data = TensorRef();
}

void Node::release_variables() {
  saved.clear();
  released = true;
}

static const char *tensor_type_name(int dtype) {
  static const char *names[] = {"BoolTensor",  "ByteTensor",     "CharTensor",          "ShortTensor",
                                "IntTensor",   "LongTensor",     "HalfTensor",          "BFloat16Tensor",
                                "FloatTensor", "DoubleTensor",   "ComplexFloatTensor",  "ComplexDoubleTensor"};
  return dtype >= 0 && dtype < 12 ? names[dtype] : "Tensor";
}

TensorRef Node::unpack(const SavedVariable &sv) {
  if (released)
    fail(TP_ERR_RUNTIME,
         "Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
         "if you need to access saved tensors after calling backward.");
  if (!sv.defined()) return TensorRef();
  if (sv.packed) {  // saved_tensors_hooks: the user's unpack gives the tensor back (no version check possible)
    nb::gil_scoped_acquire gil;
    nb::object r = sv.packed->unpack(sv.packed->value);
    return from_python(r);
  }
  int64_t now = sv.data.version();
  if (now != sv.saved_version) {
    std::ostringstream msg;
    msg << "one of the variables needed for gradient computation has been modified by an inplace operation: "
        << "[tensorplay." << tensor_type_name(sv.data.dtype()) << " [";
    auto sz = sv.data.sizes();
    for (size_t i = 0; i < sz.size(); ++i) msg << (i ? ", " : "") << sz[i];
    msg << "]]";
    std::shared_ptr<Node> fn = sv.is_output ? shared_from_this() : grad_fn_of(sv.data.get());
    uint32_t nr = sv.is_output ? sv.output_nr : (meta_of(sv.data.get()) ? meta_of(sv.data.get())->output_nr : 0);
    if (fn) msg << ", which is output " << nr << " of " << fn->name() << ",";
    msg << " is at version " << now << "; expected version " << sv.saved_version
        << " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
           "with tensorplay.autograd.set_detect_anomaly(True).";
    fail(TP_ERR_RUNTIME, msg.str());
  }
  if (!sv.is_output) return sv.data;
  // An output comes back as a fresh tensor carrying this node as its grad_fn, so a formula that uses the forward
  // result (exp, tanh, ...) stays differentiable under create_graph (Note [Saved outputs]).
  TensorRef out = saved_output(sv.data.get());
  if (is_differentiable_dtype(out.dtype())) set_history(out.get(), shared_from_this(), sv.output_nr);
  return out;
}

TensorRef saved_output(TP_Tensor *t) {
  TP_Tensor *copy = api->tensor_shallow_copy(t);
  if (!copy) throw_pending();
  return TensorRef::adopt(copy);
}

// ---- AccumulateGrad ----------------------------------------------------------------------------------------------

AccumulateGrad::AccumulateGrad(TensorRef v) : variable(std::move(v)) {
  InputMeta m;
  const int64_t *s = api->tensor_sizes(variable.get());
  m.shape.assign(s, s + api->tensor_dim(variable.get()));
  m.dtype = variable.dtype();
  m.device = device_code(variable.get());
  input_meta.push_back(std::move(m));
  // Note [Graph shape]: leaves' accumulators run as soon as they are ready (PyTorch gives them the top seq_nr).
  seq_nr = UINT64_MAX;
}

static bool grad_mode_enabled() { return !(api->tls_excluded() & TP_KEY_BIT(TP_KEY_AUTOGRAD)); }

// ---- Note [Gradient layout contract] -----------------------------------------------------------------------------
//   PyTorch's AccumulateGrad gives a parameter's .grad the parameter's layout. The gradients themselves need
//   not have it: nn.Linear computes x @ W.t(), so W's gradient arrives as the transpose of a contiguous
//   product, column-major. Stored as it comes, every Linear weight's .grad would be column-major, and the
//   optimizers' fused multi-tensor path (which wants contiguous tensors) would fall back to the per-parameter
//   loop for every real model. So the first gradient of a row-major (contiguous) leaf is stored row-major:
//   one copy of the parameter's size per step, the same copy PyTorch makes (later gradients are added into it
//   in place). Leaves of any other layout keep the gradient's layout, as before.
std::vector<TensorRef> AccumulateGrad::apply(std::vector<TensorRef> &&grads) {
  TensorRef g = std::move(grads.at(0));
  AutogradMeta &m = meta_for(variable.get());
  if (!m.leaf_hooks.empty() && g) {
    nb::gil_scoped_acquire gil;
    for (const nb::object &hook : m.leaf_hooks) {
      nb::object r = hook(to_python(g));
      if (!r.is_none()) g = from_python(r);
    }
  }
  if (!g) return {};
  static const TP_Op *clone = find_op("clone");
  static const TP_Op *add = find_op("add");
  static const TP_Op *add_ = find_op("add_");
  if (!m.grad) {
    // A private copy: the incoming gradient may be the caller's tensor or shared with another buffer, and a
    // later accumulation writes into .grad in place. Under create_graph the copy is recorded (CloneBackward).
    static const TP_Op *contiguous = find_op("contiguous");
    if (grad_mode_enabled())
      m.grad = call1(clone, {tv(g)});
    else if (tp_tensor_is_contiguous(api, variable.get()) &&  // Note [Gradient layout contract]
             !tp_tensor_is_contiguous(api, g.get()))
      m.grad = call1_below_autograd(contiguous, {tv(g)});
    else
      m.grad = call1_below_autograd(clone, {tv(g)});
  } else if (grad_mode_enabled()) {
    m.grad = call1(add, {tv(m.grad), tv(g)});
  } else {
    call1_below_autograd(add_, {tv(m.grad), tv(g)});
  }
  if (!m.post_accumulate_hooks.empty()) {
    nb::gil_scoped_acquire gil;
    nb::object pyvar = to_python(variable);
    for (const nb::object &hook : m.post_accumulate_hooks) hook(pyvar);
  }
  return {};
}

TensorRef zeros_for(const InputMeta &m) {
  static const TP_Op *full = find_op("full");
  TP_Value dt{}, dev{};
  dt.tag = TP_VALUE_DTYPE;
  dt.v.i = m.dtype;
  dev.tag = TP_VALUE_DEVICE;
  dev.v.i = m.device;
  return call1_below_autograd(full, {ilv(m.shape), iv(0), dt, dev});
}

}  // namespace tp::tpx
