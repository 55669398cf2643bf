// lapack.h — the LAPACK routines tp.linalg uses, from the scipy-openblas32 wheel, behind C++ overloads.
//
// Where it sits: below kernels/linalg_*.cpp. The wheel that gives blas.cpp its GEMM also carries LAPACK, with
// every symbol prefixed `scipy_` (scipy_dgetrf_, ...) and 32-bit integers. Its own lapack.h declares the
// unprefixed names, so we declare the few routines we call here. They use the Fortran calling convention:
// every argument by pointer, matrices column-major, and one hidden length argument per character argument,
// appended at the end (gfortran's convention; the value is always 1 here).
//
// The overloads in namespace lapack (getrf(...) for float, double, complex64 and complex128) let a kernel
// written once as a template call the right s/d/c/z routine. Complex routines that need a real workspace
// (rwork) take it as an extra argument; the real ones ignore it, so templates call one signature.
#pragma once
#include <complex>
#include <cstddef>

namespace tp::p10::lapack {

using cf = std::complex<float>;
using cd = std::complex<double>;
using fstr = std::size_t;  // hidden Fortran string length

extern "C" {
#define TP_LAPACK_GETRF(p, T) void scipy_##p##getrf_(const int *m, const int *n, T *a, const int *lda, int *ipiv, int *info);
#define TP_LAPACK_GETRI(p, T)                                                                                    \
  void scipy_##p##getri_(const int *n, T *a, const int *lda, const int *ipiv, T *work, const int *lwork, int *info);
#define TP_LAPACK_GETRS(p, T)                                                                                    \
  void scipy_##p##getrs_(const char *trans, const int *n, const int *nrhs, const T *a, const int *lda,            \
                         const int *ipiv, T *b, const int *ldb, int *info, fstr);
#define TP_LAPACK_POTRF(p, T) void scipy_##p##potrf_(const char *uplo, const int *n, T *a, const int *lda, int *info, fstr);
#define TP_LAPACK_POTRS(p, T)                                                                                    \
  void scipy_##p##potrs_(const char *uplo, const int *n, const int *nrhs, const T *a, const int *lda, T *b,        \
                         const int *ldb, int *info, fstr);
#define TP_LAPACK_POTRI(p, T) void scipy_##p##potri_(const char *uplo, const int *n, T *a, const int *lda, int *info, fstr);
#define TP_LAPACK_GEQRF(p, T)                                                                                    \
  void scipy_##p##geqrf_(const int *m, const int *n, T *a, const int *lda, T *tau, T *work, const int *lwork,     \
                         int *info);
#define TP_LAPACK_ORGQR(name, T)                                                                                 \
  void scipy_##name##_(const int *m, const int *n, const int *k, T *a, const int *lda, const T *tau, T *work,     \
                       const int *lwork, int *info);
#define TP_LAPACK_GELS(p, T)                                                                                     \
  void scipy_##p##gels_(const char *trans, const int *m, const int *n, const int *nrhs, T *a, const int *lda, T *b, \
                        const int *ldb, T *work, const int *lwork, int *info, fstr);
TP_LAPACK_GETRF(s, float) TP_LAPACK_GETRF(d, double) TP_LAPACK_GETRF(c, cf) TP_LAPACK_GETRF(z, cd)
TP_LAPACK_GETRI(s, float) TP_LAPACK_GETRI(d, double) TP_LAPACK_GETRI(c, cf) TP_LAPACK_GETRI(z, cd)
TP_LAPACK_GETRS(s, float) TP_LAPACK_GETRS(d, double) TP_LAPACK_GETRS(c, cf) TP_LAPACK_GETRS(z, cd)
TP_LAPACK_POTRF(s, float) TP_LAPACK_POTRF(d, double) TP_LAPACK_POTRF(c, cf) TP_LAPACK_POTRF(z, cd)
TP_LAPACK_POTRS(s, float) TP_LAPACK_POTRS(d, double) TP_LAPACK_POTRS(c, cf) TP_LAPACK_POTRS(z, cd)
TP_LAPACK_POTRI(s, float) TP_LAPACK_POTRI(d, double) TP_LAPACK_POTRI(c, cf) TP_LAPACK_POTRI(z, cd)
TP_LAPACK_GEQRF(s, float) TP_LAPACK_GEQRF(d, double) TP_LAPACK_GEQRF(c, cf) TP_LAPACK_GEQRF(z, cd)
TP_LAPACK_ORGQR(sorgqr, float) TP_LAPACK_ORGQR(dorgqr, double) TP_LAPACK_ORGQR(cungqr, cf) TP_LAPACK_ORGQR(zungqr, cd)
TP_LAPACK_GELS(s, float) TP_LAPACK_GELS(d, double) TP_LAPACK_GELS(c, cf) TP_LAPACK_GELS(z, cd)
#undef TP_LAPACK_GETRF
#undef TP_LAPACK_GETRI
#undef TP_LAPACK_GETRS
#undef TP_LAPACK_POTRF
#undef TP_LAPACK_POTRS
#undef TP_LAPACK_POTRI
#undef TP_LAPACK_GEQRF
#undef TP_LAPACK_ORGQR
#undef TP_LAPACK_GELS

