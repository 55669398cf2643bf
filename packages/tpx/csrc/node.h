// node.h — the recorded graph: Node (one backward function), Edge (where its gradients go), SavedVariable.
//
// Where it sits: the Autograd kernel (record.cpp) creates a Node per differentiable op call and points the
// outputs' autograd meta (meta.h) at it; the engine (engine.cpp) walks Nodes from the roots to the leaves.
//
// Note [Graph shape]
//   A Node stands for one forward call. It receives one gradient per differentiable forward *output* (its
//   "inputs" from the engine's point of view, described by input_meta) and produces one gradient per forward
//   *input* (its "outputs"), each sent along next_edges[i] to the Node that produced that input — or to the
//   AccumulateGrad node of a leaf, or nowhere (an invalid edge: the input needs no gradient).
//   seq_nr orders the ready queue: a later-recorded node runs first, the order PyTorch uses.
//
// Note [Iterative graph teardown]
//   A graph a million nodes deep is freed by releasing its last tensor; the naive chain of destructors
//   (Node -> saved tensor -> its autograd meta -> its grad_fn Node -> ...) would overflow the C++ stack. So a
//   Node's destructor does not release what it holds itself: it parks its edges and saved tensors on a
//   thread-local list, and only the outermost destructor drains that list, one object at a time.
#pragma once
#include <nanobind/nanobind.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "abi.h"
#include "small_vector.h"

namespace tp::tpx {

namespace nb = nanobind;
struct Node;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return bool(fn); }
};
// Most ops have at most three tensor inputs and tensors at most six dims: kept inline (small_vector.h).
using EdgeList = SmallVector<Edge, 3>;
using Shape = SmallVector<int64_t, 6>;
using InputList = SmallVector<TP_Tensor *, 8>;   // an op call's tensor arguments, flattened
using OutputList = SmallVector<TP_Tensor *, 4>;  // its tensor results, flattened
using FlagList = SmallVector<bool, 4>;

// What a gradient flowing into a node must look like: the forward output's shape and dtype.
struct InputMeta {
  Shape shape;
  int dtype = TP_FLOAT32;
  int64_t device = 0;  // TP_DEVICE_CODE(type, index)
};
InputMeta input_meta_of(TP_Tensor *t);
inline int64_t device_code(TP_Tensor *t) {
  return TP_DEVICE_CODE(api->tensor_device_type(t), api->tensor_device_index(t));
}

// A tensor kept for backward, with the version it had when saved (Note [Version counter] in P10).
//
// Note [Saved outputs]
//   A node that keeps its own output (exp, tanh, sigmoid, relu, softmax, ...) must not own it: the output owns
//   its grad_fn, so output -> meta -> node -> output would be a reference cycle that nothing ever frees (the
//   refcounts are C++'s; Python's gc cannot see them), and every graph dropped without backward() — any
//   evaluation loop outside no_grad — would leak its outputs. A P10 view (`alias`) is no way out: a view owns
//   its base. So, as PyTorch's SavedVariable does, the node keeps saved_output(): a second tensor over the same
//   storage, geometry and version counter that is not a view and has no autograd meta. The version check
//   still sees in-place writes into the output, and unpack() rebuilds a tensor whose grad_fn is the node.
struct SavedVariable {
  TensorRef data;
  int64_t saved_version = 0;
  bool is_output = false;
  uint32_t output_nr = 0;
  // saved_tensors_hooks: what pack() returned, and the unpack() to call on it (then `data` stays empty).
  struct Packed {
    nb::object value, unpack;
  };
  std::shared_ptr<Packed> packed;
  bool defined() const { return data.defined() || packed; }
};

// What a node keeps of its own output `t` (Note [Saved outputs]).
TensorRef saved_output(TP_Tensor *t);

// saved_tensors_hooks (tensorplay_tpx/autograd/graph.py): the innermost (pack, unpack) pair, if any.
struct SavedHooks {
  nb::object pack, unpack;
};
std::vector<SavedHooks> &saved_hooks_stack();
// Apply the innermost pack hook to a tensor being saved (no-op without hooks).
void pack_saved(SavedVariable &sv);

// Python-side hooks and metadata of a node, and its rarely used extras, allocated only when used (a node of
// an ordinary op stays small: Note [Recording allocations] in record.cpp).
struct NodePyState {
  std::vector<nb::object> pre_hooks;                        // fn(grad_outputs) -> new grad_outputs or None
  std::vector<nb::object> post_hooks;                       // fn(grad_inputs, grad_outputs) -> new or None
  std::map<uint32_t, std::vector<nb::object>> tensor_hooks; // per input slot: a tensor's register_hook
  nb::object metadata;                                      // the dict behind grad_fn.metadata
  nb::object ctx, backward;                                 // a custom Function's ctx and backward
  // Retained gradients of non-leaf outputs (Tensor.retain_grad): slot -> where to store it. Weak, so the
  // tensor's own meta owns the slot and no cycle forms.
  std::map<uint32_t, std::weak_ptr<TensorRef>> retained;
  std::string forward_trace;  // anomaly mode: where the forward call happened
};

struct Node : std::enable_shared_from_this<Node> {
  Node();
  virtual ~Node();
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;

  virtual std::string name() const = 0;
  // Gradients in (one per input_meta slot; undefined = zero) -> gradients out (one per next_edge).
  virtual std::vector<TensorRef> apply(std::vector<TensorRef> &&grads) = 0;
  // Drop saved tensors after a backward without retain_graph.
  virtual void release_variables();

  // Unpack a saved variable for apply(): checks that it is still there and at its saved version.
  TensorRef unpack(const SavedVariable &sv);

  uint64_t seq_nr;
  EdgeList next_edges;
  SmallVector<InputMeta, 1> input_meta;
  SmallVector<SavedVariable, 2> saved;  // in the base class for Note [Iterative graph teardown]
  bool released = false;
  std::unique_ptr<NodePyState> py;
  NodePyState &pystate();

  static std::atomic<uint64_t> next_seq;
};

// The leaf's sink: adds incoming gradients into the leaf's `.grad`.
struct AccumulateGrad : Node {
  explicit AccumulateGrad(TensorRef variable);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<TensorRef> apply(std::vector<TensorRef> &&grads) override;
  TensorRef variable;  // the leaf (strong: the leaf's meta holds this node weakly)
};

// The engine's start node when backward() has several roots: passes the given gradients on.
struct GraphRoot : Node {
  explicit GraphRoot(std::vector<TensorRef> grads) : grads(std::move(grads)) {}
  std::string name() const override { return "GraphRoot"; }
  std::vector<TensorRef> apply(std::vector<TensorRef> &&) override { return grads; }
  std::vector<TensorRef> grads;
};

// Undefined gradients become zeros where a formula needs a tensor.
TensorRef zeros_for(const InputMeta &m);

}  // namespace tp::tpx
