// engine.cpp — the autograd engine: dependency counting, a ready queue, input buffers, hooks, capture.
//
// Where it sits: the heart of TPX (docs/design.md §4). One backward call:
//   1. wrap the roots in a GraphRoot node (its outputs are the root gradients);
//   2. count, for every node reachable from it, how many edges point at it (its dependencies);
//   3. with `inputs` (grad(), backward(inputs=...)): mark which nodes lie on a path to an input, and run only those;
//   4. pop the ready node with the highest sequence number (recorded last), run its hooks and its backward
//      function, fit each gradient to its target (Note [Gradient shapes]), add it into the target's input
//      buffer, and queue the target once all its dependencies have delivered.
// No recursion anywhere: a graph 100k nodes deep needs no more stack than a graph of one.
//
// Note [Gradient shapes]
//   A formula may return a gradient in the broadcast shape of the forward computation (`a + b` with b of
//   shape [3] and a of shape [2, 3]: the gradient for b arrives as [2, 3]). The engine sums it back to the
//   shape the target expects (the forward input's shape, kept in the target's input_meta) and casts it to the
//   input's dtype, so formulas never repeat that bookkeeping.
//
// Note [Complex gradients]
//   PyTorch's convention, followed by every formula: for a real loss L of a complex tensor z = x + iy, the
//   gradient is dL/dx + i dL/dy (twice the conjugate Wirtinger derivative dL/d(conj z)). A backward formula
//   for y = f(z) with f holomorphic therefore returns grad * conj(f'(z)); a non-holomorphic f (abs, angle,
//   real, conj) gets its own expression from the two real derivatives. A complex gradient arriving at a real
//   input keeps its real part (the derivative along the real axis).
#include "engine.h"
#include "pyconv.h"

#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "meta.h"

