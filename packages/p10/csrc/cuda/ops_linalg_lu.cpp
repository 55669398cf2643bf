// ops_linalg_lu.cpp — CUDA kernels for everything built on the LU factorisation (cuSOLVER getrf): linalg_det,
// logdet, linalg_slogdet, linalg_inv, linalg_inv_ex, linalg_solve, linalg_solve_ex (det, slogdet and inverse
// are Composites over them: Note [Old linalg spellings] in kernels/linalg_lu.cpp).
//
// Where it sits: the CUDA twin of kernels/linalg_lu.cpp, with the same schemas, results (values, shapes, the
// column-major layout of Note [Row-major matrices in cuSOLVER]), batching and errors. Each op first runs the
// CPU op on meta copies of its arguments (cuda/ops_meta.h), which makes every argument check with the CPU's
// message; then it copies its input into cuSOLVER's layout and factors each matrix of the batch (Note [Batches
// of matrices on cuSOLVER] in cuda/linalg.h). The determinants come from the factors through linalg.cu; inverses
// and solves from getrs (cuSOLVER has no getri: the inverse solves A X = I, as PyTorch's does). Where the CPU
// kernel's only check is a shared one (check_square_float) it is called directly.
#include "cuda/linalg.h"

namespace tp::p10::cuda {
using namespace tp::p10::linalg;

namespace {

// Factor every n x n matrix of `lu` (cuSOLVER's layout, in place), nb of them: pivots to `piv` (nb x n, 1-based)
// and getrf's info of matrix b to info[b] (k > 0: U[k-1, k-1] is exactly zero).
template <typename T>
void lu_factor(const Solver &s, const Tensor &lu, int64_t nb, int n, const Tensor &piv, const Tensor &info) {
  T *a = ptr<T>(lu);
  Tensor work = workspace<T>(s, solver::getrf_work(s, n, n, a, n));
  for (int64_t b = 0; b < nb; ++b)
    solver::getrf(s, n, n, a + b * n * n, n, ptr<T>(work), ptr<int>(piv) + b * n, ptr<int>(info) + b);
}

// det (kind 0), slogdet (1) and logdet (2), as the CPU's DetKind.
std::tuple<Tensor, Tensor> det_impl(const char *op, const Tensor &A, int kind) {
  check_square_float(op, A);  // the CPU kernel's only check
  const int dev = linalg_device(op, {A});
  DeviceGuard guard(dev);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), n = A.size(-1);
  Tensor first = empty_tensor(batch, A.dtype(), A.device());
  Tensor second = kind == 1 ? empty_tensor(batch, A.dtype(), A.device()) : Tensor();
  if (nb == 0) return {first, second};
  const int ni = solver_int(op, n);
  Tensor lu = col_major_copy(A);
  Tensor piv = int_zeros(dev, {nb, std::max<int64_t>(n, 1)}), info = int_zeros(dev, {nb});
  if (n > 0) {
    const Solver s = solver_on(dev);
    dispatch_solver(A.dtype(), [&]<typename T>() { lu_factor<T>(s, lu, nb, ni, piv, info); });
  }
  det_from_lu(dev, lu, piv, nb, n, first, second, kind);  // n == 0: det 1, sign 1, log|det| 0, as on the CPU
  return {first, second};
}

}  // namespace

static Tensor linalg_det(const Tensor &A) { return std::get<0>(det_impl("linalg.det", A, 0)); }
static Tensor logdet(const Tensor &A) { return std::get<0>(det_impl("logdet", A, 2)); }
static std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor &A) { return det_impl("linalg.slogdet", A, 1); }

// ---- inv ----------------------------------------------------------------------------------------------------
// A^-1 as the solution of A X = I (getrf, then getrs against the identity), in cuSOLVER's layout; and getrf's
// info per matrix. A singular matrix's inverse is whatever the solve leaves (infs/NaNs); only info says so.
static std::tuple<Tensor, Tensor> inv_impl(const char *op, const Tensor &A, bool check_errors) {
  check_square_float(op, A);  // the CPU kernel's only check
  const int dev = linalg_device(op, {A});
  DeviceGuard guard(dev);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), n = A.size(-1);
  Tensor X = col_major_empty(batch, n, n, A.dtype(), A.device());
  Tensor info = int_zeros(dev, batch);
  if (n == 0 || nb == 0) return {X, info};
  const int ni = solver_int(op, n);
  fill_identity(X);
  Tensor lu = col_major_copy(A);
  Tensor piv = int_zeros(dev, {nb, n}), scratch = int_zeros(dev, {1});
  const Solver s = solver_on(dev);
  dispatch_solver(A.dtype(), [&]<typename T>() {
    lu_factor<T>(s, lu, nb, ni, piv, info);
    for (int64_t b = 0; b < nb; ++b)  // getrs reports only illegal arguments: into scratch (Note [Info on the host])
      solver::getrs(s, ni, ni, ptr<T>(lu) + b * n * n, ni, ptr<int>(piv) + b * n, ptr<T>(X) + b * n * n, ni,
                    ptr<int>(scratch));
  });
  if (check_errors) check_infos(op, read_infos(dev, info, nb), A.dim() > 2, singular_inverse_message);
  return {X, info};
}

