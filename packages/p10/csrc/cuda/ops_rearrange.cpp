// ops_rearrange.cpp — CUDA kernels for flip, repeat, repeat_interleave.self_Tensor, tril, triu, tril_, triu_.
//
// Where it sits: the CUDA twin of kernels/rearrange.cpp. As there, flip and repeat are copies from cleverly
// strided views (negated strides; stride 0 on the repeat dims), so they run on copy.cu's strided copy
// (device_copy) and need no kernel of their own; tril/triu run rearrange.cu's triangle kernels;
// repeat_interleave with a tensor of counts scans the counts on the device (index.cu), reads back only the
// total (the output's size), builds the source index of every output slice and gathers with it. The other
// rearranging ops (roll, rot90, tile, pad, diag, ...) are Composites in kernels/rearrange.cpp over these.
// Checks, result shapes and layouts come from the CPU op asked on meta tensors (cuda/ops_meta.h).
#include "cuda/index_common.h"

namespace tp::p10::cuda {

static Tensor flip(const Tensor &self, std::vector<int64_t> dims) {
  call_op<Tensor>(TP_OP("flip"), meta_like(self), dims);  // dim checks
  const int dev = common_device("flip", {self}, false);
  DeviceGuard guard(dev);
  Shape strides = self.strides();
  int64_t offset = self.storage_offset();
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, self.dim(), "flip");
    if (self.dim() == 0 || self.size(w) == 0) continue;
    offset += (self.size(w) - 1) * strides[size_t(w)];
    strides[size_t(w)] = -strides[size_t(w)];
  }
  Tensor out = empty_like_layout(self, self.dtype(), self.device());
  device_copy(out, make_view(self, self.sizes(), strides, offset));
  return out;
}

