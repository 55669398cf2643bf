/* fake_cublas.c — a stand-in for libcublas.so and libcublasLt.so on a machine without a GPU (tests only):
   the entry points P10 resolves (csrc/cuda/cublas.h: TP_CUBLAS_FUNCTIONS and TP_CUBLASLT_FUNCTIONS), each
   checking its arguments and COMPUTING its result on the CPU with plain loops, so the CUDA matrix products,
   linear layers and convolutions (im2col + GEMM) of the emulated runs are checked against the CPU by value.

   Where it sits: cuda_testing.build_emulated_driver builds it beside the stand-in driver (fake_cuda.c) as
   libcublas.so.13, with libcublasLt.so.13 a link to the same file (P10 loads that sibling first and takes the
   cuBLASLt symbols from it); TP_CUBLAS_LIBRARY points P10 at it (emulated_run._env). It uses the stand-in
   driver's arena and violation report (fake_blas.h, Note [Finding the stand-in driver]).

   Note [What the stand-in libraries check]
     - handles: every call names a handle its library made (cublasCreate, cublasLtCreate, cusolverDnCreate),
       and every cuBLASLt descriptor, layout, preference and algorithm one it handed out;
     - matrices: each operand, seen column-major as the library sees it (rows x cols, leading dimension ld >=
       max(1, rows), `batch` of them `stride` elements apart), lies inside one live device allocation (the
       driver's arena), as do bias vectors, workspaces, pivots and info words; the matrices of a batched output
       do not overlap (on a GPU they would be written concurrently);
     - types: the data and compute types form a combination cuBLAS supports (fp32 with fp32 or TF32 compute,
       fp64 with fp64, fp16 and bf16 with fp32 accumulation), and the operations, sides, fill modes and
       attribute sizes are valid values.
     A refused call is a violation (fake_cuda.c's report), answered with CUBLAS_STATUS_INVALID_VALUE.
   The arithmetic: fp64 products sum in double, every other one in float (TF32 is treated as fp32; 16-bit
   inputs are widened exactly), then alpha * sum + beta * C is rounded once to C's type; with beta = 0, C is
   not read (so NaN garbage in a fresh output does not propagate), as cuBLAS documents. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "fake_blas.h"

enum { ST_OK = 0, ST_NOT_INITIALIZED = 1, ST_INVALID_VALUE = 7, ST_NOT_SUPPORTED = 15 };
enum { COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77, COMPUTE_64F = 70 };
enum { kHandle = 0x7b1a5u, kLtHandle = 0x7b1a6u, kDesc = 0x7b1a7u, kLayout = 0x7b1a8u, kPref = 0x7b1a9u };

typedef struct {
  unsigned magic;
  void *stream;
  const void *workspace;
  size_t workspace_bytes;
} Handle;

/* ---- the one GEMM ------------------------------------------------------------------------------------------ */
/* Whether (data type, compute type) is a combination cuBLAS runs; fp64 compute takes double scalars. */
static int types_ok(const char *fn, int t, int compute) {
  const int ok = t == T_64F ? compute == COMPUTE_64F
               : t == T_32F ? compute == COMPUTE_32F || compute == COMPUTE_32F_FAST_TF32
               : t == T_16F || t == T_16BF ? compute == COMPUTE_32F || compute == COMPUTE_32F_FAST_TF32
                                           : 0;
  if (!ok) REFUSE("%s: data type %s (%d) with compute type %d is not a combination cuBLAS supports", fn, type_name(t), t,
                  compute);
  return ok;
}

typedef struct {
  const void *p;
  int type, trans;
  long long ld, stride;
} Operand;

/* Element (i, j) of op(X) for batch b. */
static double at(const Operand *x, long long b, long long i, long long j) {
  return load(x->type, x->p, b * x->stride + (x->trans ? j + i * x->ld : i + j * x->ld));
}

/* D[b] = alpha op(A[b]) op(B[b]) + beta C[b] (+ bias[i] down each column), m x n, inner size k, after the checks
   (Note [What the stand-in libraries check]). C and D may be the same matrix. */
