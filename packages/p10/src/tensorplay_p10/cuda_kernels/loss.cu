// loss.cu — the pointwise losses on the device: mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits and kl_div, each fused with its reduction.
//
// Where it sits: launched by csrc/cuda/ops_loss.cpp (the CUDA twin of kernels/loss.cpp), which hands every
// operand contiguous, in the result dtype T and with the result's n elements (broadcast on the host when it
// must be). Per loss one kernel, loss_<name>_<T>(n, reduce, param, flag, out, partial, a, b, c, d, bad):
//   reduce = 0: out[i] = the loss of element i (reduction='none');
//   reduce = 1: no per-element loss is stored: each block adds its elements' losses (Acc<T>) and writes
//               partial[blockIdx.x]; loss_final_<T> then adds the partials in order (float64) and stores
//               sum / divisor (1 for 'sum', n for 'mean': 0 / 0 = NaN on an empty input, as on the CPU).
// a = input, b = target; c, d optional (binary_cross_entropy: c = weight; with_logits: c = pos_weight,
// d = weight); `param` is beta / delta; `flag` is kl_div's log_target. The formulas are loss.cpp's, in
// Acc<T> (float32 for the 16-bit floats). binary_cross_entropy sets *bad when an input is outside [0, 1]; the
// host raises the CPU's RuntimeError after the launch (Note [Device-side argument checks] in
// ops_cross_entropy.cpp).
#include "rows_common.cuh"

template <typename A> struct LossIn {
  A x, y, c, d;  // c, d: 0 when absent (has_c / has_d say which)
  bool has_c, has_d;
};

struct Mse {
  template <typename A> __device__ static A f(const LossIn<A> &v, A, int, int *) {
    return (v.x - v.y) * (v.x - v.y);
  }
};
struct L1 {
  template <typename A> __device__ static A f(const LossIn<A> &v, A, int, int *) { return m_abs(v.x - v.y); }
};
// |d| < beta: 0.5 d^2 / beta, else |d| - 0.5 beta (beta = 0: plain L1, since |d| < 0 never holds).
struct SmoothL1 {
  template <typename A> __device__ static A f(const LossIn<A> &v, A beta, int, int *) {
    const A d = m_abs(v.x - v.y);
    return d < beta ? A(0.5) * d * d / beta : d - A(0.5) * beta;
  }
};
// |d| < delta: 0.5 d^2, else delta (|d| - 0.5 delta).
struct Huber {
  template <typename A> __device__ static A f(const LossIn<A> &v, A delta, int, int *) {
    const A d = m_abs(v.x - v.y);
    return d < delta ? A(0.5) * d * d : delta * (d - A(0.5) * delta);
  }
};
// -(y log x + (1 - y) log(1 - x)), each log clamped at -100; times weight (c) when given.
struct Bce {
  template <typename A> __device__ static A f(const LossIn<A> &v, A, int, int *bad) {
    if (!(v.x >= A(0) && v.x <= A(1))) *bad = 1;
    const A lx = m_log(v.x), l1x = m_log1p(-v.x);
    const A l = (v.y - A(1)) * (l1x > A(-100) ? l1x : A(-100)) - v.y * (lx > A(-100) ? lx : A(-100));
    return v.has_c ? l * v.c : l;
  }
};
// Note [Stable BCE with logits] in loss.cpp: (1 - y) x + lw (log1p(e^-|x|) + max(-x, 0)),
// lw = 1 + (pos_weight - 1) y; times weight (d) when given.
struct BceLogits {
  template <typename A> __device__ static A f(const LossIn<A> &v, A, int, int *) {
    const A lw = v.has_c ? A(1) + (v.c - A(1)) * v.y : A(1);
    const A l = (A(1) - v.y) * v.x + lw * (m_log1p(m_exp(-m_abs(v.x))) + (-v.x > A(0) ? -v.x : A(0)));
    return v.has_d ? l * v.d : l;
  }
};
// log_target: e^y (y - x); else xlogy(y, y) - y x (0 log 0 = 0).
struct KlDiv {
  template <typename A> __device__ static A f(const LossIn<A> &v, A, int log_target, int *) {
    if (log_target) return m_exp(v.y) * (v.y - v.x);
    const A ylogy = v.y == A(0) ? A(0) : v.y * m_log(v.y);
    return ylogy - v.y * v.x;
  }
};

template <typename T, typename F>
__device__ void pointwise_loss(int64 n, int reduce, double param, int flag, T *out, typename Acc<T>::type *partial,
                               const T *a, const T *b, const T *c, const T *d, int *bad) {
  typedef typename Acc<T>::type A;
  A acc = A(0);
  TP_GRID_STRIDE(i, n) {
    LossIn<A> v;
    v.x = A(load(a[i]));
    v.y = A(load(b[i]));
    v.has_c = c != nullptr;
    v.has_d = d != nullptr;
    v.c = c ? A(load(c[i])) : A(0);
    v.d = d ? A(load(d[i])) : A(0);
    const A l = F::f(v, A(param), flag, bad);
    if (reduce) acc += l;
    else out[i] = store<T>(l);
  }
  if (reduce) {  // uniform over the block: every thread reaches block_sum
    acc = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
  }
}

// One block: out[0] = (sum of the partials, in order, in float64) / divisor.
template <typename T>
__device__ void loss_final(int64 nparts, double divisor, T *out, const typename Acc<T>::type *partial) {
  double s = 0;
  for (int64 i = threadIdx.x; i < nparts; i += blockDim.x) s += double(partial[i]);
  s = block_all<SumOp>(s);
  if (threadIdx.x == 0) out[0] = store<T>(typename Acc<T>::type(s / divisor));
}

#define TP_LOSS(name, F, T)                                                                                 \
  extern "C" __global__ void loss_##name##_##T(int64 n, int reduce, double param, int flag, T *out,         \
                                               Acc<T>::type *partial, const T *a, const T *b, const T *c,   \
                                               const T *d, int *bad) {                                      \
    pointwise_loss<T, F>(n, reduce, param, flag, out, partial, a, b, c, d, bad);                            \
  }
#define TP_LOSSES(T)                                                                                        \
  TP_LOSS(mse, Mse, T)                                                                                      \
  TP_LOSS(l1, L1, T)                                                                                        \
  TP_LOSS(smooth_l1, SmoothL1, T)                                                                           \
  TP_LOSS(huber, Huber, T)                                                                                  \
  TP_LOSS(bce, Bce, T)                                                                                      \
  TP_LOSS(bce_logits, BceLogits, T)                                                                         \
  TP_LOSS(kl_div, KlDiv, T)                                                                                 \
  extern "C" __global__ void __launch_bounds__(1024) loss_final_##T(                          \
      int64 nparts, double divisor, T *out, const Acc<T>::type *partial) {                    \
    loss_final<T>(nparts, divisor, out, partial);                                                           \
  }
TP_LOSSES(float16)
TP_LOSSES(bfloat16)
TP_LOSSES(float32)
TP_LOSSES(float64)
