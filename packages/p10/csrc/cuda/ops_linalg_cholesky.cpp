// ops_linalg_cholesky.cpp — CUDA kernels for the Cholesky factorisation A = L L^T of symmetric positive-definite
// matrices (cuSOLVER potrf) and what uses its factor: linalg_cholesky, linalg_cholesky_ex, cholesky_solve
// (potrs) and cholesky_inverse (potri); the old cholesky is a Composite over linalg_cholesky.
//
// Where it sits: the CUDA twin of kernels/linalg_cholesky.cpp, with the same schemas, results, batching and
// errors. Each op runs the CPU op on meta copies first (its checks and messages), copies its input into
// cuSOLVER's layout (Note [Row-major matrices in cuSOLVER] in cuda/linalg.h) and calls cuSOLVER once per matrix
// (Note [Batches of matrices on cuSOLVER]). potrf reads one triangle and leaves the other untouched, so the
// kernel zeroes it afterwards (linalg.cu), as the CPU's does; potri writes one triangle of the inverse, which
// linalg.cu mirrors onto the other.
#include "cuda/linalg.h"

namespace tp::p10::cuda {
using namespace tp::p10::linalg;

namespace {

int fill_mode(bool upper) { return upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }

std::tuple<Tensor, Tensor> cholesky_impl(const char *op, const Tensor &A, bool upper, bool check_errors) {
  check_square_float(op, A);  // the CPU kernel's only check
  const int dev = linalg_device(op, {A});
  DeviceGuard guard(dev);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), n = A.size(-1);
  Tensor L = col_major_copy(A);
  Tensor info = int_zeros(dev, batch);
  if (n == 0 || nb == 0) return {L, info};
  const int ni = solver_int(op, n), uplo = fill_mode(upper);
  const Solver s = solver_on(dev);
  dispatch_solver(A.dtype(), [&]<typename T>() {
    T *a = ptr<T>(L);
    const int lwork = solver::potrf_work(s, uplo, ni, a, ni);
    Tensor work = workspace<T>(s, lwork);
    for (int64_t b = 0; b < nb; ++b)
      solver::potrf(s, uplo, ni, a + b * n * n, ni, ptr<T>(work), lwork, ptr<int>(info) + b);
  });
  // the triangle potrf did not write (above the diagonal for L, below for U) is zeroed, as the CPU kernel does
  if (upper) call_op<Tensor>(TP_OP("triu_"), L, int64_t(0));
  else call_op<Tensor>(TP_OP("tril_"), L, int64_t(0));
  if (check_errors) check_infos(op, read_infos(dev, info, nb), A.dim() > 2, not_positive_definite_message);
  return {L, info};
}

}  // namespace

static Tensor linalg_cholesky(const Tensor &A, bool upper) {
  return std::get<0>(cholesky_impl("linalg.cholesky", A, upper, true));
}
static std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor &A, bool upper, bool check_errors) {
  return cholesky_impl("linalg.cholesky_ex", A, upper, check_errors);
}

// Solve A X = B given A's Cholesky factor (lower L, or upper U = L^T). Batch dims of B and the factor broadcast.
static Tensor cholesky_solve(const Tensor &B, const Tensor &factor, bool upper) {
  const char *op = "cholesky_solve";
  call_op<void>(TP_OP("cholesky_solve"), meta_like(B), meta_like(factor), upper);  // the CPU's checks
  const int dev = linalg_device(op, {B, factor});
  DeviceGuard guard(dev);
  const int64_t n = factor.size(-1), k = B.size(-1);
  const Shape batch = broadcast_shapes(batch_shape(B), batch_shape(factor), op);
  const int64_t nb = shape_numel(batch);
  Tensor X = col_major_copy(call_op<Tensor>(TP_OP("expand"), B, with_matrix(batch, n, k)));
  if (n == 0 || k == 0 || nb == 0) return X;
  const Solver s = solver_on(dev);
  const int ni = solver_int(op, n), ki = solver_int(op, k), uplo = fill_mode(upper);
  Tensor F = col_major_copy(call_op<Tensor>(TP_OP("expand"), factor, with_matrix(batch, n, n)));
  Tensor scratch = int_zeros(dev, {1});  // potrs reports only illegal arguments, which the checks rule out
  dispatch_solver(B.dtype(), [&]<typename T>() {
    for (int64_t b = 0; b < nb; ++b)
      solver::potrs(s, uplo, ni, ki, ptr<T>(F) + b * n * n, ni, ptr<T>(X) + b * n * k, ni, ptr<int>(scratch));
  });
  return X;
}

// A^-1 from A's Cholesky factor: potri writes one triangle of the (symmetric) inverse; linalg.cu mirrors it.
static Tensor cholesky_inverse(const Tensor &factor, bool upper) {
  const char *op = "cholesky_inverse";
  check_square_float(op, factor);  // the CPU kernel's only check
  const int dev = linalg_device(op, {factor});
  DeviceGuard guard(dev);
  const int64_t nb = batch_count(factor), n = factor.size(-1);
  Tensor R = col_major_copy(factor);
  if (factor.numel() == 0) return R;
  const Solver s = solver_on(dev);
  const int ni = solver_int(op, n), uplo = fill_mode(upper);
  // LAPACK's potri reports a zero diagonal entry of the factor (its trtri step); cuSOLVER's does not (it would
  // return infs), so a kernel looks for one: flags[b] for matrix b, potri's own info at flags[nb + b]. Both are
  // read back once, after the work, as the other raising ops do (Note [Info on the host]).
  Tensor flags = int_zeros(dev, {2 * nb});
  zero_diagonal_info(dev, R, nb, n, n, n * n, flags);
  dispatch_solver(factor.dtype(), [&]<typename T>() {
    T *a = ptr<T>(R);
    const int lwork = solver::potri_work(s, uplo, ni, a, ni);
    Tensor work = workspace<T>(s, lwork);
    for (int64_t b = 0; b < nb; ++b)
      solver::potri(s, uplo, ni, a + b * n * n, ni, ptr<T>(work), lwork, ptr<int>(flags) + nb + b);
  });
  mirror_triangle(dev, R, n, upper);
  std::vector<int> infos = read_infos(dev, flags, 2 * nb);
  for (int64_t b = 0; b < nb; ++b)
    if (infos[b] == 0) infos[b] = infos[nb + b];
  infos.resize(nb);
  check_infos(op, infos, factor.dim() > 2, singular_inverse_message);
  return R;
}

TP_LIBRARY(cuda_linalg_cholesky) {
  TP_IMPL(lib, "linalg_cholesky", CUDA, linalg_cholesky);
  TP_IMPL(lib, "linalg_cholesky_ex", CUDA, linalg_cholesky_ex);
  TP_IMPL(lib, "cholesky_solve", CUDA, cholesky_solve);
  TP_IMPL(lib, "cholesky_inverse", CUDA, cholesky_inverse);
}

}  // namespace tp::p10::cuda
