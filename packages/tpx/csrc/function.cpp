// function.cpp — the node of a custom `autograd.Function` (tensorplay_tpx/autograd/function.py).
//
// Where it sits: Function.apply (Python) runs the user's forward under no_grad, then calls record_function(),
// which builds a PyFunctionNode whose apply() calls back into Python (the user's backward). Saved tensors live in
// the node, version-checked like any other (SavedVariable), so `ctx` holds no tensor that could form a cycle.
#include "function.h"
#include "pyconv.h"

#include "meta.h"
#include "record.h"
#include "views.h"

namespace tp::tpx {
namespace {

struct PyFunctionNode : Node {
  std::string cls;
  std::string name() const override { return cls + "Backward"; }
  std::vector<TensorRef> apply(std::vector<TensorRef> &&grads) override {
    nb::gil_scoped_acquire gil;
    nb::list g;
    for (const TensorRef &t : grads) g.append(to_python(t));
    nb::object self = nb::cast(std::static_pointer_cast<Node>(shared_from_this()));
    return tensors_from_python(py->backward(py->ctx, self, g));
  }
};


}  // namespace

std::shared_ptr<Node> record_function(const std::string &cls, nb::object ctx, nb::object backward,
                                      nb::list inputs, nb::list outputs, std::vector<bool> differentiable,
                                      std::vector<bool> dirty, nb::list to_save) {
  auto node = std::make_shared<PyFunctionNode>();
  node->cls = cls;
  node->pystate().ctx = std::move(ctx);
  node->pystate().backward = std::move(backward);
  for (nb::handle x : inputs) {
    TP_Tensor *t = borrow_from_python(x);
    node->next_edges.push_back(t && is_differentiable_dtype(api->tensor_dtype(t)) ? gradient_edge(t) : Edge{});
  }
  std::vector<TP_Tensor *> outs;
  for (nb::handle x : outputs) outs.push_back(borrow_from_python(x));
  // Outputs written in place (mark_dirty) take the node as their new history; the rest are fresh outputs.
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k]) continue;
    if (k < dirty.size() && dirty[k]) {
      AutogradMeta *m = meta_of(outs[k]);
      if (api->tensor_requires_grad(outs[k]) && !grad_fn_of(outs[k]) && !(m && m->is_view))
        fail(TP_ERR_RUNTIME, "a leaf Variable that requires grad has been used in an in-place operation.");
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k]) { node->input_meta.emplace_back(); continue; }
    node->input_meta.push_back(input_meta_of(outs[k]));
    bool diff = k < differentiable.size() ? differentiable[k] : true;
    if (!diff || !is_differentiable_dtype(api->tensor_dtype(outs[k]))) continue;
    if (k < dirty.size() && dirty[k]) rebase_history(outs[k], node);
    else set_history(outs[k], node, uint32_t(k));
  }
  // Saved tensors; an output is kept as saved_output() (Note [Saved outputs] in node.h).
  for (nb::handle x : to_save) {
    TP_Tensor *t = borrow_from_python(x);
    SavedVariable sv;
    if (t) {
      bool is_out = false;
      uint32_t nr = 0;
      for (size_t k = 0; k < outs.size(); ++k)
        if (outs[k] == t && !(k < dirty.size() && dirty[k]) && api->tensor_requires_grad(t)) { is_out = true; nr = uint32_t(k); }
      sv.data = is_out ? saved_output(t) : TensorRef::borrow(t);
      sv.saved_version = api->tensor_version(t);
      sv.is_output = is_out;
      sv.output_nr = nr;
      pack_saved(sv);
    }
    node->saved.push_back(std::move(sv));
  }
  return node;
}

nb::list saved_tensors(Node &node) {
  nb::list r;
  for (const SavedVariable &sv : node.saved) {
    TensorRef t = node.unpack(sv);
    r.append(to_python(t));
  }
  return r;
}

}  // namespace tp::tpx
