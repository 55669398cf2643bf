// linalg_common.h — what every tp.linalg kernel shares: input checks with PyTorch's messages, LAPACK's
// column-major batch layout, the loop over a batch of matrices, and LAPACK error codes turned into errors.
//
// Where it sits: included by kernels/linalg_*.cpp, which call LAPACK (lapack.h) once per matrix of a batch
// (composites such as pinv, matrix_rank and the norms call other ops through call_op), and by the CUDA twins
// cuda/ops_linalg_*.cpp (through cuda/linalg.h), which share its checks, layout, messages and check_infos.
//
// Note [LAPACK layout]
//   LAPACK wants each matrix column-major. A kernel copies its input once into a fresh tensor whose matrices
//   are column-major and stored one after another (col_major_copy): element (b, i, j) of a batch of m x n
//   matrices lies at b*m*n + i + j*m. LAPACK then works in place on that copy, and results come back in the
//   same layout, as views with strides (..., 1, m) — as PyTorch's CPU results do. Nothing downstream cares:
//   every P10 op reads strided tensors.
#pragma once
#include <climits>
#include <complex>
#include <string>
#include <vector>

#include "dispatch/kernel_box.h"
#include "kernels/blas.h"
#include "kernels/cast.h"
#include "loop/parallel.h"

namespace tp::p10 {
Tensor cast_to(const Tensor &t, ScalarType dtype);  // copy.cpp
}  // namespace tp::p10

namespace tp::p10::linalg {

template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<std::complex<T>> { using type = T; };
template <typename T> using real_t = typename RealOf<T>::type;

// Run f.template operator()<T>() with T the C++ type of a LAPACK dtype (after check_dtype).
template <typename F> void dispatch_lapack(ScalarType t, const F &f) {
  switch (t) {
    case ScalarType::Float32: f.template operator()<float>(); break;
    case ScalarType::Float64: f.template operator()<double>(); break;
    case ScalarType::Complex64: f.template operator()<complex64>(); break;
    case ScalarType::Complex128: f.template operator()<complex128>(); break;
    default: throw_unsupported_dtype("linalg", t);
  }
}

// ---- checks -------------------------------------------------------------------------------------------------
// PyTorch's dtype names in linalg messages ("Got Long", "Got Half").
inline const char *torch_dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "Bool";
    case ScalarType::UInt8: return "Byte";
    case ScalarType::Int8: return "Char";
    case ScalarType::Int16: return "Short";
    case ScalarType::Int32: return "Int";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float16: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
    case ScalarType::Complex64: return "ComplexFloat";
    default: return "ComplexDouble";
  }
}

// LAPACK has float32/64 and complex64/128 only: integers and 16-bit floats are errors, as in PyTorch.
inline void check_dtype(const char *op, const Tensor &A) {
  ScalarType t = A.dtype();
  TP_CHECK(is_floating(t) || is_complex(t), Runtime, op, ": Expected a floating point or complex tensor as input. Got ",
           torch_dtype_name(t));
  TP_CHECK(t != ScalarType::Float16 && t != ScalarType::BFloat16, Runtime, op,
           ": Low precision dtypes not supported. Got ", torch_dtype_name(t));
}

inline void check_matrix(const char *op, const Tensor &A, const char *name = "A") {
  TP_CHECK(A.dim() >= 2, Runtime, op, ": The input tensor ", name, " must have at least 2 dimensions.");
}

inline void check_square(const char *op, const Tensor &A, const char *name = "A") {
  check_matrix(op, A, name);
  TP_CHECK(A.size(-1) == A.size(-2), Runtime, op, ": ", name, " must be batches of square matrices, but they are ",
           A.size(-2), " by ", A.size(-1), " matrices");
}

// The usual entry check of a square-matrix op (inv, det, cholesky, eigh).
inline void check_square_float(const char *op, const Tensor &A) {
  check_square(op, A);
  check_dtype(op, A);
}

// LAPACK indexes with 32-bit ints (the wheel's ILP32 build).
inline int lapack_int(const char *op, int64_t v) {
  TP_CHECK(v <= INT_MAX, Runtime, op, ": matrices with a dimension of ", v, " exceed LAPACK's 32-bit indexing");
  return int(v);
}

// ---- shapes and layout --------------------------------------------------------------------------------------
inline Shape batch_shape(const Tensor &A) { return Shape(A.sizes().begin(), A.sizes().end() - 2); }
inline Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}
inline Shape with_vector(Shape batch, int64_t n) {
  batch.push_back(n);
  return batch;
}

// A new batch of rows x cols matrices in LAPACK's layout (Note [LAPACK layout]).
inline Tensor col_major_empty(const Shape &batch, int64_t rows, int64_t cols, ScalarType dt, Device dev) {
  Shape shape = with_matrix(batch, rows, cols);
  Shape strides(shape.size());
  int64_t s = rows * cols;
  strides[shape.size() - 2] = 1;
  strides[shape.size() - 1] = rows;
  for (int64_t d = int64_t(batch.size()) - 1; d >= 0; --d) { strides[d] = s; s *= batch[d]; }
  return empty_strided_tensor(shape, strides, dt, dev);
}

