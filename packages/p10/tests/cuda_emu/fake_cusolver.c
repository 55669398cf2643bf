/* fake_cusolver.c — a stand-in for libcusolver.so on a machine without a GPU (tests only): the cusolverDn
   entry points P10 resolves (csrc/cuda/cusolver.h: TP_CUSOLVER_FUNCTIONS), each checking its arguments (Note
   [What the stand-in libraries check] in fake_cublas.c: handles, every matrix, vector, pivot array, workspace
   and info word inside live device memory with its extents, leading dimensions, valid modes).

   What it computes: the LU and Cholesky routines (getrf, getrs, potrf, potrs, potri) by the textbook loops in
   double, so solve, inv, det, cholesky and lu results are checked by value. The others (geqrf, orgqr, ormqr,
   gesvd, syevd) are checked and recorded only: they set info to 0 and leave their outputs as they were, and
   count as recorded launches, so a test compares the op's result by dtype and shape only (fake_blas.h's
   count_call).

   Where it sits: cuda_testing.build_emulated_driver builds it beside the stand-in driver as libcusolver.so.12,
   which it uses for its checks (fake_blas.h, Note [Finding the stand-in driver]); TP_CUSOLVER_LIBRARY points
   P10 at it (emulated_run._env). */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>

#include "fake_blas.h"

enum { ST_OK = 0, ST_NOT_INITIALIZED = 1, ST_INVALID_VALUE = 3 };
enum { kHandle = 0x5e1e0u };

typedef struct {
  unsigned magic;
  void *stream;
} Handle;

static int handle_ok(const char *fn, const void *h) {
  const int ok = h && ((const Handle *)h)->magic == kHandle;
  if (!ok) REFUSE("%s: %p is not a handle cusolverDnCreate made", fn, h);
  return ok;
}
static int info_ok(const char *fn, int *info) { return span_ok(fn, "info", info, sizeof(int)); }
static int vector_ok(const char *fn, const char *what, const void *p, int t, long long n) {
  return n <= 0 || matrix_ok(fn, what, p, t, n, 1, n, 1, 0);
}
/* The workspace the caller passes: lwork elements (as the _bufferSize query said) inside live memory. */
static int work_ok(const char *fn, const void *work, int t, long long lwork, long long needed) {
  if (lwork < needed) {
    REFUSE("%s: lwork %lld below the %lld elements its _bufferSize query asks for", fn, lwork, needed);
    return 0;
  }
  return vector_ok(fn, "the workspace", work, t, lwork);
}
static int bad(const char *fn, const char *what, long long v) {
  REFUSE("%s: %s = %lld is not valid", fn, what, v);
  return ST_INVALID_VALUE;
}

int cusolverDnCreate(void **h) {
  Handle *x = (Handle *)calloc(1, sizeof(Handle));
  x->magic = kHandle;
  *h = x;
  return ST_OK;
}
int cusolverDnDestroy(void *h) {
  if (!handle_ok("cusolverDnDestroy", h)) return ST_NOT_INITIALIZED;
  ((Handle *)h)->magic = 0;
  free(h);
  return ST_OK;
}
int cusolverDnSetStream(void *h, void *s) {
  if (!handle_ok("cusolverDnSetStream", h)) return ST_NOT_INITIALIZED;
  ((Handle *)h)->stream = s;
  return ST_OK;
}
int cusolverGetProperty(int type, int *value) {
  if (!value || type < 0 || type > 2) return ST_INVALID_VALUE;
  *value = type == 0 ? 12 : 0; /* 12.0.0: CUDA 13's cuSOLVER */
  return ST_OK;
}

/* The lwork every _bufferSize answers: one column's worth (at least one element), which the routines check. */
static long long lwork_of(long long m, long long n) { return (m > n ? m : n) > 0 ? (m > n ? m : n) : 1; }

#define E(i, j) ((i) + (long long)(j)*lda) /* column-major (i, j) of A */

