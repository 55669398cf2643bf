// linalg_lstsq.cpp — least squares, min_X ||A X - B||_F, through one of LAPACK's drivers as PyTorch offers them
// on CPU: gelsy (the default: QR with column pivoting, handles rank deficiency), gelsd (SVD, divide and
// conquer), gelss (SVD) and gels (plain QR/LQ, full-rank A only).
//
// Where it sits: the kernel of tp.linalg.lstsq (src/tensorplay_p10/linalg.py). A and B are copied into LAPACK's
// layout (Note [LAPACK layout] in linalg_common.h); B's copy gets max(m, n) rows because the drivers write the
// n x k solution over it, and for m > n leave the residual's components in rows n..m-1. One function serves CPU
// and Meta.
//
// Results follow PyTorch: `rank` for every driver but gels, `singular_values` for gelsd/gelss, and `residuals`
// (squared column norms of A X - B) when m > n, the driver is not gelsy, and every matrix has full rank;
// fields a driver does not compute are empty tensors.
#include <limits>

#include "kernels/lapack.h"
#include "kernels/linalg_common.h"

namespace tp::p10 {
using namespace linalg;

static std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor &A, const Tensor &B,
                                                               std::optional<double> rcond,
                                                               std::optional<std::string> driver) {
  const char *op = "torch.linalg.lstsq";
  TP_CHECK(A.dim() >= 2, Runtime, op, ": input must have at least 2 dimensions.");
  TP_CHECK(B.dim() >= 1, Runtime, op, ": other must have at least 1 dimension.");
  check_dtype(op, A);
  TP_CHECK(A.dtype() == B.dtype(), Runtime, op,
           ": Expected input and other to have the same dtype, but got input's dtype ", torch_dtype_name(A.dtype()),
           " and other's dtype ", torch_dtype_name(B.dtype()));
  const int64_t dim_diff = A.dim() - B.dim();
  TP_CHECK(dim_diff == 0 || dim_diff == 1, Runtime, op,
           ": input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  const bool vector = dim_diff == 1;  // B is a batch of vectors (PyTorch's rule for lstsq)
  Tensor B2 = vector ? call_op<Tensor>(TP_OP("unsqueeze"), B, int64_t(-1)) : B;
  TP_CHECK(A.size(-2) == B2.size(-2), Runtime, op, vector ? ": input.size(-2) should match other.size(-1)"
                                                          : ": input.size(-2) should match other.size(-2)");
  const std::string drv = driver.value_or("gelsy");
  TP_CHECK(drv == "gels" || drv == "gelsy" || drv == "gelsd" || drv == "gelss", Runtime, op,
           ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");

  const int64_t m = A.size(-2), n = A.size(-1), k = B2.size(-1), rows = std::max(m, n), mn = std::min(m, n);
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B2), op);
  const int64_t nb = shape_numel(batch);
  const ScalarType real = to_real(A.dtype());
  const Device dev = A.device();
  const bool has_sv = drv == "gelsd" || drv == "gelss";
  Tensor F = col_major_copy(call_op<Tensor>(TP_OP("expand"), A, with_matrix(batch, m, n)));
  Tensor X = col_major_empty(batch, rows, k, A.dtype(), dev);
  Tensor rank = drv == "gels" ? empty_tensor({0}, ScalarType::Int64, dev) : empty_tensor(batch, ScalarType::Int64, dev);
  Tensor sv = has_sv ? empty_tensor(with_vector(batch, mn), real, dev) : empty_tensor({0}, real, dev);
  Tensor residuals = empty_tensor({0}, real, dev);
  auto solution_of = [&](const Tensor &x) {
    Tensor s = call_op<Tensor>(TP_OP("narrow"), x, int64_t(-2), int64_t(0), n);
    return vector ? call_op<Tensor>(TP_OP("squeeze"), s, std::vector<int64_t>{-1}) : s;
  };
  if (dev.is_meta()) {
    if (m > n && drv != "gelsy") residuals = empty_tensor(with_vector(batch, k), real, dev);  // gels always has them
    return {solution_of(X), residuals, rank, sv};
  }
  if (X.numel() > 0) {
    call_op<Tensor>(TP_OP("fill_"), X, Scalar(0));
    if (m > 0 && k > 0)
      call_op<Tensor>(TP_OP("copy_"), call_op<Tensor>(TP_OP("narrow"), X, int64_t(-2), int64_t(0), m),
                      call_op<Tensor>(TP_OP("expand"), B2, with_matrix(batch, m, k)), false);
  }
  if (rank.numel() > 0) call_op<Tensor>(TP_OP("fill_"), rank, Scalar(0));
  if (sv.numel() > 0) call_op<Tensor>(TP_OP("fill_"), sv, Scalar(0));
  std::vector<int> infos(size_t(nb), 0);
  bool full_rank = true;
  if (nb > 0 && m > 0 && n > 0 && k > 0) {
    const int mi = lapack_int(op, m), ni = lapack_int(op, n), ki = lapack_int(op, k), ldb = lapack_int(op, rows);
    dispatch_lapack(A.dtype(), [&]<typename T>() {
      using R = real_t<T>;
      const R rc = rcond ? R(*rcond) : std::numeric_limits<R>::epsilon() * R(rows);
      // Workspace sizes: one query for the driver; rwork and iwork by LAPACK's documented bounds, generously.
      T q;
      int qinfo, qrank, iq = 1;
      std::vector<int> jq(static_cast<size_t>(n));
      std::vector<R> sq(static_cast<size_t>(mn));
      std::vector<R> rq(static_cast<size_t>(std::max<int64_t>(1, 10 * rows + 2 * rows * k + 64 * mn)));
      T *f0 = F.data<T>(), *x0 = X.data<T>();
      if (drv == "gels") lapack::gels('N', mi, ni, ki, f0, mi, x0, ldb, &q, -1, &qinfo);
      else if (drv == "gelsy")
        lapack::gelsy(mi, ni, ki, f0, mi, x0, ldb, jq.data(), rc, &qrank, &q, -1, rq.data(), &qinfo);
      else if (drv == "gelsd")
        lapack::gelsd(mi, ni, ki, f0, mi, x0, ldb, sq.data(), rc, &qrank, &q, -1, rq.data(), &iq, &qinfo);
      else lapack::gelss(mi, ni, ki, f0, mi, x0, ldb, sq.data(), rc, &qrank, &q, -1, rq.data(), &qinfo);
      const int lwork = work_size(q);
      // gelsd's query returns the real workspace it needs in rwork[0] (complex) and iwork in iq.
      const int64_t lrwork = std::max<int64_t>({int64_t(std::real(rq[0])), 5 * mn, 2 * n, 1}) +
                             (drv == "gelsd" ? 10 * rows + 2 * rows * k + 64 * mn : 0);
      const int64_t liwork = std::max<int64_t>(iq, 1);
      for_each_matrix(nb, rows, [&](int64_t b) {
        std::vector<T> work(static_cast<size_t>(lwork));
        std::vector<R> rwork(static_cast<size_t>(lrwork));
        std::vector<int> iwork(static_cast<size_t>(liwork)), jpvt(static_cast<size_t>(n), 0);
        std::vector<R> s(static_cast<size_t>(mn));
        T *f = f0 + b * m * n, *x = x0 + b * rows * k;
        int r = int(mn), &info = infos[b];
        if (drv == "gels") lapack::gels('N', mi, ni, ki, f, mi, x, ldb, work.data(), lwork, &info);
        else if (drv == "gelsy")
          lapack::gelsy(mi, ni, ki, f, mi, x, ldb, jpvt.data(), rc, &r, work.data(), lwork, rwork.data(), &info);
        else if (drv == "gelsd")
          lapack::gelsd(mi, ni, ki, f, mi, x, ldb, s.data(), rc, &r, work.data(), lwork, rwork.data(), iwork.data(),
                        &info);
        else lapack::gelss(mi, ni, ki, f, mi, x, ldb, s.data(), rc, &r, work.data(), lwork, rwork.data(), &info);
        if (drv != "gels") rank.data<int64_t>()[b] = r;
        if (has_sv) std::copy(s.begin(), s.end(), sv.data<R>() + b * mn);
      });
    });
    check_infos(op, infos, batch.size() > 0, rank_deficient_lstsq_message);
    if (has_sv)
      for (int64_t b = 0; b < nb; ++b) full_rank = full_rank && rank.data<int64_t>()[b] == n;
  } else if (drv != "gels" && nb > 0 && k == 0 && m > 0 && n > 0) {
    full_rank = false;  // no right-hand side: LAPACK is not called, rank stays 0 as in PyTorch's empty path
  }
  if (m > n && drv != "gelsy" && full_rank) {  // squared norms of rows n..m-1 of each column
    residuals = call_op<Tensor>(TP_OP("full"), with_vector(batch, k), Scalar(0), std::optional(real),
                                std::optional(dev));
    dispatch_lapack(A.dtype(), [&]<typename T>() {
      using R = real_t<T>;
      const T *x0 = X.data<T>();
      R *o = residuals.data<R>();
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t j = 0; j < k; ++j) {
          R acc = 0;
          for (int64_t i = n; i < m; ++i) acc += std::norm(x0[b * rows * k + i + j * rows]);
          o[b * k + j] = acc;
        }
    });
  }
  return {solution_of(X), residuals, rank, sv};
}

TP_LIBRARY(linalg_lstsq) {
  lib.def("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, "
          "Tensor residuals, Tensor rank, Tensor singular_values)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) impl_typed<linalg_lstsq>(lib, "linalg_lstsq", key, __LINE__);
}

}  // namespace tp::p10