static int gemm(const char *fn, Operand a, Operand b, Operand c, Operand d, const void *bias, long long m, long long n,
                long long k, long long batch, const void *alpha, const void *beta, int compute) {
  if (!types_ok(fn, d.type, compute)) return ST_INVALID_VALUE;
  if (a.type != d.type || b.type != d.type || c.type != d.type) {
    REFUSE("%s: operand types %s, %s, %s, %s differ", fn, type_name(a.type), type_name(b.type), type_name(c.type),
           type_name(d.type));
    return ST_INVALID_VALUE;
  }
  if ((a.trans != 0 && a.trans != 1) || (b.trans != 0 && b.trans != 1) || m < 0 || n < 0 || k < 0 || batch < 0 ||
      !alpha || !beta) {
    REFUSE("%s: bad arguments (trans %d, %d; m %lld n %lld k %lld batch %lld; alpha %p beta %p)", fn, a.trans,
           b.trans, m, n, k, batch, alpha, beta);
    return ST_INVALID_VALUE;
  }
  const int f64 = compute == COMPUTE_64F;
  const double al = f64 ? *(const double *)alpha : *(const float *)alpha;
  const double be = f64 ? *(const double *)beta : *(const float *)beta;
  int ok = matrix_ok(fn, "A", a.p, a.type, a.trans ? k : m, a.trans ? m : k, a.ld, batch, a.stride) &
           matrix_ok(fn, "B", b.p, b.type, b.trans ? n : k, b.trans ? k : n, b.ld, batch, b.stride) &
           matrix_ok(fn, "D", d.p, d.type, m, n, d.ld, batch, d.stride);
  if (be != 0) ok &= matrix_ok(fn, "C", c.p, c.type, m, n, c.ld, batch, c.stride);
  if (bias) ok &= matrix_ok(fn, "the bias", bias, d.type, m, 1, m > 0 ? m : 1, 1, 0);
  if (ok && batch > 1 && m > 0 && n > 0 && d.stride < d.ld * n) {
    REFUSE("%s: the %lld output matrices (%lld x %lld, ld %lld) overlap: batch stride %lld", fn, batch, m, n, d.ld,
           d.stride);
    ok = 0;
  }
  if (!ok) return ST_INVALID_VALUE;
  for (long long q = 0; q < batch; ++q)
    for (long long j = 0; j < n; ++j)
      for (long long i = 0; i < m; ++i) {
        double sum;
        if (f64) {
          double s = 0;
          for (long long l = 0; l < k; ++l) s += at(&a, q, i, l) * at(&b, q, l, j);
          sum = s;
        } else {
          float s = 0;
          for (long long l = 0; l < k; ++l) s += (float)at(&a, q, i, l) * (float)at(&b, q, l, j);
          sum = s;
        }
        double r = f64 ? al * sum : (double)((float)al * (float)sum);
        if (be != 0) r = f64 ? r + be * at(&c, q, i, j) : (double)((float)r + (float)be * (float)at(&c, q, i, j));
        if (bias) r = f64 ? r + load(d.type, bias, i) : (double)((float)r + (float)load(d.type, bias, i));
        store(d.type, (void *)d.p, q * d.stride + i + j * d.ld, r);
      }
  count_call(1);
  return ST_OK;
}

/* ---- cuBLAS ----------------------------------------------------------------------------------------------- */
static int handle_ok(const char *fn, const void *h, unsigned magic) {
  const int ok = h && ((const Handle *)h)->magic == magic;
  if (!ok) REFUSE("%s: %p is not a handle the stand-in library made", fn, h);
  return ok;
}

int cublasCreate_v2(void **h) {
  Handle *x = (Handle *)calloc(1, sizeof(Handle));
  x->magic = kHandle;
  *h = x;
  return ST_OK;
}
int cublasDestroy_v2(void *h) {
  if (!handle_ok("cublasDestroy", h, kHandle)) return ST_NOT_INITIALIZED;
  ((Handle *)h)->magic = 0;
  free(h);
  return ST_OK;
}
int cublasSetStream_v2(void *h, void *stream) {
  if (!handle_ok("cublasSetStream", h, kHandle)) return ST_NOT_INITIALIZED;
  ((Handle *)h)->stream = stream;
  return ST_OK;
}
int cublasSetWorkspace_v2(void *h, void *ws, size_t bytes) {
  if (!handle_ok("cublasSetWorkspace", h, kHandle)) return ST_NOT_INITIALIZED;
  if (!span_ok("cublasSetWorkspace", "the workspace", ws, bytes)) return ST_INVALID_VALUE;
  ((Handle *)h)->workspace = ws, ((Handle *)h)->workspace_bytes = bytes;
  return ST_OK;
}
int cublasGetProperty(int type, int *value) {
  if (!value || type < 0 || type > 2) return ST_INVALID_VALUE;
  *value = type == 0 ? 13 : 0; /* 13.0.0: the release P10 is built against */
  return ST_OK;
}
const char *cublasGetStatusName(int s) {
  return s == ST_OK ? "CUBLAS_STATUS_SUCCESS" : s == ST_NOT_INITIALIZED ? "CUBLAS_STATUS_NOT_INITIALIZED"
       : s == ST_INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE" : s == ST_NOT_SUPPORTED ? "CUBLAS_STATUS_NOT_SUPPORTED"
       : "CUBLAS_STATUS_UNKNOWN";
}
const char *cublasGetStatusString(int s) {
  return s == ST_OK ? "success" : "refused by the stand-in cuBLAS (see the driver's violation report)";
}