// SVD by divide and conquer. R is the real type; complex versions take rwork.
void scipy_sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
                   const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork, int *info,
                   fstr);
void scipy_dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
                   const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork,
                   int *info, fstr);
void scipy_cgesdd_(const char *jobz, const int *m, const int *n, cf *a, const int *lda, float *s, cf *u,
                   const int *ldu, cf *vt, const int *ldvt, cf *work, const int *lwork, float *rwork, int *iwork,
                   int *info, fstr);
void scipy_zgesdd_(const char *jobz, const int *m, const int *n, cd *a, const int *lda, double *s, cd *u,
                   const int *ldu, cd *vt, const int *ldvt, cd *work, const int *lwork, double *rwork, int *iwork,
                   int *info, fstr);

// Symmetric / Hermitian eigendecomposition by divide and conquer.
void scipy_ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w,
                   float *work, const int *lwork, int *iwork, const int *liwork, int *info, fstr, fstr);
void scipy_dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                   double *work, const int *lwork, int *iwork, const int *liwork, int *info, fstr, fstr);
void scipy_cheevd_(const char *jobz, const char *uplo, const int *n, cf *a, const int *lda, float *w, cf *work,
                   const int *lwork, float *rwork, const int *lrwork, int *iwork, const int *liwork, int *info, fstr,
                   fstr);
void scipy_zheevd_(const char *jobz, const char *uplo, const int *n, cd *a, const int *lda, double *w, cd *work,
                   const int *lwork, double *rwork, const int *lrwork, int *iwork, const int *liwork, int *info,
                   fstr, fstr);

// Least squares: gelsy (complete orthogonal factorisation), gelsd (SVD, divide and conquer), gelss (SVD).
void scipy_sgelsy_(const int *m, const int *n, const int *nrhs, float *a, const int *lda, float *b, const int *ldb,
                   int *jpvt, const float *rcond, int *rank, float *work, const int *lwork, int *info);
void scipy_dgelsy_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b,
                   const int *ldb, int *jpvt, const double *rcond, int *rank, double *work, const int *lwork,
                   int *info);
void scipy_cgelsy_(const int *m, const int *n, const int *nrhs, cf *a, const int *lda, cf *b, const int *ldb,
                   int *jpvt, const float *rcond, int *rank, cf *work, const int *lwork, float *rwork, int *info);
void scipy_zgelsy_(const int *m, const int *n, const int *nrhs, cd *a, const int *lda, cd *b, const int *ldb,
                   int *jpvt, const double *rcond, int *rank, cd *work, const int *lwork, double *rwork, int *info);
void scipy_sgelsd_(const int *m, const int *n, const int *nrhs, float *a, const int *lda, float *b, const int *ldb,
                   float *s, const float *rcond, int *rank, float *work, const int *lwork, int *iwork, int *info);
void scipy_dgelsd_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b,
                   const int *ldb, double *s, const double *rcond, int *rank, double *work, const int *lwork,
                   int *iwork, int *info);
void scipy_cgelsd_(const int *m, const int *n, const int *nrhs, cf *a, const int *lda, cf *b, const int *ldb,
                   float *s, const float *rcond, int *rank, cf *work, const int *lwork, float *rwork, int *iwork,
                   int *info);
void scipy_zgelsd_(const int *m, const int *n, const int *nrhs, cd *a, const int *lda, cd *b, const int *ldb,
                   double *s, const double *rcond, int *rank, cd *work, const int *lwork, double *rwork,
                   int *iwork, int *info);
void scipy_sgelss_(const int *m, const int *n, const int *nrhs, float *a, const int *lda, float *b, const int *ldb,
                   float *s, const float *rcond, int *rank, float *work, const int *lwork, int *info);
void scipy_dgelss_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b,
                   const int *ldb, double *s, const double *rcond, int *rank, double *work, const int *lwork,
                   int *info);
void scipy_cgelss_(const int *m, const int *n, const int *nrhs, cf *a, const int *lda, cf *b, const int *ldb,
                   float *s, const float *rcond, int *rank, cf *work, const int *lwork, float *rwork, int *info);
void scipy_zgelss_(const int *m, const int *n, const int *nrhs, cd *a, const int *lda, cd *b, const int *ldb,
                   double *s, const double *rcond, int *rank, cd *work, const int *lwork, double *rwork,
                   int *info);
}

// ---- overloads: one name per routine, the type picks s/d/c/z ------------------------------------------------
#define TP_LAPACK_FOR_ALL(X) X(s, float) X(d, double) X(c, cf) X(z, cd)

