// rearrange.cpp — copies that move elements around: flip, roll, rot90, repeat, tile, repeat_interleave,
// tril/triu, diag, diag_embed, diagflat, pad.
//
// Where it sits: each op is either a copy_ from a cleverly strided view (flip, repeat) — so the loop helper does
// the moving and no kernel here touches raw memory — or a Composite of other ops (roll, rot90, tile, pad …).
// tril/triu are the one elementwise family that needs element coordinates; they mask with a strided loop.
#include <numeric>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// flip returns a copy, as in PyTorch: read through a view with negated strides (an internal view only — the
// public view ops never make negative strides), write into a tensor of the input's layout.
static Tensor flip(const Tensor &self, std::vector<int64_t> dims) {
  Shape strides = self.strides();
  int64_t offset = self.storage_offset();
  std::vector<bool> seen(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, self.dim(), "flip");
    TP_CHECK(!seen[w], Runtime, "flip: dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (self.dim() == 0 || self.sizes()[w] == 0) continue;
    offset += (self.sizes()[w] - 1) * strides[w];
    strides[w] = -strides[w];
  }
  Tensor reversed = make_view(self, self.sizes(), strides, offset);
  return call_op(TP_OP("copy_"), empty_like_layout(self, self.dtype(), self.device()), reversed, false);
}

static Tensor fliplr(const Tensor &self) {
  TP_CHECK(self.dim() >= 2, Runtime, "Input must be >= 2-d.");
  return call_op(TP_OP("flip"), self, std::vector<int64_t>{1});
}
static Tensor flipud(const Tensor &self) {
  TP_CHECK(self.dim() >= 1, Runtime, "Input must be >= 1-d.");
  return call_op(TP_OP("flip"), self, std::vector<int64_t>{0});
}

// roll: the tail moved to the front, as two narrows and a cat (what PyTorch's CPU kernel does too).
static Tensor roll(const Tensor &self, std::vector<int64_t> shifts, std::vector<int64_t> dims) {
  if (dims.empty()) {
    TP_CHECK(shifts.size() == 1, Runtime, "roll: `shifts` required to be of size 1 when `dims` is empty, got ",
             shifts.size());
    Tensor flat = call_op(TP_OP("reshape"), self, std::vector<int64_t>{-1});
    return call_op(TP_OP("view"), roll(flat, shifts, {0}), self.sizes());
  }
  TP_CHECK(shifts.size() == dims.size(), Runtime, "shifts and dimensions must align. shifts: ", shifts.size(),
           ", dims:", dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], self.dim(), "roll");
    int64_t n = self.sizes()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    Tensor tail = call_op(TP_OP("narrow"), out, d, n - s, s);
    Tensor head = call_op(TP_OP("narrow"), out, d, int64_t(0), n - s);
    out = call_op(TP_OP("cat"), std::vector<Tensor>{tail, head}, d);
  }
  return out.impl() == self.impl() ? call_op(TP_OP("clone"), self) : out;
}

// rot90: k quarter turns from dims[0] towards dims[1].
static Tensor rot90(const Tensor &self, int64_t k, std::vector<int64_t> dims) {
  TP_CHECK(dims.size() == 2, Runtime, "expected total rotation dims == 2, but got dims = ", dims.size());
  TP_CHECK(self.dim() >= 2, Runtime, "expected total dims >= 2, but got total dims = ", self.dim());
  int64_t a = wrap_dim(dims[0], self.dim(), "rot90"), b = wrap_dim(dims[1], self.dim(), "rot90");
  TP_CHECK(a != b, Runtime, "expected rotation dims to be different, but got dim0 = ", a, " and dim1 = ", b);
  switch (((k % 4) + 4) % 4) {
    case 1: return call_op(TP_OP("transpose"), call_op(TP_OP("flip"), self, std::vector<int64_t>{b}), a, b);
    case 2: return call_op(TP_OP("flip"), self, std::vector<int64_t>{a, b});
    case 3: return call_op(TP_OP("flip"), call_op(TP_OP("transpose"), self, a, b), std::vector<int64_t>{b});
    default: return call_op(TP_OP("clone"), self);
  }
}

