// join.cpp — ops that assemble tensors from pieces: cat, stack, hstack/vstack/dstack, atleast_Nd, tensor_split,
// meshgrid, broadcast_tensors/broadcast_to.
//
// Where it sits: cat is the one primitive here (it allocates and copies each input into a narrow view of the
// output); everything else is a Composite kernel written with other ops, so it runs on every backend and is
// differentiated through its parts.
#include <numeric>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// PyTorch skips legacy 1-D empty tensors (shape [0]) in cat, whatever the other inputs' shapes.
static bool skipped_in_cat(const Tensor &t) { return t.dim() == 1 && t.sizes()[0] == 0; }

static Tensor cat(std::vector<Tensor> tensors, int64_t dim) {
  TP_CHECK(!tensors.empty(), Runtime, "torch.cat(): expected a non-empty list of Tensors");
  const Tensor *ref = nullptr;
  for (const Tensor &t : tensors)
    if (!skipped_in_cat(t)) { ref = &t; break; }
  if (!ref) ref = &tensors[0];
  TP_CHECK(ref->dim() > 0, Runtime, "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = wrap_dim(dim, ref->dim(), "cat");
  Shape shape = ref->sizes();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    TP_CHECK(t.device() == ref->device(), Runtime, "cat: Expected all tensors to be on the same device, but found ",
             device_str(ref->device()), " and ", device_str(t.device()));
    if (skipped_in_cat(t)) continue;
    TP_CHECK(t.dim() == ref->dim(), Runtime, "Tensors must have same number of dimensions: got ", ref->dim(),
             " and ", t.dim());
    for (int64_t k = 0; k < t.dim(); ++k)
      TP_CHECK(k == d || t.sizes()[k] == ref->sizes()[k], Runtime, "Sizes of tensors must match except in dimension ",
               d, ". Expected size ", ref->sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i,
               " in the list.");
    shape[d] += t.sizes()[d];
  }
  Tensor out = empty_tensor(shape, result_type(tensors), ref->device());
  int64_t offset = 0;
  for (const Tensor &t : tensors) {
    if (skipped_in_cat(t)) continue;
    int64_t n = t.sizes()[d];
    call_op(TP_OP("copy_"), call_op(TP_OP("narrow"), out, d, offset, n), t, false);
    offset += n;
  }
  return out;
}

static Tensor stack(std::vector<Tensor> tensors, int64_t dim) {
  TP_CHECK(!tensors.empty(), Runtime, "stack expects a non-empty TensorList");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  for (size_t i = 1; i < tensors.size(); ++i)
    TP_CHECK(tensors[i].sizes() == tensors[0].sizes(), Runtime, "stack expects each tensor to be equal size, but got ",
             shape_str(tensors[0].sizes()), " at entry 0 and ", shape_str(tensors[i].sizes()), " at entry ", i);
  std::vector<Tensor> parts;
  for (const Tensor &t : tensors) parts.push_back(call_op(TP_OP("unsqueeze"), t, d));
  return call_op(TP_OP("cat"), parts, d);
}

// atleast_Nd: views with leading (1-D -> 2-D: leading; 2-D -> 3-D: trailing, NumPy's rule) dims of size 1.
static Tensor atleast(const Tensor &t, int64_t n) {
  if (t.dim() >= n) return t;
  if (t.dim() == 0) return call_op(TP_OP("reshape"), t, std::vector<int64_t>(n, 1));
  if (t.dim() == 1) {
    Tensor r = call_op(TP_OP("unsqueeze"), t, int64_t(0));
    return n == 3 ? call_op(TP_OP("unsqueeze"), r, int64_t(2)) : r;
  }
  return call_op(TP_OP("unsqueeze"), t, int64_t(2));  // 2-D -> 3-D
}
static Tensor atleast_1d(const Tensor &t) { return atleast(t, 1); }
static Tensor atleast_2d(const Tensor &t) { return atleast(t, 2); }
static Tensor atleast_3d(const Tensor &t) { return atleast(t, 3); }
static std::vector<Tensor> map_atleast(const std::vector<Tensor> &ts, int64_t n) {
  std::vector<Tensor> r;
  for (const Tensor &t : ts) r.push_back(atleast(t, n));
  return r;
}
static std::vector<Tensor> atleast_1d_seq(std::vector<Tensor> ts) { return map_atleast(ts, 1); }
static std::vector<Tensor> atleast_2d_seq(std::vector<Tensor> ts) { return map_atleast(ts, 2); }
static std::vector<Tensor> atleast_3d_seq(std::vector<Tensor> ts) { return map_atleast(ts, 3); }

