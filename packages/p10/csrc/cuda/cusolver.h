// cusolver.h — cuSOLVER's dense API (cusolverDn), loaded at run time: its few types and constants, a table of
// function pointers, and one handle per (device, stream, thread).
//
// Where it sits: beside cublas.h, under the linear-algebra ops (ops_linalg_*.cpp, through cuda/linalg.h). Like
// cuBLAS it is never linked: it comes from the `nvidia-cusolver` wheel (`pip install tensorplay-p10[cuda]`;
// `nvidia-cusolver-cu12` for CUDA 12 drivers) or a CUDA toolkit, and the files to load from the locator that
// tensorplay_p10/cuda/_cusolver.py registers at import (TP_CUSOLVER_LIBRARY overrides its search). Only the
// legacy 32-bit-index routines of float32 and float64 are declared; their signatures, and the enum values
// below, are cusolverDn.h's and cublas_api.h's, written out by hand.
//
// Note [cuSOLVER dependencies]
//   libcusolver needs libcublas, libcublasLt, libcusparse and libnvJitLink of the same CUDA release (their
//   sonames are in its DT_NEEDED entries). The wheels find them through a RUNPATH of $ORIGIN; a copy elsewhere
//   may not. So the locator returns a list of files: every dependency it found (beside libcusolver, in the
//   NVIDIA wheels, in the toolkit's folders), dependencies first, and libcusolver last (_loader.load_order).
//   Each is loaded by path with RTLD_LOCAL: the dynamic loader then matches libcusolver's DT_NEEDED names
//   against them by soname, and none of their symbols leaks into the process's global scope (another framework
//   may have loaded its own copies). A dependency found nowhere is left to the dynamic loader, whose error
//   (naming the missing file) ends up in ours.
//
// Note [cuSOLVER handles]
//   As cuBLAS's (Note [cuBLAS handles]): a handle is not safe to use from two threads at once and is bound to a
//   stream, so we keep one per (device, stream, thread), made on first use (cusolverDnCreate with the device's
//   context current, then cusolverDnSetStream) and kept for the life of the process. The legacy routines take
//   their workspace from the caller, who allocates it from the caching allocator.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cuda/driver.h"

