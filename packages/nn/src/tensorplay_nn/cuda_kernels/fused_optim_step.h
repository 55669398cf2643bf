// fused_optim_step.h — one element of an Adam/AdamW or SGD step: the arithmetic that both sides of NN's fused
// optimizer ops run, written once.
//
// Where it sits: packages/nn/csrc/fused_optim.cpp (the CPU loops, and the host side of every launch) and
// fused_optim.cu beside this file (the CUDA kernels, compiled by NVRTC, which finds this header on its include
// path) both include it. The host combines the hyper-parameters in double once per parameter (AdamScalars,
// SgdScalars, which the kernels take by value: one layout for both compilers); AdamStep / SgdStep cast each to
// the tensor's dtype and update element i in the order of adam.py's `_adam_single` and sgd.py's
// `_sgd_single`. (NVRTC may fuse a multiply and an add into one rounding, so float32 results on CUDA can differ
// from the CPU's in the last bit.)
#pragma once
#ifdef __CUDACC_RTC__
#define TP_STEP_FN __device__ __forceinline__
#define TP_STEP_SQRT sqrt
#else
#include <cmath>
#define TP_STEP_FN inline
#define TP_STEP_SQRT std::sqrt
#endif

// flags of AdamScalars: kMaximize, kDecoupled (AdamW), kWeightDecay (weight_decay != 0); of SgdScalars:
// kMaximize, kNesterov, kWeightDecay.
enum : int { kMaximize = 1, kDecoupled = 2, kNesterov = 2, kWeightDecay = 4 };

struct AdamScalars {
  double decay, wd, w1, b2, w2, bc2, eps, neg_step;  // 1 - lr wd, wd, 1 - beta1, beta2, 1 - beta2, ...
  int flags;
};
struct SgdScalars {
  double wd, mom, damp, neg_lr;  // weight_decay, momentum, 1 - dampening, -lr
  int flags;
};

// PyTorch's lerp: self + w (end - self) for |w| < 0.5, else end - (end - self)(1 - w) (exact at w = 1).
template <typename T> TP_STEP_FN T step_lerp(T self, T end, T w) {
  return (w < T(0.5) && w > T(-0.5)) ? self + w * (end - self) : end - (end - self) * (T(1) - w);
}

// vmax: null unless amsgrad.
template <typename T> struct AdamStep {
  T decay, wd, w1, b2, w2, bc2, eps, neg_step;
  int flags;
  TP_STEP_FN explicit AdamStep(const AdamScalars &s)
      : decay(T(s.decay)), wd(T(s.wd)), w1(T(s.w1)), b2(T(s.b2)), w2(T(s.w2)), bc2(T(s.bc2)), eps(T(s.eps)),
        neg_step(T(s.neg_step)), flags(s.flags) {}
  TP_STEP_FN void operator()(long long i, T *p, const T *grad, T *m, T *v, T *vmax) const {
    T g = (flags & kMaximize) ? -grad[i] : grad[i];
    T param = p[i];
    if (flags & kWeightDecay) {
      if (flags & kDecoupled) param = param * decay;
      else g = g + wd * param;
    }
    const T mi = step_lerp(m[i], g, w1);
    const T vi = v[i] * b2 + w2 * g * g;
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if (vmax) {
      second = vmax[i] > vi ? vmax[i] : vi;
      vmax[i] = second;
    }
    const T denom = TP_STEP_SQRT(second) / bc2 + eps;
    p[i] = param + neg_step * (mi / denom);
  }
};

// buf: null without momentum; first: buf = grad.
template <typename T> struct SgdStep {
  T wd, mom, damp, neg_lr;
  int flags;
  TP_STEP_FN explicit SgdStep(const SgdScalars &s)
      : wd(T(s.wd)), mom(T(s.mom)), damp(T(s.damp)), neg_lr(T(s.neg_lr)), flags(s.flags) {}
  TP_STEP_FN void operator()(long long i, T *p, const T *grad, T *buf, bool first) const {
    T g = (flags & kMaximize) ? -grad[i] : grad[i];
    if (flags & kWeightDecay) g = g + wd * p[i];
    if (buf) {
      const T b = first ? g : buf[i] * mom + damp * g;
      buf[i] = b;
      g = (flags & kNesterov) ? g + mom * b : b;
    }
    p[i] = p[i] + neg_lr * g;
  }
};
