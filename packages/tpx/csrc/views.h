// views.h — autograd for views and in-place writes into them (Note [Views and in-place] in meta.h).
//
// Where it sits: called by the recording kernel (record.cpp) when a view op or an in-place op is recorded, and by
// meta.cpp when a view's grad_fn has gone stale.
#pragma once
#include "meta.h"

namespace tp::tpx {

// The layout of a view inside its base's storage: enough to rebuild it with as_strided.
struct Geometry {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  static Geometry of(TP_Tensor *t);
};

// `out` was made by a view op from `input`: remember the root base it aliases.
void mark_view(TP_Tensor *out, TP_Tensor *input);
// After an in-place op recorded as `fn` wrote into `self`: make `fn` the new history of self (and of its base,
// through CopySlices, when self is a view).
void rebase_history(TP_Tensor *self, const std::shared_ptr<Node> &fn);
// A view whose base was written in place gets "this slice of the base" as its grad_fn.
void regenerate_view_grad_fn(TP_Tensor *view, AutogradMeta &m);

}  // namespace tp::tpx
