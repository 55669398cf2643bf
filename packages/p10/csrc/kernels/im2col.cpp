// im2col.cpp — the im2col / col2im loops (Note [Window geometry] in im2col.h) and the ops `im2col` and `col2im`,
// PyTorch's aten names for F.unfold and F.fold: sliding 2-D blocks of a batch of images as columns, and back.
//
// Where it sits: the loops are the data-movement half of every convolution (kernels/conv.cpp does the GEMM
// half); the two ops are thin shape-checking wrappers around them. Tensor.unfold(dim, size, step), the view op
// in view.cpp, is a different operation and keeps its name.
#include "kernels/im2col.h"

#include <algorithm>

#include "dispatch/kernel_box.h"
#include "loop/parallel.h"

namespace tp::p10 {

namespace {

// The output positions o in [0, out) whose input index o * stride + offset lies inside [0, in): [lo, hi).
// Outside it the window reads padding.
inline void inside_range(int64_t in, int64_t out, int64_t stride, int64_t offset, int64_t &lo, int64_t &hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  hi = in - offset <= 0 ? 0 : (in - offset + stride - 1) / stride;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

// Where column row r reads from: its channel and, per dim, the input offset of output position 0.
struct RowOrigin {
  int64_t channel, off_d, off_h, off_w;
};
inline RowOrigin row_origin(const WindowGeometry &g, int64_t r) {
  const int64_t k = r % g.kernel_numel();
  const int64_t kw = k % g.kernel[2], kh = (k / g.kernel[2]) % g.kernel[1], kd = k / (g.kernel[2] * g.kernel[1]);
  return {r / g.kernel_numel(), kd * g.dilation[0] - g.pad[0], kh * g.dilation[1] - g.pad[1],
          kw * g.dilation[2] - g.pad[2]};
}

}  // namespace

template <typename T> void im2col_loop(const T *x, T *col, const WindowGeometry &g) {
  const int64_t L = g.out_numel(), OH = g.out[1], OW = g.out[2], IH = g.in[1], IW = g.in[2], sw = g.stride[2];
  if (L == 0) return;
  parallel_for(0, g.col_rows(), std::max<int64_t>(1, kGrainSize / L), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const RowOrigin o = row_origin(g, r);
      const T *xc = x + o.channel * g.in_numel();
      int64_t w_lo, w_hi;
      inside_range(IW, OW, sw, o.off_w, w_lo, w_hi);
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t id = od * g.stride[0] + o.off_d;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t ih = oh * g.stride[1] + o.off_h;
          T *dst = col + r * L + (od * OH + oh) * OW;
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= IH) {
            std::fill(dst, dst + OW, T(0));
            continue;
          }
          const T *src = xc + (id * IH + ih) * IW + o.off_w;  // src[ow * sw] is x[..., ow * sw + off_w]
          std::fill(dst, dst + w_lo, T(0));
          if (sw == 1) std::copy(src + w_lo, src + w_hi, dst + w_lo);
          else
            for (int64_t ow = w_lo; ow < w_hi; ++ow) dst[ow] = src[ow * sw];
          std::fill(dst + w_hi, dst + OW, T(0));
        }
      }
    }
  });
}

template <typename T> void col2im_loop(const T *col, T *x, const WindowGeometry &g) {
  using M = opmath_t<T>;
  const int64_t L = g.out_numel(), K = g.kernel_numel(), OH = g.out[1], OW = g.out[2], IH = g.in[1], IW = g.in[2],
                sw = g.stride[2];
  if (L == 0) return;
  parallel_for(0, g.channels, std::max<int64_t>(1, kGrainSize / (K * L)), [&](int64_t c0, int64_t c1) {
    for (int64_t r = c0 * K; r < c1 * K; ++r) {
      const RowOrigin o = row_origin(g, r);
      T *xc = x + o.channel * g.in_numel();
      int64_t w_lo, w_hi;
      inside_range(IW, OW, sw, o.off_w, w_lo, w_hi);
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t id = od * g.stride[0] + o.off_d;
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t ih = oh * g.stride[1] + o.off_h;
          if (ih < 0 || ih >= IH) continue;
          const T *src = col + r * L + (od * OH + oh) * OW;
          T *dst = xc + (id * IH + ih) * IW + o.off_w;  // dst[ow * sw] is x[..., ow * sw + off_w]
          for (int64_t ow = w_lo; ow < w_hi; ++ow) dst[ow * sw] = T(M(dst[ow * sw]) + M(src[ow]));
        }
      }
    }
  });
}

