// forward_ad.cpp — tangent propagation for forward-mode AD (see forward_ad.h).
#include "forward_ad.h"
#include "pyconv.h"

#include "meta.h"

namespace tp::tpx {
namespace {

struct DualState {
  bool enabled = false;
  std::vector<TensorRef> dual;  // tensors given a tangent in the open level
};
DualState &state() {
  thread_local DualState s;
  return s;
}

// Note [Forward AD dispatch]: the Autograd key joins or leaves the thread-local included set.
void include_autograd(bool on) {
  TP_KeySet inc = api->tls_included();
  api->tls_set_included(on ? (inc | TP_KEY_BIT(TP_KEY_AUTOGRAD)) : (inc & ~TP_KEY_BIT(TP_KEY_AUTOGRAD)));
}

struct ForwardADOff {
  bool was = state().enabled;
  ForwardADOff() { set_forward_ad_enabled(false); }
  ~ForwardADOff() { set_forward_ad_enabled(was); }
};


TensorRef tangent_of(TP_Tensor *t) {
  AutogradMeta *m = t ? meta_of(t) : nullptr;
  return m ? m->fw_grad : TensorRef();
}

}  // namespace

bool forward_ad_enabled() { return state().enabled; }

void set_forward_ad_enabled(bool on) {
  state().enabled = on;
  include_autograd(on);
}

bool any_tangent(const InputList &inputs) {
  for (TP_Tensor *t : inputs)
    if (tangent_of(t)) return true;
  return false;
}

void set_tangent(TP_Tensor *t, TensorRef tangent) {
  meta_for(t).fw_grad = std::move(tangent);
  state().dual.push_back(TensorRef::borrow(t));
}

void exit_dual_level() {
  for (TensorRef &t : state().dual)
    if (AutogradMeta *m = meta_of(t.get())) m->fw_grad = TensorRef();
  state().dual.clear();
  set_forward_ad_enabled(false);
}

void propagate_tangents(const Formula &f, const TP_Value *args, int64_t nargs, const InputList &inputs,
                        TP_Tensor *old_self, const OutputList &results) {
  if (!f.jvp.is_valid() || f.jvp.is_none())
    fail(TP_ERR_NOT_IMPLEMENTED, "forward-mode AD for '" + std::string(api->op_name(f.op)) + "' is not implemented.");
  nb::gil_scoped_acquire gil;
  nb::list values, res, tangents, metas, counts;
  for (int64_t i = 0; i < nargs; ++i) {
    if (i == 0 && old_self) values.append(to_python(old_self));
    else values.append(value_to_python(args[i]));
    counts.append(args[i].tag == TP_VALUE_TENSOR ? 1 : args[i].tag == TP_VALUE_TENSOR_LIST ? int(args[i].v.tensors.len) : 0);
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    TP_Tensor *t = (k == 0 && old_self) ? old_self : inputs[k];
    TensorRef tg = tangent_of(inputs[k]);
    tangents.append(tg ? to_python(tg.get()) : nb::none());
    if (!t) { metas.append(nb::none()); continue; }
    InputMeta m = input_meta_of(t);
    nb::list shape;
    for (int64_t d : m.shape) shape.append(d);
    metas.append(nb::make_tuple(nb::tuple(shape), m.dtype));
  }
  for (TP_Tensor *r : results) res.append(to_python(r));
  nb::object out;
  {
    ForwardADOff off;  // the JVP runs ops of its own (Note [Forward AD dispatch])
    out = f.jvp(values, res, tangents, metas, counts);
  }
  size_t k = 0;
  for (nb::handle x : out) {
    if (k < results.size() && results[k] && !x.is_none()) {
      set_tangent(results[k], from_python(x));
    }
    ++k;
  }
}

}  // namespace tp::tpx
