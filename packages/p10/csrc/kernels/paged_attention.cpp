// paged_attention.cpp — paged_attention: attention of the newest T queries of each sequence over keys and
// values kept in fixed-size blocks of a shared pool (vLLM's PagedAttention layout), and
// _paged_attention_reference, the same result from a gather and scaled_dot_product_attention.
//
// Where it sits: the decode-time read of tensorplay.nn.cache.PagedCache. A kernel of its own because the
// composite first gathers every row's blocks into a contiguous [Hkv, S, D] copy (S up to the context length)
// for each decode step; the kernel reads the blocks where they lie, one block at a time, with the online
// softmax of attention.cpp (Note [Online softmax] there). Its derivative (tpx formulas/recurrent.py) goes
// through the reference (Note [Delta rule backward paths] there): an inference op, but one whose gradients are
// still exact. Semantics and checks: Note [Paged attention semantics] in paged_attention.h; the CUDA kernel is
// csrc/cuda/ops_paged_attention.cpp.
//
// Note [Paged attention kernel]
//   A task is one (b, kv head) pair: the H / Hkv query heads that share the kv head times the T queries form
//   the task's rows, so each key and value block is read once per task, not once per query head. For each of
//   the row's blocks: scores of every row against the block's visible keys, the online-softmax update of the
//   row's running max, sum and accumulator, then acc += p v. Memory beyond the output: rows x (block_size + Dv)
//   per thread. Dot products keep kLanes partial sums so the vectoriser can use them (one running sum would fix
//   the order of the additions); the float32 task is built for AVX2+FMA and the baseline (TP_SIMD_LOOP).
#include <cmath>
#include <vector>

#include "kernels/paged_attention.h"
#include "loop/parallel.h"
#include "loop/simd.h"

namespace tp::p10 {

namespace {

const char *kOp = "paged_attention";

constexpr int kLanes = 8;

template <typename M> TP_VEC_INLINE M dot(const M *__restrict a, const M *__restrict b, int64_t n) {
  M lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int u = 0; u < kLanes; ++u) lane[u] += a[i + u] * b[i + u];
  M s = 0;
  for (; i < n; ++i) s += a[i] * b[i];
  for (M l : lane) s += l;
  return s;
}

// One task of Note [Paged attention kernel]: rows g * T + i for the group's query heads g and queries i.
// buf: rows * (bs + Dv + 2) values.
template <typename M>
TP_VEC_INLINE void paged_task(const PagedDims &d, int64_t b, int64_t hk, M scale, const M *q, const M *kp,
                              const M *vp, const int64_t *table, int64_t S, M *out, M *buf) {
  const int64_t G = d.H / d.Hkv, T = d.T, D = d.D, Dv = d.Dv, bs = d.bs, rows = G * T;
  M *s = buf, *acc = s + rows * bs, *mx = acc + rows * Dv, *sum = mx + rows;
  for (int64_t r = 0; r < rows * Dv; ++r) acc[r] = 0;
  for (int64_t r = 0; r < rows; ++r) mx[r] = -INFINITY, sum[r] = 0;
  const int64_t nblk = bs ? (S + bs - 1) / bs : 0;
  for (int64_t j = 0; j < nblk; ++j) {
    const int64_t id = table[b * d.bpr + j], n = std::min(bs, S - j * bs);
    const M *kb = kp + (id * bs * d.Hkv + hk) * D, *vb = vp + (id * bs * d.Hkv + hk) * Dv;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t g = r / T, i = r % T;
      // query i sits at S - T + i and sees the keys up to it (Note [Paged attention semantics])
      const int64_t visible = std::min(n, S - T + i - j * bs + 1);
      if (visible <= 0) continue;
      const M *qr = q + ((b * d.H + hk * G + g) * T + i) * D;
      M *sr = s + r * bs, bmax = -INFINITY;
      for (int64_t c = 0; c < visible; ++c) {
        sr[c] = scale * dot(qr, kb + c * d.Hkv * D, D);
        bmax = sr[c] > bmax ? sr[c] : bmax;
      }
      const M mnew = bmax > mx[r] ? bmax : mx[r];
      const M alpha = mx[r] == M(-INFINITY) ? M(0) : std::exp(mx[r] - mnew);
      M *ar = acc + r * Dv, bsum = 0;
      for (int64_t e = 0; e < Dv; ++e) ar[e] *= alpha;
      for (int64_t c = 0; c < visible; ++c) {
        const M p = std::exp(sr[c] - mnew);
        bsum += p;
        const M *vr = vb + c * d.Hkv * Dv;
        for (int64_t e = 0; e < Dv; ++e) ar[e] += p * vr[e];
      }
      sum[r] = sum[r] * alpha + bsum;
      mx[r] = mnew;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t g = r / T, i = r % T;
    M *o = out + ((b * d.H + hk * G + g) * T + i) * Dv;
    const M inv = sum[r] > 0 ? M(1) / sum[r] : M(0);  // T <= S: every row sees key 0, so sum > 0
    for (int64_t e = 0; e < Dv; ++e) o[e] = acc[r * Dv + e] * inv;
  }
}

TP_SIMD_LOOP(void, paged_task_f32,
             (const PagedDims &d, int64_t b, int64_t hk, float scale, const float *q, const float *kp,
              const float *vp, const int64_t *table, int64_t S, float *out, float *buf),
             (d, b, hk, scale, q, kp, vp, table, S, out, buf),
             { paged_task<float>(d, b, hk, scale, q, kp, vp, table, S, out, buf); })

Tensor compute_operand(const Tensor &t, ScalarType mt) {
  Tensor r = t.dtype() == mt ? t : cast_to(t, mt);
  return r.is_contiguous() ? r : call_op<Tensor>(TP_OP("contiguous"), r);
}

}  // namespace

