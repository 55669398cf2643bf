// meta.cpp — reading and writing TPX's per-tensor state (meta.h) through P10's autograd-meta slot.
#include "meta.h"

#include "views.h"

namespace tp::tpx {

static void delete_meta(void *p) {
  auto *m = static_cast<AutogradMeta *>(p);
  // Hooks are Python objects: drop them with the GIL (a tensor can die in a GIL-free C++ section).
  if ((!m->leaf_hooks.empty() || !m->post_accumulate_hooks.empty())) {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      m->leaf_hooks.clear();
      m->post_accumulate_hooks.clear();
    } else {
      for (auto &h : m->leaf_hooks) (void)h.release();
      for (auto &h : m->post_accumulate_hooks) (void)h.release();
    }
  }
  delete m;
}

AutogradMeta *meta_of(TP_Tensor *t) { return static_cast<AutogradMeta *>(api->tensor_autograd_meta(t)); }

AutogradMeta &meta_for(TP_Tensor *t) {
  if (AutogradMeta *m = meta_of(t)) return *m;
  auto *m = new AutogradMeta();
  api->tensor_set_autograd_meta(t, m, &delete_meta);
  return *m;
}

InputMeta input_meta_of(TP_Tensor *t) {
  InputMeta m;
  const int64_t *s = api->tensor_sizes(t);
  m.shape.assign(s, s + api->tensor_dim(t));
  m.dtype = api->tensor_dtype(t);
  m.device = device_code(t);
  return m;
}

std::shared_ptr<Node> grad_fn_of(TP_Tensor *t) {
  AutogradMeta *m = meta_of(t);
  if (!m) return nullptr;
  if (m->is_view && api->tensor_version(t) != m->attr_version) regenerate_view_grad_fn(t, *m);
  return m->grad_fn;
}

Edge gradient_edge(TP_Tensor *t) {
  if (std::shared_ptr<Node> fn = grad_fn_of(t)) return Edge{std::move(fn), meta_of(t)->output_nr};
  if (!api->tensor_requires_grad(t)) return Edge{};
  // A leaf that requires grad: all edges into it share one AccumulateGrad, held weakly by the leaf.
  AutogradMeta &m = meta_for(t);
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(TensorRef::borrow(t));
    m.grad_accumulator = acc;
  }
  return Edge{std::move(acc), 0};
}

TP_Tensor *view_base_of(TP_Tensor *t) {
  AutogradMeta *m = meta_of(t);
  if (m && m->is_view) return m->base.get();
  if (m && m->detached) return nullptr;
  return api->tensor_view_base(t);
}

void check_multi_output_view(TP_Tensor *t, bool indirect) {
  AutogradMeta *m = meta_of(t);
  if (!m || !m->is_view || !m->multi_output_view) return;
  std::string fn = m->grad_fn ? m->grad_fn->name() : std::string("a multi-output view op");
  fail(TP_ERR_RUNTIME, "Output " + std::to_string(m->output_nr) + " of " + fn + " is a view and " +
                           (indirect ? "its base or another view of its base has been" : "is being") +
                           " modified inplace. This view is the output of a function that returns multiple views. "
                           "Such functions do not allow the output views to be modified inplace. You should "
                           "replace the inplace operation by an out-of-place one.");
}

void set_history(TP_Tensor *t, const std::shared_ptr<Node> &fn, uint32_t output_nr) {
  if (api->tensor_set_requires_grad(t, 1) != 0) throw_pending();
  AutogradMeta &m = meta_for(t);
  m.grad_fn = fn;
  m.output_nr = output_nr;
  if (m.is_view) m.attr_version = api->tensor_version(t);
}

}  // namespace tp::tpx
