// ops_unique_dim.cpp — unique and unique_consecutive over slices (dim=) on CUDA, composed of CUDA ops.
//
// Where it sits: ops_search.cpp's unique kernels handle dim=None with dedicated kernels (Note [unique on the
// GPU]) and hand a dim= call here. The semantics are the CPU's walk (Note [unique] in kernels/sort.cpp): the
// slices along `dim` are rows, sorted lexicographically and stably (unique) or kept in place
// (unique_consecutive), equal neighbours under == merged, so NaNs stay distinct.
//
// Note [Unique rows by stable passes]
//   A stable sort by the last column, then by the one before, ..., then by the first, leaves the rows in
//   lexicographic order, ties in their original order (LSD radix sort with whole columns as digits): one
//   stable argsort per column on the GPU, each permuting the running order. `width` passes of n keys is
//   slow for very wide slices, but every step is a CUDA op and the result is exactly the CPU's. Then:
//   new[p] = (p == 0 or row p != row p-1), group = cumsum(new) - 1, firsts = nonzero(new) (the one host read:
//   the number of groups sizes the results, as for dim=None), counts = differences of firsts, and
//   inverse[order[p]] = group[p].
#include <tuple>

#include "cuda/ops_common.h"
#include "kernels/binary_common.h"
#include "kernels/sort.h"

namespace tp::p10::cuda {

namespace {
Tensor column(const Tensor &rows, int64_t k) { return call_op<Tensor>(TP_OP("select"), rows, int64_t(1), k); }
}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique_dim(const char *op, const Tensor &self, int64_t dim, bool sort_first) {
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const Device device = self.device();
  const int64_t n = self.dim() ? self.size(d) : 1;
  const Tensor front = call_op<Tensor>(TP_OP("contiguous"), self.dim() ? move_dim(self, d, 0) : self);
  const int64_t width = n ? front.numel() / n : 0;
  if (n == 0) {
    return {call_op<Tensor>(TP_OP("contiguous"), self), empty_tensor({0}, ScalarType::Int64, device),
            empty_tensor({0}, ScalarType::Int64, device)};
  }
  const Tensor rows = call_op<Tensor>(TP_OP("reshape"), front, std::vector<int64_t>{n, width});
  const std::optional<ScalarType> i64(ScalarType::Int64);
  Tensor order = call_op<Tensor>(TP_OP("arange"), Scalar(int64_t(0)), Scalar(n), Scalar(int64_t(1)), i64,
                                 std::optional<Device>(device));
  if (sort_first) {  // Note [Unique rows by stable passes]
    for (int64_t k = width - 1; k >= 0; --k) {
      const Tensor key = call_op<Tensor>(TP_OP("index_select"), column(rows, k), int64_t(0), order);
      const Tensor perm = call_op<Tensor>(TP_OP("argsort"), key, int64_t(0), false, true);
      order = call_op<Tensor>(TP_OP("index_select"), order, int64_t(0), perm);
    }
  }
  const Tensor sorted = sort_first ? call_op<Tensor>(TP_OP("index_select"), rows, int64_t(0), order) : rows;
  // new[p]: row p differs from row p - 1 somewhere (== per element: a NaN never equals itself)
  const Tensor later = call_op<Tensor>(TP_OP("narrow"), sorted, int64_t(0), int64_t(1), n - 1);
  const Tensor earlier = call_op<Tensor>(TP_OP("narrow"), sorted, int64_t(0), int64_t(0), n - 1);
  const Tensor differs = call_op<Tensor>(TP_OP("any"), call_op<Tensor>(TP_OP("ne"), later, earlier),
                                         std::optional<std::vector<int64_t>>(std::vector<int64_t>{1}), false);
  const Tensor first = call_op<Tensor>(TP_OP("full"), Shape{1}, Scalar(true),
                                       std::optional<ScalarType>(ScalarType::Bool), std::optional<Device>(device));
  const Tensor is_new = call_op<Tensor>(TP_OP("cat"), std::vector<Tensor>{first, differs}, int64_t(0));
  const Tensor group = call_op<Tensor>(TP_OP("sub"), call_op<Tensor>(TP_OP("cumsum"), is_new, int64_t(0), i64),
                                       wrapped_scalar(Scalar(int64_t(1))), Scalar(int64_t(1)));
  const Tensor firsts = call_op<Tensor>(TP_OP("reshape"), call_op<Tensor>(TP_OP("nonzero"), is_new),
                                        std::vector<int64_t>{-1});  // sorted positions that start a group
  const int64_t u = firsts.size(0);
  const Tensor picks = call_op<Tensor>(TP_OP("index_select"), order, int64_t(0), firsts);
  Tensor values = call_op<Tensor>(TP_OP("index_select"), front, int64_t(0), picks);
  if (self.dim()) values = call_op<Tensor>(TP_OP("contiguous"), move_dim(values, 0, d));
  const Tensor ends = call_op<Tensor>(
      TP_OP("cat"),
      std::vector<Tensor>{call_op<Tensor>(TP_OP("narrow"), firsts, int64_t(0), int64_t(1), u - 1),
                          call_op<Tensor>(TP_OP("full"), Shape{1}, Scalar(n), i64, std::optional<Device>(device))},
      int64_t(0));
  const Tensor counts = call_op<Tensor>(TP_OP("sub"), ends, firsts, Scalar(int64_t(1)));
  Tensor inverse = empty_tensor({n}, ScalarType::Int64, device);
  call_op<Tensor>(TP_OP("index_put_"), inverse, std::vector<Tensor>{order}, group, false);
  return {values, inverse, counts};
}

}  // namespace tp::p10::cuda
