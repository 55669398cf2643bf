// blas.cpp — the OpenBLAS binding (scipy-openblas32 wheel) and gemm_batched, which chooses BLAS or the reference.
//
// Where it sits: below kernels/matmul.cpp. The library comes from the scipy-openblas32 wheel: CMakeLists.txt links
// its imported target, and tensorplay_p10/__init__.py imports scipy_openblas32 first so the .so is loaded.
// Its cblas.h already carries the wheel's `scipy_` symbol prefix.
#include "kernels/blas.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <climits>

#include "dispatch/kernel_box.h"
#include "loop/parallel.h"

namespace tp::p10 {

static std::atomic<bool> g_use_blas{true};
void set_gemm_use_blas(bool on) { g_use_blas = on; }
bool gemm_use_blas() { return g_use_blas; }

bool blas_supports(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Complex64 ||
         t == ScalarType::Complex128;
}

// Note [GEMM threads]
//   OpenBLAS (the wheel's pthreads build) has a thread pool of its own, separate from our OpenMP one. Two pools
//   on the same cores fight: after a GEMM, OpenBLAS's workers busy-wait while the next op (x @ w + b) runs on
//   the OpenMP pool, and a 65k-element add measured 5 ms instead of 10 us on 2 cores. So GEMM runs on our
//   pool too: gemm_blas cuts C into one block of rows (or columns) per thread and each thread calls a
//   single-threaded OpenBLAS on its block (OpenBLAS is held at 1 thread for that). LAPACK routines, which
//   parallelise inside, get tp.get_num_threads() OpenBLAS threads through blas_sync_threads().
//   GEMM is never split when the caller is itself inside a parallel region (conv, attention): those callers
//   hold OpenBLAS at one thread and parallelise over their own work.
void blas_sync_threads() { scipy_openblas_set_num_threads(get_num_threads()); }
void blas_hold_one_thread() { scipy_openblas_set_num_threads(1); }

// Note [BLAS layouts]
//   BLAS addresses a matrix by a pointer, a leading dimension and a transpose flag. A row-major view (column
//   stride 1, row stride >= columns) is passed as is; a column-major one (row stride 1, e.g. x.t() of a
//   contiguous x) is passed with the transpose flag, so transposed inputs are never copied. A stride that
//   does not matter (a dim of size 1) is normalised first. Anything else (slices with step, expanded dims)
//   does not fit, and the caller copies that operand to a contiguous one.
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool &trans, int64_t &ld) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? std::max<int64_t>(cols, 1) : 1;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) { trans = false; ld = rs; }
  else if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) { trans = true; ld = cs; }
  else return false;
  return ld <= INT_MAX;
}

template <typename T> static void cblas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, T alpha,
                                             const T *a, int lda, const T *b, int ldb, T beta, T *c, int ldc) {
  if constexpr (std::is_same_v<T, float>)
    scipy_cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, double>)
    scipy_cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, complex64>)
    scipy_cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  else
    scipy_cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

// One single-threaded BLAS call on a block that fits (the layouts were checked by the caller).
template <typename T>
static void gemm_block(int64_t m, int64_t n, int64_t k, T al, MatRef<const T> a, MatRef<const T> b, T be,
                       MatRef<T> c) {
  bool ta, tb, tc;
  int64_t lda, ldb, ldc;
  blas_layout(m, k, a.rs, a.cs, ta, lda);
  blas_layout(k, n, b.rs, b.cs, tb, ldb);
  blas_layout(m, n, c.rs, c.cs, tc, ldc);
  if (!tc) {
    cblas_gemm<T>(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), al,
                  a.data, int(lda), b.data, int(ldb), be, c.data, int(ldc));
  } else {  // column-major C: compute C^T = B^T @ A^T, whose row-major layout is C's memory
    cblas_gemm<T>(tb ? CblasNoTrans : CblasTrans, ta ? CblasNoTrans : CblasTrans, int(n), int(m), int(k), al,
                  b.data, int(ldb), a.data, int(lda), be, c.data, int(ldc));
  }
}

