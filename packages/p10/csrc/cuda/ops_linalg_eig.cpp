// ops_linalg_eig.cpp — CUDA kernels for the spectral decompositions: the eigendecomposition of symmetric matrices
// A = V diag(w) V^T (cuSOLVER syevd) as linalg_eigh and linalg_eigvalsh, and the singular value decomposition
// A = U diag(S) Vh (cuSOLVER gesvd) as linalg_svd and linalg_svdvals (the old svd is a Composite over them).
//
// Where it sits: the CUDA twin of kernels/linalg_svd.cpp, with the same schemas, results, batching and errors.
// Each op runs the CPU op on meta copies first (its checks and messages), copies its input into cuSOLVER's
// layout (Note [Row-major matrices in cuSOLVER] in cuda/linalg.h) and calls cuSOLVER once per matrix (Note
// [Batches of matrices on cuSOLVER]). Eigenvalues come back ascending and singular values descending, as on the
// CPU; eigenvectors and singular vectors are unique only up to sign, and cuSOLVER may pick other signs than
// LAPACK (tests compare what is unique: values, reconstructions, projectors).
//
// Note [SVD on cuSOLVER]
//   gesvd handles m >= n only. A wide A (m < n) is decomposed through its transpose: A^T = U' S V'^T gives
//   A = V' S U'^T, so U = V' and Vh = U'^T, copied into the CPU's column-major U and Vh. The `driver=` argument
//   of PyTorch's CUDA svd (gesvd, gesvdj, gesvda: algorithms for the same decomposition) is accepted and checked;
//   every driver runs gesvd here. LAPACK's gesdd (the CPU's) refuses a matrix with a NaN, whose norm is NaN; the
//   CUDA op raises the CPU's error for it too (linalg.cu nan_flags), read back with the info in one copy.
#include <cctype>

#include "cuda/linalg.h"

namespace tp::p10::cuda {
using namespace tp::p10::linalg;

namespace {

// U (m x ucols), S (k) and Vh (vrows x n) of every matrix; U and Vh are empty ({0}) without compute_uv. The
// caller has run the CPU op on meta.
std::tuple<Tensor, Tensor, Tensor> svd_impl(const char *op, const Tensor &A, bool compute_uv, bool full) {
  const int dev = linalg_device(op, {A});
  DeviceGuard guard(dev);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  const Device device = A.device();
  Tensor U = compute_uv ? col_major_empty(batch, m, ucols, A.dtype(), device) : empty_tensor({0}, A.dtype(), device);
  Tensor S = empty_tensor(with_vector(batch, k), to_real(A.dtype()), device);
  Tensor Vh = compute_uv ? col_major_empty(batch, vrows, n, A.dtype(), device) : empty_tensor({0}, A.dtype(), device);
  if (nb == 0) return {U, S, Vh};
  if (k == 0) {  // an empty matrix: its full singular vectors are any orthonormal basis; PyTorch gives I
    if (compute_uv) {
      fill_identity(U);
      fill_identity(Vh);
    }
    return {U, S, Vh};
  }
  const Solver s = solver_on(dev);
  // Note [SVD on cuSOLVER]: F is A (m x n) or A^T (n x m), fm >= fn; gesvd gives F = Uf diag(S) VTf.
  const bool wide = m < n;
  const int64_t fm = std::max(m, n), fn = k;
  const int fmi = solver_int(op, fm), fni = int(fn);
  Tensor F = col_major_copy(wide ? mT(A) : A);
  const int64_t uf_cols = full ? fm : fn;  // Uf: fm x uf_cols; VTf: fn x fn
  Tensor Uf = compute_uv ? (wide ? col_major_empty(batch, fm, uf_cols, A.dtype(), device) : U) : Tensor();
  Tensor VTf = compute_uv ? (wide ? col_major_empty(batch, fn, fn, A.dtype(), device) : Vh) : Tensor();
  Tensor flags = int_zeros(dev, {2 * nb});  // gesvd's info per matrix, then a NaN flag per matrix
  nan_flags(dev, F, fm * fn, call_op<Tensor>(TP_OP("narrow"), flags, int64_t(0), nb, nb));
  const char jobu = !compute_uv ? 'N' : full ? 'A' : 'S', jobvt = compute_uv ? 'A' : 'N';
  dispatch_solver(A.dtype(), [&]<typename T>() {
    const int lwork = solver::gesvd_work(s, fmi, fni, ptr<T>(F));
    Tensor work = workspace<T>(s, lwork), rwork = workspace<T>(s, fn);
    for (int64_t b = 0; b < nb; ++b)
      solver::gesvd(s, jobu, jobvt, fmi, fni, ptr<T>(F) + b * fm * fn, fmi, ptr<T>(S) + b * fn,
                    compute_uv ? ptr<T>(Uf) + b * fm * uf_cols : nullptr, fmi,
                    compute_uv ? ptr<T>(VTf) + b * fn * fn : nullptr, fni, ptr<T>(work), lwork, ptr<T>(rwork),
                    ptr<int>(flags) + b);
  });
  if (compute_uv && wide) {  // A = VTf^T diag(S) Uf^T
    device_copy(U, mT(VTf));
    device_copy(Vh, mT(Uf));
  }
  std::vector<int> infos = read_infos(dev, flags, 2 * nb);
  for (int64_t b = 0; b < nb; ++b)
    if (infos[size_t(nb + b)]) infos[size_t(b)] = -1;  // the CPU's "non-finite values" error
  infos.resize(size_t(nb));
  check_infos(op, infos, A.dim() > 2, svd_failure_message, true);
  return {U, S, Vh};
}

// PyTorch's CUDA drivers (Note [SVD on cuSOLVER]).
void check_driver(const std::optional<std::string> &driver) {
  TP_CHECK(!driver || *driver == "gesvd" || *driver == "gesvdj" || *driver == "gesvda", Runtime,
           "torch.linalg.svd: unknown svd driver ", driver.value_or(""),
           " in svd_cusolver computation. Available drivers are gesvd, gesvdj, and gesvda.");
}

}  // namespace

static std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor &A, bool full_matrices,
                                                     std::optional<std::string> driver) {
  // the CPU's checks (it refuses any driver: that rule is CPU-only)
  call_op<void>(TP_OP("linalg_svd"), meta_like(A), full_matrices, std::optional<std::string>());
  check_driver(driver);
  return svd_impl("linalg.svd", A, true, full_matrices);
}

