// im2col.h — the host side of tensorplay_p10/cuda_kernels/im2col.cu: the window a launch describes, and the two
// launches.
//
// Where it sits: ops_im2col.cpp defines the launches (and the CUDA ops `im2col` / `col2im`); ops_conv.cpp
// builds convolutions from them and the cuBLAS GEMMs. The geometry is the CPU's Note [Window geometry]
// (kernels/im2col.h); the column layout is the .cu file's header comment: a column entry lives at
// row * row_stride + n * batch_stride + l, which serves both the ops' [N, C*K, L] and the convolution's
// [C*K, N*L].
#pragma once
#include <array>

#include "core/tensor.h"
#include "kernels/im2col.h"

namespace tp::p10::cuda {

// The kernels' ColWindow, field for field (all int64, so there is no padding to get wrong).
struct ColWindow {
  int64_t channels = 1, batch = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0},
          d[3] = {1, 1, 1};
  int64_t row_stride = 0, batch_stride = 0;

  int64_t kernel_numel() const { return k[0] * k[1] * k[2]; }
  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
  int64_t out_numel() const { return out[0] * out[1] * out[2]; }
};
static_assert(sizeof(ColWindow) == 22 * 8, "ColWindow must match im2col.cu");

// A ColWindow with the geometry of `g` (channels, sizes, kernel, stride, padding, dilation) for `batch` images.
ColWindow col_window(const WindowGeometry &g, int64_t batch, int64_t row_stride, int64_t batch_stride);

// col entries (layout of `w`) from the contiguous image batch `x` [w.batch, w.channels, in...]. Every entry
// is written (0 in the padding). `x` and `col` are CUDA pointers of dtype `t` on the current device.
void launch_im2col(int device, ScalarType t, const ColWindow &w, void *col, const void *x);

// x [w.batch, w.channels, in...] (contiguous) = the sum of its column entries, plus x's old values when
// `accumulate` (Note [col2im as a gather] in im2col.cu). Every image element is written.
void launch_col2im(int device, ScalarType t, const ColWindow &w, void *x, const void *col, bool accumulate);

}  // namespace tp::p10::cuda
