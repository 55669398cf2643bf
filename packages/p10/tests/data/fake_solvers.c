// fake_solvers.c — stand-ins for cuBLAS and cuSOLVER, for test_cuda_linalg_host.py (no GPU needed).
//
// Every entry point that csrc/cuda/cublas.h and cusolver.h load is here. Device memory is host memory (the
// stand-in driver of test_cuda_host_paths.py), and nothing is computed: each routine checks its arguments as
// LAPACK's xerbla would (sizes, leading dimensions, options, non-null pointers, a workspace at least as large as
// its query asked for, gesvd's m >= n) and returns CUSOLVER_STATUS_INVALID_VALUE (3), with a line on stderr,
// when one is wrong. The factorisations report the info in $TP_FAKE_LINALG_INFO (0 when unset).
#include <stdio.h>
#include <stdlib.h>
typedef int S;
#define NEED(c, ...) do { if (!(c)) { fprintf(stderr, "stand-in: " __VA_ARGS__); fputc('\n', stderr); \
                                      return 3; } } while (0)
static int info_value(void) { const char *e = getenv("TP_FAKE_LINALG_INFO"); return e ? atoi(e) : 0; }
static int max1(int v) { return v > 1 ? v : 1; }
static int min2(int a, int b) { return a < b ? a : b; }
static int uplo_ok(int u) { return u == 0 || u == 1; }