static Tensor paged_attention(const Tensor &query, const Tensor &key_pool, const Tensor &value_pool,
                              const Tensor &block_table, const Tensor &seq_lens, std::optional<double> scale) {
  const PagedDims d = check_paged_args(kOp, query, key_pool, value_pool, block_table, seq_lens);
  Tensor out = empty_tensor({d.B, d.H, d.T, d.Dv}, d.mt, query.device());
  if (query.device().is_meta()) return empty_tensor(out.sizes(), query.dtype(), query.device());
  if (out.numel() == 0) return query.dtype() == d.mt ? out : cast_to(out, query.dtype());
  Tensor q = compute_operand(query, d.mt), kp = compute_operand(key_pool, d.mt),
         vp = compute_operand(value_pool, d.mt), table = compute_operand(block_table, ScalarType::Int64),
         lens = compute_operand(seq_lens, ScalarType::Int64);
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(d.D));
  const int64_t tasks = d.B * d.Hkv, rows = (d.H / d.Hkv) * d.T;
  // work per task ~ rows * S * (D + Dv); take the longest row as the measure
  int64_t smax = 1;
  for (int64_t b = 0; b < d.B; ++b) smax = std::max(smax, lens.data<int64_t>()[b]);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(rows * smax * (d.D + d.Dv), 1));
  TP_DISPATCH_FLOATING(d.mt, kOp, [&]<typename M>() {
    if constexpr (std::is_same_v<M, float> || std::is_same_v<M, double>) {
      parallel_for(0, tasks, grain, [&](int64_t t0, int64_t t1) {
        std::vector<M> buf(size_t(rows * (d.bs + d.Dv + 2)));
        for (int64_t task = t0; task < t1; ++task) {
          const int64_t b = task / d.Hkv, hk = task % d.Hkv, S = lens.data<int64_t>()[b];
          if constexpr (std::is_same_v<M, float>)
            paged_task_f32(d, b, hk, float(sc), q.data<M>(), kp.data<M>(), vp.data<M>(), table.data<int64_t>(), S,
                           out.data<M>(), buf.data());
          else
            paged_task<M>(d, b, hk, M(sc), q.data<M>(), kp.data<M>(), vp.data<M>(), table.data<int64_t>(), S,
                          out.data<M>(), buf.data());
        }
      });
    }
  });
  return query.dtype() == d.mt ? out : cast_to(out, query.dtype());
}