namespace tp::tpx {

bool anomaly_enabled = false;
bool anomaly_check_nan = true;

bool grad_enabled() { return !(api->tls_excluded() & TP_KEY_BIT(TP_KEY_AUTOGRAD)); }
void set_grad_enabled(bool on) {
  TP_KeySet ex = api->tls_excluded();
  api->tls_set_excluded(on ? (ex & ~TP_KEY_BIT(TP_KEY_AUTOGRAD)) : (ex | TP_KEY_BIT(TP_KEY_AUTOGRAD)));
}

namespace {

template <typename Ints> std::string shape_str(const Ints &s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

// Note [Gradient shapes]
TensorRef fit_gradient(TensorRef g, const InputMeta &want, const Node &producer, size_t index) {
  std::vector<int64_t> have = g.sizes();
  if (!same_elements(want.shape, have)) {
    size_t lead = have.size() >= want.shape.size() ? have.size() - want.shape.size() : 0;
    bool ok = have.size() >= want.shape.size();
    std::vector<int64_t> dims;
    for (size_t i = 0; ok && i < have.size(); ++i) {
      // Summing a dim of size 1 changes nothing, so only the dims that really fold enter the sum; when none
      // does, the reshape alone fits the gradient (a full reduction pass over it would be pure cost).
      if (i < lead) {
        if (have[i] != 1) dims.push_back(int64_t(i));
        continue;
      }
      int64_t w = want.shape[i - lead];
      if (w == have[i]) continue;
      if (w == 1) dims.push_back(int64_t(i));
      else ok = false;
    }
    if (!ok)
      fail(TP_ERR_RUNTIME, "Function " + producer.name() + " returned an invalid gradient at index " +
                               std::to_string(index) + " - got " + shape_str(have) +
                               " but expected shape compatible with " + shape_str(want.shape));
    static const TP_Op *sum = find_op("sum"), *reshape = find_op("reshape");
    if (!dims.empty()) g = call1(sum, {tv(g), ilv(dims), bv(true)});
    g = call1(reshape, {tv(g), ilv(want.shape)});
  }
  // A complex gradient for a real input keeps its real part (PyTorch's handle_r_to_c): under the conjugate
  // Wirtinger convention that is the derivative with respect to the real input (Note [Complex gradients]).
  if (is_complex_dtype(g.dtype()) && !is_complex_dtype(want.dtype)) {
    static const TP_Op *real = find_op("real");
    g = call1(real, {tv(g)});
  }
  // A gradient in another dtype, or on another device (`x.cuda()` records `to`, whose formula passes the
  // gradient through), goes back to its input's dtype and device, as PyTorch's engine does.
  const int64_t have_device = device_code(g.get());
  if (g.dtype() != want.dtype || have_device != want.device) {
    static const TP_Op *to = find_op("to");
    TP_Value dt{}, dev{};
    dt.tag = TP_VALUE_DTYPE;
    dt.v.i = want.dtype;
    dev.tag = TP_VALUE_DEVICE;
    dev.v.i = want.device;
    g = call1(to, {tv(g), dt, dev});
  }
  return g;
}

TensorRef accumulate(const TensorRef &old, TensorRef g) {
  if (!old) return g;
  static const TP_Op *add = find_op("add");
  return call1(add, {tv(old), tv(g)});
}


// Tensor hooks (register_hook), retained grads, then the node's own pre-hooks, on the gradients about to flow
// into `n`.
void run_pre_hooks(Node &n, std::vector<TensorRef> &in) {
  if (n.py) {
    nb::gil_scoped_acquire gil;
    for (auto &[slot, hooks] : n.py->tensor_hooks) {
      for (const nb::object &h : hooks) {
        if (!in[slot]) continue;
        nb::object r = h(to_python(in[slot]));
        if (!r.is_none()) in[slot] = from_python(r);
      }
    }
  }
  if (n.py)
    for (auto &[slot, weak] : n.py->retained) {
      if (std::shared_ptr<TensorRef> dst = weak.lock(); dst && in[slot]) {
        static const TP_Op *clone = find_op("clone");
        *dst = *dst ? accumulate(*dst, in[slot]) : call1(clone, {tv(in[slot])});
      }
    }
  if (n.py && !n.py->pre_hooks.empty()) {
    nb::gil_scoped_acquire gil;
    for (const nb::object &h : n.py->pre_hooks) {
      nb::list grads;
      for (auto &g : in) grads.append(to_python(g));
      nb::object r = h(nb::tuple(grads));
      if (!r.is_none()) {
        size_t i = 0;
        for (nb::handle x : r) { if (i < in.size()) in[i] = from_python(x); ++i; }
      }
    }
  }
}

void run_post_hooks(Node &n, std::vector<TensorRef> &out, const std::vector<TensorRef> &in) {
  if (!n.py || n.py->post_hooks.empty()) return;
  nb::gil_scoped_acquire gil;
  nb::list gin, gout;
  for (auto &g : out) gin.append(to_python(g));
  for (auto &g : in) gout.append(to_python(g));
  for (const nb::object &h : n.py->post_hooks) {
    nb::object r = h(nb::tuple(gin), nb::tuple(gout));
    if (!r.is_none()) {
      size_t i = 0;
      for (nb::handle x : r) { if (i < out.size()) out[i] = from_python(x); ++i; }
    }
  }
}

bool has_nan(const TensorRef &g) {
  static const TP_Op *isnan = find_op("isnan"), *any = find_op("any");
  if (api->tensor_device_type(g.get()) == TP_DEVICE_META) return false;
  TensorRef r = call1_below_autograd(any, {tv(call1_below_autograd(isnan, {tv(g)}))});
  return *static_cast<const bool *>(api->tensor_data_ptr(r.get()));
}

void check_anomaly(const Node &n, const std::vector<TensorRef> &out) {
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] && is_differentiable_dtype(out[i].dtype()) && has_nan(out[i]))
      fail(TP_ERR_RUNTIME, "Function '" + n.name() + "' returned nan values in its " + std::to_string(i) +
                               "th output.");
}

struct ByCreation {
  bool operator()(Node *a, Node *b) const { return a->seq_nr < b->seq_nr; }  // later-recorded first
};

}  // namespace