int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at_, int lda,
                 const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc, int compute, int algo) {
  if (!handle_ok("cublasGemmEx", h, kHandle)) return ST_NOT_INITIALIZED;
  const Operand a = {A, at_, ta, lda, 0}, b = {B, bt, tb, ldb, 0}, c = {C, ct, 0, ldc, 0};
  return gemm("cublasGemmEx", a, b, c, c, NULL, m, n, k, 1, alpha, beta, compute);
}
int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
                               int at_, int lda, long long sa, const void *B, int bt, int ldb, long long sb,
                               const void *beta, void *C, int ct, int ldc, long long sc, int batch, int compute,
                               int algo) {
  if (!handle_ok("cublasGemmStridedBatchedEx", h, kHandle)) return ST_NOT_INITIALIZED;
  const Operand a = {A, at_, ta, lda, sa}, b = {B, bt, tb, ldb, sb}, c = {C, ct, 0, ldc, sc};
  return gemm("cublasGemmStridedBatchedEx", a, b, c, c, NULL, m, n, k, batch, alpha, beta, compute);
}

/* B = alpha op(A)^-1 B (side left) or alpha B op(A)^-1 (right) for triangular A, by substitution in double. */
static int trsm(const char *fn, void *h, int side, int uplo, int trans, int diag, int m, int n, double alpha,
                const void *A, int lda, void *B, int ldb, int t) {
  if (!handle_ok(fn, h, kHandle)) return ST_NOT_INITIALIZED;
  if ((side | uplo | diag) & ~1 || (trans != 0 && trans != 1) || m < 0 || n < 0) {
    REFUSE("%s: side %d, fill mode %d, operation %d, diag %d, m %d, n %d", fn, side, uplo, trans, diag, m, n);
    return ST_INVALID_VALUE;
  }
  const int na = side == 0 ? m : n;
  if (!(matrix_ok(fn, "A", A, t, na, na, lda, 1, 0) & matrix_ok(fn, "B", B, t, m, n, ldb, 1, 0)))
    return ST_INVALID_VALUE;
  /* op(A)(i, j), and whether op(A) is lower triangular */
#define OPA(i, j) (diag && (i) == (j) ? 1.0 : load(t, A, trans ? (j) + (long long)(i)*lda : (i) + (long long)(j)*lda))
  const int lower = (uplo == 0) != (trans == 1);
  double *x = (double *)malloc(sizeof(double) * (size_t)(na > 0 ? na : 1));
  for (int r = 0; r < (side == 0 ? n : m); ++r) { /* a column of B (left) or a row (right) */
    for (int i = 0; i < na; ++i) x[i] = alpha * load(t, B, side == 0 ? i + (long long)r * ldb : r + (long long)i * ldb);
    /* left: op(A) y = x; right: y op(A) = x, i.e. op(A)^T y = x, whose triangle is the other one */
    const int low = side == 0 ? lower : !lower;
    for (int s = 0; s < na; ++s) {
      const int i = low ? s : na - 1 - s;
      double v = x[i];
      for (int s2 = 0; s2 < s; ++s2) {
        const int j = low ? s2 : na - 1 - s2;
        v -= (side == 0 ? OPA(i, j) : OPA(j, i)) * x[j];
      }
      x[i] = v / OPA(i, i);
    }
    for (int i = 0; i < na; ++i) store(t, B, side == 0 ? i + (long long)r * ldb : r + (long long)i * ldb, x[i]);
  }
#undef OPA
  free(x);
  count_call(1);
  return ST_OK;
}
int cublasStrsm_v2(void *h, int side, int uplo, int trans, int diag, int m, int n, const float *alpha,
                   const float *A, int lda, float *B, int ldb) {
  return trsm("cublasStrsm", h, side, uplo, trans, diag, m, n, *alpha, A, lda, B, ldb, T_32F);
}
int cublasDtrsm_v2(void *h, int side, int uplo, int trans, int diag, int m, int n, const double *alpha,
                   const double *A, int lda, double *B, int ldb) {
  return trsm("cublasDtrsm", h, side, uplo, trans, diag, m, n, *alpha, A, lda, B, ldb, T_64F);
}

