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
#include <cmath>
#include <vector>

#include "dispatch/kernel_box.h"
#include "loop/parallel.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

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
    sum += std::exp(buf[k]);
  }
  if constexpr (Log) {
    const M lse = std::log(sum);
    for (int64_t k = 0; k < n; ++k) y[k * s] = T(buf[k] - lse);
  } else {
    const M inv = M(1) / sum;
    for (int64_t k = 0; k < n; ++k) y[k * s] = T(std::exp(buf[k]) * inv);
  }
}

// The contiguous-row case written for the compiler: separate passes it can vectorise (max, exp-and-sum into
// the output, scale). Tested against softmax_row through the strided path, which uses the plain version.
template <typename T, bool Log> static void softmax_row_contig(const T *x, T *y, int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    T m = -INFINITY;
    bool nan = false;
    for (int64_t k = 0; k < n; ++k) {
      m = x[k] > m ? x[k] : m;
      nan |= x[k] != x[k];
    }
    if (nan) m = NAN;
    T sum = 0;
    if constexpr (Log) {
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x[k] - m);
      const T lse = std::log(sum);  // (x - m) - lse, not x - (m + lse): m + lse would round away lse's digits
      for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) - lse;
    } else {
      for (int64_t k = 0; k < n; ++k) {
        y[k] = std::exp(x[k] - m);
        sum += y[k];
      }
      const T inv = T(1) / sum;
      for (int64_t k = 0; k < n; ++k) y[k] *= inv;
    }
  } else {
    thread_local std::vector<opmath_t<T>> buf;
    buf.resize(size_t(n));
    softmax_row<T, Log>(x, y, n, 1, buf.data());
  }
}

template <bool Log>
static Tensor softmax_impl(const char *op, const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  Tensor x = self;
  if (dtype && *dtype != x.dtype()) x = cast_to(x, *dtype);
  TP_CHECK(is_floating(x.dtype()), Runtime, op, ": expected a floating point input, got ",
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
    const int64_t rows = outer * inner, grain = std::max<int64_t>(1, kGrainSize / n);
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      if (inner == 1) {
        for (int64_t r = b; r < e; ++r) softmax_row_contig<T, Log>(in + r * n, o + r * n, n);
        return;
      }
      std::vector<opmath_t<T>> buf(static_cast<size_t>(n));
      for (int64_t r = b; r < e; ++r) {
        const int64_t start = (r / inner) * n * inner + r % inner;
        softmax_row<T, Log>(in + start, o + start, n, inner, buf.data());
      }
    });
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
