// cross_entropy.cu — nll_loss and cross_entropy (class indices or probabilities, weights, ignore_index, label
// smoothing) on the device: log_softmax, the gather of the target's log-probability and the per-position loss
// fused in one kernel, then one block for reduction='sum' | 'mean'.
//
// Where it sits: launched by csrc/cuda/ops_cross_entropy.cpp, the CUDA twin of kernels/loss_ce.cpp, whose Note
// [Class layout] this follows: the input is a contiguous [N, C, D]; position p = n * D + j owns the row of C
// logits at base(p) = n * C * D + j, stride D. Kernels:
//   class_loss_thread_<T>: a thread per position (nll_loss, and rows with D > 1: neighbouring threads read
//                          neighbouring j, so each step over c is one coalesced access);
//   class_loss_warp_<T>:   a warp per position (D == 1, C <= 1024);
//   class_loss_block_<T>:  a block per position (D == 1, longer rows: a vocabulary);
//   class_loss_reduce_<T>: one block adds the per-position losses and weights (in float64, in a fixed order)
//                          and stores the sum, or the mean over the weights (0 / 0 = NaN when all ignored).
//
// The per-position loss is that of class_loss_rows in kernels/loss_ce.cpp (logp[c] = x[c] - m - log s for
// cross_entropy, x[c] for nll_loss):
//   indices:       (1-e) * w[t] * -logp[t] + e/C * sum_c w[c] * -logp[c], weight w[t]; ignored: 0 and 0
//   probabilities: sum_c w[c] * q[c] * -logp[c], q = (1-e) * target + e/C; weight 1
//
// Note [Online log-sum-exp]
//   m = max x and s = sum e^(x - m) come from one read of the row: each thread keeps a running (m, s) and,
//   when a larger x arrives, rescales s by e^(m_old - x). The threads' pairs meet as M = max m_i, then
//   S = sum s_i e^(m_i - M). Rows the CPU makes NaN stay NaN: a NaN x adds e^NaN; +inf as the new max adds NaN
//   (the CPU's e^(inf - inf)); a row of only -inf gets S = NaN. A -inf x adds nothing (e^-inf = 0) and is
//   skipped, so it never meets a -inf running max (e^(-inf - -inf) would be NaN).
// A target outside [0, C) other than ignore_index sets bad[0] = 1, bad[1] = the target; the host reads the
// flag after the launch and raises IndexError as the CPU does (Note [Device-side argument checks] in
// ops_cross_entropy.cpp). Such a position's loss is 0: no memory outside the row is read.
#include "rows_common.cuh"

struct ClassLossArgs {
  int64 P, C, D;         // positions, classes, trailing size
  int64 ignore_index;
  double smoothing;      // label smoothing e in [0, 1]
  int log_softmax;       // cross_entropy (1) or nll_loss (0)
  int probs;             // target holds probabilities [N, C, D] (1) or class indices [N, D] (0)
};

// Groups: Mode 0 a thread, 1 a warp, 2 the block. Every thread of a group ends with the group's reduction.
template <int Mode, typename Op, typename A> __device__ __forceinline__ A class_all(A v) {
  if (Mode == 0) return v;
  return group_all<Mode == 1, Op>(v);
}

