// linalg_pinv.cpp — composites on the spectral decompositions: the pseudoinverse (linalg_pinv, tp.pinverse)
// and the numerical rank (linalg_matrix_rank), both by thresholding singular values.
//
// Where it sits: kernels of tp.linalg.pinv / tp.linalg.matrix_rank (src/tensorplay_p10/linalg.py). They are
// Composite (STYLE.md rule 2): written in other ops (svd/eigh from linalg_svd.cpp, matmul, where, ...), so they
// run on every backend, meta included, with no kernel of their own.
//
// Note [Singular value tolerance] (PyTorch's rule)
//   A singular value s counts (is inverted, adds to the rank) when s > max(atol, rtol * s_max). Without rtol,
//   rtol = eps(dtype) * max(m, n) where atol is missing or <= 0, and 0 where atol > 0. For hermitian=True the
//   singular values are |eigenvalues| from eigh, which is cheaper than an SVD.
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

namespace {

Tensor op1(const Operator &op, const Tensor &a) { return call_op<Tensor>(op, a); }
Tensor scalar_tensor(double v, ScalarType dt, Device dev) {
  return call_op<Tensor>(TP_OP("full"), Shape{}, Scalar(v), std::optional(dt), std::optional(dev));
}
Tensor to_dtype(const Tensor &t, ScalarType dt) { return t.dtype() == dt ? t : cast_to(t, dt); }
Tensor unsqueeze_last(const Tensor &t) { return call_op<Tensor>(TP_OP("unsqueeze"), t, int64_t(-1)); }
Tensor amax_last(const Tensor &t) {
  return call_op<Tensor>(TP_OP("amax"), t, std::optional<std::vector<int64_t>>(std::vector<int64_t>{-1}), true);
}

// 1 / s where size > tol, else 0, shaped (..., 1, k) and in `dtype` to scale the columns of a matrix.
Tensor invert_above(const Tensor &size, const Tensor &s, const Tensor &tol, ScalarType dtype) {
  Tensor zero = scalar_tensor(0, s.dtype(), s.device());
  Tensor r = call_op<Tensor>(TP_OP("where"), call_op<Tensor>(TP_OP("gt"), size, tol), op1(TP_OP("reciprocal"), s),
                             zero);
  return to_dtype(call_op<Tensor>(TP_OP("unsqueeze"), r, int64_t(-2)), dtype);
}

// max(atol, rtol * s_max) per matrix, shaped (..., 1) to compare with (..., k) singular values.
Tensor tolerance(const Tensor &A, const Tensor &s_max, const std::optional<Tensor> &atol_in,
                 const std::optional<Tensor> &rtol_in, const char *op) {
  const ScalarType real = to_real(A.dtype());
  for (const auto *t : {&atol_in, &rtol_in})
    TP_CHECK(!*t || !is_complex((*t)->dtype()), Runtime, op, ": ", t == &atol_in ? "atol" : "rtol",
             " tensor of complex type is not supported. Got ", torch_dtype_name((*t)->dtype()));
  Tensor atol = atol_in ? to_dtype(*atol_in, real) : scalar_tensor(0, real, A.device());
  Tensor rtol;
  if (rtol_in) {
    rtol = to_dtype(*rtol_in, real);
  } else {
    const double eps = real == ScalarType::Float32 ? double(std::numeric_limits<float>::epsilon())
                                                   : std::numeric_limits<double>::epsilon();
    rtol = scalar_tensor(eps * double(std::max(A.size(-1), A.size(-2))), real, A.device());
    if (atol_in)
      rtol = call_op<Tensor>(TP_OP("where"), call_op<Tensor>(TP_OP("gt"), atol, scalar_tensor(0, real, A.device())),
                             scalar_tensor(0, real, A.device()), rtol);
  }
  Tensor scaled = call_op<Tensor>(TP_OP("mul"), unsqueeze_last(rtol), s_max);
  return call_op<Tensor>(TP_OP("maximum"), unsqueeze_last(atol), scaled);
}

}  // namespace

static Tensor linalg_pinv(const Tensor &A, std::optional<Tensor> atol, std::optional<Tensor> rtol, bool hermitian) {
  const char *op = "linalg.pinv";
  check_matrix(op, A);
  check_dtype(op, A);
  if (A.numel() == 0) {  // the pseudoinverse of an m x n matrix is n x m
    Shape s = A.sizes();
    std::swap(s[s.size() - 1], s[s.size() - 2]);
    return empty_tensor(s, A.dtype(), A.device());
  }
  if (!hermitian) {  // A = U S Vh  =>  A^+ = V S^+ U^H
    auto [U, S, Vh] = call_op<std::tuple<Tensor, Tensor, Tensor>>(TP_OP("linalg_svd"), A, false,
                                                                    std::optional<std::string>());
    Tensor s_max = call_op<Tensor>(TP_OP("narrow"), S, int64_t(-1), int64_t(0), int64_t(1));  // S is descending
    Tensor tol = tolerance(A, s_max, atol, rtol, op);
    Tensor s_inv = invert_above(S, S, tol, A.dtype());
    return matmul(call_op<Tensor>(TP_OP("mul"), mH(Vh), s_inv), mH(U));
  }
  // A = U diag(w) U^H  =>  A^+ = U diag(w^+) U^H, where w^+ inverts the eigenvalues with |w| above the tolerance
  auto [w, U] = call_op<std::tuple<Tensor, Tensor>>(TP_OP("linalg_eigh"), A, std::string("L"));
  Tensor w_abs = op1(TP_OP("abs"), w);
  Tensor tol = tolerance(A, amax_last(w_abs), atol, rtol, op);
  Tensor w_inv = invert_above(w_abs, w, tol, A.dtype());
  return matmul(call_op<Tensor>(TP_OP("mul"), U, w_inv), mH(U));
}

// The old tp.pinverse: rcond is a relative tolerance.
static Tensor pinverse(const Tensor &A, double rcond) {
  return linalg_pinv(A, std::nullopt, scalar_tensor(rcond, ScalarType::Float64, A.device()), false);
}

static Tensor linalg_matrix_rank(const Tensor &A, std::optional<Tensor> atol, std::optional<Tensor> rtol,
                                 bool hermitian) {
  const char *op = "torch.linalg.matrix_rank";
  check_matrix(op, A, "input");
  check_dtype(op, A);
  if (A.numel() == 0)
    return call_op<Tensor>(TP_OP("full"), batch_shape(A), Scalar(0), std::optional(ScalarType::Int64),
                           std::optional(A.device()));
  Tensor S = hermitian ? op1(TP_OP("abs"), call_op<Tensor>(TP_OP("linalg_eigvalsh"), A, std::string("L")))
                       : call_op<Tensor>(TP_OP("linalg_svdvals"), A, std::optional<std::string>());
  Tensor tol = tolerance(A, amax_last(S), atol, rtol, op);
  return call_op<Tensor>(TP_OP("count_nonzero"), call_op<Tensor>(TP_OP("gt"), S, tol),
                         std::optional<std::vector<int64_t>>(std::vector<int64_t>{-1}));
}

TP_LIBRARY(linalg_pinv) {
  lib.def("linalg_pinv(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor");
  lib.def("pinverse(Tensor self, float rcond=1e-15) -> Tensor");
  lib.def("linalg_matrix_rank(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor");
  TP_IMPL(lib, "linalg_pinv", Composite, linalg_pinv);
  TP_IMPL(lib, "pinverse", Composite, pinverse);
  TP_IMPL(lib, "linalg_matrix_rank", Composite, linalg_matrix_rank);
}

}  // namespace tp::p10
