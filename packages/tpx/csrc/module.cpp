// tensorplay_tpx._C — TPX's native module: bindings only (argument conversion; the logic lives in the other files).
//
// Where it sits: TPX (autograd) is a client of P10. It never links P10's C++; at init it imports P10's C ABI
// table (native/include/tensorplay/tp_abi.h) and from then on reaches tensors, ops and the dispatcher only
// through that table. The Python side (tensorplay_tpx/autograd/) calls these functions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <unordered_set>

#include "engine.h"
#include "pyconv.h"
#include "forward_ad.h"
#include "function.h"
#include "meta.h"
#include "record.h"

namespace nb = nanobind;

namespace tp::tpx {
namespace {

// Binding arguments are tensors (None is refused by nanobind unless the argument says .none()).
TP_Tensor *unwrap(nb::handle h) { return borrow_from_python(h); }

// ---- the engine ---------------------------------------------------------------------------------------------
nb::list backward(nb::list roots, nb::list grads, bool keep_graph, bool create_graph, nb::list inputs,
                  bool accumulate, bool allow_unused) {
  BackwardRequest req;
  for (nb::handle r : roots) req.roots.push_back(unwrap(r));
  for (nb::handle g : grads) req.root_grads.push_back(TensorRef::borrow(unwrap(g)));
  for (nb::handle i : inputs) req.inputs.push_back(unwrap(i));
  req.keep_graph = keep_graph;
  req.create_graph = create_graph;
  req.accumulate = accumulate;
  req.allow_unused = allow_unused;
  // The GIL stays held: formulas are Python, and P10 kernels registered from Python need it anyway.
  std::vector<TensorRef> out = run_backward(req);
  nb::list r;
  for (const TensorRef &t : out) r.append(to_python(t));
  return r;
}

// ---- per-tensor state ------------------------------------------------------------------------------------------
std::shared_ptr<Node> grad_fn(nb::handle t) { return grad_fn_of(unwrap(t)); }

nb::object get_grad(nb::handle h) {
  AutogradMeta *m = meta_of(unwrap(h));
  if (!m) return nb::none();
  if (m->retained_grad) return to_python(*m->retained_grad);
  return to_python(m->grad);
}

void set_grad(nb::handle h, nb::handle g) {
  AutogradMeta &m = meta_for(unwrap(h));
  TensorRef v = g.is_none() ? TensorRef() : from_python(g);
  if (m.retained_grad) *m.retained_grad = v;
  else m.grad = v;
}

int64_t output_nr(nb::handle h) {
  AutogradMeta *m = meta_of(unwrap(h));
  return m ? m->output_nr : 0;
}

void retain_grad(nb::handle h) {
  TP_Tensor *t = unwrap(h);
  std::shared_ptr<Node> fn = grad_fn_of(t);
  if (!fn) return;  // a leaf keeps its grad anyway
  AutogradMeta &m = meta_for(t);
  if (!m.retained_grad) m.retained_grad = std::make_shared<TensorRef>();
  fn->pystate().retained[m.output_nr] = m.retained_grad;
}
bool retains_grad(nb::handle h) {
  AutogradMeta *m = meta_of(unwrap(h));
  return m && m->retained_grad != nullptr;
}

void register_tensor_hook(nb::handle h, nb::object fn) {
  TP_Tensor *t = unwrap(h);
  if (std::shared_ptr<Node> gf = grad_fn_of(t)) gf->pystate().tensor_hooks[meta_of(t)->output_nr].push_back(fn);
  else meta_for(t).leaf_hooks.push_back(fn);
}
void register_post_accumulate_hook(nb::handle h, nb::object fn) {
  meta_for(unwrap(h)).post_accumulate_hooks.push_back(fn);
}
template <typename V> bool erase_identical(V &v, nb::handle fn) {
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it->ptr() == fn.ptr()) { v.erase(it); return true; }
  return false;
}
void remove_tensor_hook(nb::handle h, nb::handle fn) {
  TP_Tensor *t = unwrap(h);
  AutogradMeta *m = meta_of(t);
  if (!m) return;
  if (erase_identical(m->leaf_hooks, fn) || erase_identical(m->post_accumulate_hooks, fn)) return;
  if (std::shared_ptr<Node> gf = grad_fn_of(t))
    if (gf->py) erase_identical(gf->py->tensor_hooks[m->output_nr], fn);
}

// Detach: a new tensor sharing data, no history (requires_grad off).
nb::object detach(nb::handle h) {
  static const TP_Op *alias = find_op("alias");
  TensorRef out = call1_below_autograd(alias, {tv(TensorRef::borrow(unwrap(h)))});
  if (api->tensor_set_requires_grad(out.get(), 0) != 0) throw_pending();
  meta_for(out.get()).detached = true;
  return to_python(out);
}
void detach_(nb::handle h) {
  TP_Tensor *t = unwrap(h);
  AutogradMeta *m = meta_of(t);
  if (view_base_of(t) && m && m->is_view)
    fail(TP_ERR_RUNTIME, "Can't detach views in-place. Use detach() instead.");
  if (m) { m->grad_fn.reset(); m->output_nr = 0; }
  if (api->tensor_set_requires_grad(t, 0) != 0) throw_pending();
}

void set_requires_grad(nb::handle h, bool flag) {
  TP_Tensor *t = unwrap(h);
  if (!flag && grad_fn_of(t))
    fail(TP_ERR_RUNTIME, "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                         "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  if (api->tensor_set_requires_grad(t, flag) != 0) throw_pending();
}

nb::object get_fw_grad(nb::handle h) {
  AutogradMeta *m = meta_of(unwrap(h));
  return m ? to_python(m->fw_grad) : nb::none();
}
void set_fw_grad(nb::handle h, nb::handle g) {
  set_tangent(unwrap(h), g.is_none() ? TensorRef() : from_python(g));
}

// ---- formulas -------------------------------------------------------------------------------------------------
void register_formula_py(const std::string &op_name, const std::string &node_name, nb::object backward,
                         nb::object jvp, std::vector<bool> save_arg, bool save_results, bool is_view,
                         std::vector<bool> output_differentiable, std::vector<std::vector<int64_t>> save_when,
                         nb::object decompose) {
  auto *f = new Formula();  // lives for the process, like the kernel that points at it
  f->op = find_op(op_name.c_str());
  f->node_name = node_name;
  f->backward = std::move(backward);
  f->jvp = std::move(jvp);
  f->save_arg = std::move(save_arg);
  f->save_results = save_results;
  f->is_view = is_view;
  f->inplace = api->op_arg_is_write(f->op, 0) != 0 && !op_name.empty() && op_name.find(".out") == std::string::npos;
  for (int64_t i = 1; i < api->op_num_args(f->op); ++i) f->has_out_arg = f->has_out_arg || api->op_arg_is_write(f->op, i);
  f->output_differentiable = std::move(output_differentiable);
  f->save_when = std::move(save_when);
  if (!decompose.is_none()) f->decompose = std::move(decompose);
  register_formula(f);
}

// ---- ABI proof: a counting wrapper at the Tracer key (kept as the test of wrapper keys across the ABI) --------
std::atomic<int64_t> wrapper_calls{0};
std::unordered_set<const TP_Op *> wrapped_ops;

int counting_wrapper(void *, const TP_Op *op, const TP_Value *args, int64_t nargs, TP_Value *outs,
                     int64_t nouts) noexcept {
  wrapper_calls.fetch_add(1, std::memory_order_relaxed);
  return api->op_redispatch(op, TP_KEY_TRACER, args, nargs, outs, nouts);
}

void abi_register_counting_wrapper(const std::string &op_name) {
  const TP_Op *op = api->op_find(op_name.c_str());
  if (!op) throw nb::value_error(("tensorplay_tpx: no op named '" + op_name + "' is registered").c_str());
  if (wrapped_ops.count(op)) return;
  if (api->op_register_kernel(op, TP_KEY_TRACER, counting_wrapper, nullptr, __FILE__, __LINE__) != 0)
    throw_pending();
  wrapped_ops.insert(op);
}

nb::object node_metadata(Node &n) {
  NodePyState &s = n.pystate();
  if (!s.metadata.is_valid()) s.metadata = nb::dict();
  return s.metadata;
}

nb::tuple next_functions(Node &n) {
  nb::list r;
  for (const Edge &e : n.next_edges)
    r.append(nb::make_tuple(e.fn ? nb::cast(e.fn) : nb::none(), e.input_nr));
  return nb::tuple(r);
}

}  // namespace
}  // namespace tp::tpx