/* ---- cuBLASLt --------------------------------------------------------------------------------------------- */
typedef struct {
  unsigned magic;
  int compute, scale, trans_a, trans_b;
  uint32_t epilogue;
  const void *bias;
} Desc;
typedef struct {
  unsigned magic;
  int type;
  uint64_t rows, cols;
  int64_t ld;
} Layout;
typedef struct {
  unsigned magic;
  uint64_t max_workspace;
} Pref;
enum { EPILOGUE_DEFAULT = 1, EPILOGUE_BIAS = 4 };

int cublasLtCreate(void **h) { return cublasCreate_v2(h) == ST_OK ? (((Handle *)*h)->magic = kLtHandle, ST_OK) : 1; }

int cublasLtMatmulDescCreate(void **d, int compute, int scale) {
  if (scale != T_32F && scale != T_64F) {
    REFUSE("cublasLtMatmulDescCreate: scale type %d", scale);
    return ST_INVALID_VALUE;
  }
  Desc *x = (Desc *)calloc(1, sizeof(Desc));
  *x = (Desc){kDesc, compute, scale, 0, 0, EPILOGUE_DEFAULT, NULL};
  *d = x;
  return ST_OK;
}
int cublasLtMatmulDescDestroy(void *d) {
  if (!handle_ok("cublasLtMatmulDescDestroy", d, kDesc)) return ST_INVALID_VALUE;
  ((Desc *)d)->magic = 0;
  free(d);
  return ST_OK;
}
int cublasLtMatmulDescSetAttribute(void *d, int attr, const void *buf, size_t bytes) {
  if (!handle_ok("cublasLtMatmulDescSetAttribute", d, kDesc)) return ST_INVALID_VALUE;
  Desc *x = (Desc *)d;
  const size_t want = attr == 8 ? sizeof(void *) : 4; /* TRANSA 3, TRANSB 4, EPILOGUE 7: 32-bit; BIAS_POINTER 8 */
  if ((attr == 3 || attr == 4 || attr == 7 || attr == 8) && (bytes != want || !buf)) {
    REFUSE("cublasLtMatmulDescSetAttribute(attribute %d): %zu bytes, expected %zu", attr, bytes, want);
    return ST_INVALID_VALUE;
  }
  if (attr == 3) memcpy(&x->trans_a, buf, 4);
  if (attr == 4) memcpy(&x->trans_b, buf, 4);
  if (attr == 7) memcpy(&x->epilogue, buf, 4);
  if (attr == 8) memcpy(&x->bias, buf, sizeof(void *));
  return ST_OK;
}
int cublasLtMatrixLayoutCreate(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (!type_bytes(type) || ld < (int64_t)(rows > 1 ? rows : 1)) {
    REFUSE("cublasLtMatrixLayoutCreate: type %d, %llu x %llu, ld %lld", type, (unsigned long long)rows,
           (unsigned long long)cols, (long long)ld);
    return ST_INVALID_VALUE;
  }
  Layout *x = (Layout *)calloc(1, sizeof(Layout));
  *x = (Layout){kLayout, type, rows, cols, ld};
  *l = x;
  return ST_OK;
}
int cublasLtMatrixLayoutDestroy(void *l) {
  if (!handle_ok("cublasLtMatrixLayoutDestroy", l, kLayout)) return ST_INVALID_VALUE;
  ((Layout *)l)->magic = 0;
  free(l);
  return ST_OK;
}
int cublasLtMatmulPreferenceCreate(void **p) {
  Pref *x = (Pref *)calloc(1, sizeof(Pref));
  x->magic = kPref;
  *p = x;
  return ST_OK;
}
int cublasLtMatmulPreferenceDestroy(void *p) {
  if (!handle_ok("cublasLtMatmulPreferenceDestroy", p, kPref)) return ST_INVALID_VALUE;
  ((Pref *)p)->magic = 0;
  free(p);
  return ST_OK;
}
int cublasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t bytes) {
  if (!handle_ok("cublasLtMatmulPreferenceSetAttribute", p, kPref)) return ST_INVALID_VALUE;
  const size_t want = attr == 1 ? 8 : 4; /* MAX_WORKSPACE_BYTES: uint64; the alignments (5..8): uint32 */
  if ((attr == 1 || (attr >= 5 && attr <= 8)) && (bytes != want || !buf)) {
    REFUSE("cublasLtMatmulPreferenceSetAttribute(attribute %d): %zu bytes, expected %zu", attr, bytes, want);
    return ST_INVALID_VALUE;
  }
  if (attr == 1) memcpy(&((Pref *)p)->max_workspace, buf, 8);
  return ST_OK;
}

