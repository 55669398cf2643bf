// linalg_lu.cpp — everything built on the LU factorisation (LAPACK getrf): det, slogdet, logdet, inv, inv_ex,
// solve, solve_ex, and matrix_power (a composite: repeated squaring with matmul, inv for negative powers).
//
// Where it sits: kernels of tp.linalg (src/tensorplay_p10/linalg.py) and of the tp.* aliases PyTorch has
// (tp.det, tp.inverse, tp.logdet, tp.slogdet, tp.matrix_power). Each kernel copies its input into LAPACK's
// layout (Note [LAPACK layout] in linalg_common.h), factors every matrix of the batch as P A = L U, and reads
// what it needs from the factors: det(A) = sign(P) * prod(diag(U)). One function serves CPU and Meta: on meta
// only the shape rules run.
#include "kernels/lapack.h"
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

namespace {

// Note [Small LU]
//   A getrf call through OpenBLAS costs about a microsecond of fixed overhead, more than the whole factorisation
//   of a 4x4 matrix, so batches of small matrices (3x3 transforms, 4x4 poses) were dominated by it. Matrices up
//   to kSmallLU get this unblocked LU instead: LAPACK's getf2 algorithm with the same pivot choice (the first
//   entry of largest |re| + |im| in the column, as i?amax picks it), the same 1-based pivots and the same info
//   (the first exactly-zero pivot), so callers cannot tell the two apart.
constexpr int kSmallLU = 16;

template <typename T> real_t<T> abs1(T v) {
  if constexpr (is_complex_dtype<T>) return std::abs(v.real()) + std::abs(v.imag());
  else return std::abs(v);
}

template <typename T> void getf2_small(int n, T *a, int *ipiv, int *info) {
  *info = 0;
  for (int j = 0; j < n; ++j) {
    T *col = a + int64_t(j) * n;
    int p = j;
    for (int i = j + 1; i < n; ++i)
      if (abs1(col[i]) > abs1(col[p])) p = i;
    ipiv[j] = p + 1;
    if (col[p] != T(0)) {
      if (p != j)
        for (int c = 0; c < n; ++c) std::swap(a[p + int64_t(c) * n], a[j + int64_t(c) * n]);
      const T inv = T(1) / col[j];
      for (int i = j + 1; i < n; ++i) col[i] *= inv;
    } else if (*info == 0) {
      *info = j + 1;
    }
    for (int c = j + 1; c < n; ++c) {  // rank-1 update of the trailing matrix
      T *dst = a + int64_t(c) * n;
      const T f = dst[j];
      if (f != T(0))
        for (int i = j + 1; i < n; ++i) dst[i] -= col[i] * f;
    }
  }
}

// Solve A X = B from getf2_small's factors (LAPACK's getrs with trans='N'): B's row swaps, then L y = b with
// unit-diagonal L, then U x = y. B is n x nrhs, column-major with leading dimension n.
template <typename T> void getrs_small(int n, int nrhs, const T *lu, const int *ipiv, T *b) {
  T inv_diag[kSmallLU];  // one division per row instead of one per row and column (as OpenBLAS's trsm does)
  for (int j = 0; j < n; ++j) inv_diag[j] = T(1) / lu[j + int64_t(j) * n];
  for (int c = 0; c < nrhs; ++c) {
    T *x = b + int64_t(c) * n;
    for (int i = 0; i < n; ++i)
      if (ipiv[i] != i + 1) std::swap(x[i], x[ipiv[i] - 1]);
    for (int j = 0; j < n; ++j)
      for (int i = j + 1; i < n; ++i) x[i] -= lu[i + int64_t(j) * n] * x[j];
    for (int j = n - 1; j >= 0; --j) {
      x[j] *= inv_diag[j];
      for (int i = 0; i < j; ++i) x[i] -= lu[i + int64_t(j) * n] * x[j];
    }
  }
}

// Factor every matrix of `lu` (LAPACK layout, n x n, in place). Pivots go to piv (batch x n, 1-based as LAPACK
// gives them) and LAPACK's info per matrix to infos (k > 0: U[k-1, k-1] is exactly zero).
template <typename T>
void lu_factor(const Tensor &lu, int64_t batch, int n, std::vector<int> &piv, std::vector<int> &infos) {
  piv.assign(size_t(batch) * std::max(n, 1), 0);
  infos.assign(size_t(batch), 0);
  T *base = lu.data<T>();
  for_each_matrix(batch, n, [&](int64_t b) {
    T *a = base + b * int64_t(n) * n;
    int *p = piv.data() + b * std::max(n, 1);
    if (n <= kSmallLU) getf2_small(n, a, p, &infos[b]);
    else lapack::getrf(n, n, a, std::max(n, 1), p, &infos[b]);
  });
}

// sign(P) * prod(diag(U)) for one factored matrix.
template <typename T> T det_of_lu(const T *a, const int *ipiv, int n) {
  T d = T(1);
  for (int i = 0; i < n; ++i) {
    d *= a[i + int64_t(i) * n];
    if (ipiv[i] != i + 1) d = -d;
  }
  return d;
}

// (sign, log|det|) for one factored matrix; sign is a unit complex number for complex dtypes and 0 when
// singular (log|det| = -inf then).
template <typename T> std::pair<T, real_t<T>> slogdet_of_lu(const T *a, const int *ipiv, int n) {
  using R = real_t<T>;
  T sign = T(1);
  R logabs = 0;
  for (int i = 0; i < n; ++i) {
    T v = a[i + int64_t(i) * n];
    R av = std::abs(v);
    if (av == 0) return {T(0), -std::numeric_limits<R>::infinity()};
    sign *= v / av;
    logabs += std::log(av);
    if (ipiv[i] != i + 1) sign = -sign;
  }
  return {sign, logabs};
}

// det, slogdet and logdet share one pass: factor, then fill the outputs from each matrix's LU.
enum class DetKind { Det, SlogDet, LogDet };

std::tuple<Tensor, Tensor> det_impl(const char *op, const Tensor &A, DetKind kind) {
  check_square_float(op, A);
  const Shape batch = batch_shape(A);
  const ScalarType real = to_real(A.dtype());
  Tensor first = empty_tensor(batch, A.dtype(), A.device());
  Tensor second = kind == DetKind::SlogDet ? empty_tensor(batch, real, A.device()) : Tensor();
  const int64_t nb = shape_numel(batch);
  if (A.device().is_meta() || nb == 0) return {first, second};
  const int n = lapack_int(op, A.size(-1));
  Tensor lu = col_major_copy(A);
  dispatch_lapack(A.dtype(), [&]<typename T>() {
    using R = real_t<T>;
    std::vector<int> piv, infos;
    lu_factor<T>(lu, nb, n, piv, infos);
    const T *a = lu.data<T>();
    T *o1 = first.data<T>();
    for (int64_t b = 0; b < nb; ++b) {
      const T *m = a + b * int64_t(n) * n;
      const int *p = piv.data() + b * std::max(n, 1);
      if (kind == DetKind::Det) {
        o1[b] = det_of_lu(m, p, n);
        continue;
      }
      auto [sign, logabs] = slogdet_of_lu(m, p, n);
      if (kind == DetKind::SlogDet) {
        o1[b] = sign;
        second.data<R>()[b] = logabs;
      } else if constexpr (is_complex_dtype<T>) {  // log(det) = log(sign) + log|det|
        o1[b] = sign == T(0) ? T(-std::numeric_limits<R>::infinity()) : std::log(sign) + logabs;
      } else {  // real: the log of a negative determinant is NaN
        o1[b] = std::real(sign) < 0 ? std::numeric_limits<R>::quiet_NaN() : logabs;
      }
    }
  });
  return {first, second};
}

}  // namespace

