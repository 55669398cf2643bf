// softmax.cpp — softmax and log_softmax along one dim.
//
// Where it sits: a kernel of its own rather than a Composite of amax/sub/exp/sum/div (STYLE.md rule 2): it is
// hot (every attention layer and classifier head) and numerically delicate — exp overflows unless the row
// maximum is subtracted first, and a composite would make five passes and four temporaries.
//
// Note [Softmax rows]
//   Viewing the input as [outer, n, inner] with n = size(dim), every (outer, inner) pair owns one row of n
//   elements stepping `inner`. The input is made contiguous first (a copy only for other layouts), so one loop
//   serves every dim: rows are contiguous when dim is the last one (inner == 1), strided otherwise. Each row is
//   max-subtracted, exponentiated into a float32/float64 buffer (opmath_t, so half and bfloat16 accumulate in
//   float32), summed and normalised. A row holding NaN or +inf, or only -inf, gives NaN as in PyTorch
//   (inf - inf is NaN). Rows are split over threads; nothing in the loop can throw.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dispatch/kernel_box.h"
#include "loop/parallel.h"
#include "loop/reduce.h"
#include "kernels/vec_math.h"
#include "loop/tensor_iterator.h"

// The max selects (x > m ? x : m) vectorise only when GCC may evaluate both sides of a branch, which
// floating-point trap semantics forbid by default. Nothing in P10 reads FP exception flags, so this file's
// functions are compiled without them (results are unchanged: no fast-math reassociation).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace tp::p10 {

// Note [Softmax exp]
//   std::exp does not vectorise, and it is most of softmax's time. float32 (and the 16-bit floats, which compute
//   in float32) use exp_f32 from vec_math.h (Note [Vectorised float math]: Cephes' expf, <= 1 ulp, written so
//   that the compiler vectorises it); float64 uses std::exp. Its input here is x - max <= 0 or NaN.
template <typename M> static inline M exp_row(M x) {
  if constexpr (std::is_same_v<M, float>) return exp_f32(x);
  else return std::exp(x);
}

// One row: y = softmax(x) or log_softmax(x), n elements at x[k * s] / y[k * s]. `buf` holds n accumulators.
template <typename T, bool Log>
static void softmax_row(const T *x, T *y, int64_t n, int64_t s, opmath_t<T> *buf) {
  using M = opmath_t<T>;
  M m = -INFINITY;
  for (int64_t k = 0; k < n; ++k) {
    M v = M(x[k * s]);
    m = (v > m || v != v) ? v : m;  // a NaN sticks, so the whole row becomes NaN
  }
  M sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    buf[k] = M(x[k * s]) - m;
    sum += exp_row(buf[k]);
  }
  if constexpr (Log) {
    const M lse = std::log(sum);
    for (int64_t k = 0; k < n; ++k) y[k * s] = T(buf[k] - lse);
  } else {
    const M inv = M(1) / sum;
    for (int64_t k = 0; k < n; ++k) y[k * s] = T(exp_row(buf[k]) * inv);
  }
}

// Note [Softmax float32 rows]
//   A contiguous float32 row takes three passes, each a loop the compiler vectorises, built for AVX2+FMA and
//   the baseline (TP_SIMD_LOOP): the max (kLanes running maxima), then exp(x - max) into the output and its
//   sum, block by block (kBlock elements, still in L1 when summed), then the scale by 1 / sum (or, for
//   log_softmax, (x - max) - log(sum)). Each block is summed in kLanes lanes and the block sums are added in
//   double, so the rounding error grows with kBlock / kLanes, not with the row length. A NaN is skipped by the
//   max but turns the sum into NaN, and with it the whole row, as does +inf (inf - inf) or a row of only -inf;
//   so the results match softmax_row, which the other dtypes use.
TP_SIMD_LOOP(void, softmax_row_f32, (const float *x, float *y, int64_t n, bool log), (x, y, n, log), {
  constexpr int64_t kLanes = 16, kBlock = 1024;
  float lane[kLanes];
  for (float &l : lane) l = -INFINITY;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lane[j] = x[k + j] > lane[j] ? x[k + j] : lane[j];
  float m = -INFINITY;
  for (; k < n; ++k) m = x[k] > m ? x[k] : m;
  for (float l : lane) m = l > m ? l : m;
  double sum = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    for (int64_t i = b; i < e; ++i) y[i] = exp_f32(x[i] - m);  // the output doubles as the exp buffer
    float part[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) part[j] += y[i + j];
    float s = 0;
    for (; i < e; ++i) s += y[i];
    for (float p : part) s += p;
    sum += s;
  }
  if (log) {
    const float lse = float(std::log(sum));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;  // not x - (m + lse), which rounds lse away
  } else {
    const float inv = float(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
})

// The contiguous-row case: float32 as above; float64 in the same passes with std::exp and a pairwise sum;
// the 16-bit floats through softmax_row in float32.
template <typename T, bool Log> static void softmax_row_contig(const T *x, T *y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    softmax_row_f32(x, y, n, Log);
  } else if constexpr (std::is_same_v<T, double>) {
    T m = -INFINITY;
    for (int64_t k = 0; k < n; ++k) m = x[k] > m ? x[k] : m;
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m);
    const T sum = pairwise_sum<T>(y, n, 1, [](T v) { return v; });
    if constexpr (Log) {
      const T lse = std::log(sum);
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;
    } else {
      const T inv = T(1) / sum;
      for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    }
  } else {
    thread_local std::vector<opmath_t<T>> buf;
    buf.resize(size_t(n));
    softmax_row<T, Log>(x, y, n, 1, buf.data());
  }
}

