// ops_linalg_qr.cpp — CUDA kernels for the orthogonal factorisations: the QR decomposition (cuSOLVER geqrf +
// orgqr) as linalg_qr (the old qr is a Composite over it), and least squares (linalg_lstsq: geqrf, ormqr and cuBLAS's trsm).
//
// Where it sits: the CUDA twin of kernels/linalg_qr.cpp and linalg_lstsq.cpp, with the same schemas, results,
// batching and errors. Each op runs the CPU op on meta copies first (its checks and messages), copies its input
// into cuSOLVER's layout (Note [Row-major matrices in cuSOLVER] in cuda/linalg.h) and calls cuSOLVER once per
// matrix (Note [Batches of matrices on cuSOLVER]). geqrf leaves R in the upper triangle and Q as k = min(m, n)
// Householder reflectors below it; orgqr turns those into Q's columns, ormqr applies them.
//
// Note [Least squares on CUDA]
//   As in PyTorch, the CUDA lstsq has one driver, gels (QR, full-rank A): driver=None means gels, any other name
//   raises. Its results are the CPU's gels results: the solution; `residuals` (squared column norms of A X - B)
//   when m > n; empty `rank` and `singular_values`, which gels does not compute. Like LAPACK's gels, it raises
//   when R has an exactly zero diagonal entry (the CPU's error, same words), which needs the info on the host
//   (Note [Info on the host]). Tall or square A (m >= n): A = QR, X = R^-1 (Q^T B)[:n]; the rows n..m-1 of Q^T B
//   are what the residuals sum. Wide A (m < n, the minimum-norm solution): A^T = QR (so A = R^T Q^T), solve
//   R^T Z = B, then X = Q [Z; 0]. The right-hand sides live in an X of max(m, n) rows, as the CPU's.
#include "cuda/linalg.h"

