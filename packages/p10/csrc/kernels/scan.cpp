// scan.cpp — running reductions along one dim: cumsum, cumprod, cummax, cummin, logcumsumexp.
//
// Where it sits: beside the reductions (reduce*.cpp). A scan keeps every partial result, so instead of a
// ReducePlan it views the input as (outer, n, inner) — n the scanned dim — and walks n sequentially while the
// inner dim runs contiguously (vectorisable); outer blocks and tiles of the inner dim are split over threads.
// One kernel serves CPU and Meta.
#include <cmath>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/reduce.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// The running value's type: double for float32 (as PyTorch's CPU cumsum), float32 for 16-bit floats.
template <typename T> using scan_acc_t = std::conditional_t<std::is_same_v<T, float>, double, sum_acc_t<T>>;

struct ScanShape {
  int64_t outer = 1, n = 1, inner = 1;
};

static ScanShape scan_shape(const Tensor &self, int64_t dim, const char *op) {
  int64_t d = wrap_dim(dim, self.dim(), op);
  ScanShape s;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) s.outer *= self.sizes()[i];
    else if (i == d) s.n = self.sizes()[i];
    else s.inner *= self.sizes()[i];
  }
  return s;
}

// For every line (o, ., i): state = init(); then for k in [0, n): step(state, x[o, k, i], k, pos) where pos is
// the element's flat position in the contiguous input and outputs. `x` must be contiguous.
template <typename T, typename State, typename Init, typename Step>
static void scan_lines(const Tensor &x, const ScanShape &sh, const Init &init, const Step &step) {
  if (x.device().is_meta() || x.numel() == 0) return;
  const T *data = x.data<T>();
  if (sh.inner == 1) {  // scanning the innermost dim: one contiguous line per outer index
    parallel_for(0, sh.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(sh.n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        State st = init();
        for (int64_t k = 0, pos = o * sh.n; k < sh.n; ++k, ++pos) step(st, data[pos], k, pos);
      }
    });
    return;
  }
  constexpr int64_t kTile = 512;
  const int64_t tiles = (sh.inner + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(sh.n * std::min(kTile, sh.inner), 1));
  parallel_for(0, sh.outer * tiles, grain, [&](int64_t b, int64_t e) {
    State st[kTile];
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / tiles, i0 = (task % tiles) * kTile, m = std::min(kTile, sh.inner - i0);
      for (int64_t j = 0; j < m; ++j) st[j] = init();
      for (int64_t k = 0; k < sh.n; ++k) {
        const int64_t pos = (o * sh.n + k) * sh.inner + i0;
        for (int64_t j = 0; j < m; ++j) step(st[j], data[pos + j], k, pos + j);
      }
    }
  });
}

// cumsum / cumprod: bool and integer inputs accumulate in int64 unless dtype= is given (Note [Integer sums]).
static Tensor cum_impl(const char *op, const Tensor &self, int64_t dim, std::optional<ScalarType> dtype,
                       bool is_prod) {
  ScalarType rt = dtype ? *dtype : is_integral(self.dtype(), true) ? ScalarType::Int64 : self.dtype();
  ScanShape sh = scan_shape(self, dim, op);
  Tensor x = call_op(TP_OP("contiguous"), self.dtype() == rt ? self : cast_to(self, rt));
  Tensor out = empty_tensor(self.sizes(), rt, self.device());
  TP_DISPATCH_ALL(rt, op, [&]<typename T>() {
    using Acc = scan_acc_t<T>;
    T *o = out.data<T>();
    scan_lines<T, Acc>(
        x, sh, [is_prod] { return Acc(is_prod ? 1 : 0); },
        [is_prod, o](Acc &acc, T v, int64_t, int64_t pos) {
          if constexpr (std::is_same_v<T, bool>) acc = is_prod ? (acc && v) : (acc || v);
          else acc = is_prod ? acc * Acc(opmath_t<T>(v)) : acc + Acc(opmath_t<T>(v));
          o[pos] = cast_value<T>(acc);
        });
  });
  return out;
}

