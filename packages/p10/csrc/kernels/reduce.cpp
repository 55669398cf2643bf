// reduce.cpp — sums and their relatives: sum, nansum, mean, nanmean, prod, all, any, count_nonzero.
//
// Where it sits: each op builds a ReducePlan (loop/reduce.h) and runs a row function through its drivers; one
// kernel serves CPU and Meta (on meta the plan gives the shape and the drivers do nothing). The statistics
// (var, std, norm, logsumexp) are in reduce_stats.cpp, the order-based ones (max, argmax, median, ...) in
// reduce_order.cpp, and the float sums they need come from pairwise_sum below.
#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/reduce.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Note [Integer sums]
//   PyTorch sums (and multiplies) bool and integer tensors in int64 unless dtype= says otherwise; the input is
//   cast first, exactly as `x.to(dtype).sum()`.
static ScalarType sum_result_dtype(ScalarType in, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(in, true) ? ScalarType::Int64 : in;
}

// sum / nansum / mean / nanmean share one kernel: `Nan` skips NaNs, `mean` divides by the element count (the
// non-NaN count for nanmean). The inner layout uses pairwise_sum (sum_f32 for contiguous float32 rows: the
// hot case, built for AVX2 too); the outer layout adds whole rows. `Nan` is a template parameter so the plain
// sum's inner loop holds no NaN test.
template <typename T, bool Nan> static void sum_kernel(const ReducePlan &p, const Tensor &out, bool mean) {
  using Acc = sum_acc_t<T>;
  T *o = out.data<T>();
  auto load = [](T x) -> Acc {
    if constexpr (Nan && std::is_floating_point_v<opmath_t<T>>) {
      if (opmath_t<T>(x) != opmath_t<T>(x)) return Acc(0);
    }
    return Acc(opmath_t<T>(x));
  };
  // nanmean's divisor: the non-NaN count per row (equal to red_numel for everything else).
  std::vector<int64_t> count;
  if (Nan && mean && !p.is_meta) {
    count.resize(p.out_numel);
    reduce_rows<T, int64_t>(
        p, [](const T *x, int64_t n, int64_t s, int64_t) {
          int64_t c = 0;
          for (int64_t i = 0; i < n; ++i) c += opmath_t<T>(x[i * s]) == opmath_t<T>(x[i * s]);
          return c;
        },
        [](int64_t a, int64_t b) { return a + b; }, [&](int64_t i, int64_t c) { count[i] = c; });
  }
  auto write = [&](int64_t i, Acc v) {
    if (mean) v = v / Acc(opmath_t<T>(Nan ? count[i] : p.red_numel));
    o[i] = cast_value<T>(v);
  };
  if (p.outer_columns() && !p.is_meta) {
    std::vector<Acc> acc(p.out_numel);
    reduce_outer<T, Acc>(p, Acc(0), [&](Acc a, T x) { return a + load(x); }, [](Acc a, Acc b) { return a + b; },
                         acc.data());
    for (int64_t i = 0; i < p.out_numel; ++i) write(i, acc[i]);
    return;
  }
  reduce_rows<T, Acc>(
      p, [&](const T *x, int64_t n, int64_t s, int64_t) -> Acc {
        if constexpr (std::is_same_v<T, float> && !Nan) {
          if (s == 1) return sum_f32(x, n);
        }
        return pairwise_sum<Acc>(x, n, s, load);
      },
      [](Acc a, Acc b) { return a + b; }, write);
}

static Tensor sum_impl(const char *op, const Tensor &self, const std::optional<std::vector<int64_t>> &dim,
                       bool keepdim, std::optional<ScalarType> dtype, bool nan, bool mean) {
  ScalarType rt = sum_result_dtype(self.dtype(), dtype);
  if (mean)
    TP_CHECK(is_floating(rt) || is_complex(rt), Runtime, op, "(): could not infer output dtype. ",
             dtype ? "Optional dtype" : "Input dtype", " must be either a floating point or complex dtype. Got: ",
             scalar_type_name(rt));
  if (nan)
    TP_CHECK(!is_complex(rt), NotImplemented, op, " does not support complex inputs");
  Tensor x = self.dtype() == rt ? self : cast_to(self, rt);
  ReducePlan p = make_reduce_plan(x, dim, keepdim, op);
  Tensor out = p.new_output(rt);
  TP_DISPATCH_ALL(rt, op, [&]<typename T>() {
    if (nan) sum_kernel<T, true>(p, out, mean);
    else sum_kernel<T, false>(p, out, mean);
  });
  return out;
}

using Dims = std::optional<std::vector<int64_t>>;
using DType = std::optional<ScalarType>;

static Tensor sum(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  return sum_impl("sum", self, dim, keepdim, dtype, false, false);
}
static Tensor sum_out(const Tensor &self, Dims dim, bool keepdim, DType dtype, const Tensor &out) {
  return copy_to_out("sum", sum_impl("sum", self, dim, keepdim, dtype ? dtype : DType(out.dtype()), false, false), out);
}
static Tensor nansum(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  return sum_impl("nansum", self, dim, keepdim, dtype, true, false);
}
static Tensor mean(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  return sum_impl("mean", self, dim, keepdim, dtype, false, true);
}
static Tensor mean_out(const Tensor &self, Dims dim, bool keepdim, DType dtype, const Tensor &out) {
  return copy_to_out("mean", sum_impl("mean", self, dim, keepdim, dtype, false, true), out);
}
static Tensor nanmean(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  return sum_impl("nanmean", self, dim, keepdim, dtype, true, true);
}

