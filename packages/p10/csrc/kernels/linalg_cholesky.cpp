// linalg_cholesky.cpp — the Cholesky factorisation A = L L^H of Hermitian positive-definite matrices (LAPACK
// potrf) and what uses its factor: linalg_cholesky(_ex), the old tp.cholesky, cholesky_solve (potrs) and
// cholesky_inverse (potri).
//
// Where it sits: kernels of tp.linalg.cholesky (src/tensorplay_p10/linalg.py) and of tp.cholesky,
// tp.cholesky_solve, tp.cholesky_inverse. Inputs are copied into LAPACK's layout (Note [LAPACK layout] in
// linalg_common.h). potrf reads one triangle only (the lower one, or the upper one for upper=True) and leaves the
// other untouched, so the kernel zeroes it afterwards. One function serves CPU and Meta.
#include "kernels/lapack.h"
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

namespace {

// Zero the triangle LAPACK did not write: above the diagonal when `lower`, below it otherwise.
template <typename T> void zero_other_triangle(T *a, int64_t n, bool lower) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      if (lower ? i < j : i > j) a[i + j * n] = T(0);
}

std::tuple<Tensor, Tensor> cholesky_impl(const char *op, const Tensor &A, bool upper, bool check_errors) {
  check_square_float(op, A);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch);
  Tensor L = col_major_copy(A);
  Tensor info = empty_tensor(batch, ScalarType::Int32, A.device());
  if (A.device().is_meta()) return {L, info};
  const int n = lapack_int(op, A.size(-1));
  std::vector<int> infos(size_t(nb), 0);
  if (n > 0 && nb > 0) {
    dispatch_lapack(A.dtype(), [&]<typename T>() {
      for_each_matrix(nb, n, [&](int64_t b) {
        T *a = L.data<T>() + b * int64_t(n) * n;
        lapack::potrf(upper ? 'U' : 'L', n, a, n, &infos[b]);
        zero_other_triangle(a, n, !upper);
      });
    });
  }
  std::copy(infos.begin(), infos.end(), info.data<int32_t>());
  if (check_errors) check_infos(op, infos, A.dim() > 2, not_positive_definite_message);
  return {L, info};
}

}  // namespace

static Tensor linalg_cholesky(const Tensor &A, bool upper) {
  return std::get<0>(cholesky_impl("linalg.cholesky", A, upper, true));
}
static std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor &A, bool upper, bool check_errors) {
  return cholesky_impl("linalg.cholesky_ex", A, upper, check_errors);
}
// Note [Old linalg spellings] in linalg_lu.cpp
static Tensor cholesky(const Tensor &A, bool upper) { return call_op<Tensor>(TP_OP("linalg_cholesky"), A, upper); }

// Solve A X = B given A's Cholesky factor (lower L, or upper U = L^H). Batch dims of B and the factor broadcast.
static Tensor cholesky_solve(const Tensor &B, const Tensor &factor, bool upper) {
  const char *op = "cholesky_solve";
  check_square(op, factor);
  check_matrix(op, B, "B");
  check_dtype(op, factor);
  TP_CHECK(B.dtype() == factor.dtype(), Runtime, op, ": Expected b and A to have the same dtype, but found b of type ",
           torch_dtype_name(B.dtype()), " and A of type ", torch_dtype_name(factor.dtype()), " instead.");
  const int64_t n = factor.size(-1), k = B.size(-1);
  TP_CHECK(B.size(-2) == n, Runtime, "Incompatible matrix sizes for cholesky_solve: each A matrix is ", n,
           " by ", n, " but each b matrix is ", B.size(-2), " by ", k);
  const Shape batch = broadcast_shapes(batch_shape(B), batch_shape(factor), op);
  const int64_t nb = shape_numel(batch);
  Tensor F = col_major_copy(call_op<Tensor>(TP_OP("expand"), factor, with_matrix(batch, n, n)));
  Tensor X = col_major_copy(call_op<Tensor>(TP_OP("expand"), B, with_matrix(batch, n, k)));
  if (B.device().is_meta() || n == 0 || k == 0 || nb == 0) return X;
  const int ni = lapack_int(op, n), ki = lapack_int(op, k);
  dispatch_lapack(B.dtype(), [&]<typename T>() {
    for_each_matrix(nb, ni, [&](int64_t b) {
      int info;  // potrs only reports illegal arguments, which the checks above rule out
      lapack::potrs(upper ? 'U' : 'L', ni, ki, F.data<T>() + b * n * n, ni, X.data<T>() + b * n * k, ni, &info);
    });
  });
  return X;
}

// A^-1 from A's Cholesky factor: potri writes one triangle of the (Hermitian) inverse; we mirror it.
static Tensor cholesky_inverse(const Tensor &factor, bool upper) {
  const char *op = "cholesky_inverse";
  check_square_float(op, factor);
  const int64_t nb = batch_count(factor);
  Tensor R = col_major_copy(factor);
  if (factor.device().is_meta() || factor.numel() == 0) return R;
  const int n = lapack_int(op, factor.size(-1));
  std::vector<int> infos(size_t(nb), 0);
  dispatch_lapack(factor.dtype(), [&]<typename T>() {
    for_each_matrix(nb, n, [&](int64_t b) {
      T *a = R.data<T>() + b * int64_t(n) * n;
      lapack::potri(upper ? 'U' : 'L', n, a, n, &infos[b]);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = j + 1; i < n; ++i) {  // copy the written triangle's conjugate into the other one
          if (upper) a[i + j * n] = cast_value<T>(std::conj(a[j + i * n]));
          else a[j + i * n] = cast_value<T>(std::conj(a[i + j * n]));
        }
    });
  });
  check_infos(op, infos, factor.dim() > 2, singular_inverse_message);
  return R;
}

TP_LIBRARY(linalg_cholesky) {
  lib.def("linalg_cholesky(Tensor A, *, bool upper=False) -> Tensor");
  lib.def("linalg_cholesky_ex(Tensor A, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)");
  lib.def("cholesky(Tensor self, bool upper=False) -> Tensor");
  lib.def("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor");
  lib.def("cholesky_inverse(Tensor self, bool upper=False) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<linalg_cholesky>(lib, "linalg_cholesky", key, __LINE__);
    impl_typed<linalg_cholesky_ex>(lib, "linalg_cholesky_ex", key, __LINE__);
    impl_typed<cholesky_solve>(lib, "cholesky_solve", key, __LINE__);
    impl_typed<cholesky_inverse>(lib, "cholesky_inverse", key, __LINE__);
  }
  TP_IMPL(lib, "cholesky", Composite, cholesky);
}

}  // namespace tp::p10