/* ---- LU: getrf, getrs -------------------------------------------------------------------------------------- */
static int getrf_size(const char *fn, void *h, int m, int n, void *A, int lda, int t, int *lwork) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (m < 0 || n < 0) return bad(fn, "m or n", m < 0 ? m : n);
  if (!matrix_ok(fn, "A", A, t, m, n, lda, 1, 0)) return ST_INVALID_VALUE;
  *lwork = (int)lwork_of(m, n);
  return ST_OK;
}
/* A = P L U with partial pivoting (LAPACK's dgetf2): ipiv 1-based, info the first zero pivot (1-based) or 0. */
static int getrf(const char *fn, void *h, int m, int n, void *A, int lda, void *work, int *ipiv, int *info, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (m < 0 || n < 0) return bad(fn, "m or n", m < 0 ? m : n);
  const int mn = m < n ? m : n;
  if (!(matrix_ok(fn, "A", A, t, m, n, lda, 1, 0) & work_ok(fn, work, t, lwork_of(m, n), lwork_of(m, n)) &
        span_ok(fn, "ipiv", ipiv, sizeof(int) * (size_t)mn) & info_ok(fn, info)))
    return ST_INVALID_VALUE;
  int first_zero = 0;
  for (int j = 0; j < mn; ++j) {
    int p = j;
    for (int i = j + 1; i < m; ++i)
      if (fabs(load(t, A, E(i, j))) > fabs(load(t, A, E(p, j)))) p = i;
    ipiv[j] = p + 1;
    if (p != j)
      for (int c = 0; c < n; ++c) {
        const double x = load(t, A, E(j, c));
        store(t, A, E(j, c), load(t, A, E(p, c)));
        store(t, A, E(p, c), x);
      }
    const double pivot = load(t, A, E(j, j));
    if (pivot == 0) {
      if (!first_zero) first_zero = j + 1;
      continue;
    }
    for (int i = j + 1; i < m; ++i) store(t, A, E(i, j), load(t, A, E(i, j)) / pivot);
    for (int c = j + 1; c < n; ++c)
      for (int i = j + 1; i < m; ++i)
        store(t, A, E(i, c), load(t, A, E(i, c)) - load(t, A, E(i, j)) * load(t, A, E(j, c)));
  }
  *info = first_zero;
  count_call(1);
  return ST_OK;
}
/* op(A) X = B for A = P L U from getrf. */
static int getrs(const char *fn, void *h, int trans, int n, int nrhs, const void *A, int lda, const int *ipiv, void *B,
                 int ldb, int *info, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (trans != 0 && trans != 1) return bad(fn, "trans", trans);
  if (n < 0 || nrhs < 0) return bad(fn, "n or nrhs", n < 0 ? n : nrhs);
  if (!(matrix_ok(fn, "A", A, t, n, n, lda, 1, 0) & matrix_ok(fn, "B", B, t, n, nrhs, ldb, 1, 0) &
        span_ok(fn, "ipiv", ipiv, sizeof(int) * (size_t)n) & info_ok(fn, info)))
    return ST_INVALID_VALUE;
  for (int i = 0; i < n; ++i)
    if (ipiv[i] < 1 || ipiv[i] > n) {
      REFUSE("%s: ipiv[%d] = %d is outside [1, %d]", fn, i, ipiv[i], n);
      return ST_INVALID_VALUE;
    }
#define Bx(i, j) ((i) + (long long)(j)*ldb)
  for (int c = 0; c < nrhs; ++c) {
    if (trans == 0) {
      for (int i = 0; i < n; ++i) /* P^T b, then L y = b (unit), then U x = y */
        if (ipiv[i] - 1 != i) {
          const double x = load(t, B, Bx(i, c));
          store(t, B, Bx(i, c), load(t, B, Bx(ipiv[i] - 1, c)));
          store(t, B, Bx(ipiv[i] - 1, c), x);
        }
      for (int i = 0; i < n; ++i) {
        double v = load(t, B, Bx(i, c));
        for (int j = 0; j < i; ++j) v -= load(t, A, E(i, j)) * load(t, B, Bx(j, c));
        store(t, B, Bx(i, c), v);
      }
      for (int i = n - 1; i >= 0; --i) {
        double v = load(t, B, Bx(i, c));
        for (int j = i + 1; j < n; ++j) v -= load(t, A, E(i, j)) * load(t, B, Bx(j, c));
        store(t, B, Bx(i, c), v / load(t, A, E(i, i)));
      }
    } else { /* A^T = U^T L^T P^T: U^T y = b, L^T z = y, then x = P z */
      for (int i = 0; i < n; ++i) {
        double v = load(t, B, Bx(i, c));
        for (int j = 0; j < i; ++j) v -= load(t, A, E(j, i)) * load(t, B, Bx(j, c));
        store(t, B, Bx(i, c), v / load(t, A, E(i, i)));
      }
      for (int i = n - 1; i >= 0; --i) {
        double v = load(t, B, Bx(i, c));
        for (int j = i + 1; j < n; ++j) v -= load(t, A, E(j, i)) * load(t, B, Bx(j, c));
        store(t, B, Bx(i, c), v);
      }
      for (int i = n - 1; i >= 0; --i)
        if (ipiv[i] - 1 != i) {
          const double x = load(t, B, Bx(i, c));
          store(t, B, Bx(i, c), load(t, B, Bx(ipiv[i] - 1, c)));
          store(t, B, Bx(ipiv[i] - 1, c), x);
        }
    }
  }
  *info = 0;
  count_call(1);
  return ST_OK;
}

