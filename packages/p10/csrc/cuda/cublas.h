// cublas.h — cuBLAS, loaded at run time: its handful of types and constants, a table of function pointers,
// one handle (with its own workspace) per (device, stream, thread), and the float32 matmul precision setting.
//
// Where it sits: beside driver.h, under ops_matmul.cpp. Like the driver and NVRTC, cuBLAS is never linked: it
// comes from the `nvidia-cublas` wheel (`pip install tensorplay-p10[cuda]`; `nvidia-cublas-cu12` for CUDA 12
// drivers), and its path from the locator that tensorplay_p10/cuda/_cublas.py registers at import (it asks
// the wheel's metadata where the library is; TP_CUBLAS_LIBRARY overrides). The types and enum values are
// cuBLAS's own (cublas_api.h, library_types.h), declared by hand.
//
// Note [cuBLAS handles]
//   A cuBLAS handle is not safe to use from two threads at once, and it is bound to a stream and a workspace.
//   We keep one per (device, stream, thread), made on first use and kept for the life of the process (as
//   PyTorch does): cublasCreate is slow, and the handle is cheap to keep. Each gets its own workspace
//   (cublasSetWorkspace), allocated once with cuMemAlloc, outside the caching allocator, so that GEMMs never
//   allocate while they run and tp.cuda.memory_allocated() counts only tensors. The stream is set once, when
//   the handle is made: cublasSetStream would reset the workspace to cuBLAS's own pool.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "cuda/driver.h"

namespace tp::p10::cuda {

using cublasHandle_t = struct cublasContext *;
using cublasStatus_t = int;
constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;

// cublasOperation_t, cublasFillMode_t, cublasSideMode_t, cublasDiagType_t (cuSOLVER takes the same enums)
constexpr int CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;
constexpr int CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1;
constexpr int CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1;
constexpr int CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1;
// cudaDataType_t (library_types.h)
constexpr int CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14;
// cublasComputeType_t
constexpr int CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_COMPUTE_64F = 70;
// cublasGemmAlgo_t: let cuBLAS choose (tensor cores included where the compute type allows them)
constexpr int CUBLAS_GEMM_DEFAULT = -1;
// libraryPropertyType, for cublasGetProperty
constexpr int kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2;

// X(name, return type, parameter list). Names are the exported symbols (the _v2 ones are cuBLAS's current API).
#define TP_CUBLAS_FUNCTIONS(X)                                                                                   \
  X(cublasCreate_v2, cublasStatus_t, (cublasHandle_t * handle))                                                  \
  X(cublasDestroy_v2, cublasStatus_t, (cublasHandle_t handle))                                                   \
  X(cublasSetStream_v2, cublasStatus_t, (cublasHandle_t handle, CUstream stream))                                \
  X(cublasSetWorkspace_v2, cublasStatus_t, (cublasHandle_t handle, void *workspace, size_t bytes))               \
  X(cublasGetProperty, cublasStatus_t, (int type, int *value))                                                   \
  X(cublasGetStatusName, const char *, (cublasStatus_t status))                                                  \
  X(cublasGetStatusString, const char *, (cublasStatus_t status))                                                \
  X(cublasGemmEx, cublasStatus_t,                                                                                \
    (cublasHandle_t handle, int transa, int transb, int m, int n, int k, const void *alpha, const void *A,      \
     int Atype, int lda, const void *B, int Btype, int ldb, const void *beta, void *C, int Ctype, int ldc,      \
     int computeType, int algo))                                                                                 \
  X(cublasGemmStridedBatchedEx, cublasStatus_t,                                                                  \
    (cublasHandle_t handle, int transa, int transb, int m, int n, int k, const void *alpha, const void *A,      \
     int Atype, int lda, long long strideA, const void *B, int Btype, int ldb, long long strideB,               \
     const void *beta, void *C, int Ctype, int ldc, long long strideC, int batchCount, int computeType,         \
     int algo))                                                                                                  \
  /* B = alpha op(A)^-1 B (or B op(A)^-1) for triangular A: least squares after a QR (ops_linalg_qr.cpp) */      \
  X(cublasStrsm_v2, cublasStatus_t,                                                                              \
    (cublasHandle_t handle, int side, int uplo, int trans, int diag, int m, int n, const float *alpha,           \
     const float *A, int lda, float *B, int ldb))                                                                \
  X(cublasDtrsm_v2, cublasStatus_t,                                                                              \
    (cublasHandle_t handle, int side, int uplo, int trans, int diag, int m, int n, const double *alpha,          \
     const double *A, int lda, double *B, int ldb))

// ---- cuBLASLt: the matmul with a fused epilogue (nn.Linear's bias added as the tile is written) --------------
// Its library is the sibling cuBLAS itself loads. Opaque handles; the enum values are cublasLt.h's.
using cublasLtHandle_t = struct cublasLtContext *;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque *;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque *;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque *;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
// cublasLtMatmulDescAttributes_t, cublasLtEpilogue_t, cublasLtMatmulPreferenceAttributes_t
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3, CUBLASLT_MATMUL_DESC_TRANSB = 4, CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
              CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr uint32_t CUBLASLT_EPILOGUE_BIAS = 4;
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5;
// (the alignments of B, C and D follow A's: 6, 7, 8)

#define TP_CUBLASLT_FUNCTIONS(X)                                                                                 \
  X(cublasLtCreate, cublasStatus_t, (cublasLtHandle_t * handle))                                                 \
  X(cublasLtMatmulDescCreate, cublasStatus_t, (cublasLtMatmulDesc_t * desc, int computeType, int scaleType))     \
  X(cublasLtMatmulDescDestroy, cublasStatus_t, (cublasLtMatmulDesc_t desc))                                      \
  X(cublasLtMatmulDescSetAttribute, cublasStatus_t,                                                              \
    (cublasLtMatmulDesc_t desc, int attr, const void *buf, size_t bytes))                                        \
  X(cublasLtMatrixLayoutCreate, cublasStatus_t,                                                                  \
    (cublasLtMatrixLayout_t * layout, int type, uint64_t rows, uint64_t cols, int64_t ld))                       \
  X(cublasLtMatrixLayoutDestroy, cublasStatus_t, (cublasLtMatrixLayout_t layout))                                \
  X(cublasLtMatmulPreferenceCreate, cublasStatus_t, (cublasLtMatmulPreference_t * pref))                         \
  X(cublasLtMatmulPreferenceDestroy, cublasStatus_t, (cublasLtMatmulPreference_t pref))                          \
  X(cublasLtMatmulPreferenceSetAttribute, cublasStatus_t,                                                        \
    (cublasLtMatmulPreference_t pref, int attr, const void *buf, size_t bytes))                                  \
  X(cublasLtMatmulAlgoGetHeuristic, cublasStatus_t,                                                              \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,    \
     cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,         \
     cublasLtMatmulHeuristicResult_t *results, int *returned))                                                   \
  X(cublasLtMatmul, cublasStatus_t,                                                                              \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,                       \
     cublasLtMatrixLayout_t a, const void *B, cublasLtMatrixLayout_t b, const void *beta, const void *C,         \
     cublasLtMatrixLayout_t c, void *D, cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t *algo,             \
     void *workspace, size_t workspace_bytes, CUstream stream))