// repeat: view the output as (r0, s0, r1, s1, ...) and copy the input in with stride 0 on every r dim.
static Tensor repeat(const Tensor &self, std::vector<int64_t> repeats) {
  int64_t n = int64_t(repeats.size());
  TP_CHECK(n >= self.dim(), Runtime, "Number of dimensions of repeat dims can not be smaller than number of "
           "dimensions of tensor");
  for (int64_t r : repeats) TP_CHECK(r >= 0, Runtime, "Trying to create tensor with negative dimension ", r);
  Shape padded(n - self.dim(), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  Shape out_shape(n), interleaved, source_view, expanded;
  for (int64_t i = 0; i < n; ++i) {
    out_shape[i] = padded[i] * repeats[i];
    interleaved.insert(interleaved.end(), {repeats[i], padded[i]});
    source_view.insert(source_view.end(), {1, padded[i]});
  }
  Tensor out = empty_tensor(out_shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  Tensor src = call_op(TP_OP("expand"), call_op(TP_OP("reshape"), self, source_view), interleaved);
  call_op(TP_OP("copy_"), call_op(TP_OP("view"), out, interleaved), src, false);
  return out;
}

// tile: repeat, with `dims` padded by leading ones when shorter than the tensor's rank (NumPy's tile).
static Tensor tile(const Tensor &self, std::vector<int64_t> dims) {
  if (int64_t(dims.size()) < self.dim()) dims.insert(dims.begin(), self.dim() - dims.size(), 1);
  return call_op(TP_OP("repeat"), self, dims);
}

// repeat_interleave with one count: each element (slice along dim) repeated in place: x.unsqueeze.expand.flatten.
static Tensor repeat_interleave_int(const Tensor &self, int64_t repeats, std::optional<int64_t> dim,
                                    std::optional<int64_t> output_size) {
  TP_CHECK(repeats >= 0, Runtime, "repeat_interleave: repeats can not be negative, got ", repeats);
  Tensor x = dim ? self : call_op(TP_OP("reshape"), self, std::vector<int64_t>{-1});
  int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  if (x.dim() == 0) x = call_op(TP_OP("reshape"), x, std::vector<int64_t>{1});
  TP_CHECK(!output_size || *output_size == x.sizes()[d] * repeats, Runtime,
           "repeat_interleave: output_size ", output_size.value_or(0), " does not match ", x.sizes()[d] * repeats);
  Shape expanded = x.sizes();
  expanded.insert(expanded.begin() + d + 1, repeats);
  Tensor e = call_op(TP_OP("expand"), call_op(TP_OP("unsqueeze"), x, d + 1), expanded);
  Shape final_shape = x.sizes();
  final_shape[d] *= repeats;
  return call_op(TP_OP("reshape"), e, final_shape);
}

// repeat_interleave with a count per slice: copy slice i into repeats[i] consecutive places.
static Tensor repeat_interleave_tensor(const Tensor &self, const Tensor &repeats, std::optional<int64_t> dim,
                                       std::optional<int64_t> output_size) {
  TP_CHECK(repeats.dim() <= 1 && is_integral(repeats.dtype(), false), Runtime,
           "repeat_interleave: repeats must be a 0-d or 1-d integer tensor, got dtype ",
           scalar_type_name(repeats.dtype()), " and shape ", shape_str(repeats.sizes()));
  TP_CHECK(!repeats.device().is_meta(), NotImplemented,
           "repeat_interleave: a tensor of repeats on meta has no counts to size the output with");
  Tensor counts = cast_to(call_op(TP_OP("contiguous"), repeats), ScalarType::Int64);
  const int64_t *c = counts.data<int64_t>();
  if (repeats.dim() == 0) return repeat_interleave_int(self, c[0], dim, output_size);
  Tensor x = dim ? self : call_op(TP_OP("reshape"), self, std::vector<int64_t>{-1});
  int64_t d = wrap_dim(dim.value_or(0), x.dim(), "repeat_interleave");
  TP_CHECK(repeats.numel() == x.sizes()[d], Runtime, "repeats must have the same size as input along dim, but got "
           "repeats.size(0) = ", repeats.numel(), " and input.size(", d, ") = ", x.sizes()[d]);
  int64_t total = 0;
  for (int64_t i = 0; i < counts.numel(); ++i) {
    TP_CHECK(c[i] >= 0, Runtime, "repeat_interleave: repeats can not be negative, got ", c[i]);
    total += c[i];
  }
  TP_CHECK(!output_size || *output_size == total, Runtime, "repeat_interleave: output_size ", *output_size,
           " does not match the sum of repeats ", total);
  Shape shape = x.sizes();
  shape[d] = total;
  Tensor out = empty_tensor(shape, x.dtype(), x.device());
  for (int64_t i = 0, at = 0; i < counts.numel(); at += c[i], ++i) {
    if (c[i] == 0) continue;
    Tensor slice = call_op(TP_OP("narrow"), x, d, i, int64_t(1));
    call_op(TP_OP("copy_"), call_op(TP_OP("narrow"), out, d, at, c[i]), slice, false);
  }
  return out;
}

// Keep the lower (tril) or upper (triu) triangle of the last two dims, relative to `diagonal`; zero the rest.
static Tensor triangle_(const Tensor &self, int64_t diagonal, bool lower, const char *op) {
  TP_CHECK(self.dim() >= 2, Runtime, op, ": input tensor must have at least 2 dimensions");
  self.bump_version();
  if (self.device().is_meta() || self.numel() == 0) return self;
  int64_t rows = self.sizes()[self.dim() - 2], cols = self.sizes()[self.dim() - 1];
  int64_t rs = self.strides()[self.dim() - 2], cs = self.strides()[self.dim() - 1];
  int64_t batches = self.numel() / (rows * cols);
  // Batch starts: iterate the leading dims through a view of one element per matrix.
  Shape lead(self.sizes().begin(), self.sizes().end() - 2), lead_strides(self.strides().begin(), self.strides().end() - 2);
  TP_DISPATCH_ALL(self.dtype(), op, [&]<typename T>() {
    T *base = self.data<T>();
    for (int64_t b = 0; b < batches; ++b) {
      int64_t rem = b, off = 0;
      for (int64_t k = int64_t(lead.size()) - 1; k >= 0; --k) { off += (rem % lead[k]) * lead_strides[k]; rem /= lead[k]; }
      T *m = base + off;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          if (lower ? (j - i > diagonal) : (j - i < diagonal)) m[i * rs + j * cs] = T(0);
    }
  });
  return self;
}
static Tensor tril_(const Tensor &self, int64_t diagonal) { return triangle_(self, diagonal, true, "tril_"); }
static Tensor triu_(const Tensor &self, int64_t diagonal) { return triangle_(self, diagonal, false, "triu_"); }
static Tensor tril(const Tensor &self, int64_t diagonal) {
  TP_CHECK(self.dim() >= 2, Runtime, "tril: input tensor must have at least 2 dimensions");
  return triangle_(call_op(TP_OP("clone"), self), diagonal, true, "tril");
}
static Tensor triu(const Tensor &self, int64_t diagonal) {
  TP_CHECK(self.dim() >= 2, Runtime, "triu: input tensor must have at least 2 dimensions");
  return triangle_(call_op(TP_OP("clone"), self), diagonal, false, "triu");
}

// diag_embed: zeros of the bigger shape, then write `self` onto the chosen diagonal (a view) of dims dim1, dim2.
static Tensor diag_embed(const Tensor &self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t nd = self.dim() + 1;
  int64_t a = wrap_dim(dim1, nd, "diag_embed"), b = wrap_dim(dim2, nd, "diag_embed");
  TP_CHECK(a != b, Runtime, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n = (self.dim() == 0 ? 1 : self.sizes().back()) + std::abs(offset);
  Shape shape;
  for (int64_t k = 0, src = 0; k < nd; ++k)
    shape.push_back(k == a || k == b ? n : self.sizes()[src++]);
  Tensor out = call_op(TP_OP("full"), shape, Scalar(int64_t(0)), std::optional<ScalarType>(self.dtype()),
                       std::optional<Device>(self.device()));
  call_op(TP_OP("copy_"), call_op(TP_OP("diagonal"), out, offset, a, b), self, false);
  return out;
}

// diag: a 1-D input becomes the diagonal of a square matrix; a 2-D input gives its diagonal (a copy).
static Tensor diag(const Tensor &self, int64_t diagonal) {
  TP_CHECK(self.dim() == 1 || self.dim() == 2, Runtime, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  if (self.dim() == 1) return diag_embed(self, diagonal, 0, 1);
  return call_op(TP_OP("clone"), call_op(TP_OP("diagonal"), self, diagonal, int64_t(0), int64_t(1)));
}

static Tensor diagflat(const Tensor &self, int64_t offset) {
  return diag_embed(call_op(TP_OP("reshape"), self, std::vector<int64_t>{-1}), offset, 0, 1);
}

// pad: `pad` lists (left, right) pairs starting from the LAST dim. "constant" fills with `value` (negative pads
// crop); "reflect" mirrors without repeating the edge, "replicate" repeats the edge, "circular" wraps around.
// The three copying modes are concatenations of slices, one dim at a time.
static Tensor pad(const Tensor &self, std::vector<int64_t> pad, std::string mode, std::optional<double> value) {
  TP_CHECK(pad.size() % 2 == 0, Runtime, "Padding length must be divisible by 2, got ", pad.size());
  TP_CHECK(int64_t(pad.size()) <= 2 * self.dim(), Runtime, "Padding length should be less than or equal to two "
           "times the input dimension but got padding length ", pad.size(), " and input of dimension ", self.dim());
  int64_t npad = int64_t(pad.size()) / 2;
  if (mode == "constant") {
    Shape shape = self.sizes();
    for (int64_t i = 0; i < npad; ++i) {
      int64_t d = self.dim() - 1 - i;
      shape[d] += pad[2 * i] + pad[2 * i + 1];
      TP_CHECK(shape[d] >= 0, Runtime, "The input size ", self.sizes()[d], ", plus negative padding ", pad[2 * i],
               " and ", pad[2 * i + 1], " resulted in a negative output size, which is invalid.");
    }
    Scalar fill = value ? Scalar(*value) : Scalar(int64_t(0));
    Tensor out = call_op(TP_OP("full"), shape, fill, std::optional<ScalarType>(self.dtype()),
                         std::optional<Device>(self.device()));
    Tensor src = self, dst = out;
    for (int64_t i = 0; i < npad; ++i) {
      int64_t d = self.dim() - 1 - i, l = pad[2 * i], r = pad[2 * i + 1];
      int64_t len = self.sizes()[d] - std::max<int64_t>(0, -l) - std::max<int64_t>(0, -r);
      if (len <= 0) return out;
      src = call_op(TP_OP("narrow"), src, d, std::max<int64_t>(0, -l), len);
      dst = call_op(TP_OP("narrow"), dst, d, std::max<int64_t>(0, l), len);
    }
    call_op(TP_OP("copy_"), dst, src, false);
    return out;
  }
  TP_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular", NotImplemented,
           "pad: unknown padding mode '", mode, "' (expected constant, reflect, replicate or circular)");
  TP_CHECK(!value || *value == 0, Runtime, "Padding mode \"", mode,
           "\" doesn't take in value argument.");
  Tensor out = self;
  for (int64_t i = 0; i < npad; ++i) {
    int64_t d = self.dim() - 1 - i, l = pad[2 * i], r = pad[2 * i + 1], n = self.sizes()[d];
    TP_CHECK(l >= 0 && r >= 0, Runtime, "pad: negative padding is only supported in constant mode, got ", l, ", ", r);
    if (mode == "reflect")
      TP_CHECK(l < n && r < n, Runtime, "Argument #4: Padding size should be less than the corresponding input "
               "dimension, but got: padding (", l, ", ", r, ") at dimension ", d, " of input ", shape_str(self.sizes()));
    if (mode == "circular")
      TP_CHECK(l <= n && r <= n, Runtime, "Padding value causes wrapping around more than once.");
    if (mode == "replicate") TP_CHECK(n > 0 || (l == 0 && r == 0), Runtime, "pad: cannot replicate an empty dimension");
    auto piece = [&](int64_t start, int64_t len) { return call_op(TP_OP("narrow"), out, d, start, len); };
    auto reversed = [&](const Tensor &t) { return call_op(TP_OP("flip"), t, std::vector<int64_t>{d}); };
    Tensor left, right;
    if (mode == "reflect") {
      left = reversed(piece(1, l));
      right = reversed(piece(n - 1 - r, r));
    } else if (mode == "replicate") {
      Shape ls = out.sizes(), rs = out.sizes();
      ls[d] = l;
      rs[d] = r;
      left = call_op(TP_OP("expand"), piece(0, 1), ls);
      right = call_op(TP_OP("expand"), piece(n - 1, 1), rs);
    } else {
      left = piece(n - l, l);
      right = piece(0, r);
    }
    out = call_op(TP_OP("cat"), std::vector<Tensor>{left, out, right}, d);
  }
  return out.impl() == self.impl() ? call_op(TP_OP("clone"), self) : out;
}

TP_LIBRARY(rearrange) {
  lib.def("pad(Tensor self, int[] pad, str mode=\"constant\", float? value=None) -> Tensor");
  TP_IMPL(lib, "pad", Composite, pad);
  lib.def("flip(Tensor self, int[] dims) -> Tensor");
  lib.def("fliplr(Tensor self) -> Tensor");
  lib.def("flipud(Tensor self) -> Tensor");
  lib.def("roll(Tensor self, int[] shifts, int[] dims=[]) -> Tensor");
  lib.def("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor");
  lib.def("repeat(Tensor self, int[] repeats) -> Tensor");
  lib.def("tile(Tensor self, int[] dims) -> Tensor");
  lib.def("repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor");
  lib.def("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor");
  lib.def("tril(Tensor self, int diagonal=0) -> Tensor");
  lib.def("triu(Tensor self, int diagonal=0) -> Tensor");
  lib.def("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)");
  lib.def("triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)");
  lib.def("diag(Tensor self, int diagonal=0) -> Tensor");
  lib.def("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor");
  lib.def("diagflat(Tensor self, int offset=0) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<flip>(lib, "flip", key, __LINE__);
    impl_typed<repeat>(lib, "repeat", key, __LINE__);
    impl_typed<repeat_interleave_tensor>(lib, "repeat_interleave.self_Tensor", key, __LINE__);
    impl_typed<tril>(lib, "tril", key, __LINE__);
    impl_typed<triu>(lib, "triu", key, __LINE__);
    impl_typed<tril_>(lib, "tril_", key, __LINE__);
    impl_typed<triu_>(lib, "triu_", key, __LINE__);
  }
  TP_IMPL(lib, "fliplr", Composite, fliplr);
  TP_IMPL(lib, "flipud", Composite, flipud);
  TP_IMPL(lib, "roll", Composite, roll);
  TP_IMPL(lib, "rot90", Composite, rot90);
  TP_IMPL(lib, "tile", Composite, tile);
  TP_IMPL(lib, "repeat_interleave.self_int", Composite, repeat_interleave_int);
  TP_IMPL(lib, "diag", Composite, diag);
  TP_IMPL(lib, "diag_embed", Composite, diag_embed);
  TP_IMPL(lib, "diagflat", Composite, diagflat);
}

}  // namespace tp::p10