// prod: a plain running product in the accumulation type (products overflow or underflow long before
// rounding error matters, so there is no pairwise form).
static Tensor prod_impl(const Tensor &self, Dims dim, bool keepdim, DType dtype) {
  ScalarType rt = sum_result_dtype(self.dtype(), dtype);
  Tensor x = self.dtype() == rt ? self : cast_to(self, rt);
  ReducePlan p = make_reduce_plan(x, dim, keepdim, "prod");
  Tensor out = p.new_output(rt);
  TP_DISPATCH_ALL(rt, "prod", [&]<typename T>() {
    using Acc = sum_acc_t<T>;
    T *o = out.data<T>();
    auto mul = [](Acc a, Acc b) -> Acc {
      if constexpr (std::is_same_v<T, bool>) return a && b;
      else return a * b;
    };
    auto write = [o](int64_t i, Acc v) { o[i] = cast_value<T>(v); };
    if (p.outer_columns() && !p.is_meta) {
      std::vector<Acc> acc(p.out_numel);
      reduce_outer<T, Acc>(p, Acc(1), [&](Acc a, T x) { return mul(a, Acc(opmath_t<T>(x))); }, mul, acc.data());
      for (int64_t i = 0; i < p.out_numel; ++i) write(i, acc[i]);
      return;
    }
    reduce_rows<T, Acc>(
        p, [&](const T *x, int64_t n, int64_t s, int64_t) {
          Acc r(1);
          for (int64_t i = 0; i < n; ++i) r = mul(r, Acc(opmath_t<T>(x[i * s])));
          return r;
        },
        mul, write);
  });
  return out;
}

static Tensor prod(const Tensor &self, std::optional<int64_t> dim, bool keepdim, DType dtype) {
  return prod_impl(self, dim ? Dims(std::vector<int64_t>{*dim}) : Dims(), keepdim, dtype);
}
static Tensor prod_out(const Tensor &self, int64_t dim, bool keepdim, DType dtype, const Tensor &out) {
  return copy_to_out("prod", prod_impl(self, std::vector<int64_t>{dim}, keepdim, dtype ? dtype : DType(out.dtype())),
                     out);
}

// all / any: bool results, except that uint8 inputs give uint8 (PyTorch keeps that old behaviour). Rows stop
// at the first element that decides them.
static Tensor all_any(const char *op, const Tensor &self, Dims dim, bool keepdim, bool is_all) {
  ReducePlan p = make_reduce_plan(self, dim, keepdim, op);
  ScalarType rt = self.dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  Tensor out = p.new_output(rt);
  char *o = static_cast<char *>(out.data_ptr());
  TP_DISPATCH_ALL(self.dtype(), op, [&]<typename T>() {
    reduce_rows<T, bool>(
        p, [is_all](const T *x, int64_t n, int64_t s, int64_t) {
          for (int64_t i = 0; i < n; ++i)
            if (cast_value<bool>(x[i * s]) != is_all) return !is_all;
          return is_all;
        },
        [is_all](bool a, bool b) { return is_all ? a && b : a || b; }, [o](int64_t i, bool v) { o[i] = v; });
  });
  return out;
}

static Tensor all(const Tensor &self, Dims dim, bool keepdim) { return all_any("all", self, dim, keepdim, true); }
static Tensor any(const Tensor &self, Dims dim, bool keepdim) { return all_any("any", self, dim, keepdim, false); }

static Tensor count_nonzero(const Tensor &self, Dims dim) {
  ReducePlan p = make_reduce_plan(self, dim, false, "count_nonzero");
  Tensor out = p.new_output(ScalarType::Int64);
  int64_t *o = out.data<int64_t>();
  TP_DISPATCH_ALL(self.dtype(), "count_nonzero", [&]<typename T>() {
    reduce_rows<T, int64_t>(
        p, [](const T *x, int64_t n, int64_t s, int64_t) {
          int64_t c = 0;
          for (int64_t i = 0; i < n; ++i) c += cast_value<bool>(x[i * s]);
          return c;
        },
        [](int64_t a, int64_t b) { return a + b; }, [o](int64_t i, int64_t c) { o[i] = c; });
  });
  return out;
}

TP_LIBRARY(reduce) {
  lib.def("sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  lib.def("sum.out(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
          "-> Tensor(a!)");
  lib.def("nansum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  lib.def("mean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  lib.def("mean.out(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
          "-> Tensor(a!)");
  lib.def("nanmean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  lib.def("prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  lib.def("prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
          "-> Tensor(a!)");
  lib.def("all(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor");
  lib.def("any(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor");
  lib.def("count_nonzero(Tensor self, int[]? dim=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<sum>(lib, "sum", key, __LINE__);
    impl_typed<sum_out>(lib, "sum.out", key, __LINE__);
    impl_typed<nansum>(lib, "nansum", key, __LINE__);
    impl_typed<mean>(lib, "mean", key, __LINE__);
    impl_typed<mean_out>(lib, "mean.out", key, __LINE__);
    impl_typed<nanmean>(lib, "nanmean", key, __LINE__);
    impl_typed<prod>(lib, "prod", key, __LINE__);
    impl_typed<prod_out>(lib, "prod.int_out", key, __LINE__);
    impl_typed<all>(lib, "all", key, __LINE__);
    impl_typed<any>(lib, "any", key, __LINE__);
    impl_typed<count_nonzero>(lib, "count_nonzero", key, __LINE__);
  }
}

}  // namespace tp::p10