/* ---- Cholesky: potrf, potrs, potri ------------------------------------------------------------------------ */
/* Element (i, j), i >= j, of the lower factor L as stored: in the lower triangle, or transposed in the upper. */
#define L(i, j) (uplo == 0 ? E(i, j) : E(j, i))
static int chol_args(const char *fn, void *h, int uplo, int n, const void *A, int lda, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (uplo != 0 && uplo != 1) return bad(fn, "uplo", uplo);
  if (n < 0) return bad(fn, "n", n);
  return matrix_ok(fn, "A", A, t, n, n, lda, 1, 0) ? ST_OK : ST_INVALID_VALUE;
}
static int chol_size(const char *fn, void *h, int uplo, int n, void *A, int lda, int t, int *lwork) {
  const int r = chol_args(fn, h, uplo, n, A, lda, t);
  if (r == ST_OK) *lwork = (int)lwork_of(n, n);
  return r;
}
/* A = L L^T (uplo lower) or U^T U (upper) in A's triangle; info k when the leading minor k is not positive. */
static int potrf(const char *fn, void *h, int uplo, int n, void *A, int lda, void *work, int lwork, int *info, int t) {
  int r = chol_args(fn, h, uplo, n, A, lda, t);
  if (r != ST_OK) return r;
  if (!(work_ok(fn, work, t, lwork, lwork_of(n, n)) & info_ok(fn, info))) return ST_INVALID_VALUE;
  int bad_minor = 0;
  for (int j = 0; j < n && !bad_minor; ++j) {
    double d = load(t, A, L(j, j));
    for (int k = 0; k < j; ++k) d -= load(t, A, L(j, k)) * load(t, A, L(j, k));
    if (!(d > 0)) {
      bad_minor = j + 1;
      break;
    }
    d = sqrt(d);
    store(t, A, L(j, j), d);
    for (int i = j + 1; i < n; ++i) {
      double v = load(t, A, L(i, j));
      for (int k = 0; k < j; ++k) v -= load(t, A, L(i, k)) * load(t, A, L(j, k));
      store(t, A, L(i, j), v / d);
    }
  }
  *info = bad_minor;
  count_call(1);
  return ST_OK;
}
static int potrs(const char *fn, void *h, int uplo, int n, int nrhs, const void *A, int lda, void *B, int ldb,
                 int *info, int t) {
  int r = chol_args(fn, h, uplo, n, A, lda, t);
  if (r != ST_OK) return r;
  if (nrhs < 0) return bad(fn, "nrhs", nrhs);
  if (!(matrix_ok(fn, "B", B, t, n, nrhs, ldb, 1, 0) & info_ok(fn, info))) return ST_INVALID_VALUE;
  for (int c = 0; c < nrhs; ++c) { /* L y = b, then L^T x = y */
    for (int i = 0; i < n; ++i) {
      double v = load(t, B, Bx(i, c));
      for (int k = 0; k < i; ++k) v -= load(t, A, L(i, k)) * load(t, B, Bx(k, c));
      store(t, B, Bx(i, c), v / load(t, A, L(i, i)));
    }
    for (int i = n - 1; i >= 0; --i) {
      double v = load(t, B, Bx(i, c));
      for (int k = i + 1; k < n; ++k) v -= load(t, A, L(k, i)) * load(t, B, Bx(k, c));
      store(t, B, Bx(i, c), v / load(t, A, L(i, i)));
    }
  }
  *info = 0;
  count_call(1);
  return ST_OK;
}
/* (L L^T)^-1 from the factor L, into the same triangle: X = L^-1 (lower), then X^T X. */
static int potri(const char *fn, void *h, int uplo, int n, void *A, int lda, void *work, int lwork, int *info, int t) {
  int r = chol_args(fn, h, uplo, n, A, lda, t);
  if (r != ST_OK) return r;
  if (!(work_ok(fn, work, t, lwork, lwork_of(n, n)) & info_ok(fn, info))) return ST_INVALID_VALUE;
  double *x = (double *)calloc((size_t)n * (size_t)n + 1, sizeof(double)); /* row-major L^-1 */
  int zero = 0;
  for (int i = 0; i < n && !zero; ++i)
    if (load(t, A, L(i, i)) == 0) zero = i + 1;
  for (int j = 0; j < n && !zero; ++j)
    for (int i = j; i < n; ++i) {
      double v = i == j ? 1.0 : 0.0;
      for (int k = j; k < i; ++k) v -= load(t, A, L(i, k)) * x[(size_t)k * n + j];
      x[(size_t)i * n + j] = v / load(t, A, L(i, i));
    }
  for (int j = 0; j < n && !zero; ++j)
    for (int i = j; i < n; ++i) {
      double v = 0;
      for (int k = i; k < n; ++k) v += x[(size_t)k * n + i] * x[(size_t)k * n + j];
      store(t, A, L(i, j), v);
    }
  free(x);
  *info = zero;
  count_call(1);
  return ST_OK;
}
#undef L
#undef Bx