#define TP_OVERLOADS(p, T)                                                                                       \
  inline void getrf(int m, int n, T *a, int lda, int *ipiv, int *info) { scipy_##p##getrf_(&m, &n, a, &lda, ipiv, info); } \
  inline void getri(int n, T *a, int lda, const int *ipiv, T *work, int lwork, int *info) {                       \
    scipy_##p##getri_(&n, a, &lda, ipiv, work, &lwork, info);                                                     \
  }                                                                                                              \
  inline void getrs(char trans, int n, int nrhs, const T *a, int lda, const int *ipiv, T *b, int ldb, int *info) { \
    scipy_##p##getrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);                                        \
  }                                                                                                              \
  inline void potrf(char uplo, int n, T *a, int lda, int *info) { scipy_##p##potrf_(&uplo, &n, a, &lda, info, 1); } \
  inline void potrs(char uplo, int n, int nrhs, const T *a, int lda, T *b, int ldb, int *info) {                  \
    scipy_##p##potrs_(&uplo, &n, &nrhs, a, &lda, b, &ldb, info, 1);                                               \
  }                                                                                                              \
  inline void potri(char uplo, int n, T *a, int lda, int *info) { scipy_##p##potri_(&uplo, &n, a, &lda, info, 1); } \
  inline void geqrf(int m, int n, T *a, int lda, T *tau, T *work, int lwork, int *info) {                         \
    scipy_##p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                                  \
  }                                                                                                              \
  inline void gels(char trans, int m, int n, int nrhs, T *a, int lda, T *b, int ldb, T *work, int lwork, int *info) { \
    scipy_##p##gels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);                             \
  }
TP_LAPACK_FOR_ALL(TP_OVERLOADS)
#undef TP_OVERLOADS
#undef TP_LAPACK_FOR_ALL

// Q from geqrf's reflectors: orgqr for real types, ungqr for complex ones.
inline void orgqr(int m, int n, int k, float *a, int lda, const float *tau, float *work, int lwork, int *info) {
  scipy_sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, double *a, int lda, const double *tau, double *work, int lwork, int *info) {
  scipy_dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, cf *a, int lda, const cf *tau, cf *work, int lwork, int *info) {
  scipy_cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, cd *a, int lda, const cd *tau, cd *work, int lwork, int *info) {
  scipy_zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}

// gesdd: R is the real type of T; rwork is used by the complex routines only.
inline void gesdd(char jobz, int m, int n, float *a, int lda, float *s, float *u, int ldu, float *vt, int ldvt,
                  float *work, int lwork, float *, int *iwork, int *info) {
  scipy_sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, double *a, int lda, double *s, double *u, int ldu, double *vt, int ldvt,
                  double *work, int lwork, double *, int *iwork, int *info) {
  scipy_dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, cf *a, int lda, float *s, cf *u, int ldu, cf *vt, int ldvt, cf *work,
                  int lwork, float *rwork, int *iwork, int *info) {
  scipy_cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, cd *a, int lda, double *s, cd *u, int ldu, cd *vt, int ldvt, cd *work,
                  int lwork, double *rwork, int *iwork, int *info) {
  scipy_zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}

// syevd / heevd: the real routines ignore rwork/lrwork.
inline void syevd(char jobz, char uplo, int n, float *a, int lda, float *w, float *work, int lwork, float *, int,
                  int *iwork, int liwork, int *info) {
  scipy_ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, double *a, int lda, double *w, double *work, int lwork, double *, int,
                  int *iwork, int liwork, int *info) {
  scipy_dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, cf *a, int lda, float *w, cf *work, int lwork, float *rwork,
                  int lrwork, int *iwork, int liwork, int *info) {
  scipy_cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, cd *a, int lda, double *w, cd *work, int lwork, double *rwork,
                  int lrwork, int *iwork, int liwork, int *info) {
  scipy_zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}

// Least squares drivers. s (singular values) is used by gelsd/gelss, jpvt by gelsy; rwork by complex ones.
#define TP_LSTSQ_OVERLOADS(p, T, R, RWORK_PASS)                                                       \
  inline void gelsy(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, int *jpvt, R rcond, int *rank, T *work, \
                    int lwork, R *rwork, int *info) {                                                            \
    (void)rwork;                                                                                                 \
    scipy_##p##gelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, RWORK_PASS info);       \
  }                                                                                                              \
  inline void gelsd(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, R *s, R rcond, int *rank, T *work,     \
                    int lwork, R *rwork, int *iwork, int *info) {                                                \
    (void)rwork;                                                                                                 \
    scipy_##p##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, RWORK_PASS iwork, info);   \
  }                                                                                                              \
  inline void gelss(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, R *s, R rcond, int *rank, T *work,     \
                    int lwork, R *rwork, int *info) {                                                            \
    (void)rwork;                                                                                                 \
    scipy_##p##gelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, RWORK_PASS info);          \
  }
#define TP_RWORK rwork,  // the complex drivers' extra argument, one macro argument with its comma
TP_LSTSQ_OVERLOADS(s, float, float, )
TP_LSTSQ_OVERLOADS(d, double, double, )
TP_LSTSQ_OVERLOADS(c, cf, float, TP_RWORK)
TP_LSTSQ_OVERLOADS(z, cd, double, TP_RWORK)
#undef TP_RWORK
#undef TP_LSTSQ_OVERLOADS

}  // namespace tp::p10::lapack
