// loss_ce.cpp — the classification losses: nll_loss and cross_entropy (class indices or class probabilities,
// weights, ignore_index, label smoothing, inputs [C], [N, C] or [N, C, d1, ...]).
//
// Where it sits: the pointwise losses (mse, l1, bce, kl_div, ...) and the shared `reduction` parsing are in
// loss.cpp. cross_entropy is hot and numerically delicate, so it has its own fused kernel (STYLE.md rule 2):
// per row it takes the max, the log-sum-exp and the target's log-probability in two passes over the logits and
// never materialises log_softmax. nll_loss runs through the same row loop without the log-sum-exp. One kernel
// serves CPU and Meta: on meta only the result's shape is made.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "dispatch/kernel_box.h"
#include "loop/simd.h"
#include "loop/parallel.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Shared with loss.cpp (same definition there).
enum class LossReduction { None, Mean, Sum };
LossReduction parse_loss_reduction(const std::string &reduction);

// Note [Class layout]
//   Every classification loss sees its input as [N, C, D]: N the batch (1 for a 1-D input), C the classes (dim
//   1, or dim 0 of a 1-D input), D the product of the trailing "K-dim" sizes. A row is the C logits of one
//   position (n, j), at stride D. Targets are [N, D] (class indices) or [N, C, D] (probabilities); the
//   unreduced result has the target's shape (indices) or the input's without the class dim (probabilities).
struct ClassLayout {
  int64_t n = 1, c = 1, d = 1;
  Shape out_shape;  // shape of reduction='none'
};

static ClassLayout class_layout(const char *op, const Tensor &self) {
  TP_CHECK(self.dim() >= 1, Value, op, "(): Expected 1 or more dimensions (got ", self.dim(), ")");
  ClassLayout l;
  if (self.dim() == 1) {
    l.c = self.sizes()[0];
    return l;
  }
  l.n = self.sizes()[0];
  l.c = self.sizes()[1];
  l.out_shape.push_back(l.n);
  for (int64_t k = 2; k < self.dim(); ++k) {
    l.d *= self.sizes()[k];
    l.out_shape.push_back(self.sizes()[k]);
  }
  return l;
}

static void check_index_target(const char *op, const Tensor &self, const Tensor &target, const ClassLayout &l) {
  TP_CHECK(target.dtype() == ScalarType::Int64, Runtime, op, "(): expected target of dtype int64 (class indices), "
           "got ", scalar_type_name(target.dtype()));
  if (self.dim() == 1) {
    TP_CHECK(target.dim() == 0, Runtime, op, "(): 0D target tensor expected for a 1D input, multi-target not "
             "supported (got target of shape ", shape_str(target.sizes()), ")");
    return;
  }
  TP_CHECK(target.dim() >= 1 && target.sizes()[0] == l.n, Value, op, "(): Expected input batch_size (", l.n,
           ") to match target batch_size (", target.dim() ? target.sizes()[0] : 0, ").");
  TP_CHECK(target.sizes() == l.out_shape, Runtime, op, "(): Expected target size ", shape_str(l.out_shape),
           ", got ", shape_str(target.sizes()));
}

static Tensor check_weight(const char *op, const std::optional<Tensor> &weight, const Tensor &self, int64_t c) {
  if (!weight || !weight->defined()) return Tensor();
  TP_CHECK(weight->dim() == 1 && weight->numel() == c, Runtime, op, "(): weight tensor should be defined either "
           "for all ", c, " classes or no classes but got weight tensor of shape: ", shape_str(weight->sizes()));
  Tensor w = weight->dtype() == self.dtype() ? *weight : cast_to(*weight, self.dtype());
  return call_op<Tensor>(TP_OP("contiguous"), w);
}

// Each target is ignore_index or a class in [0, C); checked before any parallel loop (loops never throw).
static void check_target_range(const Tensor &target, int64_t c, int64_t ignore_index) {
  const int64_t *t = target.data<int64_t>();
  for (int64_t i = 0; i < target.numel(); ++i)
    TP_CHECK(t[i] == ignore_index || (t[i] >= 0 && t[i] < c), Index, "Target ", t[i], " is out of bounds.");
}

