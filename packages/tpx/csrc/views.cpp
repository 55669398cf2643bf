// views.cpp — CopySlices and ViewOfBase: the two nodes behind in-place writes into views (meta.h's Note).
#include "views.h"

namespace tp::tpx {

Geometry Geometry::of(TP_Tensor *t) {
  Geometry g;
  int64_t n = api->tensor_dim(t);
  g.sizes.assign(api->tensor_sizes(t), api->tensor_sizes(t) + n);
  g.strides.assign(api->tensor_strides(t), api->tensor_strides(t) + n);
  g.offset = api->tensor_storage_offset(t);
  return g;
}

namespace {

const TP_Op *op(const char *name) { return find_op(name); }

TP_Value dtype_value(int dtype) { TP_Value v{}; v.tag = TP_VALUE_DTYPE; v.v.i = dtype; return v; }
TP_Value device_value(int64_t code) { TP_Value v{}; v.tag = TP_VALUE_DEVICE; v.v.i = code; return v; }

// A zero tensor laid out exactly like the base, so the view's geometry (relative to the base) applies to it.
TensorRef zeros_like_base(const Geometry &base, const InputMeta &m) {
  static const TP_Op *empty_strided = op("empty_strided"), *fill_ = op("fill_");
  TensorRef r = call1(empty_strided, {ilv(base.sizes), ilv(base.strides), dtype_value(m.dtype), device_value(m.device)});
  call1(fill_, {tv(r), iv(0)});
  return r;
}

// `t` seen through the view's geometry (offsets taken relative to the base's).
TensorRef slice_of(const TensorRef &t, const Geometry &base, const Geometry &view) {
  static const TP_Op *as_strided = op("as_strided");
  return call1(as_strided, {tv(t), ilv(view.sizes), ilv(view.strides), iv(view.offset - base.offset)});
}

// grad of a view -> grad of its base: zeros with the view's slice filled in.
struct ViewOfBase : Node {
  Geometry base, view;
  std::string name() const override { return "AsStridedBackward"; }
  std::vector<TensorRef> apply(std::vector<TensorRef> &&grads) override {
    static const TP_Op *copy_ = op("copy_");
    TensorRef r = zeros_like_base(base, input_meta_of_base);
    if (grads[0]) call1(copy_, {tv(slice_of(r, base, view)), tv(grads[0])});
    return {r};
  }
  InputMeta input_meta_of_base;
};

// The base's new history after an in-place op `fn` wrote into one of its views.
struct CopySlices : Node {
  Geometry base, view;
  std::shared_ptr<Node> fn;
  std::string name() const override { return "CopySlices"; }
  std::vector<TensorRef> apply(std::vector<TensorRef> &&grads) override {
    static const TP_Op *copy_ = op("copy_"), *clone = op("clone"), *fill_ = op("fill_");
    TensorRef result = zeros_like_base(base, input_meta[0]);
    if (grads[0]) call1(copy_, {tv(result), tv(grads[0])});
    TensorRef slice = slice_of(result, base, view);
    std::vector<TensorRef> in;
    in.push_back(call1(clone, {tv(slice)}));
    std::vector<TensorRef> res = fn->apply(std::move(in));
    if (!res.empty() && res[0]) call1(copy_, {tv(slice), tv(res[0])});
    else call1(fill_, {tv(slice), iv(0)});
    std::vector<TensorRef> out;
    out.push_back(std::move(result));
    for (size_t i = 1; i < res.size(); ++i) out.push_back(std::move(res[i]));
    return out;
  }
  void release_variables() override {
    Node::release_variables();
    fn->release_variables();
  }
};

}  // namespace

void mark_view(TP_Tensor *out, TP_Tensor *input) {
  AutogradMeta &m = meta_for(out);
  m.is_view = true;
  const AutogradMeta *in = meta_of(input);
  if (in && in->is_view && in->multi_output_view) m.multi_output_view = true;  // Note [Multi-output views]
  TP_Tensor *root = view_base_of(input);
  m.base = TensorRef::borrow(root ? root : input);
  m.attr_version = api->tensor_version(out);
}

void regenerate_view_grad_fn(TP_Tensor *t, AutogradMeta &m) {
  if (m.base.requires_grad()) check_multi_output_view(t, /*indirect=*/true);
  m.attr_version = api->tensor_version(t);
  if (!m.base.requires_grad()) { m.grad_fn = nullptr; return; }
  auto fn = std::make_shared<ViewOfBase>();
  fn->base = Geometry::of(m.base.get());
  fn->view = Geometry::of(t);
  fn->input_meta_of_base = input_meta_of(m.base.get());
  fn->input_meta.push_back(input_meta_of(t));
  fn->next_edges.push_back(gradient_edge(m.base.get()));
  m.grad_fn = fn;
  m.output_nr = 0;
}

void rebase_history(TP_Tensor *self, const std::shared_ptr<Node> &fn) {
  TP_Tensor *base = view_base_of(self);
  if (!base) { set_history(self, fn, 0); return; }
  // A view made while nothing required grad was not recorded: it becomes a tracked view now.
  AutogradMeta *m = &meta_for(self);
  if (!m->is_view) {
    m->is_view = true;
    m->base = TensorRef::borrow(base);
  }
  auto cs = std::make_shared<CopySlices>();
  cs->base = Geometry::of(base);
  cs->view = Geometry::of(self);
  cs->fn = fn;
  cs->input_meta.push_back(input_meta_of(base));
  cs->next_edges.push_back(gradient_edge(base));  // the base's history before the write
  for (size_t i = 1; i < fn->next_edges.size(); ++i) cs->next_edges.push_back(fn->next_edges[i]);
  set_history(base, cs, 0);
  regenerate_view_grad_fn(self, *m);
}

}  // namespace tp::tpx
