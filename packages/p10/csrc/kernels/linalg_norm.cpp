// linalg_norm.cpp — the norms of tp.linalg: vector_norm, matrix_norm ('fro', 'nuc', +-1, +-2, +-inf) and norm,
// which picks one of the two from its arguments the way PyTorch does.
//
// Where it sits: kernels of tp.linalg.vector_norm / matrix_norm / norm (src/tensorplay_p10/linalg.py). All are
// Composite (STYLE.md rule 2): vector norms are the existing `norm` reduction (reduce_stats.cpp); matrix norms
// are a vector norm along one dim and a max/min along the other (orders +-1, +-inf), the Frobenius norm is a
// vector 2-norm over both dims, and the spectral ones (+-2, 'nuc') come from the singular values
// (linalg_svdvals in linalg_svd.cpp).
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

namespace {

using Dims = std::optional<std::vector<int64_t>>;

Tensor cast_if(const Tensor &t, std::optional<ScalarType> dtype) {
  return dtype && *dtype != t.dtype() ? cast_to(t, *dtype) : t;
}

std::string dims_text(const std::vector<int64_t> &d, const char *sep) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? sep : "") + std::to_string(d[i]);
  return s;
}

// The two matrix dims, checked and wrapped (PyTorch's messages).
std::pair<int64_t, int64_t> matrix_dims(const Tensor &A, const std::vector<int64_t> &dim) {
  const char *op = "linalg.matrix_norm";
  check_matrix(op, A);
  TP_CHECK(dim.size() == 2, Runtime, op, ": dim must be a 2-tuple. Got ", dims_text(dim, " "));
  int64_t d0 = wrap_dim(dim[0], A.dim(), op), d1 = wrap_dim(dim[1], A.dim(), op);
  TP_CHECK(d0 != d1, Runtime, op, ": dims must be different. Got (", dim[0], ", ", dim[1], ")");
  TP_CHECK(is_floating(A.dtype()) || is_complex(A.dtype()), Runtime, op,
           ": Expected a floating point or complex tensor as input. Got ", torch_dtype_name(A.dtype()));
  return {d0, d1};
}

// Singular values of the matrices spanned by dims d0, d1 (moved to the end), reduced over them by `reduce`
// ("amax", "amin" or "sum"); keepdim puts size-1 dims back where d0 and d1 were.
Tensor spectral_norm(const Tensor &A, int64_t d0, int64_t d1, bool keepdim, std::optional<ScalarType> dtype,
                     const Operator &reduce) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < A.dim(); ++d)
    if (d != d0 && d != d1) perm.push_back(d);
  perm.push_back(d0);
  perm.push_back(d1);
  Tensor moved = call_op<Tensor>(TP_OP("permute"), cast_if(A, dtype), perm);
  Tensor S = call_op<Tensor>(TP_OP("linalg_svdvals"), moved, std::optional<std::string>());
  Tensor r = call_op<Tensor>(reduce, S, Dims(std::vector<int64_t>{-1}), false);
  if (keepdim) {
    r = call_op<Tensor>(TP_OP("unsqueeze"), r, std::min(d0, d1));
    r = call_op<Tensor>(TP_OP("unsqueeze"), r, std::max(d0, d1));
  }
  return r;
}

}  // namespace

static Tensor linalg_vector_norm(const Tensor &self, Scalar ord, Dims dim, bool keepdim,
                                 std::optional<ScalarType> dtype) {
  return call_op<Tensor>(TP_OP("norm"), self, std::optional<Scalar>(ord), dim, keepdim, dtype);
}

// ord +-1: max/min over columns of the column sums of |A|; ord +-inf: the same over rows; ord +-2: the largest /
// smallest singular value.
static Tensor linalg_matrix_norm(const Tensor &A, Scalar ord, std::vector<int64_t> dim, bool keepdim,
                                 std::optional<ScalarType> dtype) {
  auto [d0, d1] = matrix_dims(A, dim);
  const double o = ord.to_double(), a = std::abs(o);
  TP_CHECK(a == 2 || a == 1 || std::isinf(a), Runtime, "linalg.matrix_norm: Order ", ord.to_double(),
           " not supported.");
  const Operator &max_min = o > 0 ? TP_OP("amax") : TP_OP("amin");
  if (a == 2) return spectral_norm(A, d0, d1, keepdim, dtype, max_min);
  if (std::isinf(a)) std::swap(d0, d1);
  Tensor sums = call_op<Tensor>(TP_OP("norm"), A, std::optional<Scalar>(Scalar(1.0)), Dims(std::vector<int64_t>{d0}),
                                keepdim, dtype);
  if (!keepdim && d0 < d1) --d1;
  return call_op<Tensor>(max_min, sums, Dims(std::vector<int64_t>{d1}), keepdim);
}