static Tensor linalg_det(const Tensor &A) { return std::get<0>(det_impl("linalg.det", A, DetKind::Det)); }
static Tensor logdet(const Tensor &A) { return std::get<0>(det_impl("logdet", A, DetKind::LogDet)); }
static std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor &A) {
  return det_impl("linalg.slogdet", A, DetKind::SlogDet);
}

// ---- inv ----------------------------------------------------------------------------------------------------

// getrf, then getri on the factors: A^-1 in LAPACK's layout, and getrf's info per matrix.
static std::tuple<Tensor, Tensor> inv_impl(const char *op, const Tensor &A, bool check_errors) {
  check_square_float(op, A);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch);
  Tensor inv = col_major_copy(A);
  Tensor info = empty_tensor(batch, ScalarType::Int32, A.device());
  if (A.device().is_meta()) return {inv, info};
  const int n = lapack_int(op, A.size(-1));
  std::vector<int> infos(size_t(nb), 0);
  if (n > 0 && nb > 0) {
    dispatch_lapack(A.dtype(), [&]<typename T>() {
      std::vector<int> piv;
      lu_factor<T>(inv, nb, n, piv, infos);
      T query;
      int qinfo;
      lapack::getri(n, inv.data<T>(), n, piv.data(), &query, -1, &qinfo);
      const int lwork = work_size(query);
      for_each_matrix(nb, n, [&](int64_t b) {
        if (infos[b] != 0) return;  // singular: nothing to invert (inv_ex reports it through info)
        T *a = inv.data<T>() + b * int64_t(n) * n;
        if (n <= kSmallLU) {  // Note [Small LU]: solve against the identity, then copy back over the factors
          T eye[kSmallLU * kSmallLU];
          std::fill(eye, eye + n * n, T(0));
          for (int i = 0; i < n; ++i) eye[i + i * n] = T(1);
          getrs_small(n, n, a, piv.data() + b * n, eye);
          std::copy(eye, eye + n * n, a);
          return;
        }
        std::vector<T> work(static_cast<size_t>(lwork));
        int ri;
        lapack::getri(n, a, n, piv.data() + b * n, work.data(), lwork, &ri);
      });
    });
  }
  std::copy(infos.begin(), infos.end(), info.data<int32_t>());
  if (check_errors) check_infos(op, infos, A.dim() > 2, singular_inverse_message);
  return {inv, info};
}