std::vector<TensorRef> run_backward(BackwardRequest &req) {
  // 1. The start node.
  auto root = std::make_shared<GraphRoot>(std::move(req.root_grads));
  for (size_t i = 0; i < req.roots.size(); ++i) {
    Edge e = gradient_edge(req.roots[i]);
    if (!e.valid())
      fail(TP_ERR_RUNTIME, "element " + std::to_string(i) + " of tensors does not require grad and does not have a grad_fn");
    root->next_edges.push_back(std::move(e));
  }
  // Targets: where captured gradients are taken (grad(), backward(inputs=...)).
  std::vector<Edge> targets;
  for (TP_Tensor *t : req.inputs) {
    Edge e = gradient_edge(t);
    if (!e.valid()) fail(TP_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
    targets.push_back(std::move(e));
  }

  // 2. Dependencies, over every node reachable from the root. Nodes are held alive by `alive` for the run.
  std::unordered_map<Node *, int> deps;
  std::vector<std::shared_ptr<Node>> alive{root};
  {
    std::vector<Node *> stack{root.get()};
    std::unordered_set<Node *> seen{root.get()};
    while (!stack.empty()) {
      Node *n = stack.back();
      stack.pop_back();
      for (const Edge &e : n->next_edges) {
        if (!e.valid()) continue;
        ++deps[e.fn.get()];
        if (seen.insert(e.fn.get()).second) { stack.push_back(e.fn.get()); alive.push_back(e.fn); }
      }
    }
  }

  // 3. Which nodes must run: all of them, or (with targets) those with a path to a target edge.
  std::unordered_map<Node *, std::vector<std::pair<uint32_t, size_t>>> capture_at;  // node -> (slot, input #)
  for (size_t i = 0; i < targets.size(); ++i) capture_at[targets[i].fn.get()].push_back({targets[i].input_nr, i});
  std::unordered_set<Node *> needed;
  bool run_all = targets.empty();
  if (!run_all) {
    // Iterative post-order: a node is needed when one of its edges is a target or leads to a needed node.
    std::vector<std::pair<Node *, size_t>> stack{{root.get(), 0}};
    std::unordered_set<Node *> done;
    while (!stack.empty()) {
      auto &[n, i] = stack.back();
      if (i < n->next_edges.size()) {
        Node *m = n->next_edges[i++].fn.get();
        if (m && !done.count(m)) { done.insert(m); stack.push_back({m, 0}); }
        continue;
      }
      for (const Edge &e : n->next_edges) {
        if (!e.valid()) continue;
        bool is_target = capture_at.count(e.fn.get()) != 0;
        if (is_target || needed.count(e.fn.get())) { needed.insert(n); break; }
      }
      stack.pop_back();
    }
  }
  std::vector<TensorRef> captured(targets.size());

  // 4. Run.
  GradModeGuard mode(req.create_graph);
  std::unordered_map<Node *, std::vector<TensorRef>> buffers;
  std::priority_queue<Node *, std::vector<Node *>, ByCreation> ready;
  ready.push(root.get());
  while (!ready.empty()) {
    Node *n = ready.top();
    ready.pop();
    std::vector<TensorRef> in = std::move(buffers[n]);
    buffers.erase(n);
    in.resize(n->input_meta.size());
    run_pre_hooks(*n, in);
    if (auto c = capture_at.find(n); c != capture_at.end())
      for (auto [slot, idx] : c->second) captured[idx] = in[slot];
    if (!run_all && !needed.count(n)) continue;

    std::vector<TensorRef> out;
    try {
      out = n->apply(std::move(in));
      if (anomaly_enabled && anomaly_check_nan) check_anomaly(*n, out);
    } catch (...) {
      if (anomaly_enabled && n->py && !n->py->forward_trace.empty()) {
        nb::gil_scoped_acquire gil;
        std::string w = "Error detected in " + n->name() + ". Traceback of forward call that caused the error:\n" +
                        n->py->forward_trace;
        if (PyErr_WarnEx(PyExc_RuntimeWarning, w.c_str(), 1) != 0) PyErr_Clear();
      }
      throw;
    }
    run_post_hooks(*n, out, in);
    if (!req.keep_graph) n->release_variables();
    if (out.size() != n->next_edges.size())
      fail(TP_ERR_RUNTIME, "Function " + n->name() + " returned an incorrect number of gradients (expected " +
                               std::to_string(n->next_edges.size()) + ", got " + std::to_string(out.size()) + ")");
    for (size_t i = 0; i < out.size(); ++i) {
      const Edge &e = n->next_edges[i];
      if (!e.valid()) continue;
      if (out[i]) {
        TensorRef g = fit_gradient(std::move(out[i]), e.fn->input_meta.at(e.input_nr), *n, i);
        std::vector<TensorRef> &buf = buffers[e.fn.get()];
        if (buf.size() < e.fn->input_meta.size()) buf.resize(e.fn->input_meta.size());
        buf[e.input_nr] = accumulate(buf[e.input_nr], std::move(g));
      }
      if (--deps[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }

  // backward(inputs=...): add what reached the inputs into their .grad.
  if (req.accumulate && !targets.empty()) {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!captured[i]) continue;
      if (auto *acc = dynamic_cast<AccumulateGrad *>(targets[i].fn.get())) {
        std::vector<TensorRef> g{captured[i]};
        acc->apply(std::move(g));
      } else {
        AutogradMeta &m = meta_for(req.inputs[i]);
        m.grad = accumulate(m.grad, captured[i]);
      }
    }
  }
  if (!req.accumulate && !req.allow_unused) {
    for (size_t i = 0; i < captured.size(); ++i)
      if (!captured[i])
        fail(TP_ERR_RUNTIME, "One of the differentiated Tensors appears to not have been used in the graph. "
                             "Set allow_unused=True if this is the desired behavior.");
  }
  return captured;
}

}  // namespace tp::tpx