struct CublasApi {
#define TP_CUBLAS_DECLARE(name, ret, params) ret(*name) params = nullptr;
  TP_CUBLAS_FUNCTIONS(TP_CUBLAS_DECLARE)
  TP_CUBLASLT_FUNCTIONS(TP_CUBLAS_DECLARE)  // all null when the sibling cuBLASLt was not found: has_lt false
#undef TP_CUBLAS_DECLARE
  bool has_lt = false;
  void *handle = nullptr;     // dlopen of libcublas
  void *lt_handle = nullptr;  // dlopen of its sibling libcublasLt, loaded first (libcublas needs it)
  int version = 0;            // CUBLAS_VERSION's encoding: 130100 = 13.1.0
  std::string path;
};

// Load cuBLAS from `path` and resolve the table; RuntimeError naming the path and the wheel to install. Each
// call makes a new table (tests probe missing paths with it); close_cublas releases one.
CublasApi load_cublas(const std::string &path);
void close_cublas(CublasApi &api);

// Where the process-wide cuBLAS is: set by tensorplay_p10/cuda/_cublas.py at import. It may throw (a Python
// RuntimeError saying which wheel to install).
using CublasLocator = std::function<std::string()>;
void set_cublas_locator(CublasLocator locator);

// The process-wide cuBLAS, loaded on first use. A failed load is not remembered: installing the wheel and
// calling again works.
const CublasApi &cublas();

// The handle for (device, stream, this thread), made on first use with its workspace. Call with `device`
// current (DeviceGuard): cuBLAS binds a handle to the current context. Note [cuBLAS handles].
cublasHandle_t cublas_handle(int device, CUstream stream);

// The cuBLASLt handle for (device, this thread) and the workspace of the cuBLAS handle of (device, stream,
// thread): the two libraries' calls on one stream run in order, so they can share it.
cublasLtHandle_t cublaslt_handle(int device);
struct Workspace {
  void *ptr = nullptr;
  size_t bytes = 0;
};
Workspace cublas_workspace(int device, CUstream stream);

// "CUBLAS_STATUS_NOT_SUPPORTED (the functionality requested is not supported)"
std::string cublas_status_text(cublasStatus_t s);
// RuntimeError "cuBLAS error in <what>: <status text>" unless s is CUBLAS_STATUS_SUCCESS.
void cublas_check(cublasStatus_t s, const std::string &what);

// torch.set_float32_matmul_precision: 0 "highest" (float32 GEMMs in full float32), 1 "high", 2 "medium" (both
// allow TF32 tensor cores, torch.backends.cuda.matmul.allow_tf32). Process-wide, as in PyTorch.
void set_float32_matmul_precision(int level);
int float32_matmul_precision();

}  // namespace tp::p10::cuda