// exp for float, vectorisable: Cephes' expf (range reduction to [-ln2/2, ln2/2], degree-6 polynomial, scale by
// 2^k through the exponent bits), within 2 ulp of std::exp. Only called on x - max <= 0 with a finite max, so x
// is -0..-inf; it is clamped at -87 (the result then ~1e-38, far below a row sum >= 1) on the integer bits,
// because a float compare stops GCC vectorising under the default -ftrapping-math. k is rounded with the
// 1.5 * 2^23 trick rather than std::floor, a library call on baseline x86-64.
static inline __attribute__((always_inline)) float exp_poly(float x) {
  int32_t mag = std::min(std::bit_cast<int32_t>(x) & 0x7fffffff, int32_t(0x42AE0000));  // |x| <= 87
  x = std::bit_cast<float>(int32_t(uint32_t(mag) | 0x80000000u));                       // x = -|x|
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer
  float k = (x * 1.44269504088896341f + kRound) - kRound;
  float r = x - k * 0.693359375f + k * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * std::bit_cast<float>((int32_t(k) + 127) << 23);
}

// Note [Float row loops]
//   Contiguous float32 rows (the common case) run three small loops written for the vectoriser: kLanes
//   independent partial results (a single running sum or max would fix the order of the float operations, and
//   GCC keeps that order without -ffast-math), and TP_SIMD_LOOP (loop/simd.h) builds each twice, for AVX2+FMA
//   and for the baseline, picking one at run time (PyTorch dispatches on the CPU the same way). The generic templates
//   below them are the reference for every other dtype and stride.
constexpr int64_t kLanes = 16;

