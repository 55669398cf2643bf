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
// Two versions of im2col: the general one in 64-bit indices, and the fast one the host takes when every index
// fits in int32 (Note [im2col by column rows]); col2im likewise comes in int64 and int (col2im32_*).
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

// Note [im2col by column rows]
//   The kernel above decomposes a 64-bit thread index into (n, c, kd, kh, l) with six 64-bit divisions per
//   thread; with the 3x3 taps of a ResNet layer that division work, not the column writes, set its time. The
//   fast kernel below (the host takes it whenever every index fits in int32, im2col_fits_int32 in
//   ops_im2col.cpp) does the same copy with three changes:
//   - 32-bit index arithmetic (a 32-bit division is a few instructions; a 64-bit one is a software routine).
//   - A block never straddles two column rows: the 1-d grid is (row group q, block b) with q = blockIdx.x /
//     bpr, so (c, kd, kh0) is the same for the whole block, and the threads of a block run along the
//     columns j = (n, l) of that row group. In the convolution's layout [C*K, N*L] those columns are one
//     contiguous run of N*L entries, so every store of a warp is 32 consecutive elements even when L is
//     tiny (the weight gradient's L is 9); in the ops' layout [N, C*K, L] they are runs of L.
//   - A thread writes `khb` kernel rows of KW taps each: khb = KH for small windows (a 3x3 window: 9 stores
//     per thread, so the per-thread index work is shared by 9 entries), 1 for large ones (the weight
//     gradient convolves with a whole image as its kernel: a 56x56 "window" must spread over many threads).
//   The entries written are those of the kernel above, each exactly once: a thread owns the taps
//   (c, kd, kh0 .. kh0+khb-1, 0 .. KW-1) at column (n, l), and (q, j) runs over every (c, kd, kh0, n, l).
template <typename T> __device__ void im2col_rows(const ColWindow &w, int khb, int bpr, T *col, const T *x) {
  const int L = int(w.out[0] * w.out[1] * w.out[2]), KD = int(w.k[0]), KH = int(w.k[1]), KW = int(w.k[2]);
  int q = int(blockIdx.x) / bpr;
  const int j = (int(blockIdx.x) - q * bpr) * int(blockDim.x) + int(threadIdx.x);
  if (j >= int(w.batch) * L) return;
  const int nkh = KH / khb, kh0 = (q % nkh) * khb;  // khb is KH or 1, so it divides KH
  q /= nkh;
  const int kd = q % KD, c = q / KD, n = j / L, l = j - n * L;
  const int OW = int(w.out[2]), OH = int(w.out[1]), ID = int(w.in[0]), IH = int(w.in[1]), IW = int(w.in[2]);
  const int ow = l % OW, odh = l / OW, oh = odh % OH, od = odh / OH;
  const int id = od * int(w.s[0]) - int(w.p[0]) + kd * int(w.d[0]);
  const int ih0 = oh * int(w.s[1]) - int(w.p[1]), iw0 = ow * int(w.s[2]) - int(w.p[2]);
  const int dh = int(w.d[1]), dw = int(w.d[2]), rs = int(w.row_stride);
  T *dst = col + ((c * KD + kd) * KH + kh0) * KW * rs + n * int(w.batch_stride) + l;
  const bool d_in = id >= 0 && id < ID;
  const T *plane = x + ((n * int(w.channels) + c) * ID + (d_in ? id : 0)) * IH * IW;
  for (int kh = kh0; kh < kh0 + khb; ++kh) {
    const int ih = ih0 + kh * dh;
    const bool row_in = d_in && ih >= 0 && ih < IH;
    const T *src = plane + (row_in ? ih : 0) * IW;
    for (int kw = 0; kw < KW; ++kw, dst += rs) {
      const int iw = iw0 + kw * dw;
      *dst = row_in && iw >= 0 && iw < IW ? src[iw] : T();
    }
  }
}

// The output position o whose tap k reads input position i along one dim (o * s - p + k * d == i), or -1.
// I is the index type: int64, or int where the host has checked that every index fits (col2im32_*).
template <typename I> __device__ __forceinline__ I source_of(I i, I k, I s, I p, I d, I out) {
  const I num = i + p - k * d;
  if (num < 0 || num % s != 0) return -1;
  const I o = num / s;
  return o < out ? o : -1;
}

// One thread per image element (n, c, id, ih, iw): Note [col2im as a gather].
template <typename T, typename I>
__device__ void col2im(int64 total, const ColWindow &w, T *x, const T *col, int accumulate) {
  typedef typename SumType<T>::type S;
  const I ID = I(w.in[0]), IH = I(w.in[1]), IW = I(w.in[2]), OD = I(w.out[0]), OH = I(w.out[1]), OW = I(w.out[2]);
  const I KD = I(w.k[0]), KH = I(w.k[1]), KW = I(w.k[2]), K = KD * KH * KW, P = ID * IH * IW;
  const I C = I(w.channels), rs = I(w.row_stride), bs = I(w.batch_stride);
  TP_GRID_STRIDE(i64, total) {
    const I i = I(i64), pos = i % P, nc = i / P, c = nc % C, n = nc / C;
    const I iw = pos % IW, ih = (pos / IW) % IH, id = pos / (IW * IH);
    const T *src = col + c * K * rs + n * bs;
    S acc = accumulate ? S(load(x[i])) : S(0);
    I r = 0;
    for (I kd = 0; kd < KD; ++kd) {
      const I od = source_of<I>(id, kd, I(w.s[0]), I(w.p[0]), I(w.d[0]), OD);
      for (I kh = 0; kh < KH; ++kh) {
        const I oh = od < 0 ? I(-1) : source_of<I>(ih, kh, I(w.s[1]), I(w.p[1]), I(w.d[1]), OH);
        for (I kw = 0; kw < KW; ++kw, ++r) {
          if (oh < 0) continue;
          const I ow = source_of<I>(iw, kw, I(w.s[2]), I(w.p[2]), I(w.d[2]), OW);
          if (ow >= 0) acc += S(load(src[r * rs + (od * OH + oh) * OW + ow]));
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
  extern "C" __global__ void im2col_rows_##T(ColWindow w, int khb, int bpr, T *col, const T *x) {        \
    im2col_rows<T>(w, khb, bpr, col, x);                                                                   \
  }                                                                                                        \
  extern "C" __global__ void col2im_##T(int64 total, ColWindow w, T *x, const T *col, int accumulate) {   \
    col2im<T, int64>(total, w, x, col, accumulate);                                                        \
  }                                                                                                        \
  extern "C" __global__ void col2im32_##T(int64 total, ColWindow w, T *x, const T *col, int accumulate) { \
    col2im<T, int>(total, w, x, col, accumulate);                                                          \
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