static Tensor linalg_svdvals(const Tensor &A, std::optional<std::string> driver) {
  call_op<void>(TP_OP("linalg_svdvals"), meta_like(A), std::optional<std::string>());
  check_driver(driver);
  return std::get<1>(svd_impl("linalg.svd", A, false, false));
}

// ---- eigh ---------------------------------------------------------------------------------------------------
// The caller has run the CPU op on meta (UPLO and the square, floating input checked).
static std::tuple<Tensor, Tensor> eigh_impl(const char *op, const Tensor &A, const std::string &UPLO, bool vectors) {
  const int dev = linalg_device(op, {A});
  DeviceGuard guard(dev);
  const int uplo = std::toupper(static_cast<unsigned char>(UPLO[0])) == 'U' ? CUBLAS_FILL_MODE_UPPER
                                                                            : CUBLAS_FILL_MODE_LOWER;
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), n = A.size(-1);
  Tensor W = empty_tensor(with_vector(batch, n), to_real(A.dtype()), A.device());
  Tensor V = col_major_copy(A);  // syevd overwrites A with the eigenvectors
  if (nb == 0 || n == 0) return {W, vectors ? V : Tensor()};
  const Solver s = solver_on(dev);
  const int ni = solver_int(op, n), jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  Tensor info = int_zeros(dev, {nb});
  dispatch_solver(A.dtype(), [&]<typename T>() {
    T *v = ptr<T>(V), *w = ptr<T>(W);
    const int lwork = solver::syevd_work(s, jobz, uplo, ni, v, ni, w);
    Tensor work = workspace<T>(s, lwork);
    for (int64_t b = 0; b < nb; ++b)
      solver::syevd(s, jobz, uplo, ni, v + b * n * n, ni, w + b * n, ptr<T>(work), lwork, ptr<int>(info) + b);
  });
  check_infos(op, read_infos(dev, info, nb), A.dim() > 2, eigh_failure_message);
  return {W, vectors ? V : Tensor()};
}

static std::tuple<Tensor, Tensor> linalg_eigh(const Tensor &A, std::string UPLO) {
  call_op<void>(TP_OP("linalg_eigh"), meta_like(A), UPLO);
  return eigh_impl("linalg.eigh", A, UPLO, true);
}
static Tensor linalg_eigvalsh(const Tensor &A, std::string UPLO) {
  call_op<void>(TP_OP("linalg_eigvalsh"), meta_like(A), UPLO);
  return std::get<0>(eigh_impl("linalg.eigh", A, UPLO, false));  // PyTorch names it eigh too
}

TP_LIBRARY(cuda_linalg_eig) {
  TP_IMPL(lib, "linalg_svd", CUDA, linalg_svd);
  TP_IMPL(lib, "linalg_svdvals", CUDA, linalg_svdvals);
  TP_IMPL(lib, "linalg_eigh", CUDA, linalg_eigh);
  TP_IMPL(lib, "linalg_eigvalsh", CUDA, linalg_eigvalsh);
}

}  // namespace tp::p10::cuda