// hstack joins 1-D inputs end to end and others along dim 1; vstack along dim 0 of 2-D; dstack along dim 2 of 3-D.
static Tensor hstack(std::vector<Tensor> ts) {
  auto r = map_atleast(ts, 1);
  TP_CHECK(!r.empty(), Runtime, "hstack expects a non-empty TensorList");
  return call_op(TP_OP("cat"), r, r[0].dim() == 1 ? int64_t(0) : int64_t(1));
}
static Tensor vstack(std::vector<Tensor> ts) { return call_op(TP_OP("cat"), map_atleast(ts, 2), int64_t(0)); }
static Tensor dstack(std::vector<Tensor> ts) { return call_op(TP_OP("cat"), map_atleast(ts, 3), int64_t(2)); }

// tensor_split: `sections` nearly equal parts (the first size % sections parts one longer), or cut at indices.
static std::vector<Tensor> split_at(const Tensor &t, int64_t d, const std::vector<int64_t> &cuts) {
  std::vector<Tensor> out;
  int64_t size = t.sizes()[d], start = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    int64_t end = i < cuts.size() ? std::clamp<int64_t>(cuts[i] < 0 ? cuts[i] + size : cuts[i], 0, size) : size;
    // a cut before the previous one gives an empty piece; the next piece still starts at this cut (NumPy's rule)
    out.push_back(call_op(TP_OP("slice"), t, d, std::optional<int64_t>(start),
                          std::optional<int64_t>(std::max(start, end)), int64_t(1)));
    start = end;
  }
  return out;
}
static std::vector<Tensor> tensor_split_sections(const Tensor &self, int64_t sections, int64_t dim) {
  TP_CHECK(self.dim() > 0, Runtime, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  TP_CHECK(sections > 0, Runtime, "number of sections must be larger than 0, got ", sections);
  int64_t d = wrap_dim(dim, self.dim(), "tensor_split");
  int64_t size = self.sizes()[d], base = size / sections, extra = size % sections;
  std::vector<int64_t> cuts;
  for (int64_t i = 1, at = 0; i < sections; ++i) cuts.push_back(at += base + (i <= extra ? 1 : 0));
  return split_at(self, d, cuts);
}
static std::vector<Tensor> tensor_split_indices(const Tensor &self, std::vector<int64_t> indices, int64_t dim) {
  TP_CHECK(self.dim() > 0, Runtime, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  return split_at(self, wrap_dim(dim, self.dim(), "tensor_split"), indices);
}

static std::vector<Tensor> broadcast_tensors(std::vector<Tensor> tensors) {
  Shape shape;
  for (const Tensor &t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor &t : tensors) out.push_back(call_op(TP_OP("expand"), t, shape));
  return out;
}

static Tensor broadcast_to(const Tensor &self, std::vector<int64_t> size) { return call_op(TP_OP("expand"), self, size); }

// meshgrid: 1-D (or 0-d) inputs -> grids; "ij" indexes by input order, "xy" gives the first two inputs' axes
// swapped (NumPy's default): compute "ij" grids with the first two inputs swapped, then swap the outputs back.
static std::vector<Tensor> meshgrid(std::vector<Tensor> tensors, std::optional<std::string> indexing) {
  std::string mode = indexing.value_or("ij");
  TP_CHECK(mode == "ij" || mode == "xy", Value, "meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ",
           mode);
  TP_CHECK(!tensors.empty(), Runtime, "meshgrid expects a non-empty TensorList");
  size_t n = tensors.size();
  bool swap = mode == "xy" && n >= 2;
  std::vector<Tensor> ins = tensors;
  if (swap) std::swap(ins[0], ins[1]);
  Shape shape;
  for (const Tensor &t : ins) {
    TP_CHECK(t.dim() <= 1, Runtime, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ",
             shape_str(t.sizes()));
    shape.push_back(t.numel());
  }
  std::vector<Tensor> grids;
  for (size_t i = 0; i < n; ++i) {
    Shape view_shape(n, 1);
    view_shape[i] = shape[i];
    grids.push_back(call_op(TP_OP("expand"), call_op(TP_OP("reshape"), ins[i], view_shape), shape));
  }
  if (swap) std::swap(grids[0], grids[1]);  // "xy": the ij grids of (y, x), handed back as (x, y)
  return grids;
}

TP_LIBRARY(join) {
  lib.def("cat(Tensor[] tensors, int dim=0) -> Tensor");
  lib.def("concat(Tensor[] tensors, int dim=0) -> Tensor");
  lib.def("concatenate(Tensor[] tensors, int dim=0) -> Tensor");
  lib.def("stack(Tensor[] tensors, int dim=0) -> Tensor");
  lib.def("hstack(Tensor[] tensors) -> Tensor");
  lib.def("vstack(Tensor[] tensors) -> Tensor");
  lib.def("row_stack(Tensor[] tensors) -> Tensor");
  lib.def("dstack(Tensor[] tensors) -> Tensor");
  lib.def("atleast_1d(Tensor self) -> Tensor");
  lib.def("atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]");
  lib.def("atleast_2d(Tensor self) -> Tensor");
  lib.def("atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]");
  lib.def("atleast_3d(Tensor self) -> Tensor");
  lib.def("atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]");
  lib.def("tensor_split.sections(Tensor(a -> *) self, int sections, int dim=0) -> Tensor(a)[]");
  lib.def("tensor_split.indices(Tensor(a -> *) self, int[] indices, int dim=0) -> Tensor(a)[]");
  lib.def("broadcast_tensors(Tensor[] tensors) -> Tensor[]");
  lib.def("broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)");
  lib.def("meshgrid(Tensor[] tensors, *, str? indexing=None) -> Tensor[]");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) impl_typed<cat>(lib, "cat", key, __LINE__);
  TP_IMPL(lib, "concat", Composite, cat);
  TP_IMPL(lib, "concatenate", Composite, cat);
  TP_IMPL(lib, "stack", Composite, stack);
  TP_IMPL(lib, "hstack", Composite, hstack);
  TP_IMPL(lib, "vstack", Composite, vstack);
  TP_IMPL(lib, "row_stack", Composite, vstack);
  TP_IMPL(lib, "dstack", Composite, dstack);
  TP_IMPL(lib, "atleast_1d", Composite, atleast_1d);
  TP_IMPL(lib, "atleast_1d.Sequence", Composite, atleast_1d_seq);
  TP_IMPL(lib, "atleast_2d", Composite, atleast_2d);
  TP_IMPL(lib, "atleast_2d.Sequence", Composite, atleast_2d_seq);
  TP_IMPL(lib, "atleast_3d", Composite, atleast_3d);
  TP_IMPL(lib, "atleast_3d.Sequence", Composite, atleast_3d_seq);
  TP_IMPL(lib, "tensor_split.sections", Composite, tensor_split_sections);
  TP_IMPL(lib, "tensor_split.indices", Composite, tensor_split_indices);
  TP_IMPL(lib, "broadcast_tensors", Composite, broadcast_tensors);
  TP_IMPL(lib, "meshgrid", Composite, meshgrid);
  TP_IMPL(lib, "broadcast_to", Composite, broadcast_to);
}

}  // namespace tp::p10
