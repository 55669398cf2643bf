// linalg_svd.cpp — spectral decompositions: the singular value decomposition A = U diag(S) Vh (LAPACK gesdd) as
// linalg_svd, linalg_svdvals and the old tp.svd (which returns V, not Vh), and the eigendecomposition of
// Hermitian matrices A = V diag(w) V^H (LAPACK syevd/heevd) as linalg_eigh and linalg_eigvalsh.
//
// Where it sits: kernels of tp.linalg.svd/svdvals/eigh/eigvalsh (src/tensorplay_p10/linalg.py) and tp.svd; the
// composites pinv, matrix_rank and the spectral matrix norms (linalg_pinv.cpp, linalg_norm.cpp) build on them.
// Inputs are copied into LAPACK's layout (Note [LAPACK layout] in linalg_common.h); singular values come back
// in descending order, eigenvalues in ascending order, as LAPACK (and PyTorch) give them. Singular vectors
// are unique only up to sign (a phase for complex), so tests check reconstruction and orthogonality.
#include "kernels/lapack.h"
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

namespace {

// U (m x ucols), S (k) and Vh (vrows x n) of every matrix; U and Vh are empty ({0}) without compute_uv.
std::tuple<Tensor, Tensor, Tensor> svd_impl(const char *op, const Tensor &A, bool compute_uv, bool full) {
  check_matrix(op, A);
  check_dtype(op, A);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  const Device dev = A.device();
  Tensor U = compute_uv ? col_major_empty(batch, m, ucols, A.dtype(), dev) : empty_tensor({0}, A.dtype(), dev);
  Tensor S = empty_tensor(with_vector(batch, k), to_real(A.dtype()), dev);
  Tensor Vh = compute_uv ? col_major_empty(batch, vrows, n, A.dtype(), dev) : empty_tensor({0}, A.dtype(), dev);
  if (dev.is_meta() || nb == 0) return {U, S, Vh};
  if (k == 0) {  // an empty matrix: its full singular vectors are any orthonormal basis; PyTorch gives I
    if (compute_uv) {
      fill_identity(U);
      fill_identity(Vh);
    }
    return {U, S, Vh};
  }
  Tensor F = col_major_copy(A);
  const int mi = lapack_int(op, m), ni = lapack_int(op, n);
  const char jobz = !compute_uv ? 'N' : full ? 'A' : 'S';
  const int ldu = mi, ldvt = std::max(int(vrows), 1);
  std::vector<int> infos(size_t(nb), 0);
  dispatch_lapack(A.dtype(), [&]<typename T>() {
    using R = real_t<T>;
    // rwork: LAPACK's documented minimum for the complex routine (unused by the real one)
    const int64_t lrwork = jobz == 'N' ? 7 * k : k * std::max(5 * k + 7, 2 * std::max(m, n) + 2 * k + 1);
    T query;
    int qinfo, idummy;
    R rdummy;
    lapack::gesdd(jobz, mi, ni, F.data<T>(), mi, S.data<R>(), compute_uv ? U.data<T>() : nullptr, ldu,
                  compute_uv ? Vh.data<T>() : nullptr, ldvt, &query, -1, &rdummy, &idummy, &qinfo);
    const int lwork = work_size(query);
    for_each_matrix(nb, std::max(m, n), [&](int64_t b) {
      std::vector<T> work(static_cast<size_t>(lwork));
      std::vector<R> rwork(static_cast<size_t>(std::max<int64_t>(lrwork, 1)));
      std::vector<int> iwork(static_cast<size_t>(8 * k));
      lapack::gesdd(jobz, mi, ni, F.data<T>() + b * m * n, mi, S.data<R>() + b * k,
                    compute_uv ? U.data<T>() + b * m * ucols : nullptr, ldu,
                    compute_uv ? Vh.data<T>() + b * vrows * n : nullptr, ldvt, work.data(), lwork, rwork.data(),
                    iwork.data(), &infos[b]);
    });
  });
  check_infos(op, infos, A.dim() > 2, svd_failure_message, true);
  return {U, S, Vh};
}

void check_no_driver(const std::optional<std::string> &driver) {
  TP_CHECK(!driver, Runtime,
           "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
}

}  // namespace

static std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor &A, bool full_matrices,
                                                     std::optional<std::string> driver) {
  check_no_driver(driver);
  return svd_impl("linalg.svd", A, true, full_matrices);
}

static Tensor linalg_svdvals(const Tensor &A, std::optional<std::string> driver) {
  check_no_driver(driver);
  return std::get<1>(svd_impl("linalg.svd", A, false, false));
}