namespace tp::p10::cuda {

using cusolverDnHandle_t = struct cusolverDnContext *;
using cusolverStatus_t = int;
constexpr cusolverStatus_t CUSOLVER_STATUS_SUCCESS = 0;
// cusolverEigMode_t (cusolver_common.h). The fill mode, side and operation enums are cuBLAS's (cublas.h).
constexpr int CUSOLVER_EIG_MODE_NOVECTOR = 0, CUSOLVER_EIG_MODE_VECTOR = 1;

// X(name, return type, parameter list): the exported symbols. Enum parameters are ints (their C ABI), the
// matrices device pointers, `lwork` counts elements (not bytes), `info` (devInfo) is one int on the device.
#define TP_CUSOLVER_REAL(X, P, T)                                                                                \
  X(cusolverDn##P##getrf_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int m, int n, T *A, int lda, int *lwork))                                        \
  X(cusolverDn##P##getrf, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int m, int n, T *A, int lda, T *work, int *ipiv, int *info))                     \
  X(cusolverDn##P##getrs, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int trans, int n, int nrhs, const T *A, int lda, const int *ipiv, T *B, int ldb, \
     int *info))                                                                                                 \
  X(cusolverDn##P##potrf_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int uplo, int n, T *A, int lda, int *lwork))                                     \
  X(cusolverDn##P##potrf, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int uplo, int n, T *A, int lda, T *work, int lwork, int *info))                  \
  X(cusolverDn##P##potrs, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int uplo, int n, int nrhs, const T *A, int lda, T *B, int ldb, int *info))       \
  X(cusolverDn##P##potri_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int uplo, int n, T *A, int lda, int *lwork))                                     \
  X(cusolverDn##P##potri, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int uplo, int n, T *A, int lda, T *work, int lwork, int *info))                  \
  X(cusolverDn##P##geqrf_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int m, int n, T *A, int lda, int *lwork))                                        \
  X(cusolverDn##P##geqrf, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int m, int n, T *A, int lda, T *tau, T *work, int lwork, int *info))             \
  X(cusolverDn##P##orgqr_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int m, int n, int k, const T *A, int lda, const T *tau, int *lwork))             \
  X(cusolverDn##P##orgqr, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int m, int n, int k, T *A, int lda, const T *tau, T *work, int lwork, int *info)) \
  X(cusolverDn##P##ormqr_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int side, int trans, int m, int n, int k, const T *A, int lda, const T *tau,     \
     const T *C, int ldc, int *lwork))                                                                           \
  X(cusolverDn##P##ormqr, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int side, int trans, int m, int n, int k, const T *A, int lda, const T *tau,     \
     T *C, int ldc, T *work, int lwork, int *info))                                                              \
  X(cusolverDn##P##gesvd_bufferSize, cusolverStatus_t, (cusolverDnHandle_t handle, int m, int n, int *lwork))   \
  X(cusolverDn##P##gesvd, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n, T *A, int lda, T *S, T *U,    \
     int ldu, T *VT, int ldvt, T *work, int lwork, T *rwork, int *info))                                         \
  X(cusolverDn##P##syevd_bufferSize, cusolverStatus_t,                                                          \
    (cusolverDnHandle_t handle, int jobz, int uplo, int n, const T *A, int lda, const T *W, int *lwork))        \
  X(cusolverDn##P##syevd, cusolverStatus_t,                                                                      \
    (cusolverDnHandle_t handle, int jobz, int uplo, int n, T *A, int lda, T *W, T *work, int lwork, int *info))

#define TP_CUSOLVER_FUNCTIONS(X)                                                                                 \
  X(cusolverDnCreate, cusolverStatus_t, (cusolverDnHandle_t * handle))                                           \
  X(cusolverDnDestroy, cusolverStatus_t, (cusolverDnHandle_t handle))                                            \
  X(cusolverDnSetStream, cusolverStatus_t, (cusolverDnHandle_t handle, CUstream stream))                         \
  X(cusolverGetProperty, cusolverStatus_t, (int type, int *value))                                               \
  TP_CUSOLVER_REAL(X, S, float)                                                                                  \
  TP_CUSOLVER_REAL(X, D, double)

struct CusolverApi {
#define TP_CUSOLVER_DECLARE(name, ret, params) ret(*name) params = nullptr;
  TP_CUSOLVER_FUNCTIONS(TP_CUSOLVER_DECLARE)
#undef TP_CUSOLVER_DECLARE
  void *handle = nullptr;          // dlopen of libcusolver
  std::vector<void *> dependencies;  // dlopens of what it needs, loaded first (Note [cuSOLVER dependencies])
  int version = 0;                 // major * 10000 + minor * 100 + patch: 120004 = 12.0.4
  std::string path;
};

// Load cuSOLVER: every file of `files` but the last (its dependencies, in order), then the last (libcusolver),
// and resolve the table. RuntimeError naming the path, what the dynamic loader missed, and the wheel to
// install. Each call makes a new table (tests probe missing paths with it); close_cusolver releases one.
CusolverApi load_cusolver(const std::vector<std::string> &files);
void close_cusolver(CusolverApi &api);

// The files to load (dependencies first, libcusolver last): set by tensorplay_p10/cuda/_cusolver.py at import.
// It may throw (a Python RuntimeError saying which wheel to install).
using CusolverLocator = std::function<std::vector<std::string>()>;
void set_cusolver_locator(CusolverLocator locator);

// The process-wide cuSOLVER, loaded on first use. A failed load is not remembered: installing the wheel and
// calling again works.
const CusolverApi &cusolver();

// The handle for (device, stream, this thread), made on first use. Call with `device` current (DeviceGuard).
// Note [cuSOLVER handles].
cusolverDnHandle_t cusolver_handle(int device, CUstream stream);

// "CUSOLVER_STATUS_INVALID_VALUE (code 3)"
std::string cusolver_status_text(cusolverStatus_t s);
// RuntimeError "cuSOLVER error in <what>: <status text>" unless s is CUSOLVER_STATUS_SUCCESS.
void cusolver_check(cusolverStatus_t s, const char *what);

}  // namespace tp::p10::cuda
