// record.cpp — the Autograd kernel: run the op below Autograd, then record a FormulaNode for it.
//
// Where it sits: see record.h. One call, in order:
//   1. collect the tensor inputs and the edges to their histories (before running: an in-place op must see the
//      history its input had *before* it was overwritten);
//   2. refuse what PyTorch refuses (in-place on a leaf that requires grad, out= with grad);
//   3. redispatch below Autograd: the backend computes the result;
//   4. create the node, save what the formula asked for (with versions), point the outputs at the node.
//
// Note [Recording allocations]
//   This kernel runs once per recorded op, so its cost is the per-op overhead users feel in small models. Each
//   list it builds — the call's tensors and their versions, the edges, the stored arguments, the outputs and
//   their shapes — is a SmallVector (small_vector.h) sized for the common case, so recording `a + b` costs the
//   node, the output's autograd meta and nothing else on the heap (it cost 21 allocations before; PyTorch's
//   costs 9). The node itself stays under 1 KiB, so glibc serves it from its per-thread cache (blocks up to
//   1032 bytes) rather than the slower bins: rarely used parts (retained grads, anomaly traces, hooks) live
//   in the lazily made NodePyState. Measured in benchmarks/autograd.py ("record a + b").
#include "record.h"
#include "pyconv.h"

#include <nanobind/stl/string.h>

#include <optional>
#include <unordered_set>

#include "engine.h"
#include "forward_ad.h"
#include "meta.h"
#include "views.h"

namespace tp::tpx {
namespace {

// A non-tensor argument kept for backward, owning its list/string storage.
struct StoredArg {
  int tag = TP_VALUE_NONE;
  union {
    int64_t i = 0;  // INT, BOOL, DTYPE, DEVICE
    double d;       // DOUBLE, and COMPLEX's real part
  };
  double im = 0;  // COMPLEX: d + im i
  SmallVector<int64_t, 3> ints;
  std::string s;
  SmallVector<int, 1> saved_index;  // TENSOR / TENSOR_LIST: indices into Node::saved (-1: not saved)
};

nb::object to_python(const StoredArg &a, Node &node) {
  switch (a.tag) {
    case TP_VALUE_INT: return nb::int_(a.i);
    case TP_VALUE_DOUBLE: return nb::float_(a.d);
    case TP_VALUE_COMPLEX: return nb::steal(PyComplex_FromDoubles(a.d, a.im));
    case TP_VALUE_BOOL: return nb::bool_(a.i != 0);
    case TP_VALUE_DTYPE: case TP_VALUE_DEVICE: return nb::int_(a.i);  // codes: the Python side maps them
    case TP_VALUE_STRING: return nb::str(a.s.c_str());
    case TP_VALUE_INT_LIST: {
      nb::list l;
      for (int64_t x : a.ints) l.append(x);
      return nb::tuple(l);
    }
    case TP_VALUE_TENSOR: {
      int k = a.saved_index.empty() ? -1 : a.saved_index[0];
      if (k < 0) return nb::none();
      TensorRef t = node.unpack(node.saved[size_t(k)]);
      return to_python(t);
    }
    case TP_VALUE_TENSOR_LIST: {
      nb::list l;
      for (int k : a.saved_index) {
        TensorRef t = k < 0 ? TensorRef() : node.unpack(node.saved[size_t(k)]);
        l.append(to_python(t));
      }
      return l;
    }
    default: return nb::none();
  }
}

// The node of an op with a Python formula.
struct FormulaNode : Node {
  const Formula *f = nullptr;
  SmallVector<StoredArg, 4> args;
  SmallVector<int, 2> result_index;  // per output: index into saved (-1: not saved)
  // Ops with a tensor-list argument (cat): what each input that needs no gradient looked like, by edge. The
  // formula must still know its size to find where the next input's slice of the gradient starts.
  std::vector<std::optional<InputMeta>> unneeded_meta;
  std::string name() const override { return f->node_name; }