// The old API: V instead of Vh, `some` instead of full_matrices, and with compute_uv=False zero-filled U (m x m)
// and V (n x n), as PyTorch documents. A Composite (Note [Old linalg spellings] in linalg_lu.cpp).
static std::tuple<Tensor, Tensor, Tensor> svd(const Tensor &A, bool some, bool compute_uv) {
  const std::optional<std::string> driver;
  if (!compute_uv) {
    Tensor S = call_op<Tensor>(TP_OP("linalg_svdvals"), A, driver);
    Shape batch = batch_shape(A);
    Tensor U = call_op<Tensor>(TP_OP("full"), with_matrix(batch, A.size(-2), A.size(-2)), Scalar(0),
                               std::optional(A.dtype()), std::optional(A.device()));
    Tensor V = call_op<Tensor>(TP_OP("full"), with_matrix(batch, A.size(-1), A.size(-1)), Scalar(0),
                               std::optional(A.dtype()), std::optional(A.device()));
    return {U, S, V};
  }
  auto [U, S, Vh] = call_op<std::tuple<Tensor, Tensor, Tensor>>(TP_OP("linalg_svd"), A, !some, driver);
  return {U, S, mH(Vh)};
}

// ---- eigh ---------------------------------------------------------------------------------------------------
static std::tuple<Tensor, Tensor> eigh_impl(const char *op, const Tensor &A, const std::string &UPLO, bool vectors) {
  const char uplo = UPLO.size() == 1 ? char(std::toupper((unsigned char)UPLO[0])) : '?';
  TP_CHECK(uplo == 'L' || uplo == 'U', Runtime, "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  check_square_float(op, A);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), n = A.size(-1);
  Tensor W = empty_tensor(with_vector(batch, n), to_real(A.dtype()), A.device());
  Tensor V = col_major_copy(A);  // syevd overwrites A with the eigenvectors
  if (A.device().is_meta() || nb == 0 || n == 0) return {W, vectors ? V : Tensor()};
  const int ni = lapack_int(op, n);
  const char jobz = vectors ? 'V' : 'N';
  std::vector<int> infos(size_t(nb), 0);
  dispatch_lapack(A.dtype(), [&]<typename T>() {
    using R = real_t<T>;
    T wq;
    R rq = 0;
    int iq = 0, qinfo;
    lapack::syevd(jobz, uplo, ni, V.data<T>(), ni, W.data<R>(), &wq, -1, &rq, -1, &iq, -1, &qinfo);
    const int lwork = work_size(wq), lrwork = std::max(1, int(rq)), liwork = std::max(1, iq);
    for_each_matrix(nb, n, [&](int64_t b) {
      std::vector<T> work(static_cast<size_t>(lwork));
      std::vector<R> rwork(static_cast<size_t>(lrwork));
      std::vector<int> iwork(static_cast<size_t>(liwork));
      lapack::syevd(jobz, uplo, ni, V.data<T>() + b * n * n, ni, W.data<R>() + b * n, work.data(), lwork,
                    rwork.data(), lrwork, iwork.data(), liwork, &infos[b]);
    });
  });
  check_infos(op, infos, A.dim() > 2, eigh_failure_message);
  return {W, vectors ? V : Tensor()};
}

static std::tuple<Tensor, Tensor> linalg_eigh(const Tensor &A, std::string UPLO) {
  return eigh_impl("linalg.eigh", A, UPLO, true);
}
static Tensor linalg_eigvalsh(const Tensor &A, std::string UPLO) {
  return std::get<0>(eigh_impl("linalg.eigh", A, UPLO, false));  // PyTorch names it eigh too
}

TP_LIBRARY(linalg_svd) {
  lib.def("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)");
  lib.def("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor");
  lib.def("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)");
  lib.def("linalg_eigh(Tensor A, str UPLO='L') -> (Tensor eigenvalues, Tensor eigenvectors)");
  lib.def("linalg_eigvalsh(Tensor A, str UPLO='L') -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<linalg_svd>(lib, "linalg_svd", key, __LINE__);
    impl_typed<linalg_svdvals>(lib, "linalg_svdvals", key, __LINE__);
    impl_typed<linalg_eigh>(lib, "linalg_eigh", key, __LINE__);
    impl_typed<linalg_eigvalsh>(lib, "linalg_eigvalsh", key, __LINE__);
  }
  TP_IMPL(lib, "svd", Composite, svd);
}

}  // namespace tp::p10