// Every dtype: col2im on bool sums as PyTorch's fold does, true + true staying true (a logical or).
#define TP_INSTANTIATE_WINDOW_LOOPS(T)                                       \
  template void im2col_loop<T>(const T *, T *, const WindowGeometry &);     \
  template void col2im_loop<T>(const T *, T *, const WindowGeometry &);
TP_INSTANTIATE_WINDOW_LOOPS(bool)
TP_INSTANTIATE_WINDOW_LOOPS(uint8_t)
TP_INSTANTIATE_WINDOW_LOOPS(int8_t)
TP_INSTANTIATE_WINDOW_LOOPS(int16_t)
TP_INSTANTIATE_WINDOW_LOOPS(int32_t)
TP_INSTANTIATE_WINDOW_LOOPS(int64_t)
TP_INSTANTIATE_WINDOW_LOOPS(float)
TP_INSTANTIATE_WINDOW_LOOPS(double)
TP_INSTANTIATE_WINDOW_LOOPS(Half)
TP_INSTANTIATE_WINDOW_LOOPS(BFloat16)
TP_INSTANTIATE_WINDOW_LOOPS(complex64)
TP_INSTANTIATE_WINDOW_LOOPS(complex128)
#undef TP_INSTANTIATE_WINDOW_LOOPS

// ---- the ops im2col and col2im ------------------------------------------------------------------------------
namespace {

// An int[2] argument: one number means the same for both dims (F.unfold's int-or-tuple).
std::array<int64_t, 2> pair_arg(const char *op, const char *name, const std::vector<int64_t> &v) {
  TP_CHECK(v.size() == 1 || v.size() == 2, Runtime, op, ": expected ", name, " to have 1 or 2 elements, but got ",
           v.size());
  return {v[0], v.back()};
}

std::string pair_str(const std::array<int64_t, 2> &p) {
  return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")";
}

// The checks PyTorch's im2col and col2im share (aten/native/im2col_shape_check.h).
void check_window_args(const std::array<int64_t, 2> &k, const std::array<int64_t, 2> &d,
                       const std::array<int64_t, 2> &p, const std::array<int64_t, 2> &s) {
  TP_CHECK(k[0] > 0 && k[1] > 0, Runtime, "kernel size should be greater than zero, but got kernel_height: ", k[0],
           " kernel_width: ", k[1]);
  TP_CHECK(d[0] > 0 && d[1] > 0, Runtime, "dilation should be greater than zero, but got dilation_height: ", d[0],
           " dilation_width: ", d[1]);
  TP_CHECK(p[0] >= 0 && p[1] >= 0, Runtime, "padding should be non-negative, but got pad_height: ", p[0],
           " pad_width: ", p[1]);
  TP_CHECK(s[0] > 0 && s[1] > 0, Runtime, "stride should be greater than zero, but got stride_height: ", s[0],
           " stride_width: ", s[1]);
}

WindowGeometry geometry_2d(int64_t channels, int64_t h, int64_t w, const std::array<int64_t, 2> &k,
                           const std::array<int64_t, 2> &d, const std::array<int64_t, 2> &p,
                           const std::array<int64_t, 2> &s) {
  WindowGeometry g;
  g.channels = channels;
  g.in = {1, h, w};
  g.kernel = {1, k[0], k[1]};
  g.dilation = {1, d[0], d[1]};
  g.pad = {0, p[0], p[1]};
  g.stride = {1, s[0], s[1]};
  for (int i = 0; i < 2; ++i) g.out[i + 1] = window_count(g.in[i + 1], p[i], p[i], k[i], d[i], s[i]);
  return g;
}

// The unbatched result: the batch of one without its batch dim.
Tensor drop_batch(const Tensor &t) {
  return call_op<Tensor>(TP_OP("view"), t, Shape(t.sizes().begin() + 1, t.sizes().end()));
}

}  // namespace

