// attention_backward.cpp — scaled_dot_product_attention_backward: the gradients of softmax(Q K^T * scale) V
// (optionally causal) with respect to Q, K and V, without materialising the [..., L, S] probabilities.
//
// Where it sits: the derivative formula of scaled_dot_product_attention (tpx formulas/attention.py) calls it
// for the common case (no attn_mask, no dropout, float32/float64, the same batch shape for Q, K and V, the
// backward not recorded); every other case takes the formula's composite of tp ops (Note [Attention backward
// paths] there). The forward is attention.cpp.
//
// Note [Attention backward]
//   With P = softmax(scale Q K^T) (causal: key j > query i masked out) and O = P V, per batch element:
//     dV = P^T dO,   dP = dO V^T,   dS = P * (dP - rowsum(dP * P)),   dQ = scale dS K,   dK = scale dS^T Q.
//   A task is one batch element (one head); its query rows are visited in blocks of kBwdBlockQ. For a block
//   the scores against every key it may see (causal: keys < i0 + rows) are one GEMM into a per-thread buffer,
//   turned into P with a two-pass softmax per row (the whole row is there, so no running statistics), then
//   dP is a second GEMM into a second buffer, dS replaces dP in place, and three GEMMs add the block's share
//   into dV and dK (beta = 1; the task owns its batch element's dK and dV, so nothing races) and write dQ.
//   Memory beyond the outputs: two kBwdBlockQ x S buffers per thread. Work: the five products of the
//   composite, with causal blocks skipping the keys above the diagonal.
#include <cmath>
#include <tuple>
#include <vector>

#include "dispatch/kernel_box.h"
#include "kernels/binary_common.h"
#include "kernels/blas.h"
#include "kernels/vec_math.h"
#include "loop/parallel.h"

namespace tp::p10 {

namespace {

constexpr int64_t kBwdBlockQ = 64;
const char *kBwdOp = "scaled_dot_product_attention_backward";

template <typename M> M exp_of(M x) {
  if constexpr (std::is_same_v<M, float>) return exp_f32(x);
  else return std::exp(x);
}

// c = alpha * a @ b + beta * c (BLAS when allowed and the layout fits, the reference kernel otherwise).
template <typename M>
void gemm(bool blas, int64_t m, int64_t n, int64_t k, M alpha, MatRef<const M> a, MatRef<const M> b, M beta,
          MatRef<M> c) {
  const Scalar al(static_cast<double>(alpha)), be(static_cast<double>(beta));
  if (blas && gemm_blas<M>(m, n, k, al, a, b, be, c)) return;
  gemm_reference<M>(m, n, k, al, a, b, be, c);
}

// Softmax of each of the bq rows of s (row stride ld, `width` keys; causal: row i keeps keys j <= i0 + i).
template <typename M> void softmax_rows(M *s, int64_t bq, int64_t width, int64_t ld, int64_t i0, bool causal) {
  for (int64_t i = 0; i < bq; ++i) {
    M *row = s + i * ld;
    const int64_t keep = causal ? std::min(width, i0 + i + 1) : width;
    M mx = -INFINITY;
    for (int64_t j = 0; j < keep; ++j) mx = row[j] > mx ? row[j] : mx;
    M sum = 0;
    if (mx == M(-INFINITY)) mx = 0;  // every kept score -inf: the row stays 0 after the division below
    for (int64_t j = 0; j < keep; ++j) sum += (row[j] = exp_of<M>(row[j] - mx));
    const M inv = sum > 0 ? M(1) / sum : M(0);
    for (int64_t j = 0; j < keep; ++j) row[j] *= inv;
    for (int64_t j = keep; j < width; ++j) row[j] = 0;
  }
}

// The gradients of Note [Attention backward] for nb batch elements of contiguous [L, E] / [S, E] / [S, Ev].
template <typename M>
void attention_backward_kernel(int64_t nb, int64_t L, int64_t S, int64_t E, int64_t Ev, M scale, bool causal,
                               const M *q, const M *k, const M *v, const M *dout, M *dq, M *dk, M *dv) {
  const bool nested = in_parallel_region(), blas = gemm_use_blas() && !nested;
  const int64_t task_work = L * std::max<int64_t>(S, 1) * (2 * E + 3 * Ev);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(task_work, 1));
  if (get_num_threads() > 1 && nb > grain && !nested) blas_hold_one_thread();  // Note [GEMM threads]
  parallel_for(0, nb, grain, [&](int64_t b0, int64_t b1) {
    std::vector<M> pbuf(size_t(kBwdBlockQ * S)), dsbuf(size_t(kBwdBlockQ * S));
    for (int64_t b = b0; b < b1; ++b) {
      const M *qb = q + b * L * E, *kb = k + b * S * E, *vb = v + b * S * Ev, *gb = dout + b * L * Ev;
      M *dqb = dq + b * L * E, *dkb = dk + b * S * E, *dvb = dv + b * S * Ev;
      std::fill(dkb, dkb + S * E, M(0));
      std::fill(dvb, dvb + S * Ev, M(0));
      for (int64_t i0 = 0; i0 < L; i0 += kBwdBlockQ) {
        const int64_t bq = std::min(kBwdBlockQ, L - i0);
        const int64_t w = causal ? std::min(S, i0 + bq) : S;  // the keys this block's rows may see
        M *p = pbuf.data(), *ds = dsbuf.data();
        if (w == 0) {
          std::fill(dqb + i0 * E, dqb + (i0 + bq) * E, M(0));
          continue;
        }
        // P = softmax(scale Q_blk K^T): K's (j, e) element read as K^T's (e, j)
        gemm<M>(blas, bq, w, E, scale, {qb + i0 * E, E, 1}, {kb, 1, E}, M(0), {p, w, 1});
        softmax_rows(p, bq, w, w, i0, causal);
        // dP = dO_blk V^T, then dS = P * (dP - rowsum(dP * P)) in place
        gemm<M>(blas, bq, w, Ev, M(1), {gb + i0 * Ev, Ev, 1}, {vb, 1, Ev}, M(0), {ds, w, 1});
        for (int64_t i = 0; i < bq; ++i) {
          const M *pr = p + i * w;
          M *dr = ds + i * w;
          M delta = 0;
          for (int64_t j = 0; j < w; ++j) delta += dr[j] * pr[j];
          for (int64_t j = 0; j < w; ++j) dr[j] = pr[j] * (dr[j] - delta);
        }
        // dV += P^T dO_blk, dQ_blk = scale dS K, dK += scale dS^T Q_blk
        gemm<M>(blas, w, Ev, bq, M(1), {p, 1, w}, {gb + i0 * Ev, Ev, 1}, M(1), {dvb, Ev, 1});
        gemm<M>(blas, bq, E, w, scale, {ds, w, 1}, {kb, E, 1}, M(0), {dqb + i0 * E, E, 1});
        gemm<M>(blas, w, E, bq, scale, {ds, 1, w}, {qb + i0 * E, E, 1}, M(1), {dkb, E, 1});
      }
    }
  });
}

}  // namespace