template <typename T>
bool gemm_blas(int64_t m, int64_t n, int64_t k, const Scalar &alpha, MatRef<const T> a, MatRef<const T> b,
               const Scalar &beta, MatRef<T> c) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || k == 0) return false;  // k == 0: the reference scales C
  bool tr;
  int64_t ld;
  if (!blas_layout(m, k, a.rs, a.cs, tr, ld) || !blas_layout(k, n, b.rs, b.cs, tr, ld) ||
      !blas_layout(m, n, c.rs, c.cs, tr, ld))
    return false;
  const T al = alpha.to<T>(), be = beta.to<T>();
  // Note [GEMM threads]: split C over our threads when there is enough work (~2 MFLOP per thread).
  const int threads = in_parallel_region() ? 1 : get_num_threads();
  const int64_t work = m * n * k;
  const bool by_rows = m >= n;
  const int64_t along = by_rows ? m : n;
  const int64_t parts = std::min<int64_t>({threads, std::max<int64_t>(1, work >> 20), along / 16 + 1});
  if (!in_parallel_region()) blas_hold_one_thread();
  if (parts <= 1) {
    gemm_block<T>(m, n, k, al, a, b, be, c);
    return true;
  }
  // Blocks of whole 16-row (or column) panels, one per thread.
  const int64_t per = ((along + parts - 1) / parts + 15) / 16 * 16;
  parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t lo = p * per, len = std::min(along, lo + per) - lo;
      if (len <= 0) continue;
      if (by_rows)
        gemm_block<T>(len, n, k, al, {a.data + lo * a.rs, a.rs, a.cs}, b, be, {c.data + lo * c.rs, c.rs, c.cs});
      else
        gemm_block<T>(m, len, k, al, a, {b.data + lo * b.cs, b.rs, b.cs}, be, {c.data + lo * c.cs, c.rs, c.cs});
    }
  });
  return true;
}

template bool gemm_blas<float>(int64_t, int64_t, int64_t, const Scalar &, MatRef<const float>, MatRef<const float>,
                               const Scalar &, MatRef<float>);
template bool gemm_blas<double>(int64_t, int64_t, int64_t, const Scalar &, MatRef<const double>,
                                MatRef<const double>, const Scalar &, MatRef<double>);
template bool gemm_blas<complex64>(int64_t, int64_t, int64_t, const Scalar &, MatRef<const complex64>,
                                   MatRef<const complex64>, const Scalar &, MatRef<complex64>);
template bool gemm_blas<complex128>(int64_t, int64_t, int64_t, const Scalar &, MatRef<const complex128>,
                                    MatRef<const complex128>, const Scalar &, MatRef<complex128>);

// Does every matrix of a 3-D tensor fit BLAS? (Note [BLAS layouts])
static bool fits_blas(const Tensor &t) {
  bool tr;
  int64_t ld;
  return blas_layout(t.size(1), t.size(2), t.stride(1), t.stride(2), tr, ld);
}

void refuse_cuda_matmul_dtype(const char *op, ScalarType t) {
  TP_CHECK(!is_complex(t), NotImplemented, op, ": complex dtypes (", scalar_type_name(t),
           ") have no CUDA kernels yet");
  fail(ErrorKind::NotImplemented, op, ": CUDA matrix products support float16, bfloat16, float32 and float64, "
       "but got ", scalar_type_name(t));
}

void gemm_batched(const char *op, const Tensor &a_in, const Tensor &b_in, const Tensor &c_in, const Scalar &alpha,
                  const Scalar &beta) {
  ScalarType dt = c_in.dtype();
  if (dt == ScalarType::Bool) throw_unsupported_dtype(op, dt);
  if (a_in.is_fake() && a_in.logical_device().type == DeviceType::CUDA) [[unlikely]] {
    if (dt != ScalarType::Float16 && dt != ScalarType::BFloat16 && dt != ScalarType::Float32 &&
        dt != ScalarType::Float64)
      refuse_cuda_matmul_dtype(op, dt);
  }
  if (c_in.device().is_meta() || c_in.numel() == 0) return;
  const int64_t batch = c_in.size(0), m = c_in.size(1), n = c_in.size(2), k = a_in.size(2);
  bool use_blas = g_use_blas && blas_supports(dt) && k > 0 && !in_parallel_region();
  Tensor a = a_in, b = b_in, c = c_in;
  if (use_blas) {  // copy what BLAS cannot address, once for the whole batch
    if (!fits_blas(a)) a = call_op<Tensor>(TP_OP("contiguous"), a);
    if (!fits_blas(b)) b = call_op<Tensor>(TP_OP("contiguous"), b);
    if (!fits_blas(c)) {
      c = empty_tensor(c_in.sizes(), dt, c_in.device());
      if (beta.to_complex() != std::complex<double>(0)) call_op<Tensor>(TP_OP("copy_"), c, c_in, false);
    }
  }
  TP_DISPATCH_ALL(dt, op, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T *pa = a.data<T>(), *pb = b.data<T>();
      T *pc = c.data<T>();
      for (int64_t i = 0; i < batch; ++i) {
        MatRef<const T> ma{pa + i * a.stride(0), a.stride(1), a.stride(2)};
        MatRef<const T> mb{pb + i * b.stride(0), b.stride(1), b.stride(2)};
        MatRef<T> mc{pc + i * c.stride(0), c.stride(1), c.stride(2)};
        bool done = false;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex64> ||
                      std::is_same_v<T, complex128>) {
          if (use_blas) done = gemm_blas<T>(m, n, k, alpha, ma, mb, beta, mc);
        }
        if (!done) gemm_reference<T>(m, n, k, alpha, ma, mb, beta, mc);
      }
    }
  });
  if (c.impl() != c_in.impl()) call_op<Tensor>(TP_OP("copy_"), c_in, c, false);
}

}  // namespace tp::p10
