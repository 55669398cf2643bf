// fused_optim.cu — the CUDA side of NN's fused optimizer ops: one Adam/AdamW or SGD step of one parameter,
// elementwise, in a grid-stride loop.
//
// Where it sits: packages/nn/csrc/fused_optim.cpp launches these through the C ABI's `cuda_launch`; P10
// compiles this file with NVRTC on first use (Note [Kernels of other pillars] in tensorplay_p10/cuda/
// _compiler.py). The arithmetic is fused_optim.cpp's CPU loops (`adam_loop`, `sgd_loop`) line for line:
// the host combines the hyper-parameters in double, each is cast to the tensor's dtype here, as the CPU loop
// casts them, and every operation runs in the same order (NVRTC may fuse a multiply and an add into one
// rounding, so float32 results can differ from the CPU's in the last bit).
typedef long long int64;

// PyTorch's lerp: self + w (end - self) for |w| < 0.5, else end - (end - self)(1 - w) (exact at w = 1).
template <typename T> __device__ __forceinline__ T lerp(T self, T end, T w) {
  return (w < T(0.5) && w > T(-0.5)) ? self + w * (end - self) : end - (end - self) * (T(1) - w);
}

// flags: 1 maximize, 2 decoupled weight decay (AdamW), 4 weight_decay != 0. vmax: null unless amsgrad.
template <typename T>
__device__ void adam_step(int64 n, T *p, const T *grad, T *m, T *v, T *vmax, double decay_d, double wd_d,
                          double w1_d, double b2_d, double w2_d, double bc2_d, double eps_d, double neg_step_d,
                          int flags) {
  const T decay = T(decay_d), wd = T(wd_d), w1 = T(w1_d), b2 = T(b2_d), w2 = T(w2_d), bc2 = T(bc2_d),
          eps = T(eps_d), neg_step = T(neg_step_d);
  for (int64 i = int64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64(gridDim.x) * blockDim.x) {
    T g = (flags & 1) ? -grad[i] : grad[i];
    T param = p[i];
    if (flags & 4) {
      if (flags & 2) param = param * decay;
      else g = g + wd * param;
    }
    const T mi = lerp(m[i], g, w1);
    const T vi = v[i] * b2 + w2 * g * g;
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if (vmax) {
      second = vmax[i] > vi ? vmax[i] : vi;
      vmax[i] = second;
    }
    const T denom = sqrt(second) / bc2 + eps;
    p[i] = param + neg_step * (mi / denom);
  }
}

// flags: 1 maximize, 2 nesterov, 4 weight_decay != 0. buf: null without momentum; first: buf = grad.
template <typename T>
__device__ void sgd_step(int64 n, T *p, const T *grad, T *buf, int first, double wd_d, double mom_d,
                         double damp_d, double neg_lr_d, int flags) {
  const T wd = T(wd_d), mom = T(mom_d), damp = T(damp_d), neg_lr = T(neg_lr_d);
  for (int64 i = int64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64(gridDim.x) * blockDim.x) {
    T g = (flags & 1) ? -grad[i] : grad[i];
    if (flags & 4) g = g + wd * p[i];
    if (buf) {
      const T b = first ? g : buf[i] * mom + damp * g;
      buf[i] = b;
      g = (flags & 2) ? g + mom * b : b;
    }
    p[i] = p[i] + neg_lr * g;
  }
}

#define TP_FUSED_OPTIM(T)                                                                                      \
  extern "C" __global__ void adam_step_##T(int64 n, T *p, const T *g, T *m, T *v, T *vmax, double decay,       \
                                           double wd, double w1, double b2, double w2, double bc2, double eps, \
                                           double neg_step, int flags) {                                       \
    adam_step<T>(n, p, g, m, v, vmax, decay, wd, w1, b2, w2, bc2, eps, neg_step, flags);                       \
  }                                                                                                            \
  extern "C" __global__ void sgd_step_##T(int64 n, T *p, const T *g, T *buf, int first, double wd, double mom, \
                                          double damp, double neg_lr, int flags) {                             \
    sgd_step<T>(n, p, g, buf, first, wd, mom, damp, neg_lr, flags);                                            \
  }
typedef float float32;
typedef double float64;
TP_FUSED_OPTIM(float32)
TP_FUSED_OPTIM(float64)