// (grad_query, grad_key, grad_value) of scaled_dot_product_attention(query, key, value, is_causal=is_causal,
// scale=scale) for query [..., L, E], key [..., S, E], value [..., S, Ev] of one batch shape.
static std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor &grad_out, const Tensor &query, const Tensor &key, const Tensor &value, bool is_causal,
    double scale) {
  TP_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, Runtime, kBwdOp,
           ": query, key and value must have at least 2 dims, got ", query.dim(), ", ", key.dim(), " and ",
           value.dim());
  const Shape bs(query.sizes().begin(), query.sizes().end() - 2);
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1), Ev = value.size(-1);
  Shape ks = bs, vs = bs, gs = bs;
  ks.insert(ks.end(), {S, E});
  vs.insert(vs.end(), {S, Ev});
  gs.insert(gs.end(), {L, Ev});
  TP_CHECK(key.sizes() == ks && value.sizes() == vs, Runtime, kBwdOp, ": expected key ", shape_str(ks),
           " and value ", shape_str(vs), " for query ", shape_str(query.sizes()), ", got key ",
           shape_str(key.sizes()), " and value ", shape_str(value.sizes()));
  TP_CHECK(grad_out.sizes() == gs, Runtime, kBwdOp, ": expected grad_out of shape ", shape_str(gs), ", got ",
           shape_str(grad_out.sizes()));
  const ScalarType dt = query.dtype();
  TP_CHECK((dt == ScalarType::Float32 || dt == ScalarType::Float64) && key.dtype() == dt &&
               value.dtype() == dt && grad_out.dtype() == dt,
           Runtime, kBwdOp, ": expected float32 or float64 grad_out, query, key and value of one dtype, got ",
           scalar_type_name(grad_out.dtype()), ", ", scalar_type_name(dt), ", ", scalar_type_name(key.dtype()),
           " and ", scalar_type_name(value.dtype()));
  Tensor dq = empty_tensor(query.sizes(), dt, query.device()), dk = empty_tensor(ks, dt, query.device()),
         dv = empty_tensor(vs, dt, query.device());
  if (query.device().is_meta() || dk.numel() + dv.numel() + dq.numel() == 0) return {dq, dk, dv};
  auto contig = [](const Tensor &t) { return t.is_contiguous() ? t : call_op<Tensor>(TP_OP("contiguous"), t); };
  Tensor q = contig(query), k = contig(key), v = contig(value), g = contig(grad_out);
  TP_DISPATCH_FLOATING(dt, kBwdOp, [&]<typename M>() {
    if constexpr (std::is_same_v<M, float> || std::is_same_v<M, double>)
      attention_backward_kernel<M>(shape_numel(bs), L, S, E, Ev, M(scale), is_causal, q.data<M>(), k.data<M>(),
                                   v.data<M>(), g.data<M>(), dq.data<M>(), dk.data<M>(), dv.data<M>());
  });
  return {dq, dk, dv};
}

TP_LIBRARY(attention_backward) {
  lib.def("scaled_dot_product_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, "
          "bool is_causal, float scale) -> (Tensor, Tensor, Tensor)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    impl_typed<scaled_dot_product_attention_backward>(lib, "scaled_dot_product_attention_backward", key,
                                                      __LINE__);
}

}  // namespace tp::p10