// im2col: [N, C, H, W] (or [C, H, W]) -> [N, C * kh * kw, L], one column per position of the sliding block.
// Both ops take every dtype: they only move (col2im: add) elements, so integers, which PyTorch's refuse, are
// no harder than floats.
static Tensor im2col(const Tensor &self, std::vector<int64_t> kernel_size, std::vector<int64_t> dilation,
                     std::vector<int64_t> padding, std::vector<int64_t> stride) {
  const auto k = pair_arg("im2col", "kernel_size", kernel_size), d = pair_arg("im2col", "dilation", dilation),
             p = pair_arg("im2col", "padding", padding), s = pair_arg("im2col", "stride", stride);
  check_window_args(k, d, p, s);
  const int64_t nd = self.dim();
  bool valid = (nd == 3 || nd == 4) && self.size(-1) != 0 && self.size(-2) != 0 && (nd == 4 || self.size(0) != 0);
  TP_CHECK(valid, Runtime, "Expected 3D or 4D (batch mode) tensor input with possible 0 batch size and non-zero "
           "dimensions, but got: ", shape_str(self.sizes()));
  const bool batched = nd == 4;
  const int64_t n = batched ? self.size(0) : 1, c = self.size(-3);
  const WindowGeometry g = geometry_2d(c, self.size(-2), self.size(-1), k, d, p, s);
  TP_CHECK(g.out[1] >= 1 && g.out[2] >= 1, Runtime, "Given input with spatial size (", g.in[1], ", ", g.in[2],
           "), kernel_size=", pair_str(k), ", dilation=", pair_str(d), ", padding=", pair_str(p),
           ", calculated shape of the array of sliding blocks as (", g.out[1], ", ", g.out[2],
           "), but its components must be at least one.");
  Tensor out = empty_tensor({n, g.col_rows(), g.out_numel()}, self.dtype(), self.device());
  if (!self.device().is_meta() && out.numel() > 0) {
    Tensor x = call_op<Tensor>(TP_OP("contiguous"), self);
    TP_DISPATCH_ALL(x.dtype(), "im2col", [&]<typename T>() {
      for (int64_t i = 0; i < n; ++i)
        im2col_loop(x.data<T>() + i * c * g.in_numel(), out.data<T>() + i * g.col_rows() * g.out_numel(), g);
    });
  }
  return batched ? out : drop_batch(out);
}

// col2im: [N, C * kh * kw, L] (or [C * kh * kw, L]) -> [N, C, H, W] with H, W = output_size, summing the entries
// that the sliding blocks place on the same element.
static Tensor col2im(const Tensor &self, std::vector<int64_t> output_size, std::vector<int64_t> kernel_size,
                     std::vector<int64_t> dilation, std::vector<int64_t> padding, std::vector<int64_t> stride) {
  const auto o = pair_arg("col2im", "output_size", output_size), k = pair_arg("col2im", "kernel_size", kernel_size),
             d = pair_arg("col2im", "dilation", dilation), p = pair_arg("col2im", "padding", padding),
             s = pair_arg("col2im", "stride", stride);
  check_window_args(k, d, p, s);
  const int64_t nd = self.dim();
  bool valid = (nd == 2 || nd == 3) && self.size(-1) != 0 && self.size(-2) != 0;
  TP_CHECK(valid, Runtime, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
           "non-zero dimensions for input, but got: ", shape_str(self.sizes()));
  const bool batched = nd == 3;
  const int64_t n = batched ? self.size(0) : 1, rows = self.size(-2), length = self.size(-1);
  TP_CHECK(rows % (k[0] * k[1]) == 0, Runtime, "Expected size of input's dimension 1 to be divisible by the "
           "product of kernel_size, but got input.size(1)=", rows, " and kernel_size=", pair_str(k), ".");
  TP_CHECK(o[0] > 0 && o[1] > 0, Runtime, "Expected output spatial size to be positive, but got: output_size=",
           pair_str(o), ".");
  // A window larger than the padded output counts 0 blocks, which no input (its length is > 0) matches.
  const WindowGeometry g = geometry_2d(rows / (k[0] * k[1]), o[0], o[1], k, d, p, s);
  TP_CHECK(length == g.out_numel(), Runtime, "Given output_size=", pair_str(o), ", kernel_size=", pair_str(k),
           ", dilation=", pair_str(d), ", padding=", pair_str(p), ", stride=", pair_str(s),
           ", expected size of input's dimension 2 to match the calculated number of sliding blocks ", g.out[1],
           " * ", g.out[2], " = ", g.out_numel(), ", but got input.size(2)=", length, ".");
  Tensor out = call_op<Tensor>(TP_OP("full"), Shape{n, g.channels, o[0], o[1]}, Scalar(int64_t(0)),
                               std::optional<ScalarType>(self.dtype()), std::optional<Device>(self.device()));
  if (!self.device().is_meta() && out.numel() > 0) {
    Tensor col = call_op<Tensor>(TP_OP("contiguous"), self);
    TP_DISPATCH_ALL(col.dtype(), "col2im", [&]<typename T>() {
      for (int64_t i = 0; i < n; ++i)
        col2im_loop(col.data<T>() + i * rows * length, out.data<T>() + i * g.channels * g.in_numel(), g);
    });
  }
  return batched ? out : drop_batch(out);
}

TP_LIBRARY(im2col) {
  lib.def("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor");
  lib.def("col2im(Tensor self, int[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
          "int[2] stride) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<im2col>(lib, "im2col", key, __LINE__);
    impl_typed<col2im>(lib, "col2im", key, __LINE__);
  }
}

}  // namespace tp::p10
