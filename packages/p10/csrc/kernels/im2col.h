// im2col.h — the sliding-window geometry of convolutions and the two loops that move data through it.
//
// Where it sits: kernels/conv.cpp turns a convolution into im2col + GEMMs, per sample (and a transposed
// convolution into GEMMs + col2im); kernels/im2col.cpp also exposes the loops as the ops `im2col` and
// `col2im` (PyTorch's F.unfold / F.fold).
//
// Note [Window geometry]
//   Every window op here works on 1, 2 or 3 spatial dims, written as 3 with leading 1s: a 1-D input of
//   length L is (1, 1, L) with kernel (1, 1, k). For one sample of C channels, input [C, D, H, W] and output
//   positions [OD, OH, OW], the column matrix has C * KD * KH * KW rows and OD * OH * OW columns:
//     col[(c, kd, kh, kw), (od, oh, ow)] = x[c, od * sd - pd + kd * dd, oh * sh - ph + kh * dh, ...]
//   or 0 where that index falls in the padding. `pad` is the padding before each dim; the padding after it
//   only shows in how many output positions there are (`out`). col2im is the adjoint: it adds each column
//   entry back onto its input element.
#pragma once
#include <array>
#include <cstdint>

#include "core/tensor.h"

namespace tp::p10 {

struct WindowGeometry {
  int64_t channels = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0},
      dilation{1, 1, 1};

  int64_t kernel_numel() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
  int64_t out_numel() const { return out[0] * out[1] * out[2]; }
  int64_t col_rows() const { return channels * kernel_numel(); }
};

// Output positions along one dim: floor((in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride) + 1.
// May be <= 0; callers check and raise with their own op's message.
inline int64_t window_count(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t dilation,
                            int64_t stride) {
  const int64_t span = in + pad_before + pad_after - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// col [col_rows, out_numel] (contiguous) from x [channels, in...] (contiguous), Note [Window geometry].
// Rows are split over threads (run serially when called inside a parallel region).
template <typename T> void im2col_loop(const T *x, T *col, const WindowGeometry &g);

// x [channels, in...] += the column entries of col [col_rows, out_numel], Note [Window geometry]. Channels are
// split over threads (each channel's rows add onto that channel only, so threads never write the same place).
// Sums run in opmath_t<T> per element.
template <typename T> void col2im_loop(const T *col, T *x, const WindowGeometry &g);

// Both loops are instantiated in im2col.cpp for every dtype (on bool, col2im's sum is a logical or).

}  // namespace tp::p10
