// meta.h — what TPX hangs on a tensor: its grad, grad_fn, hooks and view relationship.
//
// Where it sits: stored in P10's autograd-meta slot (Note [Autograd meta slot] in P10's tensor.h) through the C ABI;
// P10 only calls our deleter. The recording kernel (record.cpp) and the engine (engine.cpp) read and write it.
//
// Note [Views and in-place]
//   A view shares memory with its base, so writing into the view changes the base and writing into the base
//   changes the view. When a view op is recorded, the output remembers the root `base` it aliases and the
//   version it was made at. An in-place op on such a view rewrites the *base's* history (a CopySlices node: the
//   base's gradient, with the view's part sent through the in-place op's backward); the view's own grad_fn then
//   becomes "this slice of the base" (ViewOfBase). Any other view of the same base notices that the shared
//   version counter moved on (attr_version != version) and regenerates its grad_fn the same way when next used.
//
// Note [Multi-output views]
//   split, chunk and unbind return several views made by one node (SplitWithSizesBackward, UnbindBackward).
//   PyTorch refuses an in-place write into one of them while autograd records (and a use of one after its base
//   was written in place): rebasing one piece's history would need a node per piece. Without grad mode or
//   without anything requiring grad the write is allowed, as there. check_multi_output_view() raises PyTorch's
//   message; the flag is inherited by views of such a view (a slice of a piece is still part of the piece).
#pragma once
#include <memory>
#include <vector>

#include "node.h"

namespace tp::tpx {

struct AutogradMeta {
  TensorRef grad;                            // a leaf's accumulated gradient
  std::shared_ptr<Node> grad_fn;             // null for leaves
  std::weak_ptr<Node> grad_accumulator;      // a leaf's AccumulateGrad, shared by all edges into it
  uint32_t output_nr = 0;                    // which output of grad_fn this tensor is
  std::shared_ptr<TensorRef> retained_grad;  // set by retain_grad() on a non-leaf
  std::vector<nb::object> leaf_hooks;        // a leaf's register_hook functions (run before accumulation)
  std::vector<nb::object> post_accumulate_hooks;
  // Note [Views and in-place]
  bool is_view = false;
  bool detached = false;  // made by detach(): a view of its base's memory, but never of its history
  // Note [Multi-output views]: made by split/chunk/unbind (or a view of such a view): never written in place
  // while recorded, since the op's one node could not send each piece's in-place history back to the base.
  bool multi_output_view = false;
  TensorRef base;
  int64_t attr_version = 0;
  TensorRef fw_grad;  // forward-mode AD tangent
};

// The meta of `t`, or nullptr when TPX never touched it.
AutogradMeta *meta_of(TP_Tensor *t);
// The meta of `t`, created when missing.
AutogradMeta &meta_for(TP_Tensor *t);

// Where a gradient for `t` must go: its grad_fn (and output number), its leaf accumulator, or nowhere.
Edge gradient_edge(TP_Tensor *t);
// The grad_fn a user sees (regenerating a stale view's first, Note [Views and in-place]).
std::shared_ptr<Node> grad_fn_of(TP_Tensor *t);

// The tensor whose history an in-place write into `t` must rewrite: the base of a differentiable view (recorded
// by a view op, or any P10 view that detach() did not make), else nullptr.
TP_Tensor *view_base_of(TP_Tensor *t);

// Refuse an in-place write into (indirect: a use after a write into the base of) a view that an op returning
// several views made (Note [Multi-output views]).
void check_multi_output_view(TP_Tensor *t, bool indirect);

// Make `t` the `output_nr`-th output of `fn` (and require grad).
void set_history(TP_Tensor *t, const std::shared_ptr<Node> &fn, uint32_t output_nr);

}  // namespace tp::tpx