static Tensor cumsum(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  return cum_impl("cumsum", self, dim, dtype, false);
}
static Tensor cumprod(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  return cum_impl("cumprod", self, dim, dtype, true);
}
static Tensor cumsum_out(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype, const Tensor &out) {
  return copy_to_out("cumsum", cum_impl("cumsum", self, dim, dtype ? dtype : std::optional(out.dtype()), false), out);
}

// cummax / cummin follow PyTorch's CPU rule: an element replaces the running best when it is NaN, or when the
// best is not NaN and the element is >= (<=) it — so ties move the index to the latest occurrence, and after a
// NaN only a later NaN moves it.
static std::tuple<Tensor, Tensor> cum_best(const char *op, const Tensor &self, int64_t dim, bool is_max) {
  TP_CHECK(!is_complex(self.dtype()), NotImplemented, op, "(): not implemented for complex input (",
           scalar_type_name(self.dtype()), ")");
  ScanShape sh = scan_shape(self, dim, op);
  Tensor x = call_op(TP_OP("contiguous"), self);
  Tensor values = empty_tensor(self.sizes(), self.dtype(), self.device());
  Tensor indices = empty_tensor(self.sizes(), ScalarType::Int64, self.device());
  TP_DISPATCH_ALL(self.dtype(), op, [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      using M = opmath_t<T>;
      struct Best {
        M v;
        int64_t i;
      };
      T *vo = values.data<T>();
      int64_t *io = indices.data<int64_t>();
      scan_lines<T, Best>(
          x, sh, [] { return Best{M(0), -1}; },
          [is_max, vo, io](Best &b, T t, int64_t k, int64_t pos) {
            M v = M(t);
            bool take = b.i < 0 || v != v || (b.v == b.v && (is_max ? v >= b.v : v <= b.v));
            if (take) b = {v, k};
            vo[pos] = cast_value<T>(b.v);
            io[pos] = b.i;
          });
    }
  });
  return {values, indices};
}

static std::tuple<Tensor, Tensor> cummax(const Tensor &self, int64_t dim) {
  return cum_best("cummax", self, dim, true);
}
static std::tuple<Tensor, Tensor> cummin(const Tensor &self, int64_t dim) {
  return cum_best("cummin", self, dim, false);
}

// logcumsumexp: the running log(sum(exp)) updated as log(exp(a) + exp(b)) = max + log1p(exp(min - max)), which
// never overflows; two equal infinities are kept as they are (inf - inf would be NaN).
static Tensor logcumsumexp(const Tensor &self, int64_t dim) {
  TP_CHECK(is_floating(self.dtype()), NotImplemented, "logcumsumexp(): not implemented for '",
           scalar_type_name(self.dtype()), "' (expected a floating point input)");
  ScanShape sh = scan_shape(self, dim, "logcumsumexp");
  Tensor x = call_op(TP_OP("contiguous"), self);
  Tensor out = empty_tensor(self.sizes(), self.dtype(), self.device());
  TP_DISPATCH_FLOATING(self.dtype(), "logcumsumexp", [&]<typename T>() {
    using M = scan_acc_t<T>;
    T *o = out.data<T>();
    scan_lines<T, M>(
        x, sh, [] { return M(-INFINITY); },
        [o](M &acc, T t, int64_t, int64_t pos) {
          M v = M(opmath_t<T>(t));
          if (v != v || acc != acc) acc = M(NAN);
          else {
            M lo = std::min(acc, v), hi = std::max(acc, v);
            if (lo != hi || std::isfinite(lo)) acc = hi + std::log1p(std::exp(lo - hi));
          }
          o[pos] = cast_value<T>(acc);
        });
  });
  return out;
}

TP_LIBRARY(scan) {
  lib.def("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  lib.def("cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)");
  lib.def("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  lib.def("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)");
  lib.def("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)");
  lib.def("logcumsumexp(Tensor self, int dim) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<cumsum>(lib, "cumsum", key, __LINE__);
    impl_typed<cumsum_out>(lib, "cumsum.out", key, __LINE__);
    impl_typed<cumprod>(lib, "cumprod", key, __LINE__);
    impl_typed<cummax>(lib, "cummax", key, __LINE__);
    impl_typed<cummin>(lib, "cummin", key, __LINE__);
    impl_typed<logcumsumexp>(lib, "logcumsumexp", key, __LINE__);
  }
}

}  // namespace tp::p10
