// upsample.cu — resampling the spatial dims: the nearest modes (a gather) and the linear, bilinear, bicubic and
// trilinear modes (a weighted sum over taps).
//
// Where it sits: launched by csrc/cuda/ops_upsample.cpp for the upsample_* / _upsample_nearest_exact* ops. The
// host computes the taps of each dim once per call with the CPU's code (Note [Interpolation taps] in
// kernels/upsample_taps.h: indices and weights in the CPU's precision and rounding) and uploads them as
// tables; these kernels only read them. The input is a contiguous [planes, D, H, W] (Note [Pooling planes] in
// kernels/pool.h, size-1 leading spatial dims for the 1-d and 2-d ops) and the output a contiguous
// [planes, oD, oH, oW], one thread per output element.
//   nearest:  y = x[plane, id[od], ih[oh], iw[ow]]  (idx tables of 1 tap per output position)
//   weighted: y = sum_a wd[a] * sum_b wh[b] * sum_c ww[c] * x[plane, id[a], ih[b], iw[c]], ND x NH x NW taps,
//             summed innermost first in S (float32 for float32/16-bit, float64 for float64) as the CPU does.
#include "common.cuh"

// The host's UpsampleDims (csrc/cuda/ops_upsample.cpp): D, H, W of the input plane and of the output.
struct UpsampleDims {
  int64 in[3], out[3];
};

struct Pos {
  int64 plane, od, oh, ow;
};
__device__ __forceinline__ Pos pos_of(const UpsampleDims &g, int64 i) {
  Pos p;
  p.ow = i % g.out[2];
  i /= g.out[2];
  p.oh = i % g.out[1];
  i /= g.out[1];
  p.od = i % g.out[0];
  p.plane = i / g.out[0];
  return p;
}

template <typename T>
__device__ void nearest(int64 total, const UpsampleDims &g, const int64 *id, const int64 *ih, const int64 *iw, T *y,
                        const T *x) {
  const int64 D = g.in[0], H = g.in[1], W = g.in[2];
  TP_GRID_STRIDE(i, total) {
    const Pos p = pos_of(g, i);
    y[i] = x[p.plane * D * H * W + (id[p.od] * H + ih[p.oh]) * W + iw[p.ow]];
  }
}

// The taps of output position o are idx[o * N + j], weight wt[o * N + j], j < N.
template <typename T, int ND, int NH, int NW>
__device__ void weighted(int64 total, const UpsampleDims &g, const int64 *id, const int64 *ih, const int64 *iw,
                         const typename OpMath<T>::type *wd, const typename OpMath<T>::type *wh,
                         const typename OpMath<T>::type *ww, T *y, const T *x) {
  typedef typename OpMath<T>::type S;
  const int64 D = g.in[0], H = g.in[1], W = g.in[2];
  TP_GRID_STRIDE(i, total) {
    const Pos p = pos_of(g, i);
    const T *plane = x + p.plane * D * H * W;
    S acc = S(0);
#pragma unroll
    for (int a = 0; a < ND; ++a) {
      S acc_h = S(0);
#pragma unroll
      for (int b = 0; b < NH; ++b) {
        const T *line = plane + (id[p.od * ND + a] * H + ih[p.oh * NH + b]) * W;
        S acc_w = S(0);
#pragma unroll
        for (int c = 0; c < NW; ++c) acc_w += ww[p.ow * NW + c] * S(load(line[iw[p.ow * NW + c]]));
        acc_h += wh[p.oh * NH + b] * acc_w;
      }
      acc += wd[p.od * ND + a] * acc_h;
    }
    y[i] = store<T>(acc);
  }
}

#define TP_NEAREST(T)                                                                                      \
  extern "C" __global__ void upsample_nearest_##T(int64 total, UpsampleDims g, const int64 *id,            \
                                                  const int64 *ih, const int64 *iw, T *y, const T *x) {    \
    nearest<T>(total, g, id, ih, iw, y, x);                                                                \
  }
#define TP_WEIGHTED_ONE(name, T, ND, NH, NW)                                                               \
  extern "C" __global__ void upsample_##name##_##T(                                                        \
      int64 total, UpsampleDims g, const int64 *id, const int64 *ih, const int64 *iw,                      \
      const OpMath<T>::type *wd, const OpMath<T>::type *wh, const OpMath<T>::type *ww, T *y, const T *x) {  \
    weighted<T, ND, NH, NW>(total, g, id, ih, iw, wd, wh, ww, y, x);                                       \
  }
#define TP_WEIGHTED(T)                        \
  TP_WEIGHTED_ONE(linear, T, 1, 1, 2)         \
  TP_WEIGHTED_ONE(bilinear, T, 1, 2, 2)       \
  TP_WEIGHTED_ONE(bicubic, T, 1, 4, 4)        \
  TP_WEIGHTED_ONE(trilinear, T, 2, 2, 2)
TP_NEAREST(uint8)
TP_NEAREST(float16)
TP_NEAREST(bfloat16)
TP_NEAREST(float32)
TP_NEAREST(float64)
TP_WEIGHTED(float16)
TP_WEIGHTED(bfloat16)
TP_WEIGHTED(float32)
TP_WEIGHTED(float64)