// A copy of A (any strides, any batch shape) in LAPACK's layout, cast to `dt`.
inline Tensor col_major_copy(const Tensor &A, ScalarType dt) {
  Tensor r = col_major_empty(batch_shape(A), A.size(-2), A.size(-1), dt, A.device());
  if (!A.device().is_meta() && A.numel() > 0) call_op<Tensor>(TP_OP("copy_"), r, A, false);
  return r;
}
inline Tensor col_major_copy(const Tensor &A) { return col_major_copy(A, A.dtype()); }

inline int64_t batch_count(const Tensor &A) { return shape_numel(batch_shape(A)); }

// Note [Vector right-hand sides] (PyTorch's rule for linalg.solve): B is a batch of vectors when it is 1-D, or when
// it has one dim fewer than A and its shape is A's without the last dim. Otherwise B is a batch of matrices. Batch
// dims of A and B broadcast.
inline bool is_vector_rhs(const Tensor &A, const Tensor &B) {
  Shape a_no_last(A.sizes().begin(), A.sizes().end() - 1);
  return B.dim() == 1 || (A.dim() - 1 == B.dim() && B.sizes() == a_no_last);
}

// Run f(b) for every matrix b of a batch. LAPACK on a small matrix is serial and short, so small matrices are
// spread over threads; large ones run one after another and let OpenBLAS thread inside each call
// (Note [GEMM threads] in blas.cpp). f must not throw: it records LAPACK's info, and the caller raises after.
template <typename F> void for_each_matrix(int64_t batch, int64_t n, const F &f) {
  blas_sync_threads();
  const int64_t cost = std::max<int64_t>(n * n * n, 1);
  if (n <= 64 && batch > 1) {
    parallel_for(0, batch, std::max<int64_t>(1, 32768 / cost), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) f(b);
    });
  } else {
    for (int64_t b = 0; b < batch; ++b) f(b);
  }
}

// Raise for the first failing matrix of a batch: "op: (Batch element 3): <message>" as PyTorch words it
// (no batch prefix for a single matrix). msg(info) is the routine-specific text for a positive info, and for a
// negative one too when `msg_negative` (SVD reports non-finite input that way); otherwise a negative info is
// an illegal argument, a bug on our side.
template <typename Msg>
void check_infos(const char *op, const std::vector<int> &infos, bool batched, const Msg &msg,
                 bool msg_negative = false) {
  for (size_t b = 0; b < infos.size(); ++b) {
    int info = infos[b];
    if (info == 0) continue;
    std::string where = batched ? str_cat("(Batch element ", b, "): ") : std::string();
    TP_CHECK(info > 0 || msg_negative, Runtime, op, ": ", where, "Argument ", -info,
             " has illegal value. Most certainly there is a bug in the implementation calling the backend library.");
    fail(ErrorKind::Runtime, op, ": ", where, msg(info));
  }
}

// The messages of a failed factorisation, for check_infos (the CPU kernels and the CUDA ones in
// cuda/ops_linalg_*.cpp raise the same words, as PyTorch's two backends do).
inline std::string singular_inverse_message(int info) {
  return str_cat("The diagonal element ", info,
                 " is zero, the inversion could not be completed because the input matrix is singular.");
}
inline std::string singular_solve_message(int) { return "The solver failed because the input matrix is singular."; }
inline std::string not_positive_definite_message(int info) {
  return str_cat("The factorization could not be completed because the input is not positive-definite (the leading "
                 "minor of order ",
                 info, " is not positive-definite).");
}
inline std::string rank_deficient_lstsq_message(int info) {
  return str_cat("The least squares solution could not be computed because the input matrix does not have full "
                 "rank (error code: ",
                 info, ").");
}
// SVD: a negative info is a non-finite input (LAPACK's gesdd reports it as an illegal argument).
inline std::string svd_failure_message(int info) {
  if (info < 0) return "The algorithm failed to converge because the input matrix contained non-finite values.";
  return str_cat("The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                 "repeated singular values (error code: ",
                 info, ").");
}
inline std::string eigh_failure_message(int info) {
  return str_cat("The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                 "repeated eigenvalues (error code: ",
                 info, ").");
}

// LAPACK's workspace query: call with lwork = -1 and read the optimal size from work[0].
template <typename T> int work_size(T query) { return std::max(1, int(std::real(query))); }

// ---- small wrappers over other ops, for the composites -----------------------------------------------------
inline Tensor mT(const Tensor &A) { return call_op<Tensor>(TP_OP("transpose"), A, int64_t(-2), int64_t(-1)); }
inline Tensor mH(const Tensor &A) {
  Tensor t = mT(A);
  return is_complex(A.dtype()) ? call_op<Tensor>(TP_OP("conj"), t) : t;
}
inline Tensor matmul(const Tensor &a, const Tensor &b) { return call_op<Tensor>(TP_OP("matmul"), a, b); }

// Fill every matrix of a batch with the identity (rectangular ones get ones on the main diagonal), on its device.
inline void fill_identity(const Tensor &t) {
  call_op<Tensor>(TP_OP("fill_"), t, Scalar(0));
  call_op<Tensor>(TP_OP("fill_"), call_op<Tensor>(TP_OP("diagonal"), t, int64_t(0), int64_t(-2), int64_t(-1)),
                  Scalar(1));
}

}  // namespace tp::p10::linalg