NB_MODULE(_C, m) {
  using namespace tp::tpx;
  // Importing the table imports tensorplay_p10._C; on a missing or too-old P10 it leaves an ImportError set.
  api = tp_import_api();
  if (!api) throw nb::python_error();
  m.doc() = "TPX's native module: the autograd engine, talking to P10 through tp_abi.h.";

  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const Error &e) {
      PyObject *type = PyExc_RuntimeError;
      switch (e.kind) {
        case TP_ERR_TYPE: type = PyExc_TypeError; break;
        case TP_ERR_VALUE: type = PyExc_ValueError; break;
        case TP_ERR_INDEX: type = PyExc_IndexError; break;
        case TP_ERR_NOT_IMPLEMENTED: type = PyExc_NotImplementedError; break;
        default: break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  nb::class_<Node>(m, "Node", "A backward function of the recorded graph (a tensor's grad_fn).")
      .def("name", &Node::name, "The node's name, e.g. 'MulBackward'.")
      .def_prop_ro("next_functions", &next_functions, "((node or None, input_nr), ...): where gradients go.")
      .def_prop_ro("metadata", &node_metadata, "A dict for your own annotations (anomaly mode stores here too).")
      .def_prop_ro("_sequence_nr", [](Node &n) { return n.seq_nr; })
      .def("_register_hook", [](Node &n, nb::object fn) { n.pystate().post_hooks.push_back(fn); })
      .def("_register_prehook", [](Node &n, nb::object fn) { n.pystate().pre_hooks.push_back(fn); })
      .def("_remove_hook", [](Node &n, nb::handle fn) {
        if (n.py) { erase_identical(n.py->post_hooks, fn) || erase_identical(n.py->pre_hooks, fn); }
      })
      .def("_saved_tensors", [](Node &n) { return saved_tensors(n); })
      .def("_forward_trace", [](Node &n) { return n.py ? n.py->forward_trace : std::string(); })
      .def("__repr__", [](Node &n) { return "<" + n.name() + " object>"; });

  m.def("_abi_info", [] { return nb::make_tuple(api->abi_major, api->abi_minor, api->struct_size); });
  m.def("_abi_register_counting_wrapper", &abi_register_counting_wrapper, nb::arg("op_name"));
  m.def("_abi_wrapper_calls", [] { return wrapper_calls.load(std::memory_order_relaxed); });

  m.def("_backward", &backward, nb::arg("roots"), nb::arg("grads"), nb::arg("keep_graph"), nb::arg("create_graph"),
        nb::arg("inputs"), nb::arg("accumulate"), nb::arg("allow_unused"));
  m.def("_is_grad_enabled", &grad_enabled);
  m.def("_set_grad_enabled", &set_grad_enabled);
  m.def("_set_anomaly", [](bool on, bool check_nan) { anomaly_enabled = on; anomaly_check_nan = check_nan; });
  m.def("_anomaly", [] { return nb::make_tuple(anomaly_enabled, anomaly_check_nan); });

  m.def("_grad_fn", &grad_fn);
  m.def("_get_grad", &get_grad);
  m.def("_set_grad", &set_grad, nb::arg("t"), nb::arg("grad").none());
  m.def("_output_nr", &output_nr);
  m.def("_retain_grad", &retain_grad);
  m.def("_retains_grad", &retains_grad);
  m.def("_register_tensor_hook", &register_tensor_hook);
  m.def("_register_post_accumulate_hook", &register_post_accumulate_hook);
  m.def("_remove_tensor_hook", &remove_tensor_hook);
  m.def("_detach", &detach);
  m.def("_detach_", &detach_);
  m.def("_set_requires_grad", &set_requires_grad);
  m.def("_get_fw_grad", &get_fw_grad);
  m.def("_set_fw_grad", &set_fw_grad, nb::arg("t"), nb::arg("tangent").none());
  m.def("_push_saved_hooks", [](nb::object pack, nb::object unpack) {
    saved_hooks_stack().push_back(SavedHooks{std::move(pack), std::move(unpack)});
  });
  m.def("_pop_saved_hooks", [] {
    if (!saved_hooks_stack().empty()) saved_hooks_stack().pop_back();
  });
  m.def("_set_inference_mode", [](bool on) { api->tls_set_inference_mode(on); });
  m.def("_inference_mode", [] { return api->tls_inference_mode() != 0; });
  m.def("_set_forward_ad", &set_forward_ad_enabled);
  m.def("_forward_ad_enabled", &forward_ad_enabled);
  m.def("_exit_dual_level", &exit_dual_level);
  m.def("_is_view", [](nb::handle h) { AutogradMeta *mm = meta_of(unwrap(h)); return mm && mm->is_view; });

  m.def("_register_formula", &register_formula_py, nb::arg("op_name"), nb::arg("node_name"), nb::arg("backward"),
        nb::arg("jvp"), nb::arg("save_arg"), nb::arg("save_results"), nb::arg("is_view"), nb::arg("output_differentiable"),
        nb::arg("save_when"), nb::arg("decompose").none());
  m.def("_mark_nondifferentiable", [](const std::string &name) { mark_nondifferentiable(find_op(name.c_str())); });
  m.def("_op_schema", [](const std::string &name) { return std::string(api->op_schema(find_op(name.c_str()))); });
  m.def("_record_function", &record_function);
  install_autograd_fallback();
}