template <typename T, int Mode>
__device__ void class_loss(ClassLossArgs a, const T *x, const int64 *target, const T *q, const T *w,
                           typename Acc<T>::type *loss, typename Acc<T>::type *wsum, T *out_none, int64 *bad) {
  typedef typename Acc<T>::type A;
  int64 first, step;
  int t, G;
  if constexpr (Mode == 0) {
    first = int64(blockIdx.x) * blockDim.x + threadIdx.x, step = int64(gridDim.x) * blockDim.x, t = 0, G = 1;
  } else {
    const RowGroup<Mode == 1> g;
    first = g.first, step = g.step, t = g.t, G = g.G;
  }
  const A inf = -neg_inf(A(0)), eps = A(a.smoothing), C = A(a.C);
  for (int64 p = first; p < a.P; p += step) {  // the whole group has the same p: every branch below is uniform
    const T *row = x + (p / a.D) * a.C * a.D + p % a.D;
    A m = A(0), ls = A(0);  // logp[c] = (x[c] - m) - ls
    if (a.log_softmax) {    // Note [Online log-sum-exp]
      A mi = neg_inf(A(0)), si = A(0);
      for (int64 c = t; c < a.C; c += G) {
        const A v = A(load(row[c * a.D]));
        if (v > mi) {
          si = si * m_exp(mi - v) + (v == inf ? quiet_nan(v) : A(1));
          mi = v;
        } else if (v != -inf) {
          si += m_exp(v - mi);
        }
      }
      m = class_all<Mode, MaxOp>(mi);
      A s = class_all<Mode, SumOp>(mi == m ? si : si * m_exp(mi - m));
      if (m == -inf) s = quiet_nan(s);
      ls = m_log(s);
    }
    A value = A(0), weight = A(1);
    if (a.probs) {
      const T *qr = q + (p / a.D) * a.C * a.D + p % a.D;
      A acc = A(0);
      for (int64 c = t; c < a.C; c += G) {
        const A qc = (A(1) - eps) * A(load(qr[c * a.D])) + eps / C;
        acc += (w ? A(load(w[c])) : A(1)) * qc * ((A(load(row[c * a.D])) - m) - ls);
      }
      value = -class_all<Mode, SumOp>(acc);
    } else {
      const int64 k = target[p];
      if (k == a.ignore_index) {
        weight = A(0);
      } else if (k < 0 || k >= a.C) {
        if (t == 0) {
          bad[1] = k;
          bad[0] = 1;
        }
        weight = A(0);
      } else {
        weight = w ? A(load(w[k])) : A(1);
        value = -weight * ((A(load(row[k * a.D])) - m) - ls);
        if (eps != A(0)) {  // sum_c w[c] * -logp[c] = -(sum_c w[c] (x[c] - m) - ls * sum_c w[c])
          A sm = A(0), sw = A(0);
          for (int64 c = t; c < a.C; c += G) {
            const A wc = w ? A(load(w[c])) : A(1);
            sm += wc * (A(load(row[c * a.D])) - m);
            sw += wc;
          }
          sm = class_all<Mode, SumOp>(sm);
          sw = class_all<Mode, SumOp>(sw);
          value = (A(1) - eps) * value - eps / C * (sm - ls * sw);
        }
      }
    }
    if (t == 0) {
      if (out_none) {
        out_none[p] = store<T>(value);
      } else {
        loss[p] = value;
        wsum[p] = weight;
      }
    }
  }
}

// reduction='sum' | 'mean': one block adds the P losses (and weights) in float64, the same order every run.
template <typename T>
__device__ void class_loss_reduce(int64 P, int mean, T *out, const typename Acc<T>::type *loss,
                                  const typename Acc<T>::type *wsum) {
  double s = 0, d = 0;
  for (int64 p = threadIdx.x; p < P; p += blockDim.x) {
    s += double(loss[p]);
    d += double(wsum[p]);
  }
  s = block_all<SumOp>(s);
  d = block_all<SumOp>(d);
  if (threadIdx.x == 0) out[0] = store<T>(typename Acc<T>::type(mean ? s / d : s));
}

#define TP_CLASS_LOSS_FORM(form, mode, T, BOUNDS)                                             \
  extern "C" __global__ void __launch_bounds__(BOUNDS) class_loss_##form##_##T(               \
      ClassLossArgs a, const T *x, const int64 *target, const T *q, const T *w,               \
      Acc<T>::type *loss, Acc<T>::type *wsum, T *out_none, int64 *bad) {                      \
    class_loss<T, mode>(a, x, target, q, w, loss, wsum, out_none, bad);                       \
  }
#define TP_CLASS_LOSS(T)                                                                      \
  TP_CLASS_LOSS_FORM(thread, 0, T, 256)                                                       \
  TP_CLASS_LOSS_FORM(warp, 1, T, 128)                                                         \
  TP_CLASS_LOSS_FORM(block, 2, T, 512)                                                        \
  extern "C" __global__ void __launch_bounds__(1024) class_loss_reduce_##T(                   \
      int64 P, int mean, T *out, const Acc<T>::type *loss, const Acc<T>::type *wsum) {        \
    class_loss_reduce<T>(P, mean, out, loss, wsum);                                           \
  }
TP_CLASS_LOSS(float16)
TP_CLASS_LOSS(bfloat16)
TP_CLASS_LOSS(float32)
TP_CLASS_LOSS(float64)
