// ops_im2col.cpp — the im2col / col2im launches (cuda/im2col.h) and the CUDA kernels of the ops `im2col` and
// `col2im` (PyTorch's aten names for F.unfold and F.fold).
//
// Where it sits: the CUDA twin of kernels/im2col.cpp; the arithmetic is tensorplay_p10/cuda_kernels/im2col.cu.
// The CPU op, asked on meta tensors (cuda/ops_meta.h), checks the arguments with PyTorch's messages and gives
// the result's shape; these kernels then only move (col2im: add) elements. Both ops take every real dtype, as
// on the CPU (complex ones raise NotImplementedError: no CUDA kernels yet). ops_conv.cpp uses the launches.
#include "cuda/im2col.h"

#include <algorithm>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

ColWindow col_window(const WindowGeometry &g, int64_t batch, int64_t row_stride, int64_t batch_stride) {
  ColWindow w;
  w.channels = g.channels;
  w.batch = batch;
  for (int i = 0; i < 3; ++i) {
    w.in[i] = g.in[size_t(i)], w.out[i] = g.out[size_t(i)], w.k[i] = g.kernel[size_t(i)];
    w.s[i] = g.stride[size_t(i)], w.p[i] = g.pad[size_t(i)], w.d[i] = g.dilation[size_t(i)];
  }
  w.row_stride = row_stride;
  w.batch_stride = batch_stride;
  return w;
}

namespace {

// Every index the 32-bit kernels (im2col_rows_*, col2im32_*) compute fits in int32 with room to spare: the
// last column entry, the image, and each dim's window arithmetic (o * s - p + k * d). Below 2^30 rather than
// 2^31 so that the grid-stride step past the end and the window sums cannot overflow either.
bool im2col_fits_int32(const ColWindow &w) {
  constexpr int64_t lim = int64_t(1) << 30;
  const int64_t last = (w.channels * w.kernel_numel() - 1) * w.row_stride + (w.batch - 1) * w.batch_stride +
                       w.out_numel();
  if (last >= lim || w.batch * w.channels * w.in_numel() >= lim || w.batch * w.out_numel() >= lim) return false;
  for (int i = 0; i < 3; ++i)
    if (w.out[i] * w.s[i] + (w.p[i] < 0 ? -w.p[i] : w.p[i]) + w.k[i] * w.d[i] + w.in[i] >= lim) return false;
  return true;
}

}  // namespace

// Note [im2col by column rows] in im2col.cu: the 32-bit kernel when every index fits, else the 64-bit one.
void launch_im2col(int device, ScalarType t, const ColWindow &w, void *col, const void *x) {
  const int64_t total = w.batch * w.channels * w.k[0] * w.k[1] * w.out_numel();  // per (n, c, kd, kh, l)
  if (total == 0 || w.kernel_numel() == 0) return;
  if (im2col_fits_int32(w)) {
    const int64_t cols = w.batch * w.out_numel();  // a row group's columns: one block row runs along them
    const int64_t block = std::min<int64_t>(256, (cols + 31) / 32 * 32);
    const int64_t khb = w.k[1] * w.k[2] <= 32 ? w.k[1] : 1;  // kernel rows per thread
    const int64_t bpr = (cols + block - 1) / block;          // blocks per row group
    const int64_t groups = w.channels * w.k[0] * (w.k[1] / khb);
    launch(kernel(device, "im2col.cu", kname("im2col_rows", t)),
           LaunchConfig{unsigned(groups * bpr), unsigned(block), 0}, stream_for(device), w, int(khb), int(bpr), col, x);
    return;
  }
  launch(kernel(device, "im2col.cu", kname("im2col", t)), elementwise_config(device, total), stream_for(device),
         total, w, col, x);
}

