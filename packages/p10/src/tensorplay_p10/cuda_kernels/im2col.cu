// im2col.cu — the sliding-window data movement of convolutions: im2col (image -> columns) and col2im (columns
// added back onto the image), for 1, 2 and 3 spatial dims and every real dtype.
//
// Where it sits: launched by csrc/cuda/ops_im2col.cpp, both for the ops `im2col` / `col2im` (F.unfold / F.fold)
// and for csrc/cuda/ops_conv.cpp, which turns a convolution into im2col + GEMM (and a transposed one into
// GEMM + col2im). The geometry is the CPU's Note [Window geometry] (kernels/im2col.h): spatial dims written as
// three (D, H, W) with leading 1s, and
//     col[(c, kd, kh, kw), (n, od, oh, ow)] = x[n, c, od * sd - pd + kd * dd, oh * sh - ph + ..., ...]
// or 0 in the padding. The image x is a contiguous [batch, C, D, H, W]; a column entry lives at
//     row * row_stride + n * batch_stride + l        (l = (od * OH + oh) * OW + ow)
// so one kernel serves both layouts: the ops' [N, C*K, L] (row_stride L, batch_stride C*K*L) and the
// convolution's [C*K, N*L] (row_stride N*L, batch_stride L), where one GEMM per group covers the whole batch.
//
// Note [col2im as a gather]
//   col2im is the adjoint of im2col: every column entry is added onto the image element it was read from. Done
//   as a scatter (one thread per column entry) it would need atomics, which make float sums order-dependent.
//   Instead one thread owns one image element and gathers: for each tap k it solves o * s - p + k * d = i for
//   the output position o (an exact division, inside [0, out)) and adds that column entry. The taps run in the
//   CPU loop's order (kd, kh, kw ascending), after the value already there when `accumulate` is set (the
//   transposed convolution's bias), so float sums add in the CPU's order. Sums are in float32 for 16-bit
//   floats, int64 for integers (wrapping to the type once, as the CPU's step-by-step wrap does) and int64 for
//   bool (any true column entry gives true: a logical or, as the CPU).
#include "common.cuh"

// The host's ColWindow (csrc/cuda/im2col.h), field for field.
struct ColWindow {
  int64 channels, batch;
  int64 in[3], out[3], k[3], s[3], p[3], d[3];
  int64 row_stride, batch_stride;
};

template <typename T> struct SumType { typedef typename OpMath<T>::type type; };
template <> struct SumType<bool> { typedef int64 type; };
template <> struct SumType<uint8> { typedef int64 type; };
template <> struct SumType<int8> { typedef int64 type; };
template <> struct SumType<int16> { typedef int64 type; };
template <> struct SumType<int32> { typedef int64 type; };

// One thread per (n, c, kd, kh, l): it writes the KW column entries of that kernel row at output position l,
// so neighbouring threads (neighbouring l) write neighbouring addresses of each column row, and a large kernel
// (the weight gradient convolves with a whole image as its kernel) still spreads over many threads.
template <typename T> __device__ void im2col(int64 total, const ColWindow &w, T *col, const T *x) {
  const int64 OH = w.out[1], OW = w.out[2], L = w.out[0] * OH * OW;
  const int64 ID = w.in[0], IH = w.in[1], IW = w.in[2], KH = w.k[1], KW = w.k[2];
  TP_GRID_STRIDE(i, total) {
    int64 t = i;
    const int64 l = t % L;
    t /= L;
    const int64 kh = t % KH;
    t /= KH;
    const int64 kd = t % w.k[0];
    t /= w.k[0];
    const int64 c = t % w.channels, n = t / w.channels;
    const int64 ow = l % OW, oh = (l / OW) % OH, od = l / (OW * OH);
    const int64 id = od * w.s[0] - w.p[0] + kd * w.d[0], ih = oh * w.s[1] - w.p[1] + kh * w.d[1];
    const int64 r0 = ((c * w.k[0] + kd) * KH + kh) * KW;  // the column row of tap (kd, kh, 0)
    T *dst = col + r0 * w.row_stride + n * w.batch_stride + l;
    const bool row_in = id >= 0 && id < ID && ih >= 0 && ih < IH;
    const T *src = x + ((n * w.channels + c) * ID + (row_in ? id : 0)) * IH * IW + (row_in ? ih : 0) * IW;
    const int64 iw0 = ow * w.s[2] - w.p[2];
    for (int64 kw = 0; kw < KW; ++kw) {
      const int64 iw = iw0 + kw * w.d[2];
      dst[kw * w.row_stride] = row_in && iw >= 0 && iw < IW ? src[iw] : T();
    }
  }
}

// The output position o whose tap k reads input position i along one dim (o * s - p + k * d == i), or -1.
__device__ __forceinline__ int64 source_of(int64 i, int64 k, int64 s, int64 p, int64 d, int64 out) {
  const int64 num = i + p - k * d;
  if (num < 0 || num % s != 0) return -1;
  const int64 o = num / s;
  return o < out ? o : -1;
}

// One thread per image element (n, c, id, ih, iw): Note [col2im as a gather].
template <typename T> __device__ void col2im(int64 total, const ColWindow &w, T *x, const T *col, int accumulate) {
  typedef typename SumType<T>::type S;
  const int64 ID = w.in[0], IH = w.in[1], IW = w.in[2], OH = w.out[1], OW = w.out[2];
  const int64 K = w.k[0] * w.k[1] * w.k[2], P = ID * IH * IW;
  TP_GRID_STRIDE(i, total) {
    const int64 pos = i % P, nc = i / P, c = nc % w.channels, n = nc / w.channels;
    const int64 iw = pos % IW, ih = (pos / IW) % IH, id = pos / (IW * IH);
    const T *src = col + c * K * w.row_stride + n * w.batch_stride;
    S acc = accumulate ? S(load(x[i])) : S(0);
    int64 r = 0;
    for (int64 kd = 0; kd < w.k[0]; ++kd) {
      const int64 od = source_of(id, kd, w.s[0], w.p[0], w.d[0], w.out[0]);
      for (int64 kh = 0; kh < w.k[1]; ++kh) {
        const int64 oh = od < 0 ? -1 : source_of(ih, kh, w.s[1], w.p[1], w.d[1], OH);
        for (int64 kw = 0; kw < w.k[2]; ++kw, ++r) {
          if (oh < 0) continue;
          const int64 ow = source_of(iw, kw, w.s[2], w.p[2], w.d[2], OW);
          if (ow >= 0) acc += S(load(src[r * w.row_stride + (od * OH + oh) * OW + ow]));
        }
      }
    }
    x[i] = store<T>(acc);
  }
}

#define TP_IM2COL(T)                                                                                       \
  extern "C" __global__ void im2col_##T(int64 total, ColWindow w, T *col, const T *x) {                   \
    im2col<T>(total, w, col, x);                                                                           \
  }                                                                                                        \
  extern "C" __global__ void col2im_##T(int64 total, ColWindow w, T *x, const T *col, int accumulate) {   \
    col2im<T>(total, w, x, col, accumulate);                                                               \
  }
TP_IM2COL(bool)
TP_IM2COL(uint8)
TP_IM2COL(int8)
TP_IM2COL(int16)
TP_IM2COL(int32)
TP_IM2COL(int64)
TP_IM2COL(float16)
TP_IM2COL(bfloat16)
TP_IM2COL(float32)
TP_IM2COL(float64)
