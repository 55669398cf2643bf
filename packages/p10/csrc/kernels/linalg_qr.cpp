// linalg_qr.cpp — orthogonal factorisations: the QR decomposition (LAPACK geqrf + orgqr/ungqr) as linalg_qr and
// the old tp.qr (a Composite over it), and least squares (linalg_lstsq, through LAPACK's gels, gelsy, gelsd or gelss driver).
//
// Where it sits: kernels of tp.linalg.qr / tp.linalg.lstsq (src/tensorplay_p10/linalg.py) and tp.qr. Inputs are
// copied into LAPACK's layout (Note [LAPACK layout] in linalg_common.h). geqrf leaves R in the upper triangle
// and Q as k = min(m, n) Householder reflectors below it; orgqr turns those into Q's columns. One function
// serves CPU and Meta.
#include "kernels/lapack.h"
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

// ---- qr -----------------------------------------------------------------------------------------------------
// mode 'reduced': Q m x k, R k x n; 'complete': Q m x m, R m x n; 'r': R only (k x n) and an empty Q.
static std::tuple<Tensor, Tensor> qr_impl(const char *op, const Tensor &A, const std::string &mode) {
  TP_CHECK(mode == "reduced" || mode == "complete" || mode == "r", Runtime, "qr received unrecognized mode '", mode,
           "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_matrix(op, A);
  check_dtype(op, A);
  const Shape batch = batch_shape(A);
  const int64_t nb = shape_numel(batch), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool want_q = mode != "r";
  const int64_t qcols = mode == "complete" ? m : k, rrows = mode == "complete" ? m : k;
  Tensor Q = want_q ? col_major_empty(batch, m, qcols, A.dtype(), A.device())
                    : empty_tensor({0}, A.dtype(), A.device());
  Tensor R = col_major_empty(batch, rrows, n, A.dtype(), A.device());
  if (A.device().is_meta() || nb == 0) return {Q, R};
  Tensor F = col_major_copy(A);
  const int mi = lapack_int(op, m), ni = lapack_int(op, n), ki = int(k), qi = int(qcols), ld = std::max(mi, 1);
  dispatch_lapack(A.dtype(), [&]<typename T>() {
    T query = T(0);
    int info;
    int lwork = 1;
    if (m > 0 && n > 0) {
      lapack::geqrf(mi, ni, F.data<T>(), ld, nullptr, &query, -1, &info);
      lwork = work_size(query);
    }
    if (want_q && m > 0) {
      lapack::orgqr(mi, qi, ki, Q.data<T>(), ld, nullptr, &query, -1, &info);
      lwork = std::max(lwork, work_size(query));
    }
    for_each_matrix(nb, std::max(m, n), [&](int64_t b) {
      std::vector<T> work(static_cast<size_t>(lwork)), tau(static_cast<size_t>(std::max<int64_t>(k, 1)));
      T *f = F.data<T>() + b * m * n;
      int ri;
      if (m > 0 && n > 0) lapack::geqrf(mi, ni, f, ld, tau.data(), work.data(), lwork, &ri);
      T *r = R.data<T>() + b * rrows * n;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < rrows; ++i) r[i + j * rrows] = i <= j ? f[i + j * m] : T(0);
      if (!want_q || m == 0) return;
      T *q = Q.data<T>() + b * m * qcols;
      std::copy(f, f + m * std::min(n, qcols), q);  // the reflectors, in Q's first columns
      lapack::orgqr(mi, qi, ki, q, ld, tau.data(), work.data(), lwork, &ri);
    });
  });
  return {Q, R};
}

static std::tuple<Tensor, Tensor> linalg_qr(const Tensor &A, std::string mode) { return qr_impl("linalg.qr", A, mode); }
// Note [Old linalg spellings] in linalg_lu.cpp
static std::tuple<Tensor, Tensor> qr(const Tensor &A, bool some) {
  return call_op<std::tuple<Tensor, Tensor>>(TP_OP("linalg_qr"), A, std::string(some ? "reduced" : "complete"));
}

TP_LIBRARY(linalg_qr) {
  lib.def("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)");
  lib.def("qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<linalg_qr>(lib, "linalg_qr", key, __LINE__);
  }
  TP_IMPL(lib, "qr", Composite, qr);
}

}  // namespace tp::p10
