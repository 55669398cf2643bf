// linalg.h — what the CUDA linear-algebra ops (ops_linalg_*.cpp) share: the cuSOLVER and cuBLAS routines as
// float/double overloads, workspaces and info arrays, the host read of info values, and the helper kernels of
// cuda_kernels/linalg.cu.
//
// Where it sits: between the ops and cusolver.h / cublas.h. The ops share the CPU kernels' checks, layout and
// messages (kernels/linalg_common.h) and follow their structure line for line: each CPU kernel calls LAPACK once
// per matrix of a batch, each CUDA one calls cuSOLVER once per matrix on the same column-major copy.
//
// Note [Row-major matrices in cuSOLVER]
//   cuSOLVER, like LAPACK, reads and writes column-major matrices, and our tensors are row-major. A contiguous
//   row-major m x n buffer is, to a column-major routine, the n x m transpose; an op could factor that instead
//   (solve A^T, take the SVD of A^T). But every routine here overwrites its input, so a copy is made anyway,
//   and making it column-major costs nothing more: each op copies its input with col_major_copy (the CPU's Note
//   [LAPACK layout]: element (b, i, j) of a batch of m x n matrices at b*m*n + i + j*m, here on the device by
//   the CUDA copy_), and its results are the same column-major views with strides (..., 1, m) as the CPU's.
//   So cuSOLVER's leading dimension is always the row count and matrix b of a batch starts b*m*n elements in.
//   Transposes appear only where cuSOLVER lacks a case LAPACK has: gesvd needs m >= n (the SVD of A^T is taken,
//   ops_linalg_eig.cpp), and least squares of a wide A works on the QR of A^T (ops_linalg_qr.cpp).
//
// Note [Batches of matrices on cuSOLVER]
//   The legacy routines factor one matrix per call, so a batch is a loop on the host over its matrices, each
//   call queued on the current stream with one workspace (sized once: every matrix has the same shape) and its
//   own slot of the info array. cuSOLVER's batched routines (getrfBatched, potrfBatched, syevjBatched, ...) and
//   cuBLAS's would spare the launches for batches of small matrices; they are a later optimisation.
//
// Note [Info on the host]
//   Each routine writes its info (0, or the index of a zero pivot, a non-positive minor, ...) to the device. The
//   ops that raise on it (inv, solve, cholesky, eigh, svd, lstsq, cholesky_inverse) copy the info array to the
//   host once, after the whole batch, which waits for the stream (as PyTorch does); the _ex variants return it
//   as a CUDA tensor and never wait. A routine that only reports illegal arguments (getrs, potrs, orgqr, ormqr)
//   writes into a scratch int, never into the info array of the factorisation before it.
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cublas.h"
#include "cuda/cusolver.h"
#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "kernels/linalg_common.h"