// ---- the reference: gather the blocks, then scaled_dot_product_attention -----------------------------------

// Note [Paged attention reference]
//   Per row b: the row's blocks gathered from the pools (index_select), flattened to tokens and cut to S_b,
//   heads moved first ([Hkv, S_b, D]); then scaled_dot_product_attention with enable_gqa and the bottom-right
//   causal mask of Note [Paged attention semantics] (a bool [T, S_b] constant: keep token s for query i when
//   s <= S_b - T + i). Ops only, so autograd differentiates it (the gradient of paged_attention).
static Tensor paged_attention_reference(const Tensor &query, const Tensor &key_pool, const Tensor &value_pool,
                                        const Tensor &block_table, const Tensor &seq_lens,
                                        std::optional<double> scale) {
  const char *op = "_paged_attention_reference";
  const PagedDims d = check_paged_args(op, query, key_pool, value_pool, block_table, seq_lens);
  TP_CHECK(!query.device().is_meta(), NotImplemented, op, ": needs seq_lens' values, which a meta tensor lacks");
  const Tensor lens = paged_host_int64(seq_lens);  // the lengths decide shapes: their values on the host
  std::vector<Tensor> rows;
  for (int64_t b = 0; b < d.B; ++b) {
    const int64_t S = lens.data<int64_t>()[b], nb = d.bs ? (S + d.bs - 1) / d.bs : 0;
    Tensor ids = call_op<Tensor>(TP_OP("select"), block_table, int64_t(0), b);
    ids = call_op<Tensor>(TP_OP("narrow"), ids, int64_t(0), int64_t(0), nb);
    auto gather = [&](const Tensor &pool) {  // [nb, bs, Hkv, X] -> [Hkv, S, X]
      Tensor t = call_op<Tensor>(TP_OP("index_select"), pool, int64_t(0), ids);
      t = call_op<Tensor>(TP_OP("reshape"), t, Shape{nb * d.bs, d.Hkv, pool.size(3)});
      t = call_op<Tensor>(TP_OP("narrow"), t, int64_t(0), int64_t(0), S);
      return call_op<Tensor>(TP_OP("permute"), t, std::vector<int64_t>{1, 0, 2});
    };
    Tensor keep = empty_tensor({d.T, S}, ScalarType::Bool, Device{});  // built on the host, then moved
    for (int64_t i = 0; i < d.T; ++i)
      for (int64_t s = 0; s < S; ++s) keep.data<bool>()[i * S + s] = s <= S - d.T + i;
    if (!query.device().is_cpu())
      keep = call_op<Tensor>(TP_OP("to"), keep, std::optional<ScalarType>(), std::optional<Device>(query.device()),
                             false);
    Tensor qb = call_op<Tensor>(TP_OP("select"), query, int64_t(0), b);
    rows.push_back(call_op<Tensor>(TP_OP("scaled_dot_product_attention"), qb, gather(key_pool), gather(value_pool),
                                   std::optional<Tensor>(keep), 0.0, false, scale, true));
  }
  if (d.B == 0)
    return call_op<Tensor>(TP_OP("full"), Shape{0, d.H, d.T, d.Dv}, Scalar(0.0),
                           std::optional<ScalarType>(query.dtype()), std::optional<Device>(query.device()));
  return call_op<Tensor>(TP_OP("stack"), rows, int64_t(0));
}

TP_LIBRARY(paged_attention) {
  lib.def("paged_attention(Tensor query, Tensor key_pool, Tensor value_pool, Tensor block_table, Tensor seq_lens, "
          "float? scale=None) -> Tensor");
  lib.def("_paged_attention_reference(Tensor query, Tensor key_pool, Tensor value_pool, Tensor block_table, "
          "Tensor seq_lens, float? scale=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    impl_typed<paged_attention>(lib, "paged_attention", key, __LINE__);
  TP_IMPL(lib, "_paged_attention_reference", Composite, paged_attention_reference);
}

}  // namespace tp::p10