static Tensor linalg_inv(const Tensor &A) { return std::get<0>(inv_impl("linalg.inv", A, true)); }
static std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor &A, bool check_errors) {
  return inv_impl("linalg.inv_ex", A, check_errors);
}

// ---- solve --------------------------------------------------------------------------------------------------
// The CPU's solve_impl over getrf + getrs; the caller has run the CPU op on meta (its checks and messages).
static std::tuple<Tensor, Tensor> solve_on_device(const char *op, const Tensor &A, const Tensor &B, bool left,
                                                  bool check_errors) {
  const bool vector = is_vector_rhs(A, B);
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    auto [xt, info] = solve_on_device(op, mT(A), mT(B), true, check_errors);
    return {mT(xt), info};
  }
  Tensor B2 = vector ? call_op<Tensor>(TP_OP("unsqueeze"), B, int64_t(-1)) : B;
  const int64_t n = A.size(-1), k = B2.size(-1);
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B2), op);
  const int64_t nb = shape_numel(batch);
  const int dev = A.device().index;
  Tensor X = col_major_copy(call_op<Tensor>(TP_OP("expand"), B2, with_matrix(batch, n, k)));
  Tensor info = int_zeros(dev, batch);
  Tensor result = vector ? call_op<Tensor>(TP_OP("squeeze"), X, std::vector<int64_t>{-1}) : X;
  if (n == 0 || nb == 0) return {result, info};
  const int ni = solver_int(op, n), ki = solver_int(op, k);
  Tensor lu = col_major_copy(call_op<Tensor>(TP_OP("expand"), A, with_matrix(batch, n, n)));
  Tensor piv = int_zeros(dev, {nb, n}), scratch = int_zeros(dev, {1});
  const Solver s = solver_on(dev);
  dispatch_solver(A.dtype(), [&]<typename T>() {
    lu_factor<T>(s, lu, nb, ni, piv, info);
    if (ki == 0) return;
    for (int64_t b = 0; b < nb; ++b)
      solver::getrs(s, ni, ki, ptr<T>(lu) + b * n * n, ni, ptr<int>(piv) + b * n, ptr<T>(X) + b * n * k, ni,
                    ptr<int>(scratch));
  });
  if (check_errors)  // PyTorch names this one error "torch.linalg.solve"
    check_infos(str_cat("torch.", op).c_str(), read_infos(dev, info, nb), batch.size() > 0, singular_solve_message);
  return {result, info};
}

static std::tuple<Tensor, Tensor> solve_impl(const char *op, const Tensor &A, const Tensor &B, bool left,
                                             bool check_errors) {
  const int dev = linalg_device(op, {A, B});
  DeviceGuard guard(dev);
  return solve_on_device(op, A, B, left, check_errors);
}

static Tensor linalg_solve(const Tensor &A, const Tensor &B, bool left) {
  call_op<void>(TP_OP("linalg_solve"), meta_like(A), meta_like(B), left);
  return std::get<0>(solve_impl("linalg.solve", A, B, left, true));
}
static std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor &A, const Tensor &B, bool left, bool check_errors) {
  call_op<void>(TP_OP("linalg_solve_ex"), meta_like(A), meta_like(B), left, check_errors);
  return solve_impl("linalg.solve_ex", A, B, left, check_errors);
}

TP_LIBRARY(cuda_linalg_lu) {
  TP_IMPL(lib, "linalg_det", CUDA, linalg_det);
  TP_IMPL(lib, "logdet", CUDA, logdet);
  TP_IMPL(lib, "linalg_slogdet", CUDA, linalg_slogdet);
  TP_IMPL(lib, "linalg_inv", CUDA, linalg_inv);
  TP_IMPL(lib, "linalg_inv_ex", CUDA, linalg_inv_ex);
  TP_IMPL(lib, "linalg_solve", CUDA, linalg_solve);
  TP_IMPL(lib, "linalg_solve_ex", CUDA, linalg_solve_ex);
}

}  // namespace tp::p10::cuda