namespace tp::p10::cuda {

// The device, stream and cuSOLVER handle of one op (its device is current: DeviceGuard).
struct Solver {
  int dev;
  Stream stream;
  const CusolverApi *api;
  cusolverDnHandle_t handle;
};
Solver solver_on(int dev);

// The device of an op's tensors, made current by the caller's DeviceGuard; NotImplementedError for complex
// dtypes, which have no CUDA kernels (after the CPU op's checks on meta copies have run).
int linalg_device(const char *op, const std::vector<Tensor> &tensors);

// Run f.template operator()<T>() with T float or double (after check_real and the CPU checks, which leave
// only those).
template <typename F> void dispatch_solver(ScalarType t, const F &f) {
  if (t == ScalarType::Float32) f.template operator()<float>();
  else f.template operator()<double>();
}

template <typename T> T *ptr(const Tensor &t) { return static_cast<T *>(t.data_ptr()); }
template <typename T> constexpr ScalarType dtype_of() {
  return std::is_same_v<T, float> ? ScalarType::Float32 : ScalarType::Float64;
}
// n elements of T (at least one) on the op's device, from the caching allocator.
template <typename T> Tensor workspace(const Solver &s, int64_t n) {
  return empty_tensor({std::max<int64_t>(n, 1)}, dtype_of<T>(), Device{DeviceType::CUDA, s.dev});
}
// The first n int32 values of a contiguous CUDA tensor of device `dev`, on the host (waits for the current
// stream: Note [Info on the host]).
std::vector<int> read_infos(int dev, const Tensor &info, int64_t n);

// cuSOLVER's 32-bit indexing: NotImplementedError naming the op past INT_MAX.
int solver_int(const char *op, int64_t v);

// ---- the routines, one overload per dtype (as lapack.h's on the CPU) -----------------------------------------
// Each checks the returned status (cusolver_check / cublas_check name the routine). Sizes are cuSOLVER's: `lwork`
// in elements, leading dimensions >= 1.
namespace solver {
// cusolverDn<P><fn>(handle, args...), its status checked; and the workspace query of <fn> (lwork in elements).
#define TP_SOLVER_CALL(P, fn, ...) \
  cusolver_check(s.api->cusolverDn##P##fn(s.handle, __VA_ARGS__), "cusolverDn" #P #fn)
#define TP_SOLVER_WORK(P, fn, ...)                                                                             \
  int lw = 0;                                                                                                  \
  cusolver_check(s.api->cusolverDn##P##fn##_bufferSize(s.handle, __VA_ARGS__, &lw),                           \
                 "cusolverDn" #P #fn "_bufferSize");                                                           \
  return lw;

#define TP_SOLVER_OVERLOADS(P, T)                                                                              \
  inline int getrf_work(const Solver &s, int m, int n, T *a, int lda) { TP_SOLVER_WORK(P, getrf, m, n, a, lda) } \
  inline void getrf(const Solver &s, int m, int n, T *a, int lda, T *work, int *ipiv, int *info) {           \
    TP_SOLVER_CALL(P, getrf, m, n, a, lda, work, ipiv, info);                                                  \
  }                                                                                                            \
  inline void getrs(const Solver &s, int n, int nrhs, const T *a, int lda, const int *ipiv, T *b, int ldb,   \
                    int *info) {                                                                               \
    TP_SOLVER_CALL(P, getrs, CUBLAS_OP_N, n, nrhs, a, lda, ipiv, b, ldb, info);                                \
  }                                                                                                            \
  inline int potrf_work(const Solver &s, int uplo, int n, T *a, int lda) {                                   \
    TP_SOLVER_WORK(P, potrf, uplo, n, a, lda)                                                                  \
  }                                                                                                            \
  inline void potrf(const Solver &s, int uplo, int n, T *a, int lda, T *work, int lwork, int *info) {        \
    TP_SOLVER_CALL(P, potrf, uplo, n, a, lda, work, lwork, info);                                              \
  }                                                                                                            \
  inline void potrs(const Solver &s, int uplo, int n, int nrhs, const T *a, int lda, T *b, int ldb, int *info) { \
    TP_SOLVER_CALL(P, potrs, uplo, n, nrhs, a, lda, b, ldb, info);                                             \
  }                                                                                                            \
  inline int potri_work(const Solver &s, int uplo, int n, T *a, int lda) {                                   \
    TP_SOLVER_WORK(P, potri, uplo, n, a, lda)                                                                  \
  }                                                                                                            \
  inline void potri(const Solver &s, int uplo, int n, T *a, int lda, T *work, int lwork, int *info) {        \
    TP_SOLVER_CALL(P, potri, uplo, n, a, lda, work, lwork, info);                                              \
  }                                                                                                            \
  inline int geqrf_work(const Solver &s, int m, int n, T *a, int lda) { TP_SOLVER_WORK(P, geqrf, m, n, a, lda) } \
  inline void geqrf(const Solver &s, int m, int n, T *a, int lda, T *tau, T *work, int lwork, int *info) {   \
    TP_SOLVER_CALL(P, geqrf, m, n, a, lda, tau, work, lwork, info);                                            \
  }                                                                                                            \
  inline int orgqr_work(const Solver &s, int m, int n, int k, const T *a, int lda, const T *tau) {           \
    TP_SOLVER_WORK(P, orgqr, m, n, k, a, lda, tau)                                                             \
  }                                                                                                            \
  inline void orgqr(const Solver &s, int m, int n, int k, T *a, int lda, const T *tau, T *work, int lwork,   \
                    int *info) {                                                                               \
    TP_SOLVER_CALL(P, orgqr, m, n, k, a, lda, tau, work, lwork, info);                                         \
  }                                                                                                            \
  inline int ormqr_work(const Solver &s, int side, int trans, int m, int n, int k, const T *a, int lda,      \
                        const T *tau, const T *c, int ldc) {                                                   \
    TP_SOLVER_WORK(P, ormqr, side, trans, m, n, k, a, lda, tau, c, ldc)                                        \
  }                                                                                                            \
  inline void ormqr(const Solver &s, int side, int trans, int m, int n, int k, const T *a, int lda,          \
                    const T *tau, T *c, int ldc, T *work, int lwork, int *info) {                              \
    TP_SOLVER_CALL(P, ormqr, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info);                    \
  }                                                                                                            \
  /* gesvd's query takes no matrix: the dummy pointer picks the dtype's overload */                            \
  inline int gesvd_work(const Solver &s, int m, int n, T *) { TP_SOLVER_WORK(P, gesvd, m, n) }                 \
  inline void gesvd(const Solver &s, char jobu, char jobvt, int m, int n, T *a, int lda, T *sv, T *u, int ldu, \
                    T *vt, int ldvt, T *work, int lwork, T *rwork, int *info) {                                \
    TP_SOLVER_CALL(P, gesvd, static_cast<signed char>(jobu), static_cast<signed char>(jobvt), m, n, a, lda, sv, \
                   u, ldu, vt, ldvt, work, lwork, rwork, info);                                                \
  }                                                                                                            \
  inline int syevd_work(const Solver &s, int jobz, int uplo, int n, const T *a, int lda, const T *w) {        \
    TP_SOLVER_WORK(P, syevd, jobz, uplo, n, a, lda, w)                                                         \
  }                                                                                                            \
  inline void syevd(const Solver &s, int jobz, int uplo, int n, T *a, int lda, T *w, T *work, int lwork,     \
                    int *info) {                                                                               \
    TP_SOLVER_CALL(P, syevd, jobz, uplo, n, a, lda, w, work, lwork, info);                                     \
  }                                                                                                            \
  /* B = op(A)^-1 B for a triangular, non-unit A: cuBLAS's trsm, on the op's stream */                         \
  inline void trsm_left(const Solver &s, int uplo, int trans, int m, int n, const T *a, int lda, T *b, int ldb) { \
    const T one = T(1);                                                                                        \
    cublas_check(cublas().cublas##P##trsm_v2(cublas_handle(s.dev, s.stream.handle), CUBLAS_SIDE_LEFT, uplo,    \
                                              trans, CUBLAS_DIAG_NON_UNIT, m, n, &one, a, lda, b, ldb),        \
                 "cublas" #P "trsm_v2");                                                                       \
  }
TP_SOLVER_OVERLOADS(S, float)
TP_SOLVER_OVERLOADS(D, double)
#undef TP_SOLVER_OVERLOADS
#undef TP_SOLVER_WORK
#undef TP_SOLVER_CALL
}  // namespace solver

// Copy the triangle potri wrote (the upper one when `from_upper`) of every n x n column-major matrix of `a` onto
// the other one.
void mirror_triangle(int dev, const Tensor &a, int64_t n, bool from_upper);
// From every n x n LU factorisation of `lu` (pivots `piv`, n per matrix): det into `out` (kind 0); sign into
// `out` and log|det| into `logabs` (kind 1); log(det) into `out` (kind 2). DetKind of the CPU's linalg_lu.cpp.
void det_from_lu(int dev, const Tensor &lu, const Tensor &piv, int64_t batch, int64_t n, const Tensor &out,
                 const Tensor &logabs, int kind);
// info[b] = 1 + the first i < k with a zero diagonal entry in matrix b (leading dimension ld, `stride` elements
// apart), else 0: LAPACK trtrs's check of a triangular factor.
void zero_diagonal_info(int dev, const Tensor &a, int64_t batch, int64_t k, int64_t ld, int64_t stride,
                        const Tensor &info);
// flag[e / per] = 1 for every NaN element e of the contiguous `a` (numel elements).
void nan_flags(int dev, const Tensor &a, int64_t per, const Tensor &flag);

}  // namespace tp::p10::cuda