static Tensor linalg_inv(const Tensor &A) { return std::get<0>(inv_impl("linalg.inv", A, true)); }
static std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor &A, bool check_errors) {
  return inv_impl("linalg.inv_ex", A, check_errors);
}

// ---- solve --------------------------------------------------------------------------------------------------
static std::tuple<Tensor, Tensor> solve_impl(const char *op, const Tensor &A, const Tensor &B, bool left,
                                             bool check_errors) {
  check_square_float(op, A);
  TP_CHECK(A.dtype() == B.dtype(), Runtime, op, ": Expected A and B to have the same dtype, but found A of type ",
           torch_dtype_name(A.dtype()), " and B of type ", torch_dtype_name(B.dtype()), " instead");
  const bool vector = is_vector_rhs(A, B);
  TP_CHECK(left || !vector, Runtime, op,
           ": Vector broadcasting of the left hand side is not supported for left=False. In this case "
           "linalg.solve is equivalent to B / A.squeeze(-1)");
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    auto [xt, info] = solve_impl(op, mT(A), mT(B), true, check_errors);
    return {mT(xt), info};
  }
  Tensor B2 = vector ? call_op<Tensor>(TP_OP("unsqueeze"), B, int64_t(-1)) : B;
  const int64_t n = A.size(-1), k = B2.size(-1);
  TP_CHECK(B2.size(-2) == n, Runtime, op, ": Incompatible shapes of A and B for the equation AX = B (", A.size(-2),
           "x", n, " and ", B2.size(-2), "x", k, ")");
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B2), op);
  const int64_t nb = shape_numel(batch);
  Tensor lu = col_major_copy(call_op<Tensor>(TP_OP("expand"), A, with_matrix(batch, n, n)));
  Tensor X = col_major_copy(call_op<Tensor>(TP_OP("expand"), B2, with_matrix(batch, n, k)));
  Tensor info = empty_tensor(batch, ScalarType::Int32, A.device());
  Tensor result = vector ? call_op<Tensor>(TP_OP("squeeze"), X, std::vector<int64_t>{-1}) : X;
  if (A.device().is_meta()) return {result, info};
  std::vector<int> infos(size_t(nb), 0);
  if (n > 0 && nb > 0) {
    const int ni = lapack_int(op, n), ki = lapack_int(op, k);
    dispatch_lapack(A.dtype(), [&]<typename T>() {
      std::vector<int> piv;
      lu_factor<T>(lu, nb, ni, piv, infos);
      if (ki == 0) return;
      for_each_matrix(nb, ni, [&](int64_t b) {
        if (infos[b] != 0) return;
        const T *a = lu.data<T>() + b * n * n;
        T *x = X.data<T>() + b * n * k;
        int ri;
        if (ni <= kSmallLU) getrs_small(ni, ki, a, piv.data() + b * ni, x);  // Note [Small LU]
        else lapack::getrs('N', ni, ki, a, ni, piv.data() + b * ni, x, ni, &ri);
      });
    });
  }
  std::copy(infos.begin(), infos.end(), info.data<int32_t>());
  if (check_errors)  // PyTorch names this one error "torch.linalg.solve"
    check_infos(str_cat("torch.", op).c_str(), infos, batch.size() > 0, singular_solve_message);
  return {result, info};
}

