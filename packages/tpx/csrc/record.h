// record.h — the Autograd kernel: how an op call becomes a graph Node.
//
// Where it sits: registered at P10's Autograd key for every op that has a derivative formula (the formulas are
// Python functions in tensorplay_tpx/autograd/formulas/, registered through module.cpp), plus one fallback for
// every other op. P10's dispatcher runs it when grad mode is on and an input requires grad; it runs the op
// below Autograd and then records.
#pragma once
#include <string>
#include <vector>

#include "node.h"

namespace tp::tpx {

// What TPX knows about one differentiable op.
struct Formula {
  const TP_Op *op = nullptr;
  std::string node_name;            // "MulBackward"
  nb::object backward;  // (args, results, grads, needs_input_grad, input_metas) -> one gradient per input edge
  nb::object jvp;       // (args, results, tangents, input_metas, edge_counts) -> one tangent per output
  std::vector<bool> save_arg;       // per schema argument: keep this tensor (or tensor list) for backward
  // per schema argument: the arguments whose gradient needs it saved (empty: always). Note [Save what backward reads]
  std::vector<std::vector<int64_t>> save_when;
  // Called with the call's arguments before the op runs; a tensor it returns is the result, computed by ops
  // that were recorded one by one (None: run the op and record this formula). Note [Decomposed under autograd]
  nb::object decompose;
  bool save_results = false;        // keep the outputs for backward (exp, tanh, ...)
  bool is_view = false;             // output 0 aliases argument 0
  bool inplace = false;             // argument 0 is written and returned
  bool has_out_arg = false;         // an out= variant: not differentiable
  std::vector<bool> output_differentiable;  // per output; empty = every floating output
};

// Register `f` as the Autograd kernel of f.op (the Formula lives for the process).
void register_formula(Formula *f);
// Ops whose floating outputs carry no gradient (rounding, sign, ...): the fallback lets them through untracked.
void mark_nondifferentiable(const TP_Op *op);
// Install the Autograd fallback (module init).
void install_autograd_fallback();

// The record step shared with custom Functions (function.cpp): make outputs the results of `node`.
void attach_outputs(const std::shared_ptr<Node> &node, const OutputList &outputs, const FlagList &differentiable,
                    bool inplace, TP_Tensor *self, bool is_view, TP_Tensor *view_of);

// The traceback of the current Python call (anomaly mode).
std::string python_stack();

}  // namespace tp::tpx