// Rows that step `inner` > 1 (softmax over a dim other than the last): a task takes kTile neighbouring rows,
// which are kTile contiguous columns of the [n, inner] block, and runs the three passes (max, sum of exps,
// normalise) across those columns, so every inner loop is contiguous and vectorises. The sum runs down the
// column in order (not pairwise): rows this layout serves are rarely long. Same results as softmax_row.
template <typename T, bool Log>
static void softmax_columns(const T *in, T *o, int64_t outer, int64_t n, int64_t inner) {
  using M = opmath_t<T>;
  constexpr int64_t kTile = 64;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (n * kTile));
  parallel_for(0, outer * tiles, grain, [&](int64_t b, int64_t e) {
    M mx[kTile], acc[kTile];
    for (int64_t task = b; task < e; ++task) {
      const int64_t c0 = (task % tiles) * kTile, w = std::min(kTile, inner - c0);
      const T *x = in + (task / tiles) * n * inner + c0;
      T *y = o + (task / tiles) * n * inner + c0;
      for (int64_t j = 0; j < w; ++j) mx[j] = -INFINITY, acc[j] = 0;
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < w; ++j) {
          const M v = M(x[k * inner + j]);
          mx[j] = v > mx[j] ? v : mx[j];  // a NaN is skipped here but makes the sum NaN
        }
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < w; ++j) acc[j] += exp_row(M(x[k * inner + j]) - mx[j]);
      for (int64_t j = 0; j < w; ++j) acc[j] = Log ? M(std::log(acc[j])) : M(1) / acc[j];
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < w; ++j) {
          const M z = M(x[k * inner + j]) - mx[j];
          y[k * inner + j] = Log ? T(z - acc[j]) : T(exp_row(z) * acc[j]);
        }
    }
  });
}

template <bool Log>
static Tensor softmax_impl(const char *op, const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  Tensor x = self;
  if (dtype && *dtype != x.dtype()) x = cast_to(x, *dtype);
  TP_CHECK(is_floating(x.dtype()), NotImplemented, op, ": expected a floating point input, got ",
           scalar_type_name(x.dtype()), " (pass dtype= to compute in a floating dtype)");
  if (!x.is_contiguous()) x = call_op<Tensor>(TP_OP("contiguous"), x);
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  if (x.device().is_meta() || x.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  TP_DISPATCH_FLOATING(x.dtype(), op, [&]<typename T>() {
    const T *in = x.data<T>();
    T *o = out.data<T>();
    if (inner == 1) {
      parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / n), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) softmax_row_contig<T, Log>(in + r * n, o + r * n, n);
      });
    } else {
      softmax_columns<T, Log>(in, o, outer, n, inner);
    }
  });
  return out;
}

static Tensor softmax(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<false>("softmax", self, dim, dtype);
}
static Tensor log_softmax(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<true>("log_softmax", self, dim, dtype);
}

TP_LIBRARY(softmax) {
  lib.def("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  lib.def("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<softmax>(lib, "softmax.int", key, __LINE__);
    impl_typed<log_softmax>(lib, "log_softmax.int", key, __LINE__);
  }
}

}  // namespace tp::p10