/* ---- checked and recorded only: QR, SVD, symmetric eigenvalues ------------------------------------------- */
static int recorded(int *info) {
  *info = 0;
  count_call(0);
  return ST_OK;
}
static int geqrf(const char *fn, void *h, int m, int n, void *A, int lda, void *tau, void *work, int lwork, int *info,
                 int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (m < 0 || n < 0) return bad(fn, "m or n", m < 0 ? m : n);
  if (!(matrix_ok(fn, "A", A, t, m, n, lda, 1, 0) & vector_ok(fn, "tau", tau, t, m < n ? m : n) &
        work_ok(fn, work, t, lwork, lwork_of(m, n)) & info_ok(fn, info)))
    return ST_INVALID_VALUE;
  return recorded(info);
}
static int orgqr(const char *fn, void *h, int m, int n, int k, const void *A, int lda, const void *tau, void *work,
                 int lwork, int *info, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (!(m >= n && n >= k && k >= 0)) return bad(fn, "(m, n, k) order: n", n); /* m >= n >= k >= 0 */
  if (!(matrix_ok(fn, "A", A, t, m, n, lda, 1, 0) & vector_ok(fn, "tau", tau, t, k) &
        (work ? work_ok(fn, work, t, lwork, lwork_of(m, n)) : 1) & (info ? info_ok(fn, info) : 1)))
    return ST_INVALID_VALUE;
  return info ? recorded(info) : ST_OK;
}
static int ormqr(const char *fn, void *h, int side, int trans, int m, int n, int k, const void *A, int lda,
                 const void *tau, const void *C, int ldc, void *work, int lwork, int *info, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if ((side != 0 && side != 1) || (trans != 0 && trans != 1)) return bad(fn, "side or trans", side * 10 + trans);
  const int nq = side == 0 ? m : n; /* the order of Q */
  if (m < 0 || n < 0 || k < 0 || k > nq) return bad(fn, "k", k);
  if (!(matrix_ok(fn, "A", A, t, nq, k, lda, 1, 0) & vector_ok(fn, "tau", tau, t, k) &
        matrix_ok(fn, "C", C, t, m, n, ldc, 1, 0) & (work ? work_ok(fn, work, t, lwork, lwork_of(m, n)) : 1) &
        (info ? info_ok(fn, info) : 1)))
    return ST_INVALID_VALUE;
  return info ? recorded(info) : ST_OK;
}
static int gesvd(const char *fn, void *h, signed char jobu, signed char jobvt, int m, int n, void *A, int lda, void *S,
                 void *U, int ldu, void *VT, int ldvt, void *work, int lwork, void *rwork, int *info, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if (m < n) return bad(fn, "m (cuSOLVER's gesvd needs m >= n), m", m);
  const char *jobs = "ASON";
  if (!strchr(jobs, jobu) || !strchr(jobs, jobvt) || (jobu == 'O' && jobvt == 'O'))
    return bad(fn, "jobu * 256 + jobvt", jobu * 256 + jobvt);
  const int mn = n;
  int ok = matrix_ok(fn, "A", A, t, m, n, lda, 1, 0) & vector_ok(fn, "S", S, t, mn) &
           work_ok(fn, work, t, lwork, lwork_of(m, n)) & info_ok(fn, info);
  if (jobu == 'A' || jobu == 'S') ok &= matrix_ok(fn, "U", U, t, m, jobu == 'A' ? m : mn, ldu, 1, 0);
  if (jobvt == 'A' || jobvt == 'S') ok &= matrix_ok(fn, "VT", VT, t, jobvt == 'A' ? n : mn, n, ldvt, 1, 0);
  if (rwork) ok &= vector_ok(fn, "rwork", rwork, t, mn - 1);
  return ok ? recorded(info) : ST_INVALID_VALUE;
}
static int syevd(const char *fn, void *h, int jobz, int uplo, int n, void *A, int lda, void *W, void *work, int lwork,
                 int *info, int t) {
  if (!handle_ok(fn, h)) return ST_NOT_INITIALIZED;
  if ((jobz != 0 && jobz != 1) || (uplo != 0 && uplo != 1) || n < 0) return bad(fn, "jobz, uplo or n", n);
  if (!(matrix_ok(fn, "A", A, t, n, n, lda, 1, 0) & vector_ok(fn, "W", W, t, n) &
        (work ? work_ok(fn, work, t, lwork, lwork_of(n, n)) : 1) & (info ? info_ok(fn, info) : 1)))
    return ST_INVALID_VALUE;
  return info ? recorded(info) : ST_OK;
}
#undef E