/* ---- cuBLAS: what load_cublas resolves; trsm checked ---- */
S cublasCreate_v2(void **h) { *h = malloc(1); return 0; }
S cublasDestroy_v2(void *h) { return 0; }
S cublasSetStream_v2(void *h, void *s) { return 0; }
S cublasSetWorkspace_v2(void *h, void *w, size_t b) { return 0; }
S cublasGetProperty(int t, int *v) { *v = t == 0 ? 13 : 0; return 0; }
const char *cublasGetStatusName(S s) { return "CUBLAS_STATUS_INVALID_VALUE"; }
const char *cublasGetStatusString(S s) { return "stand-in"; }
S cublasGemmEx(void) { return 0; }
S cublasGemmStridedBatchedEx(void) { return 0; }
#define TRSM(name, T)                                                                                       \
  S name(void *h, int side, int uplo, int trans, int diag, int m, int n, const T *alpha, const T *a, int lda, \
         T *b, int ldb) {                                                                                   \
    NEED(h && alpha && a && b, #name ": null pointer");                                                     \
    NEED((side == 0 || side == 1) && uplo_ok(uplo) && trans >= 0 && trans <= 2 && (diag == 0 || diag == 1), \
         #name ": bad option");                                                                             \
    NEED(m >= 0 && n >= 0, #name ": m %d n %d", m, n);                                                      \
    NEED(lda >= max1(side == 0 ? m : n) && ldb >= max1(m), #name ": lda %d ldb %d (m %d n %d)", lda, ldb, m, n); \
    return 0;                                                                                               \
  }
TRSM(cublasStrsm_v2, float)
TRSM(cublasDtrsm_v2, double)

/* ---- cuSOLVER ---- */
S cusolverDnCreate(void **h) { *h = malloc(1); return 0; }
S cusolverDnDestroy(void *h) { return 0; }
S cusolverDnSetStream(void *h, void *s) { return 0; }
S cusolverGetProperty(int t, int *v) { *v = t == 0 ? 12 : 0; return 0; }

/* The workspace each query asks for (elements); the routine checks it got at least that much. */
static int w_getrf(int m, int n) { return m * n + 1; }
static int w_potrf(int n) { return n * n + 2; }
static int w_geqrf(int m, int n) { return m + n + 3; }
static int w_orgqr(int m, int n) { return m * n + 4; }
static int w_ormqr(int m, int n) { return m + n + 5; }
static int w_gesvd(int m, int n) { return 5 * m + n + 6; }
static int w_syevd(int n) { return n * n + 7; }

#define SOLVERS(P, T)                                                                                      \
  S cusolverDn##P##getrf_bufferSize(void *h, int m, int n, T *a, int lda, int *lw) {                      \
    NEED(h && a && lw && m > 0 && n > 0 && lda >= max1(m), "getrf_bufferSize: m %d n %d lda %d", m, n, lda); \
    *lw = w_getrf(m, n);                                                                                   \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##getrf(void *h, int m, int n, T *a, int lda, T *work, int *ipiv, int *info) {           \
    NEED(h && a && work && ipiv && info && m > 0 && n > 0 && lda >= max1(m), "getrf: m %d n %d lda %d", m, n, lda); \
    for (int i = 0; i < min2(m, n); ++i) ipiv[i] = i + 1;                                                  \
    *info = info_value();                                                                                  \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##getrs(void *h, int trans, int n, int nrhs, const T *a, int lda, const int *ipiv, T *b, \
                         int ldb, int *info) {                                                             \
    NEED(h && a && ipiv && b && info && trans == 0, "getrs: null pointer or trans %d", trans);             \
    NEED(n > 0 && nrhs > 0 && lda >= max1(n) && ldb >= max1(n), "getrs: n %d nrhs %d lda %d ldb %d", n, nrhs, \
         lda, ldb);                                                                                        \
    *info = 0;                                                                                             \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##potrf_bufferSize(void *h, int uplo, int n, T *a, int lda, int *lw) {                   \
    NEED(h && a && lw && uplo_ok(uplo) && n > 0 && lda >= max1(n), "potrf_bufferSize: n %d lda %d", n, lda); \
    *lw = w_potrf(n);                                                                                      \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##potrf(void *h, int uplo, int n, T *a, int lda, T *work, int lwork, int *info) {        \
    NEED(h && a && work && info && uplo_ok(uplo) && n > 0 && lda >= max1(n), "potrf: n %d lda %d", n, lda); \
    NEED(lwork >= w_potrf(n), "potrf: lwork %d", lwork);                                                   \
    *info = info_value();                                                                                  \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##potrs(void *h, int uplo, int n, int nrhs, const T *a, int lda, T *b, int ldb, int *info) { \
    NEED(h && a && b && info && uplo_ok(uplo), "potrs: null pointer or bad uplo");                         \
    NEED(n > 0 && nrhs > 0 && lda >= max1(n) && ldb >= max1(n), "potrs: n %d nrhs %d lda %d ldb %d", n, nrhs, \
         lda, ldb);                                                                                        \
    *info = 0;                                                                                             \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##potri_bufferSize(void *h, int uplo, int n, T *a, int lda, int *lw) {                   \
    NEED(h && a && lw && uplo_ok(uplo) && n > 0 && lda >= max1(n), "potri_bufferSize: n %d lda %d", n, lda); \
    *lw = w_potrf(n);                                                                                      \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##potri(void *h, int uplo, int n, T *a, int lda, T *work, int lwork, int *info) {        \
    NEED(h && a && work && info && uplo_ok(uplo) && n > 0 && lda >= max1(n), "potri: n %d lda %d", n, lda); \
    NEED(lwork >= w_potrf(n), "potri: lwork %d", lwork);                                                   \
    *info = info_value();                                                                                  \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##geqrf_bufferSize(void *h, int m, int n, T *a, int lda, int *lw) {                      \
    NEED(h && a && lw && m > 0 && n > 0 && lda >= max1(m), "geqrf_bufferSize: m %d n %d lda %d", m, n, lda); \
    *lw = w_geqrf(m, n);                                                                                   \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##geqrf(void *h, int m, int n, T *a, int lda, T *tau, T *work, int lwork, int *info) {   \
    NEED(h && a && tau && work && info && m > 0 && n > 0 && lda >= max1(m), "geqrf: m %d n %d lda %d", m, n, lda); \
    NEED(lwork >= w_geqrf(m, n), "geqrf: lwork %d", lwork);                                                \
    *info = 0;                                                                                             \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##orgqr_bufferSize(void *h, int m, int n, int k, const T *a, int lda, const T *tau, int *lw) { \
    NEED(h && a && tau && lw && m >= n && n >= k && k > 0 && lda >= max1(m),                               \
         "orgqr_bufferSize: m %d n %d k %d lda %d", m, n, k, lda);                                         \
    *lw = w_orgqr(m, n);                                                                                   \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##orgqr(void *h, int m, int n, int k, T *a, int lda, const T *tau, T *work, int lwork,   \
                         int *info) {                                                                      \
    NEED(h && a && tau && work && info && m >= n && n >= k && k > 0 && lda >= max1(m),                    \
         "orgqr: m %d n %d k %d lda %d", m, n, k, lda);                                                    \
    NEED(lwork >= w_orgqr(m, n), "orgqr: lwork %d", lwork);                                                \
    *info = 0;                                                                                             \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##ormqr_bufferSize(void *h, int side, int trans, int m, int n, int k, const T *a, int lda, \
                                    const T *tau, const T *c, int ldc, int *lw) {                          \
    NEED(h && a && tau && c && lw && side == 0 && (trans == 0 || trans == 1), "ormqr_bufferSize: options"); \
    NEED(m > 0 && n > 0 && k > 0 && k <= m && lda >= max1(m) && ldc >= max1(m),                            \
         "ormqr_bufferSize: m %d n %d k %d lda %d ldc %d", m, n, k, lda, ldc);                             \
    *lw = w_ormqr(m, n);                                                                                   \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##ormqr(void *h, int side, int trans, int m, int n, int k, const T *a, int lda, const T *tau, \
                         T *c, int ldc, T *work, int lwork, int *info) {                                   \
    NEED(h && a && tau && c && work && info && side == 0 && (trans == 0 || trans == 1), "ormqr: options"); \
    NEED(m > 0 && n > 0 && k > 0 && k <= m && lda >= max1(m) && ldc >= max1(m),                            \
         "ormqr: m %d n %d k %d lda %d ldc %d", m, n, k, lda, ldc);                                        \
    NEED(lwork >= w_ormqr(m, n), "ormqr: lwork %d", lwork);                                                \
    *info = 0;                                                                                             \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##gesvd_bufferSize(void *h, int m, int n, int *lw) {                                     \
    NEED(h && lw && m >= n && n > 0, "gesvd_bufferSize: m %d n %d (m >= n > 0 needed)", m, n);             \
    *lw = w_gesvd(m, n);                                                                                   \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##gesvd(void *h, signed char jobu, signed char jobvt, int m, int n, T *a, int lda, T *s,  \
                         T *u, int ldu, T *vt, int ldvt, T *work, int lwork, T *rwork, int *info) {        \
    NEED(h && a && s && work && info && m >= n && n > 0 && lda >= max1(m), "gesvd: m %d n %d lda %d", m, n, lda); \
    NEED(jobu == 'A' || jobu == 'S' || jobu == 'N', "gesvd: jobu %c", jobu);                               \
    NEED(jobvt == 'A' || jobvt == 'N', "gesvd: jobvt %c", jobvt);                                          \
    NEED(jobu == 'N' || (u && ldu >= max1(m)), "gesvd: U %p ldu %d", (void *)u, ldu);                      \
    NEED(jobvt == 'N' || (vt && ldvt >= max1(n)), "gesvd: VT %p ldvt %d", (void *)vt, ldvt);               \
    NEED(ldu >= 1 && ldvt >= 1 && lwork >= w_gesvd(m, n), "gesvd: ldu %d ldvt %d lwork %d", ldu, ldvt, lwork); \
    *info = info_value();                                                                                  \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##syevd_bufferSize(void *h, int jobz, int uplo, int n, const T *a, int lda, const T *w, int *lw) { \
    NEED(h && a && w && lw && (jobz == 0 || jobz == 1) && uplo_ok(uplo) && n > 0 && lda >= max1(n),        \
         "syevd_bufferSize: n %d lda %d", n, lda);                                                         \
    *lw = w_syevd(n);                                                                                      \
    return 0;                                                                                              \
  }                                                                                                        \
  S cusolverDn##P##syevd(void *h, int jobz, int uplo, int n, T *a, int lda, T *w, T *work, int lwork, int *info) { \
    NEED(h && a && w && work && info && (jobz == 0 || jobz == 1) && uplo_ok(uplo) && n > 0 && lda >= max1(n), \
         "syevd: n %d lda %d", n, lda);                                                                    \
    NEED(lwork >= w_syevd(n), "syevd: lwork %d", lwork);                                                   \
    *info = info_value();                                                                                  \
    return 0;                                                                                              \
  }
SOLVERS(S, float)
SOLVERS(D, double)