// max of a contiguous float row: a plain max per lane and a separate NaN flag (a NaN anywhere gives NaN).
TP_SIMD_LOOP(float, row_max_f32, (const float *x, int64_t c), (x, c), {
  float lane[kLanes];
  int32_t nan[kLanes] = {};
  for (int64_t l = 0; l < kLanes; ++l) lane[l] = -std::numeric_limits<float>::infinity();
  int64_t k = 0;
  for (; k + kLanes <= c; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      lane[l] = x[k + l] > lane[l] ? x[k + l] : lane[l];
      nan[l] |= x[k + l] != x[k + l];
    }
  float mx = -std::numeric_limits<float>::infinity();
  int32_t any_nan = 0;
  for (int64_t l = 0; l < kLanes; ++l) {
    mx = lane[l] > mx ? lane[l] : mx;
    any_nan |= nan[l];
  }
  for (; k < c; ++k) {
    mx = x[k] > mx ? x[k] : mx;
    any_nan |= x[k] != x[k];
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : mx;
})

// sum of exp(x[k] - mx) over a contiguous float row, mx finite.
TP_SIMD_LOOP(float, row_exp_sum_f32, (const float *x, int64_t c, float mx), (x, c, mx), {
  float lane[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= c; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += exp_poly(x[k + l] - mx);
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lane[l];
  for (; k < c; ++k) sum += exp_poly(x[k] - mx);
  return sum;
})

// sum of w[k] * (x[k] - mx) over a contiguous float row (w = 1 when null): label smoothing's term.
TP_SIMD_LOOP(float, row_wsum_f32, (const float *x, const float *w, int64_t c, float mx), (x, w, c, mx), {
  float lane[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= c; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += (w ? w[k + l] : 1.0f) * (x[k + l] - mx);
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lane[l];
  for (; k < c; ++k) sum += (w ? w[k] : 1.0f) * (x[k] - mx);
  return sum;
})

// max over a row; a NaN anywhere makes it NaN (so the row's loss is NaN, as in PyTorch).
template <typename T, typename M> static M row_max(const T *x, int64_t c, int64_t s) {
  if constexpr (std::is_same_v<T, float>) {
    if (s == 1) return row_max_f32(x, c);
  }
  M mx = -std::numeric_limits<M>::infinity();
  for (int64_t k = 0; k < c; ++k) {
    M v = M(x[k * s]);
    mx = (v > mx || v != v) ? v : mx;
  }
  return mx;
}

// Sum over a row of exp(x[c] - mx).
template <typename T, typename M> static M row_exp_sum(const T *x, int64_t c, int64_t s, M mx) {
  if constexpr (std::is_same_v<T, float>) {
    if (s == 1 && std::isfinite(mx)) return row_exp_sum_f32(x, c, mx);
  }
  M sum(0);
  for (int64_t k = 0; k < c; ++k) sum += std::exp(M(x[k * s]) - mx);
  return sum;
}

// Sum over a row of w[c] * (x[c] - mx).
template <typename T, typename M> static M row_wsum(const T *x, const T *w, int64_t c, int64_t s, M mx) {
  if constexpr (std::is_same_v<T, float>) {
    if (s == 1) return row_wsum_f32(x, w, c, mx);
  }
  M sum(0);
  for (int64_t k = 0; k < c; ++k) sum += (w ? M(w[k]) : M(1)) * (M(x[k * s]) - mx);
  return sum;
}

struct ClassLossConfig {
  bool log_softmax;   // cross_entropy: the input is logits; nll_loss: it is already log-probabilities
  bool probs;         // the target holds class probabilities [N, C, D] instead of indices [N, D]
  int64_t ignore_index;
  double smoothing;   // label smoothing in [0, 1]
};

// The per-position loss and its weight (the divisor of reduction='mean'): position p = n * D + j.
//   indices:       loss = (1-e) * w[t] * -logp[t] + e/C * sum_c w[c] * -logp[c]; weight w[t]; ignored -> 0, 0
//   probabilities: loss = sum_c w[c] * q[c] * -logp[c], q = (1-e) * target + e/C; weight 1
// logp[c] = x[c] - lse for cross_entropy and x[c] for nll_loss (which never smooths).
template <typename T>
static void class_loss_rows(const ClassLossConfig &cfg, const ClassLayout &l, const Tensor &x_, const Tensor &t_,
                            const Tensor &w_, double *loss, double *wsum) {
  using M = opmath_t<T>;
  const T *x = x_.data<T>();
  const T *w = w_.defined() ? w_.data<T>() : nullptr;
  const int64_t C = l.c, D = l.d, P = l.n * l.d;
  const M eps = M(cfg.smoothing);
  M wtotal(0);  // sum_c w[c], for the smoothing term written as sum_c w[c] * (x[c] - mx) - log(s) * wtotal
  for (int64_t k = 0; k < C; ++k) wtotal += w ? M(w[k]) : M(1);
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1));
  parallel_for(0, P, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / D, j = p % D;
      const T *row = x + n * C * D + j;
      M mx(0), lse(0);  // lse - mx = log(sum exp(x - mx))
      if (cfg.log_softmax) {
        mx = row_max<T, M>(row, C, D);
        lse = std::log(row_exp_sum<T, M>(row, C, D, mx));
      }
      // logp[c] = (x[c] - mx) - lse; for nll_loss mx = lse = 0
      if (cfg.probs) {
        const T *q = t_.data<T>() + n * C * D + j;
        M acc(0);
        for (int64_t k = 0; k < C; ++k) {
          M qk = (M(1) - eps) * M(q[k * D]) + eps / M(C);
          acc += (w ? M(w[k]) : M(1)) * qk * (M(row[k * D]) - mx - lse);
        }
        loss[p] = double(-acc);
        wsum[p] = 1.0;
        continue;
      }
      const int64_t t = t_.data<int64_t>()[p];
      if (t == cfg.ignore_index) {
        loss[p] = 0.0;
        wsum[p] = 0.0;
        continue;
      }
      const M wt = w ? M(w[t]) : M(1);
      M value = -wt * (M(row[t * D]) - mx - lse);
      if (eps != M(0)) {
        M sm = row_wsum<T, M>(row, w, C, D, mx);
        value = (M(1) - eps) * value - eps / M(C) * (sm - lse * wtotal);
      }
      loss[p] = double(value);
      wsum[p] = double(wt);
    }
  });
}