/* ---- the exported names, per dtype ------------------------------------------------------------------------ */
#define SIZE_QUERY(name, call)  \
  {                             \
    const int r = call;         \
    if (r == ST_OK) *lwork = (int)(name); \
    return r;                   \
  }
#define EXPORT(P, T, TY)                                                                                           \
  int cusolverDn##P##getrf_bufferSize(void *h, int m, int n, T *A, int lda, int *lwork) {                           \
    return getrf_size("cusolverDn" #P "getrf_bufferSize", h, m, n, A, lda, TY, lwork);                              \
  }                                                                                                                 \
  int cusolverDn##P##getrf(void *h, int m, int n, T *A, int lda, T *work, int *ipiv, int *info) {                  \
    return getrf("cusolverDn" #P "getrf", h, m, n, A, lda, work, ipiv, info, TY);                                    \
  }                                                                                                                 \
  int cusolverDn##P##getrs(void *h, int trans, int n, int nrhs, const T *A, int lda, const int *ipiv, T *B,        \
                           int ldb, int *info) {                                                                    \
    return getrs("cusolverDn" #P "getrs", h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, TY);                       \
  }                                                                                                                 \
  int cusolverDn##P##potrf_bufferSize(void *h, int uplo, int n, T *A, int lda, int *lwork) {                        \
    return chol_size("cusolverDn" #P "potrf_bufferSize", h, uplo, n, A, lda, TY, lwork);                            \
  }                                                                                                                 \
  int cusolverDn##P##potrf(void *h, int uplo, int n, T *A, int lda, T *work, int lwork, int *info) {               \
    return potrf("cusolverDn" #P "potrf", h, uplo, n, A, lda, work, lwork, info, TY);                               \
  }                                                                                                                 \
  int cusolverDn##P##potrs(void *h, int uplo, int n, int nrhs, const T *A, int lda, T *B, int ldb, int *info) {    \
    return potrs("cusolverDn" #P "potrs", h, uplo, n, nrhs, A, lda, B, ldb, info, TY);                              \
  }                                                                                                                 \
  int cusolverDn##P##potri_bufferSize(void *h, int uplo, int n, T *A, int lda, int *lwork) {                        \
    return chol_size("cusolverDn" #P "potri_bufferSize", h, uplo, n, A, lda, TY, lwork);                            \
  }                                                                                                                 \
  int cusolverDn##P##potri(void *h, int uplo, int n, T *A, int lda, T *work, int lwork, int *info) {               \
    return potri("cusolverDn" #P "potri", h, uplo, n, A, lda, work, lwork, info, TY);                               \
  }                                                                                                                 \
  int cusolverDn##P##geqrf_bufferSize(void *h, int m, int n, T *A, int lda, int *lwork)                             \
      SIZE_QUERY(lwork_of(m, n), getrf_size("cusolverDn" #P "geqrf_bufferSize", h, m, n, A, lda, TY, lwork))        \
  int cusolverDn##P##geqrf(void *h, int m, int n, T *A, int lda, T *tau, T *work, int lwork, int *info) {          \
    return geqrf("cusolverDn" #P "geqrf", h, m, n, A, lda, tau, work, lwork, info, TY);                             \
  }                                                                                                                 \
  int cusolverDn##P##orgqr_bufferSize(void *h, int m, int n, int k, const T *A, int lda, const T *tau, int *lwork) \
      SIZE_QUERY(lwork_of(m, n), orgqr("cusolverDn" #P "orgqr_bufferSize", h, m, n, k, A, lda, tau, NULL, 0, NULL, TY)) \
  int cusolverDn##P##orgqr(void *h, int m, int n, int k, T *A, int lda, const T *tau, T *work, int lwork,          \
                           int *info) {                                                                             \
    return orgqr("cusolverDn" #P "orgqr", h, m, n, k, A, lda, tau, work, lwork, info, TY);                          \
  }                                                                                                                 \
  int cusolverDn##P##ormqr_bufferSize(void *h, int side, int trans, int m, int n, int k, const T *A, int lda,      \
                                      const T *tau, const T *C, int ldc, int *lwork)                                \
      SIZE_QUERY(lwork_of(m, n), ormqr("cusolverDn" #P "ormqr_bufferSize", h, side, trans, m, n, k, A, lda, tau, C, \
                                       ldc, NULL, 0, NULL, TY))                                                     \
  int cusolverDn##P##ormqr(void *h, int side, int trans, int m, int n, int k, const T *A, int lda, const T *tau,   \
                           T *C, int ldc, T *work, int lwork, int *info) {                                          \
    return ormqr("cusolverDn" #P "ormqr", h, side, trans, m, n, k, A, lda, tau, C, ldc, work, lwork, info, TY);     \
  }                                                                                                                 \
  int cusolverDn##P##gesvd_bufferSize(void *h, int m, int n, int *lwork) {                                          \
    if (!handle_ok("cusolverDn" #P "gesvd_bufferSize", h)) return ST_NOT_INITIALIZED;                               \
    if (m < n || n < 0) return bad("cusolverDn" #P "gesvd_bufferSize", "m (needs m >= n)", m);                      \
    *lwork = (int)lwork_of(m, n);                                                                                   \
    return ST_OK;                                                                                                   \
  }                                                                                                                 \
  int cusolverDn##P##gesvd(void *h, signed char jobu, signed char jobvt, int m, int n, T *A, int lda, T *S, T *U,  \
                           int ldu, T *VT, int ldvt, T *work, int lwork, T *rwork, int *info) {                     \
    return gesvd("cusolverDn" #P "gesvd", h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork,    \
                 info, TY);                                                                                         \
  }                                                                                                                 \
  int cusolverDn##P##syevd_bufferSize(void *h, int jobz, int uplo, int n, const T *A, int lda, const T *W,         \
                                      int *lwork)                                                                   \
      SIZE_QUERY(lwork_of(n, n), syevd("cusolverDn" #P "syevd_bufferSize", h, jobz, uplo, n, (void *)A, lda,        \
                                       (void *)W, NULL, 0, NULL, TY))                                               \
  int cusolverDn##P##syevd(void *h, int jobz, int uplo, int n, T *A, int lda, T *W, T *work, int lwork, int *info) { \
    return syevd("cusolverDn" #P "syevd", h, jobz, uplo, n, A, lda, W, work, lwork, info, TY);                      \
  }
EXPORT(S, float, T_32F)
EXPORT(D, double, T_64F)