static Tensor linalg_solve(const Tensor &A, const Tensor &B, bool left) {
  return std::get<0>(solve_impl("linalg.solve", A, B, left, true));
}
static std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor &A, const Tensor &B, bool left, bool check_errors) {
  return solve_impl("linalg.solve_ex", A, B, left, check_errors);
}

// ---- matrix_power (composite) -------------------------------------------------------------------------------
// A^n by repeated squaring: about 2 log2(n) matmuls. A^0 is the identity (any dtype, like PyTorch), and a
// negative power is (A^-1)^|n|, so it needs a float or complex A.
static Tensor linalg_matrix_power(const Tensor &A, int64_t n) {
  const char *op = "linalg.matrix_power";
  check_square(op, A);
  if (n == 0) {
    Tensor eye = call_op<Tensor>(TP_OP("eye"), A.size(-1), std::optional<int64_t>(), std::optional(A.dtype()),
                                 std::optional(A.device()));
    return call_op<Tensor>(TP_OP("contiguous"), call_op<Tensor>(TP_OP("expand"), eye, A.sizes()));
  }
  // through the dispatcher (a Composite calls ops, not kernels), so autograd records the inverse too
  Tensor base = n < 0 ? call_op<Tensor>(TP_OP("linalg_inv"), A) : A;
  uint64_t e = n < 0 ? uint64_t(-(n + 1)) + 1 : uint64_t(n);
  Tensor result;
  while (e > 0) {
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    e >>= 1;
    if (e > 0) base = matmul(base, base);
  }
  return result.impl() == A.impl() ? call_op<Tensor>(TP_OP("clone"), A) : result;
}

// Note [Old linalg spellings]
//   det, slogdet, inverse, cholesky, qr and svd (the torch.* spellings of linalg.*) are Composites over the
//   linalg ops, as PyTorch's are: they dispatch, so every backend's linalg kernel serves them (CPU, Meta, CUDA)
//   and their gradients are the linalg ops' (det, slogdet, inverse and cholesky keep their own formula
//   registrations in tpx, which name the same functions).
static Tensor det(const Tensor &A) { return call_op<Tensor>(TP_OP("linalg_det"), A); }
static std::tuple<Tensor, Tensor> slogdet(const Tensor &A) {
  return call_op<std::tuple<Tensor, Tensor>>(TP_OP("linalg_slogdet"), A);
}
static Tensor inverse(const Tensor &A) { return call_op<Tensor>(TP_OP("linalg_inv"), A); }

TP_LIBRARY(linalg_lu) {
  lib.def("linalg_det(Tensor A) -> Tensor");
  lib.def("det(Tensor self) -> Tensor");
  lib.def("logdet(Tensor self) -> Tensor");
  lib.def("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)");
  lib.def("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)");
  lib.def("linalg_inv(Tensor A) -> Tensor");
  lib.def("inverse(Tensor self) -> Tensor");
  lib.def("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)");
  lib.def("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor");
  lib.def("linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, "
          "Tensor info)");
  lib.def("linalg_matrix_power(Tensor self, int n) -> Tensor");
  lib.def("matrix_power(Tensor self, int n) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<linalg_det>(lib, "linalg_det", key, __LINE__);
    impl_typed<logdet>(lib, "logdet", key, __LINE__);
    impl_typed<linalg_slogdet>(lib, "linalg_slogdet", key, __LINE__);
    impl_typed<linalg_inv>(lib, "linalg_inv", key, __LINE__);
    impl_typed<linalg_inv_ex>(lib, "linalg_inv_ex", key, __LINE__);
    impl_typed<linalg_solve>(lib, "linalg_solve", key, __LINE__);
    impl_typed<linalg_solve_ex>(lib, "linalg_solve_ex", key, __LINE__);
  }
  TP_IMPL(lib, "det", Composite, det);  // Note [Old linalg spellings]
  TP_IMPL(lib, "slogdet", Composite, slogdet);
  TP_IMPL(lib, "inverse", Composite, inverse);
  TP_IMPL(lib, "linalg_matrix_power", Composite, linalg_matrix_power);
  TP_IMPL(lib, "matrix_power", Composite, linalg_matrix_power);
}

}  // namespace tp::p10
