// blas.h — the GEMM entry points matmul.cpp builds on: OpenBLAS (fast path) and the readable blocked reference.
//
// Where it sits: kernels/matmul.cpp and kernels/einsum.cpp reduce every product to one call of gemm() on
// strided matrix views. gemm() picks OpenBLAS (blas.cpp, from the scipy-openblas32 wheel) for float32/64 and
// complex64/128 when the layout can be described to BLAS, and the blocked reference (gemm_reference.cpp)
// otherwise: integers, 16-bit floats, and matrices BLAS cannot address (see Note [BLAS layouts] in blas.cpp).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/value.h"

namespace tp::p10 {

// A strided matrix: element (i, j) lies at data[i * rs + j * cs] (strides in elements, any sign-free layout).
template <typename T> struct MatRef {
  T *data;
  int64_t rs, cs;
};

// C = alpha * A @ B + beta * C with A m x k, B k x n, C m x n. beta == 0 never reads C (NaNs in it vanish, as in
// BLAS and PyTorch's addmm). Defined in gemm_reference.cpp for every real and complex dtype but bool; the
// accumulator is opmath_t<T> (float for 16-bit floats) and int64_t for integers (modular like PyTorch's).
template <typename T>
void gemm_reference(int64_t m, int64_t n, int64_t k, const Scalar &alpha, MatRef<const T> a, MatRef<const T> b,
                    const Scalar &beta, MatRef<T> c);

// The same product through OpenBLAS; false (and nothing done) when the dtype or layout does not fit BLAS, so the
// caller can copy an operand or fall back. T is float, double, complex64 or complex128.
template <typename T>
bool gemm_blas(int64_t m, int64_t n, int64_t k, const Scalar &alpha, MatRef<const T> a, MatRef<const T> b,
               const Scalar &beta, MatRef<T> c);

// Is there a BLAS routine for this dtype? (float32, float64, complex64, complex128)
bool blas_supports(ScalarType t);

// Give OpenBLAS's own thread pool tp.get_num_threads() threads (Note [GEMM threads] in blas.cpp).
void blas_sync_threads();
// Hold OpenBLAS at one thread: what every GEMM wants (Note [GEMM threads]). Call it outside parallel regions.
void blas_hold_one_thread();

// C[i] = alpha * A[i] @ B[i] + beta * C[i] for 3-D tensors of one dtype (batch strides may be 0). Uses BLAS
// where it can, copying an operand that BLAS cannot address, and the reference kernel otherwise. Raises a
// TypeError naming `op` for bool. Does nothing on meta tensors.
void gemm_batched(const char *op, const Tensor &a, const Tensor &b, const Tensor &c, const Scalar &alpha,
                  const Scalar &beta);

// CUDA's matrix products (cuBLAS) take float16, bfloat16, float32 and float64; any other dtype is a
// NotImplementedError naming `op`, as in PyTorch. One rule for the CUDA backend (cuda/ops_matmul.cpp) and for
// fake CUDA tensors, whose meta rule is gemm_batched's (Note [Fake tensors] in dispatch/fake_tensor.cpp).
[[noreturn]] void refuse_cuda_matmul_dtype(const char *op, ScalarType t);

// Switch BLAS off (every product then runs the reference kernel) and on again: the private op
// `_set_gemm_blas(bool)` in matmul.cpp, so tests can compare the two paths on the same inputs.
void set_gemm_use_blas(bool on);
bool gemm_use_blas();

}  // namespace tp::p10