// repeat: the output viewed as (r0, s0, r1, s1, ...) takes the input with stride 0 on every r dim.
static Tensor repeat(const Tensor &self, std::vector<int64_t> repeats) {
  const Tensor m = call_op<Tensor>(TP_OP("repeat"), meta_like(self), repeats);
  const int dev = common_device("repeat", {self}, false);
  DeviceGuard guard(dev);
  Tensor out = empty_tensor(m.sizes(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const int64_t n = int64_t(repeats.size());
  Shape padded(size_t(n - self.dim()), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  Shape interleaved, source_view;
  for (int64_t i = 0; i < n; ++i) {
    interleaved.insert(interleaved.end(), {repeats[size_t(i)], padded[size_t(i)]});
    source_view.insert(source_view.end(), {1, padded[size_t(i)]});
  }
  const Tensor src = call_op<Tensor>(TP_OP("expand"), call_op<Tensor>(TP_OP("reshape"), self, source_view), interleaved);
  device_copy(call_op<Tensor>(TP_OP("view"), out, interleaved), src);
  return out;
}

// repeat_interleave with a count per slice (Note [Nonzero passes]'s scan, reused): starts = the exclusive scan
// of the counts, whose total sizes the output; output slice j comes from the last input slice i with
// starts[i] <= j (index.cu repeat_interleave_index), gathered along dim.
static Tensor repeat_interleave_tensor(const Tensor &self, const Tensor &repeats, std::optional<int64_t> dim,
                                       std::optional<int64_t> output_size) {
  TP_CHECK(repeats.dim() <= 1 && is_integral(repeats.dtype(), false), Runtime,
           "repeat_interleave: repeats must be a 0-d or 1-d integer tensor, got dtype ",
           scalar_type_name(repeats.dtype()), " and shape ", shape_str(repeats.sizes()));
  TP_CHECK(self.device().type == DeviceType::CUDA, Runtime, "repeat_interleave: expected a CUDA tensor, got one on ",
           device_str(self.device()));
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Tensor counts = contiguous_as(index_on(repeats, self.device()), ScalarType::Int64);
  if (repeats.dim() == 0)
    return call_op<Tensor>(TP_OP("repeat_interleave.self_int"), self, read_int64(counts, 1)[0], dim, output_size);
  const Tensor x = dim ? self : call_op<Tensor>(TP_OP("reshape"), self, std::vector<int64_t>{-1});
  const int64_t d = wrap_dim(dim.value_or(0), x.dim(), "repeat_interleave");
  TP_CHECK(repeats.numel() == x.size(d), Runtime, "repeats must have the same size as input along dim, but got "
           "repeats.size(0) = ", repeats.numel(), " and input.size(", d, ") = ", x.size(d));
  const int64_t n_in = counts.numel();
  IndexErrorFlag negative(dev);
  const int64_t total = n_in ? exclusive_scan_int64(dev, counts, n_in, negative.ptr()) : 0;  // counts -> starts
  if (const auto bad = negative.value())
    fail(ErrorKind::Runtime, "repeat_interleave: repeats can not be negative, got ", *bad);
  TP_CHECK(!output_size || *output_size == total, Runtime, "repeat_interleave: output_size ", output_size.value_or(0),
           " does not match the sum of repeats ", total);
  Shape shape = x.sizes();
  shape[size_t(d)] = total;
  Tensor out = empty_tensor(shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  Tensor source_slice = empty_tensor({total}, ScalarType::Int64, x.device());
  launch(kernel(dev, "index.cu", "repeat_interleave_index"), elementwise_config(dev, total), stream_for(dev), total,
         counts.data_ptr(), n_in, source_slice.data_ptr());
  Shape view_shape(shape.size(), 1);
  view_shape[size_t(d)] = total;
  const Tensor idx = call_op<Tensor>(TP_OP("expand"), call_op<Tensor>(TP_OP("reshape"), source_slice, view_shape), shape);
  launch_gather(dev, out, restride(x, shape, d), idx, x.size(d), x.stride(d), kNoCheck, nullptr, "repeat_interleave");
  return out;
}

// tril / triu (and their in-place forms): rearrange.cu's row kernel for contiguous tensors (Note [Triangle
// rows]), its general triangle kernel otherwise (Note [Triangle coordinates]).
static Tensor triangle(const char *op, const Tensor &self, int64_t diagonal, bool lower, bool inplace) {
  const Tensor ms = meta_like(self);
  const Tensor m = call_op<Tensor>(require_op(op), ms, diagonal);  // "needs at least 2 dimensions" and the layout
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  Tensor out = inplace ? self : empty_as_meta(m, self.device());
  if (inplace) self.bump_version();
  const int64_t n = self.numel();
  if (n == 0) return out;
  const int64_t item = self->itemsize(), cols = self.size(-1);
  if (self.is_contiguous() && out.is_contiguous() && cols < (int64_t(1) << 31)) {  // Note [Triangle rows]
    const int64_t unit = row_unit(cols * item, item, {out.data_ptr(), self.data_ptr()}, 0);
    const bool packs = unit == 16 && item < 16;
    const int64_t units = packs ? cols * item / 16 : cols, nrows = n / cols;
    const RowLaunch rl = row_launch(dev, nrows, units);
    launch(kernel(dev, "rearrange.cu", (packs ? "triangle_packs_b" : "triangle_rows_b") + std::to_string(item)),
           rl.config, stream_for(dev), nrows, int(units), self.size(-2), diagonal, int(lower), rl.lanes,
           out.data_ptr(), self.data_ptr());
    return out;
  }
  const KernelGeometry g = make_geometry(self.sizes(), {&out, &self}, op);
  launch(kernel(dev, "rearrange.cu", "triangle_b" + std::to_string(self->itemsize())), elementwise_config(dev, n),
         stream_for(dev), n, g, out.data_ptr(), self.data_ptr(), self.size(-2), self.size(-1), diagonal, int(lower));
  return out;
}
static Tensor tril(const Tensor &self, int64_t diagonal) { return triangle("tril", self, diagonal, true, false); }
static Tensor triu(const Tensor &self, int64_t diagonal) { return triangle("triu", self, diagonal, false, false); }
static Tensor tril_(const Tensor &self, int64_t diagonal) { return triangle("tril_", self, diagonal, true, true); }
static Tensor triu_(const Tensor &self, int64_t diagonal) { return triangle("triu_", self, diagonal, false, true); }

TP_LIBRARY(cuda_rearrange) {
  TP_IMPL(lib, "flip", CUDA, flip);
  TP_IMPL(lib, "repeat", CUDA, repeat);
  TP_IMPL(lib, "repeat_interleave.self_Tensor", CUDA, repeat_interleave_tensor);
  TP_IMPL(lib, "tril", CUDA, tril);
  TP_IMPL(lib, "triu", CUDA, triu);
  TP_IMPL(lib, "tril_", CUDA, tril_);
  TP_IMPL(lib, "triu_", CUDA, triu_);
}

}  // namespace tp::p10::cuda