namespace tp::p10::cuda {
using namespace tp::p10::linalg;

// ---- qr -----------------------------------------------------------------------------------------------------
// mode 'reduced': Q m x k, R k x n; 'complete': Q m x m, R m x n; 'r': R only (k x n) and an empty Q.
static std::tuple<Tensor, Tensor> qr_impl(const char *op, const Tensor &A, const std::string &mode) {
  const int dev = linalg_device(op, {A});
  DeviceGuard guard(dev);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool want_q = mode != "r";
  const int64_t qcols = mode == "complete" ? m : k, rrows = mode == "complete" ? m : k;
  Tensor Q = want_q ? col_major_empty(batch, m, qcols, A.dtype(), A.device())
                    : empty_tensor({0}, A.dtype(), A.device());
  Tensor R = col_major_empty(batch, rrows, n, A.dtype(), A.device());
  if (nb == 0) return {Q, R};
  if (m == 0 || n == 0) {  // no reflector: R is empty and Q (m x m when complete) the identity
    if (want_q && Q.numel() > 0) fill_identity(Q);
    return {Q, R};
  }
  const int mi = solver_int(op, m), ni = solver_int(op, n), ki = int(k), qi = int(qcols);
  Tensor F = col_major_copy(A);
  const Solver s = solver_on(dev);
  dispatch_solver(A.dtype(), [&]<typename T>() {
    Tensor tau = workspace<T>(s, nb * k), scratch = int_zeros(dev, {1});
    T *f = ptr<T>(F);
    int lwork = solver::geqrf_work(s, mi, ni, f, mi);
    Tensor work = workspace<T>(s, lwork);
    for (int64_t b = 0; b < nb; ++b)
      solver::geqrf(s, mi, ni, f + b * m * n, mi, ptr<T>(tau) + b * k, ptr<T>(work), lwork, ptr<int>(scratch));
    // R: the first rrows rows of the factor, zero below the diagonal
    device_copy(R, call_op<Tensor>(TP_OP("narrow"), F, int64_t(-2), int64_t(0), rrows));
    call_op<Tensor>(TP_OP("triu_"), R, int64_t(0));
    if (!want_q) return;
    // Q: the identity, then the reflectors in its first min(n, qcols) columns; orgqr makes the rest of each
    // column (LAPACK's orgqr sets columns k..qcols-1 to unit vectors itself; starting from them is right either
    // way).
    fill_identity(Q);
    const int64_t c = std::min(n, qcols);
    device_copy(call_op<Tensor>(TP_OP("narrow"), Q, int64_t(-1), int64_t(0), c),
                call_op<Tensor>(TP_OP("narrow"), F, int64_t(-1), int64_t(0), c));
    T *q = ptr<T>(Q);
    lwork = solver::orgqr_work(s, mi, qi, ki, q, mi, ptr<T>(tau));
    work = workspace<T>(s, lwork);
    for (int64_t b = 0; b < nb; ++b)
      solver::orgqr(s, mi, qi, ki, q + b * m * qcols, mi, ptr<T>(tau) + b * k, ptr<T>(work), lwork,
                    ptr<int>(scratch));
  });
  return {Q, R};
}

static std::tuple<Tensor, Tensor> linalg_qr(const Tensor &A, std::string mode) {
  call_op<void>(TP_OP("linalg_qr"), meta_like(A), mode);  // the CPU's checks
  return qr_impl("linalg.qr", A, mode);
}

// ---- lstsq --------------------------------------------------------------------------------------------------
// Note [Least squares on CUDA].
template <typename T>
static void gels(const Solver &s, const Tensor &F, const Tensor &X, int64_t nb, int64_t m, int64_t n, int64_t k,
                 const Tensor &info) {
  const bool tall = m >= n;
  // F holds A (m x n) when tall, A^T (n x m) when wide: fm x fn with fn = min(m, n) reflectors.
  const int64_t fm = std::max(m, n), fn = std::min(m, n), rows = fm;
  const int fmi = int(fm), fni = int(fn), ki = int(k);
  T *f = ptr<T>(F), *x = ptr<T>(X);
  Tensor tau = workspace<T>(s, nb * fn), scratch = int_zeros(s.dev, {1});
  const int trans = tall ? CUBLAS_OP_T : CUBLAS_OP_N;  // Q^T B before the solve; Q [Z; 0] after it
  const int lwork = std::max(solver::geqrf_work(s, fmi, fni, f, fmi),
                             solver::ormqr_work(s, CUBLAS_SIDE_LEFT, trans, fmi, ki, fni, f, fmi, ptr<T>(tau), x, fmi));
  Tensor work = workspace<T>(s, lwork);
  for (int64_t b = 0; b < nb; ++b) {
    T *fb = f + b * fm * fn, *xb = x + b * rows * k, *tb = ptr<T>(tau) + b * fn;
    solver::geqrf(s, fmi, fni, fb, fmi, tb, ptr<T>(work), lwork, ptr<int>(scratch));
    if (tall) {
      solver::ormqr(s, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, fmi, ki, fni, fb, fmi, tb, xb, fmi, ptr<T>(work), lwork,
                    ptr<int>(scratch));
      solver::trsm_left(s, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, fni, ki, fb, fmi, xb, fmi);
    } else {  // rows fn..fm-1 of X are zero: Q [Z; 0]
      solver::trsm_left(s, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, fni, ki, fb, fmi, xb, fmi);
      solver::ormqr(s, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, fmi, ki, fni, fb, fmi, tb, xb, fmi, ptr<T>(work), lwork,
                    ptr<int>(scratch));
    }
  }
  zero_diagonal_info(s.dev, F, nb, fn, fm, fm * fn, info);  // LAPACK's trtrs check of R
}

static std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor &A, const Tensor &B,
                                                               std::optional<double> rcond,
                                                               std::optional<std::string> driver) {
  const char *op = "torch.linalg.lstsq";
  // The CPU's checks, asked for its gels results; then PyTorch's CUDA rule for the driver, checked after them.
  call_op<void>(TP_OP("linalg_lstsq"), meta_like(A), meta_like(B), rcond, std::optional<std::string>("gels"));
  TP_CHECK(!driver || *driver == "gels", Runtime, op, ": `driver` other than `gels` is not supported on CUDA");
  const int dev = linalg_device(op, {A, B});
  DeviceGuard guard(dev);
  const bool vector = A.dim() - B.dim() == 1;  // B is a batch of vectors (PyTorch's rule for lstsq)
  Tensor B2 = vector ? call_op<Tensor>(TP_OP("unsqueeze"), B, int64_t(-1)) : B;
  const int64_t m = A.size(-2), n = A.size(-1), k = B2.size(-1), rows = std::max(m, n);
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B2), op);
  const int64_t nb = shape_numel(batch);
  const ScalarType real = to_real(A.dtype());
  const Device device = A.device();
  Tensor X = col_major_empty(batch, rows, k, A.dtype(), device);
  if (X.numel() > 0) {
    call_op<Tensor>(TP_OP("fill_"), X, Scalar(0));
    if (m > 0 && k > 0)
      device_copy(call_op<Tensor>(TP_OP("narrow"), X, int64_t(-2), int64_t(0), m),
                  call_op<Tensor>(TP_OP("expand"), B2, with_matrix(batch, m, k)));
  }
  if (nb > 0 && m > 0 && n > 0 && k > 0) {
    solver_int(op, rows);
    solver_int(op, k);
    const Tensor An = call_op<Tensor>(TP_OP("expand"), A, with_matrix(batch, m, n));
    Tensor F = col_major_copy(m >= n ? An : mT(An));  // Note [Least squares on CUDA]
    Tensor info = int_zeros(dev, {nb});
    const Solver s = solver_on(dev);
    dispatch_solver(A.dtype(), [&]<typename T>() { gels<T>(s, F, X, nb, m, n, k, info); });
    check_infos(op, read_infos(dev, info, nb), batch.size() > 0, rank_deficient_lstsq_message);
  }
  Tensor residuals = empty_tensor({0}, real, device);
  if (m > n) {  // squared norms of rows n..m-1 of each column (all of B's when LAPACK's gels is not called)
    Tensor tail = call_op<Tensor>(TP_OP("narrow"), X, int64_t(-2), n, m - n);
    residuals = call_op<Tensor>(TP_OP("sum"), call_op<Tensor>(TP_OP("mul"), tail, tail),
                                std::optional<std::vector<int64_t>>(std::vector<int64_t>{-2}), false,
                                std::optional<ScalarType>());
  }
  Tensor solution = call_op<Tensor>(TP_OP("narrow"), X, int64_t(-2), int64_t(0), n);
  if (vector) solution = call_op<Tensor>(TP_OP("squeeze"), solution, std::vector<int64_t>{-1});
  return {solution, residuals, empty_tensor({0}, ScalarType::Int64, device), empty_tensor({0}, real, device)};
}

TP_LIBRARY(cuda_linalg_qr) {
  TP_IMPL(lib, "linalg_qr", CUDA, linalg_qr);
  TP_IMPL(lib, "linalg_lstsq", CUDA, linalg_lstsq);
}

}  // namespace tp::p10::cuda
