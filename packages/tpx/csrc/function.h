// function.h — recording a custom autograd.Function call (function.cpp).
#pragma once
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "node.h"

namespace tp::tpx {

// Make `outputs` the results of a new node whose backward is the Python callable `backward(ctx, node, grads)`.
std::shared_ptr<Node> record_function(const std::string &cls, nb::object ctx, nb::object backward,
                                      nb::list inputs, nb::list outputs, std::vector<bool> differentiable,
                                      std::vector<bool> dirty, nb::list to_save);
// ctx.saved_tensors: the node's saved tensors, unpacked with version checks.
nb::list saved_tensors(Node &node);

}  // namespace tp::tpx