static Tensor linalg_matrix_norm_str(const Tensor &A, std::string ord, std::vector<int64_t> dim, bool keepdim,
                                     std::optional<ScalarType> dtype) {
  auto [d0, d1] = matrix_dims(A, dim);
  TP_CHECK(ord == "fro" || ord == "nuc", Runtime, "linalg.matrix_norm: Order ", ord, " not supported.");
  if (ord == "nuc") return spectral_norm(A, d0, d1, keepdim, dtype, TP_OP("sum"));
  return call_op<Tensor>(TP_OP("norm"), A, std::optional<Scalar>(Scalar(2.0)), Dims(std::vector<int64_t>{d0, d1}),
                         keepdim, dtype);
}

// Note [linalg.norm's choice] (PyTorch's): with an ord and two dims (given, or a 2-D input without dim) it is a
// matrix norm; otherwise a vector norm (ord=None is the 2-norm, which equals the Frobenius norm).
static Tensor linalg_norm(const Tensor &X, std::optional<Scalar> ord, Dims dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  if (dim)
    TP_CHECK(dim->size() == 1 || dim->size() == 2, Runtime,
             "linalg.norm: If dim is specified, it must be of length 1 or 2. Got ", shape_str(*dim));
  else if (ord)
    TP_CHECK(X.dim() == 1 || X.dim() == 2, Runtime,
             "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got ", X.dim(), "D.");
  if (ord && ((dim && dim->size() == 2) || (!dim && X.dim() == 2)))
    return linalg_matrix_norm(X, *ord, dim ? *dim : std::vector<int64_t>{0, 1}, keepdim, dtype);
  return linalg_vector_norm(X, ord.value_or(Scalar(2.0)), dim, keepdim, dtype);
}

static Tensor linalg_norm_str(const Tensor &X, std::string ord, Dims dim, bool keepdim,
                              std::optional<ScalarType> dtype) {
  if (dim)
    TP_CHECK(dim->size() == 1 || dim->size() == 2, Runtime,
             "linalg.norm: If dim is specified, it must be of length 1 or 2. Got ", shape_str(*dim));
  else
    TP_CHECK(X.dim() == 1 || X.dim() == 2, Runtime,
             "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got ", X.dim(), "D.");
  return linalg_matrix_norm_str(X, ord, dim ? *dim : std::vector<int64_t>{0, 1}, keepdim, dtype);
}

TP_LIBRARY(linalg_norm) {
  lib.def("linalg_vector_norm(Tensor self, Scalar ord=2, int[]? dim=None, bool keepdim=False, *, "
          "ScalarType? dtype=None) -> Tensor");
  lib.def("linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
          "ScalarType? dtype=None) -> Tensor");
  lib.def("linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], bool keepdim=False, *, "
          "ScalarType? dtype=None) -> Tensor");
  lib.def("linalg_norm(Tensor self, Scalar? ord=None, int[]? dim=None, bool keepdim=False, *, "
          "ScalarType? dtype=None) -> Tensor");
  lib.def("linalg_norm.ord_str(Tensor self, str ord, int[]? dim=None, bool keepdim=False, *, "
          "ScalarType? dtype=None) -> Tensor");
  TP_IMPL(lib, "linalg_vector_norm", Composite, linalg_vector_norm);
  TP_IMPL(lib, "linalg_matrix_norm", Composite, linalg_matrix_norm);
  TP_IMPL(lib, "linalg_matrix_norm.str_ord", Composite, linalg_matrix_norm_str);
  TP_IMPL(lib, "linalg_norm", Composite, linalg_norm);
  TP_IMPL(lib, "linalg_norm.ord_str", Composite, linalg_norm_str);
}

}  // namespace tp::p10