  std::vector<TensorRef> apply(std::vector<TensorRef> &&grads) override {
    if (released) (void)unpack(SavedVariable{});  // raises the "backward through the graph a second time" error
    nb::gil_scoped_acquire gil;
    nb::list py_args, py_results, py_grads, needs;
    for (const StoredArg &a : args) py_args.append(to_python(a, *this));
    for (int k : result_index) {
      TensorRef t = k < 0 ? TensorRef() : unpack(saved[size_t(k)]);
      py_results.append(to_python(t));
    }
    // Note [Formula conventions]: an unused floating output's gradient arrives as zeros.
    for (size_t k = 0; k < grads.size(); ++k) {
      TensorRef g = grads[k];
      if (!g && k < input_meta.size() && is_differentiable_dtype(input_meta[k].dtype)) g = zeros_for(input_meta[k]);
      py_grads.append(to_python(g));
    }
    // What each input looked like (from the node its gradient goes to): formulas use it for shapes and dtypes.
    nb::list metas;
    for (size_t k = 0; k < next_edges.size(); ++k) {
      const Edge &e = next_edges[k];
      needs.append(nb::bool_(e.valid()));
      const InputMeta *known = e.valid()                    ? &e.fn->input_meta[e.input_nr]
                               : k < unneeded_meta.size() && unneeded_meta[k] ? &*unneeded_meta[k]
                                                                               : nullptr;
      if (!known) { metas.append(nb::none()); continue; }
      const InputMeta &m = *known;
      nb::list shape;
      for (int64_t d : m.shape) shape.append(d);
      metas.append(nb::make_tuple(nb::tuple(shape), m.dtype));
    }
    // How many edges each argument owns (1 per tensor, one per element of a tensor list, 0 for None).
    nb::list edge_counts;
    for (const StoredArg &a : args)
      edge_counts.append(a.tag == TP_VALUE_TENSOR ? 1 : a.tag == TP_VALUE_TENSOR_LIST ? int(a.saved_index.size()) : 0);
    return tensors_from_python(f->backward(py_args, py_results, py_grads, nb::tuple(needs), metas, edge_counts));
  }
};

static_assert(sizeof(FormulaNode) <= 1008, "Note [Recording allocations]: keep a FormulaNode (with make_shared's "
                                           "control block) within glibc's per-thread cache");

// Ops with no formula: the gradient is refused when someone asks for it (not at forward time, as in PyTorch).
struct NotImplementedNode : Node {
  std::string op_name;
  std::string name() const override { return "NotImplemented"; }
  std::vector<TensorRef> apply(std::vector<TensorRef> &&) override {
    fail(TP_ERR_NOT_IMPLEMENTED, "the derivative for '" + op_name + "' is not implemented.");
  }
};

std::unordered_set<const TP_Op *> &nondifferentiable() {
  static std::unordered_set<const TP_Op *> s;
  return s;
}

// The tensor inputs of a call, flattened (tensor lists element by element): one edge each.
struct Inputs {
  InputList tensors;                    // nullptr for a None inside Tensor?[]
  SmallVector<int64_t, 8> versions;     // before the op ran: a saved input that the op itself overwrote
                                        // (x.mul_(x)) must fail the version check in backward, as in PyTorch
  bool any_requires_grad = false;
};
Inputs collect_inputs(const TP_Value *args, int64_t nargs) {
  Inputs in;
  auto add = [&](TP_Tensor *t) {
    in.tensors.push_back(t);
    in.versions.push_back(t ? api->tensor_version(t) : 0);
    if (t && api->tensor_requires_grad(t)) in.any_requires_grad = true;
  };
  for (int64_t i = 0; i < nargs; ++i) {
    if (args[i].tag == TP_VALUE_TENSOR) add(args[i].v.tensor);
    else if (args[i].tag == TP_VALUE_TENSOR_LIST)
      for (int64_t k = 0; k < args[i].v.tensors.len; ++k) add(args[i].v.tensors.data[k]);
  }
  return in;
}

void collect_edges(const Inputs &in, EdgeList &edges) {
  edges.reserve(in.tensors.size());
  for (TP_Tensor *t : in.tensors)
    edges.push_back(t && is_differentiable_dtype(api->tensor_dtype(t)) ? gradient_edge(t) : Edge{});
}

void check_inplace(const TP_Op *op, TP_Tensor *self) {
  check_multi_output_view(self, /*indirect=*/false);
  TP_Tensor *base = view_base_of(self);
  if (!base && api->tensor_requires_grad(self) && !grad_fn_of(self))
    fail(TP_ERR_RUNTIME, std::string(api->op_name(op)) +
                             ": a leaf Variable that requires grad is being used in an in-place operation.");
  if (base && api->tensor_requires_grad(base) && !grad_fn_of(base))
    fail(TP_ERR_RUNTIME, std::string(api->op_name(op)) +
                             ": a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

// Outputs flattened (tensor-list outputs element by element), borrowed from `outs`.
OutputList flat_outputs(const TP_Value *outs, int64_t nouts) {
  OutputList r;
  for (int64_t i = 0; i < nouts; ++i) {
    if (outs[i].tag == TP_VALUE_TENSOR) r.push_back(outs[i].v.tensor);
    else if (outs[i].tag == TP_VALUE_TENSOR_LIST)
      for (int64_t k = 0; k < outs[i].v.tensors.len; ++k) r.push_back(outs[i].v.tensors.data[k]);
  }
  return r;
}

int report(const std::exception &e, int kind) {
  api->set_error(kind, e.what());
  return 1;
}

template <typename F> int guarded(F &&f) noexcept {
  try {
    f();
    return 0;
  } catch (const Error &e) {
    return report(e, e.kind);
  } catch (nb::python_error &e) {
    // A formula's Python exception keeps its type and its message (what() would add the whole traceback).
    nb::gil_scoped_acquire gil;
    const int kind = e.matches(PyExc_ValueError)            ? TP_ERR_VALUE
                     : e.matches(PyExc_TypeError)           ? TP_ERR_TYPE
                     : e.matches(PyExc_IndexError)          ? TP_ERR_INDEX
                     : e.matches(PyExc_NotImplementedError) ? TP_ERR_NOT_IMPLEMENTED
                                                            : TP_ERR_RUNTIME;
    std::string msg = nb::str(e.value()).c_str();
    if (kind == TP_ERR_RUNTIME && !e.matches(PyExc_RuntimeError))  // say which Python error it was
      msg = std::string(nb::str(e.type().attr("__name__")).c_str()) + ": " + msg;
    api->set_error(kind, msg.c_str());
    return 1;
  } catch (const std::exception &e) {
    return report(e, TP_ERR_RUNTIME);
  }
}

void redispatch(const TP_Op *op, const TP_Value *args, int64_t nargs, TP_Value *outs, int64_t nouts) {
  if (api->op_redispatch(op, TP_KEY_AUTOGRAD, args, nargs, outs, nouts) != 0) throw_pending();
}

void refuse_out_variant(const TP_Op *op) {
  fail(TP_ERR_RUNTIME, std::string(api->op_name(op)) +
                           "(): functions with out=... arguments don't support automatic differentiation, but one "
                           "of the arguments requires grad.");
}

// Note [Decomposed under autograd]
//   A few ops have a fused kernel whose backward cannot be written from what the forward keeps: attention
//   with dropout draws its mask inside the kernel and throws it away. For such calls the formula's decompose
//   hook computes the result with ordinary ops instead — each one recorded as usual, dropout's mask saved by
//   its own node — so the backward uses exactly the mask the forward drew, on every device. The hook is asked
//   only when a gradient (or a forward-mode tangent) is being recorded; returning None runs the fused kernel and
//   records the formula.
bool run_decomposed(const Formula &f, const TP_Value *args, int64_t nargs, TP_Value *outs, int64_t nouts) {
  nb::gil_scoped_acquire gil;
  nb::list py_args;
  for (int64_t i = 0; i < nargs; ++i) py_args.append(value_to_python(args[i]));
  nb::object r = f.decompose(*py_args);
  if (r.is_none()) return false;
  if (nouts != 1) fail(TP_ERR_RUNTIME, "a decompose hook can only replace an op with one tensor result");
  outs[0].tag = TP_VALUE_TENSOR;
  outs[0].v.tensor = from_python(r).release();
  return true;
}

// Note [Save what backward reads]
//   A formula saves an argument only when the gradient that reads it is wanted: mul's backward reads `other`
//   for self's gradient and `self` for other's, so `y[:, 1] * 2` keeps nothing of y (PyTorch's generated code
//   does the same). Besides memory, this is what lets `y[:, 0] = y[:, 1] * 2` be followed by a backward: a
//   saved slice of y would fail the version check after the write, though no gradient ever needed it.
//   Whether an argument wants a gradient is known now: its edge is valid.
using ArgFlags = SmallVector<bool, 8>;  // inline: Note [Recording allocations]
ArgFlags arguments_to_save(const Formula &f, const TP_Value *args, int64_t nargs, const EdgeList &edges) {
  ArgFlags keep(size_t(nargs), false);
  if (f.save_when.empty()) {  // unconditional saves only (the common case): no edge bookkeeping
    for (size_t i = 0; i < size_t(nargs) && i < f.save_arg.size(); ++i) keep[i] = f.save_arg[i];
    return keep;
  }
  SmallVector<int64_t, 8> first_edge(size_t(nargs) + 1, int64_t(0));  // edges of argument i: [first_edge[i], first_edge[i+1])
  for (int64_t i = 0; i < nargs; ++i)
    first_edge[size_t(i) + 1] = first_edge[size_t(i)] + (args[i].tag == TP_VALUE_TENSOR        ? 1
                                                         : args[i].tag == TP_VALUE_TENSOR_LIST ? args[i].v.tensors.len
                                                                                               : 0);
  auto wants_grad = [&](int64_t j) {
    if (j < 0 || j >= nargs) return false;
    for (int64_t e = first_edge[size_t(j)]; e < first_edge[size_t(j) + 1]; ++e)
      if (edges[size_t(e)].valid()) return true;
    return false;
  };
  for (int64_t i = 0; i < nargs; ++i) {
    if (size_t(i) >= f.save_arg.size() || !f.save_arg[size_t(i)]) continue;
    const bool conditional = size_t(i) < f.save_when.size() && !f.save_when[size_t(i)].empty();
    bool k = !conditional;
    if (conditional)
      for (int64_t j : f.save_when[size_t(i)]) k = k || wants_grad(j);
    keep[size_t(i)] = k;
  }
  return keep;
}

int formula_kernel(void *user_data, const TP_Op *op, const TP_Value *args, int64_t nargs, TP_Value *outs,
                   int64_t nouts) noexcept {
  return guarded([&] {
    const Formula &f = *static_cast<const Formula *>(user_data);
    Inputs in = collect_inputs(args, nargs);
    bool forward = forward_ad_enabled() && any_tangent(in.tensors);
    if (!in.any_requires_grad && !forward) return redispatch(op, args, nargs, outs, nouts);
    if (f.decompose && run_decomposed(f, args, nargs, outs, nouts)) return;  // each op records its own tangents too
    if (!in.any_requires_grad) {  // forward-mode only: run, then push the tangents through
      if (f.has_out_arg) refuse_out_variant(op);
      TensorRef old_self;
      if (f.inplace) {
        static const TP_Op *clone = find_op("clone");
        old_self = call1_below_autograd(clone, {tv(TensorRef::borrow(args[0].v.tensor))});
      }
      redispatch(op, args, nargs, outs, nouts);
      propagate_tangents(f, args, nargs, in.tensors, old_self.get(), flat_outputs(outs, nouts));
      return;
    }
    if (f.has_out_arg) refuse_out_variant(op);
    TP_Tensor *self = f.inplace ? args[0].v.tensor : nullptr;
    if (self) check_inplace(op, self);
    if (self && api->tensor_is_inference(self) && !api->tls_inference_mode())
      fail(TP_ERR_RUNTIME, "Inplace update to inference tensor outside InferenceMode is not allowed. You can make a "
                           "clone to get a normal tensor before doing inplace update.");

    auto node = std::make_shared<FormulaNode>();
    node->f = &f;
    collect_edges(in, node->next_edges);
    for (int64_t i = 0; i < nargs; ++i)
      if (args[i].tag == TP_VALUE_TENSOR_LIST) {
        node->unneeded_meta.resize(in.tensors.size());
        for (size_t k = 0; k < in.tensors.size(); ++k)
          if (in.tensors[k] && !node->next_edges[k].valid()) node->unneeded_meta[k] = input_meta_of(in.tensors[k]);
        break;
      }
    // An in-place op overwrites `self`: a formula that needs the old value gets a copy taken now. The copy is
    // recorded (CloneBackward to self's old history), so a double backward through it reaches that history.
    const ArgFlags keep_arg = arguments_to_save(f, args, nargs, node->next_edges);
    TensorRef old_self;
    if (self && ((!keep_arg.empty() && keep_arg[0]) || forward)) {
      static const TP_Op *clone = find_op("clone");
      old_self = call1(clone, {tv(TensorRef::borrow(self))});
    }
    redispatch(op, args, nargs, outs, nouts);

    // Save what the formula needs (inputs at the version they had before the op).
    size_t next_input = 0;
    auto save = [&](TP_Tensor *t, bool is_output, uint32_t nr, int64_t version) -> int {
      if (!t) return -1;
      if (!is_output && api->tensor_is_inference(t) && !api->tls_inference_mode())
        fail(TP_ERR_RUNTIME, "Inference tensors cannot be saved for backward. To work around you can make a clone "
                             "to get a normal tensor and use it in autograd.");
      SavedVariable sv;
      sv.data = TensorRef::borrow(t);
      sv.saved_version = version;
      sv.is_output = is_output;
      sv.output_nr = nr;
      pack_saved(sv);
      node->saved.push_back(std::move(sv));
      return int(node->saved.size()) - 1;
    };
    node->args.resize(size_t(nargs));
    for (int64_t i = 0; i < nargs; ++i) {
      StoredArg &a = node->args[size_t(i)];
      const TP_Value &v = args[i];
      a.tag = v.tag;
      bool keep = keep_arg[size_t(i)];
      switch (v.tag) {
        case TP_VALUE_TENSOR: {
          int64_t version = in.versions[next_input++];
          // An unsaved single tensor leaves saved_index empty (read as -1 by to_python): most arguments are
          // not saved (add saves none), and this is the per-op recording path.
          if (keep)
            a.saved_index.push_back(i == 0 && old_self ? save(old_self.get(), false, 0, old_self.version())
                                                       : save(v.v.tensor, false, 0, version));
          break;
        }
        case TP_VALUE_TENSOR_LIST:
          for (int64_t k = 0; k < v.v.tensors.len; ++k) {
            int64_t version = in.versions[next_input++];
            a.saved_index.push_back(keep ? save(v.v.tensors.data[k], false, 0, version) : -1);
          }
          break;
        case TP_VALUE_INT_LIST: a.ints.assign(v.v.ints.data, v.v.ints.data + v.v.ints.len); break;
        case TP_VALUE_STRING: a.s = v.v.s ? v.v.s : ""; break;
        case TP_VALUE_DOUBLE: a.d = v.v.d; break;
        case TP_VALUE_COMPLEX: a.d = v.v.c.re; a.im = v.v.c.im; break;
        default: a.i = v.v.i; break;
      }
    }
    OutputList results = flat_outputs(outs, nouts);
    FlagList diff(results.size(), true);
    for (size_t k = 0; k < results.size() && k < f.output_differentiable.size(); ++k)
      diff[k] = f.output_differentiable[k];
    // An op that returned one of its inputs itself (real/conj of a real tensor, `to` the same dtype) did
    // nothing: the tensor keeps its own history, as a PyTorch composite returning `self` does.
    if (!f.inplace)
      for (size_t k = 0; k < results.size(); ++k)
        for (TP_Tensor *t : in.tensors)
          if (results[k] && results[k] == t) diff[k] = false;
    attach_outputs(node, results, diff, f.inplace, self, f.is_view, f.is_view ? args[0].v.tensor : nullptr);
    if (f.is_view && (nouts > 1 || (nouts == 1 && outs[0].tag == TP_VALUE_TENSOR_LIST)))
      for (TP_Tensor *t : results)  // Note [Multi-output views] in meta.h
        if (AutogradMeta *m = t ? meta_of(t) : nullptr; m && m->is_view) m->multi_output_view = true;
    if (f.save_results) {
      for (size_t k = 0; k < results.size(); ++k) {
        if (!results[k]) { node->result_index.push_back(-1); continue; }
        // Not the output itself (Note [Saved outputs] in node.h); the version is the output's own.
        TensorRef a = saved_output(results[k]);
        node->result_index.push_back(save(a.get(), true, uint32_t(k), a.version()));
      }
    } else {
      node->result_index.assign(results.size(), -1);  // inline (small_vector.h): no allocation
    }
    if (anomaly_enabled) {
      std::string trace = python_stack();
      nb::gil_scoped_acquire gil;  // NodePyState holds Python objects
      node->pystate().forward_trace = std::move(trace);
    }
    if (forward) propagate_tangents(f, args, nargs, in.tensors, old_self.get(), results);
  });
}

int fallback_kernel(void *, const TP_Op *op, const TP_Value *args, int64_t nargs, TP_Value *outs,
                    int64_t nouts) noexcept {
  return guarded([&] {
    Inputs in = collect_inputs(args, nargs);
    bool forward = forward_ad_enabled() && any_tangent(in.tensors) && !nondifferentiable().count(op);
    bool inplace = nargs > 0 && api->op_arg_is_write(op, 0) && args[0].tag == TP_VALUE_TENSOR;
    bool out_variant = false;
    for (int64_t i = 1; i < nargs; ++i) out_variant = out_variant || api->op_arg_is_write(op, i);
    if (forward && !in.any_requires_grad) {  // a floating result would need a tangent this op cannot give
      redispatch(op, args, nargs, outs, nouts);
      for (TP_Tensor *r : flat_outputs(outs, nouts))
        if (r && is_differentiable_dtype(api->tensor_dtype(r))) {
          for (int64_t i = 0; i < nouts; ++i) api->value_release(&outs[i]);
          fail(TP_ERR_NOT_IMPLEMENTED, std::string("forward-mode AD for '") + api->op_name(op) + "' is not implemented.");
        }
      return;
    }
    if (!in.any_requires_grad || nondifferentiable().count(op)) return redispatch(op, args, nargs, outs, nouts);
    if (out_variant) refuse_out_variant(op);
    TP_Tensor *self = inplace ? args[0].v.tensor : nullptr;
    if (self) check_inplace(op, self);
    auto node = std::make_shared<NotImplementedNode>();
    node->op_name = api->op_name(op);
    collect_edges(in, node->next_edges);
    redispatch(op, args, nargs, outs, nouts);
    OutputList results = flat_outputs(outs, nouts);
    attach_outputs(node, results, FlagList(results.size(), true), inplace, self, false, nullptr);
  });
}

}  // namespace

void attach_outputs(const std::shared_ptr<Node> &node, const OutputList &outputs, const FlagList &differentiable,
                    bool inplace, TP_Tensor *self, bool is_view, TP_Tensor *view_of) {
  node->input_meta.reserve(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    TP_Tensor *t = outputs[k];
    node->input_meta.push_back(t ? input_meta_of(t) : InputMeta{});
    if (!t || !differentiable[k] || !is_differentiable_dtype(api->tensor_dtype(t))) continue;
    if (inplace && t == self) {
      rebase_history(t, node);
      continue;
    }
    if (is_view && view_of) mark_view(t, view_of);  // a multi-view op (split, unbind): every output aliases
    set_history(t, node, uint32_t(k));
  }
}

void register_formula(Formula *f) {
  if (api->op_register_kernel(f->op, TP_KEY_AUTOGRAD, &formula_kernel, f, "tensorplay_tpx formulas", 0) != 0)
    throw_pending();
}

void mark_nondifferentiable(const TP_Op *op) { nondifferentiable().insert(op); }

void install_autograd_fallback() {
  if (api->op_register_fallback(TP_KEY_AUTOGRAD, &fallback_kernel, nullptr, __FILE__, __LINE__) != 0)
    throw_pending();
}

std::string python_stack() {
  nb::gil_scoped_acquire gil;
  try {
    nb::object tb = nb::module_::import_("traceback");
    nb::object lines = tb.attr("format_stack")();
    return nb::cast<std::string>(nb::str("").attr("join")(lines));
  } catch (...) {
    return "";
  }
}

}  // namespace tp::tpx