/* The problem a descriptor and its layouts describe: D (m x n) = op(A) (m x k) op(B) (k x n); 0 if inconsistent. */
static int lt_problem(const char *fn, const Desc *d, const Layout *a, const Layout *b, const Layout *c, const Layout *dl,
                      long long *m, long long *n, long long *k) {
  *m = (long long)dl->rows, *n = (long long)dl->cols;
  *k = (long long)(d->trans_a ? a->rows : a->cols);
  const long long am = (long long)(d->trans_a ? a->cols : a->rows), bk = (long long)(d->trans_b ? b->cols : b->rows),
                  bn = (long long)(d->trans_b ? b->rows : b->cols);
  if (am != *m || bk != *k || bn != *n || c->rows != dl->rows || c->cols != dl->cols ||
      (d->epilogue != EPILOGUE_DEFAULT && d->epilogue != EPILOGUE_BIAS) || (d->epilogue == EPILOGUE_BIAS && !d->bias)) {
    REFUSE("%s: op(A) %lld x %lld, op(B) %lld x %lld, C %llu x %llu, D %lld x %lld, epilogue %u (bias %p) do not make "
           "one product", fn, am, *k, bk, bn, (unsigned long long)c->rows, (unsigned long long)c->cols, *m, *n,
           d->epilogue, d->bias);
    return 0;
  }
  return 1;
}

int cublasLtMatmulAlgoGetHeuristic(void *h, void *desc, void *a, void *b, void *c, void *d, void *pref, int requested,
                                   void *results, int *returned) {
  const char *fn = "cublasLtMatmulAlgoGetHeuristic";
  if (!handle_ok(fn, h, kLtHandle) || !handle_ok(fn, desc, kDesc) || !handle_ok(fn, a, kLayout) ||
      !handle_ok(fn, b, kLayout) || !handle_ok(fn, c, kLayout) || !handle_ok(fn, d, kLayout) ||
      !handle_ok(fn, pref, kPref))
    return ST_INVALID_VALUE;
  long long m, n, k;
  if (requested < 1 || !results || !returned) {
    REFUSE("%s: requested %d results into %p (count into %p)", fn, requested, results, (void *)returned);
    return ST_INVALID_VALUE;
  }
  if (!lt_problem(fn, (Desc *)desc, (Layout *)a, (Layout *)b, (Layout *)c, (Layout *)d, &m, &n, &k)) return ST_INVALID_VALUE;
  /* cublasLtMatmulHeuristicResult_t: the algorithm (64 bytes, marked as ours), workspace size, state, waves */
  unsigned char *r = (unsigned char *)results;
  memset(r, 0, 64 + 8 + 4 + 4 + 16);
  const unsigned magic = kDesc + 100;
  memcpy(r, &magic, sizeof magic);
  *returned = 1;
  return ST_OK;
}

int cublasLtMatmul(void *h, void *desc, const void *alpha, const void *A, void *la, const void *B, void *lb,
                   const void *beta, const void *C, void *lc, void *D, void *ld, const void *algo, void *ws,
                   size_t ws_bytes, void *stream) {
  const char *fn = "cublasLtMatmul";
  if (!handle_ok(fn, h, kLtHandle) || !handle_ok(fn, desc, kDesc) || !handle_ok(fn, la, kLayout) ||
      !handle_ok(fn, lb, kLayout) || !handle_ok(fn, lc, kLayout) || !handle_ok(fn, ld, kLayout))
    return ST_INVALID_VALUE;
  if (!algo || *(const unsigned *)algo != kDesc + 100) {
    REFUSE("%s: the algorithm %p is not one cublasLtMatmulAlgoGetHeuristic returned", fn, algo);
    return ST_INVALID_VALUE;
  }
  if (!span_ok(fn, "the workspace", ws, ws_bytes)) return ST_INVALID_VALUE;
  const Desc *d = (const Desc *)desc;
  const Layout *a = (const Layout *)la, *b = (const Layout *)lb, *c = (const Layout *)lc, *dl = (const Layout *)ld;
  long long m, n, k;
  if (!lt_problem(fn, d, a, b, c, dl, &m, &n, &k)) return ST_INVALID_VALUE;
  const Operand oa = {A, a->type, d->trans_a, a->ld, 0}, ob = {B, b->type, d->trans_b, b->ld, 0},
                oc = {C, c->type, 0, c->ld, 0}, od = {D, dl->type, 0, dl->ld, 0};
  return gemm(fn, oa, ob, oc, od, d->epilogue == EPILOGUE_BIAS ? d->bias : NULL, m, n, k, 1, alpha, beta, d->compute);
}