// Shared driver of nll_loss and cross_entropy once the layout and config are known.
static Tensor class_loss(const char *op, const Tensor &self, const Tensor &target, const Tensor &weight,
                         LossReduction red, const ClassLayout &l, const ClassLossConfig &cfg) {
  ScalarType dt = self.dtype();
  Shape shape = red == LossReduction::None ? l.out_shape : Shape{};
  Tensor out = empty_tensor(shape, dt, self.device());
  if (self.device().is_meta()) return out;
  if (!cfg.probs) check_target_range(target, l.c, cfg.ignore_index);
  Tensor x = call_op<Tensor>(TP_OP("contiguous"), self);
  Tensor t = call_op<Tensor>(TP_OP("contiguous"), cfg.probs && target.dtype() != dt ? cast_to(target, dt) : target);
  const int64_t P = l.n * l.d;
  std::vector<double> loss(P), wsum(P);
  TP_DISPATCH_FLOATING(dt, op, [&]<typename T>() {
    class_loss_rows<T>(cfg, l, x, t, weight, loss.data(), wsum.data());
    T *o = out.data<T>();
    if (red == LossReduction::None) {
      for (int64_t p = 0; p < P; ++p) o[p] = T(opmath_t<T>(loss[p]));
      return;
    }
    double total = 0, denom = 0;
    for (int64_t p = 0; p < P; ++p) {
      total += loss[p];
      denom += wsum[p];
    }
    // mean: divide by the summed weights of the counted positions; 0 / 0 (all ignored, empty) is NaN as in PyTorch
    o[0] = T(opmath_t<T>(red == LossReduction::Sum ? total : total / denom));
  });
  return out;
}

static Tensor nll_loss(const Tensor &self, const Tensor &target, const std::optional<Tensor> &weight,
                       const std::string &reduction, int64_t ignore_index) {
  LossReduction red = parse_loss_reduction(reduction);
  ClassLayout l = class_layout("nll_loss", self);
  check_index_target("nll_loss", self, target, l);
  Tensor w = check_weight("nll_loss", weight, self, l.c);
  return class_loss("nll_loss", self, target, w, red, l, {false, false, ignore_index, 0.0});
}

static Tensor cross_entropy(const Tensor &self, const Tensor &target, const std::optional<Tensor> &weight,
                            const std::string &reduction, int64_t ignore_index, double label_smoothing) {
  const char *op = "cross_entropy";
  LossReduction red = parse_loss_reduction(reduction);
  TP_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, Runtime, op,
           "(): label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  ClassLayout l = class_layout(op, self);
  Tensor w = check_weight(op, weight, self, l.c);
  // PyTorch's rule: a target of the input's shape holds class probabilities.
  if (target.sizes() == self.sizes()) {
    TP_CHECK(is_floating(target.dtype()), Runtime, op, "(): Expected floating point type for target with class "
             "probabilities, got ", scalar_type_name(target.dtype()));
    TP_CHECK(ignore_index < 0, Runtime, op, "(): ignore_index is not supported for floating point target");
    return class_loss(op, self, target, w, red, l, {true, true, ignore_index, label_smoothing});
  }
  check_index_target(op, self, target, l);
  return class_loss(op, self, target, w, red, l, {true, false, ignore_index, label_smoothing});
}

TP_LIBRARY(loss_ce) {
  lib.def("nll_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\", "
          "int ignore_index=-100) -> Tensor");
  lib.def("cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\", "
          "int ignore_index=-100, float label_smoothing=0.0) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<nll_loss>(lib, "nll_loss", key, __LINE__);
    impl_typed<cross_entropy>(lib, "cross_entropy", key, __LINE__);
  }
}

}  // namespace tp::p10
