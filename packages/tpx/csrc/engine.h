// engine.h — the backward pass: from root gradients to leaf gradients over the recorded graph.
//
// Where it sits: called by Tensor.backward(), tensorplay.autograd.backward() and .grad() (through module.cpp);
// walks the Nodes (node.h) that the recording kernel (record.cpp) left behind.
#pragma once
#include <vector>

#include "node.h"

namespace tp::tpx {

struct BackwardRequest {
  std::vector<TP_Tensor *> roots;        // tensors to differentiate (borrowed)
  std::vector<TensorRef> root_grads;     // one per root (already materialised by the caller)
  std::vector<TP_Tensor *> inputs;       // empty: accumulate into every reachable leaf
  bool keep_graph = false;               // retain_graph
  bool create_graph = false;             // record the backward pass itself
  bool accumulate = true;                // backward() (.grad) vs grad() (return the gradients)
  bool allow_unused = false;
};

// Runs backward. With `inputs`, returns one gradient per input (undefined = unused) and, when `accumulate`,
// also adds them into the inputs' .grad.
std::vector<TensorRef> run_backward(BackwardRequest &req);

// Thread-local grad mode (PyTorch's GradMode): off = the Autograd key is excluded for this thread.
bool grad_enabled();
void set_grad_enabled(bool on);
struct GradModeGuard {
  bool saved;
  explicit GradModeGuard(bool on) : saved(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(saved); }
};

// Anomaly mode: NaN checks after every backward function and the forward traceback of a failing node.
extern bool anomaly_enabled;
extern bool anomaly_check_nan;

}  // namespace tp::tpx