void launch_col2im(int device, ScalarType t, const ColWindow &w, void *x, const void *col, bool accumulate) {
  const int64_t total = w.batch * w.channels * w.in_numel();  // one thread per image element
  if (total == 0) return;
  const char *base = im2col_fits_int32(w) ? "col2im32" : "col2im";  // the same gather in 32-bit indices
  launch(kernel(device, "im2col.cu", kname(base, t)), elementwise_config(device, total), stream_for(device),
         total, w, x, col, int(accumulate));
}

namespace {

// The 2-d window of F.unfold / F.fold: spatial dims (1, h, w), one number standing for both dims.
WindowGeometry geometry_2d(int64_t channels, int64_t h, int64_t w, const std::vector<int64_t> &k,
                           const std::vector<int64_t> &d, const std::vector<int64_t> &p,
                           const std::vector<int64_t> &s) {
  WindowGeometry g;
  g.channels = channels;
  g.in = {1, h, w};
  g.kernel = {1, k[0], k.back()};
  g.dilation = {1, d[0], d.back()};
  g.pad = {0, p[0], p.back()};
  g.stride = {1, s[0], s.back()};
  for (size_t i = 1; i < 3; ++i)
    g.out[i] = window_count(g.in[i], g.pad[i], g.pad[i], g.kernel[i], g.dilation[i], g.stride[i]);
  return g;
}

}  // namespace

// im2col: [N, C, H, W] (or [C, H, W]) -> [N, C * kh * kw, L].
static Tensor im2col(const Tensor &self, std::vector<int64_t> kernel_size, std::vector<int64_t> dilation,
                     std::vector<int64_t> padding, std::vector<int64_t> stride) {
  const Tensor m = call_op<Tensor>(TP_OP("im2col"), meta_like(self), kernel_size, dilation, padding, stride);
  const int dev = common_device("im2col", {self}, false);
  DeviceGuard guard(dev);
  check_real("im2col", self.dtype());
  Tensor out = empty_as_meta(m, self.device());
  if (out.numel() == 0) return out;
  const int64_t n = self.dim() == 4 ? self.size(0) : 1;
  const WindowGeometry g = geometry_2d(self.size(-3), self.size(-2), self.size(-1), kernel_size, dilation,
                                       padding, stride);
  const Tensor x = self.is_contiguous() ? self : contiguous_as(self, self.dtype());
  const int64_t L = g.out_numel();
  launch_im2col(dev, self.dtype(), col_window(g, n, L, g.col_rows() * L), out.data_ptr(), x.data_ptr());
  return out;
}

// col2im: [N, C * kh * kw, L] (or [C * kh * kw, L]) -> [N, C, H, W], H and W = output_size.
static Tensor col2im(const Tensor &self, std::vector<int64_t> output_size, std::vector<int64_t> kernel_size,
                     std::vector<int64_t> dilation, std::vector<int64_t> padding, std::vector<int64_t> stride) {
  const Tensor m =
      call_op<Tensor>(TP_OP("col2im"), meta_like(self), output_size, kernel_size, dilation, padding, stride);
  const int dev = common_device("col2im", {self}, false);
  DeviceGuard guard(dev);
  check_real("col2im", self.dtype());
  Tensor out = empty_as_meta(m, self.device());
  if (out.numel() == 0) return out;
  const int64_t n = self.dim() == 3 ? self.size(0) : 1, rows = self.size(-2), L = self.size(-1);
  const int64_t channels = rows / (kernel_size[0] * kernel_size.back());
  const WindowGeometry g =
      geometry_2d(channels, output_size[0], output_size.back(), kernel_size, dilation, padding, stride);
  const Tensor col = self.is_contiguous() ? self : contiguous_as(self, self.dtype());
  launch_col2im(dev, self.dtype(), col_window(g, n, L, rows * L), out.data_ptr(), col.data_ptr(), false);
  return out;
}

TP_LIBRARY(cuda_im2col) {
  TP_IMPL(lib, "im2col", CUDA, im2col);
  TP_IMPL(lib, "col2im", CUDA, col2im);
}

}  // namespace tp::p10::cuda
