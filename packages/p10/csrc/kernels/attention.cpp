// attention.cpp — scaled_dot_product_attention: softmax(Q K^T * scale + mask) @ V, memory-efficient on CPU.
//
// Where it sits: the op behind nn.functional.scaled_dot_product_attention. A kernel of its own rather than a
// Composite of matmul/softmax/matmul (STYLE.md rule 2): it is hot (every transformer layer) and the composite
// materialises the [..., L, S] score matrix, which for long sequences is far larger than Q, K and V together.
// Here keys are visited in blocks with an online softmax (Note [Online softmax]), so the memory beyond the
// output is a few blocks per thread. Products go through GEMM on blocks (kernels/blas.h); the readable
// composite it is tested against lives in tests/test_attention.py (`reference_attention`).
//
// Note [Attention semantics]
//   query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]; the leading dims broadcast as in
//   matmul. scale defaults to 1 / sqrt(E). attn_mask broadcasts to [..., L, S]: a bool mask keeps the scores
//   where it is True (False becomes -inf), a float mask is added. is_causal keeps key j for query i when
//   j <= i: the top-left aligned tril(ones(L, S)) that PyTorch uses, also when L != S. enable_gqa lets key and
//   value have fewer heads (dim -3) than query, each serving query.size(-3) / key.size(-3) query heads
//   (PyTorch's repeat_interleave). A row whose keys are all masked gives zeros, as PyTorch's math path does
//   (its _safe_softmax) and its CPU flash kernel does for every input we tried. With dropout_p > 0 the
//   probabilities are needed as a tensor: we take PyTorch's math path (Note [Attention dropout]).
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "dispatch/kernel_box.h"
#include "kernels/attention.h"
#include "kernels/binary_common.h"
#include "kernels/blas.h"
#include "loop/simd.h"
#include "loop/parallel.h"
#include "loop/tensor_iterator.h"

// See softmax.cpp: lets GCC vectorise the selects in exp_nonpos; results are unchanged.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace tp::p10 {

// Note [Online softmax]
//   softmax over a row s_1..s_S is p_j = e^(s_j - m) / l with m = max_j s_j and l = sum_j e^(s_j - m); the
//   output row is o = sum_j p_j v_j. We see the row one key block at a time, so m is not known up front. Keep,
//   per query row, the running max m, the running sum l = sum e^(s_j - m) and the unnormalised accumulator
//   acc = sum e^(s_j - m) v_j over the keys seen so far. A new block with scores s' has block max m'; the
//   new max is M = max(m, m'). Every term kept so far was computed against m, and
//   e^(s - M) = e^(s - m) * e^(m - M), so both l and acc are rescaled by alpha = e^(m - M) <= 1 and the
//   block's terms added against M:
//       l   <- alpha * l   + sum_j e^(s'_j - M)
//       acc <- alpha * acc + sum_j e^(s'_j - M) v'_j          (one GEMM: P @ V_block, beta = 1)
//   After the last block o = acc / l. Each exponent is <= 0, so nothing overflows, and the result equals the
//   two-pass softmax up to rounding (FlashAttention-2's formulation, which also defers the division to the
//   end). While every key seen is masked, M is -inf and e^(s - M) would be NaN: the row is simply left at
//   m = -inf, l = 0, acc = 0 until a finite score arrives. A row that stays so gives zeros (Note [Attention
//   semantics]). A NaN score is skipped by the max but turns e^(NaN - M), and with it the row, into NaN.

// Note [Attention blocks]
//   A task is kBlockQ query rows of one batch element; tasks are split over threads. Per task the key loop
//   takes kBlockK keys at a time: S = scale * Q_blk K_blk^T (kBlockQ x kBlockK, one GEMM into a per-thread
//   buffer), mask, online-softmax update in place (S becomes P), acc += P V_blk (a second GEMM). Memory per
//   thread: kBlockQ * (kBlockK + Ev) accumulators, whatever L and S are. With is_causal a query block never
//   visits the key blocks that lie wholly above the diagonal, halving the work. The GEMMs are small, so
//   OpenBLAS is run single-threaded for the duration (one thread per task already keeps the cores busy;
//   Note [GEMM threads] in blas.cpp), and given back its thread count afterwards.
constexpr int64_t kBlockQ = 64;
constexpr int64_t kBlockK = 512;

// A Cephes-style e^x for x <= 0 written for the vectoriser: the same function as softmax.cpp's (Note [Softmax
// exp] there explains it). Below -87 it gives 0, -inf gives 0, NaN stays NaN.
static inline __attribute__((always_inline)) float exp_nonpos(float x) {
  const float xc = x < -87.0f ? -87.0f : x;
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = xc - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.0f ? 0.0f : y * scale;
}
template <typename M> static inline __attribute__((always_inline)) M exp_le0(M x) {
  if constexpr (std::is_same_v<M, float>) return exp_nonpos(x);
  else return std::exp(x);
}

// One operand as the kernel sees it: element (i, j) of batch element b is at data[off[b] + i * rs + j * cs].
template <typename M> struct Operand {
  const M *data = nullptr;
  std::vector<int64_t> off;
  int64_t rs = 0, cs = 0;
};

enum class MaskKind { None, Bool, Additive };

template <typename M> struct AttnProblem {
  int64_t batch, L, S, E, Ev;
  M scale;
  bool causal;
  Operand<M> q, k, v;
  MaskKind mask_kind = MaskKind::None;
  Operand<bool> bool_mask;
  Operand<M> add_mask;
};

// The element offset of every batch element of the broadcast batch shape `bs` in `t`, whose leading dims
// (all but the last two) align with the end of `bs`; a dim of size 1 repeats. `group` > 1 is enable_gqa:
// t's last batch dim (the heads) has size bs.back() / group and head h reads head h / group.
static std::vector<int64_t> batch_offsets(const Tensor &t, const Shape &bs, int64_t group) {
  const int64_t nb = t.dim() - 2, nd = int64_t(bs.size());
  std::vector<int64_t> off(size_t(shape_numel(bs))), idx(size_t(nd), 0);
  for (int64_t &o : off) {
    o = 0;
    for (int64_t d = 0; d < nb; ++d) {
      int64_t i = idx[size_t(nd - nb + d)];
      if (d == nb - 1 && group > 1) i /= group;
      if (t.size(d) != 1) o += i * t.stride(d);
    }
    for (int64_t d = nd - 1; d >= 0; --d) {  // odometer: the last dim moves fastest
      if (++idx[size_t(d)] < bs[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  return off;
}

template <typename M> static Operand<M> operand(const Tensor &t, const Shape &bs, int64_t group) {
  Operand<M> o;
  o.data = t.data<M>();
  o.off = batch_offsets(t, bs, group);
  o.rs = t.size(-2) == 1 ? 0 : t.stride(-2);
  o.cs = t.size(-1) == 1 ? 0 : t.stride(-1);
  return o;
}

// c = alpha * a @ b + beta * c through BLAS where allowed (`blas`) and the layout fits, the reference otherwise.
template <typename M>
static void block_gemm(bool blas, int64_t m, int64_t n, int64_t k, M alpha, MatRef<const M> a, MatRef<const M> b,
                       M beta, MatRef<M> c) {
  const Scalar al(static_cast<double>(alpha)), be(static_cast<double>(beta));
  if (blas && gemm_blas<M>(m, n, k, al, a, b, be, c)) return;
  gemm_reference<M>(m, n, k, al, a, b, be, c);
}

// The scores of one block (s, bq x bk, row stride bk) for query rows i0.. and keys j0..: mask applied.
template <typename M>
static void mask_block(const AttnProblem<M> &p, int64_t b, int64_t i0, int64_t j0, int64_t bq, int64_t bk, M *s) {
  if (p.mask_kind == MaskKind::Bool) {
    const Operand<bool> &m = p.bool_mask;
    for (int64_t i = 0; i < bq; ++i) {
      const bool *row = m.data + m.off[size_t(b)] + (i0 + i) * m.rs + j0 * m.cs;
      for (int64_t j = 0; j < bk; ++j) s[i * bk + j] = row[j * m.cs] ? s[i * bk + j] : M(-INFINITY);
    }
  } else if (p.mask_kind == MaskKind::Additive) {
    const Operand<M> &m = p.add_mask;
    for (int64_t i = 0; i < bq; ++i) {
      const M *row = m.data + m.off[size_t(b)] + (i0 + i) * m.rs + j0 * m.cs;
      for (int64_t j = 0; j < bk; ++j) s[i * bk + j] += row[j * m.cs];
    }
  }
  if (p.causal && j0 + bk - 1 > i0)  // some key of the block lies after some query row: cut j > i
    for (int64_t i = 0; i < bq; ++i)
      for (int64_t j = std::max<int64_t>(0, i0 + i + 1 - j0); j < bk; ++j) s[i * bk + j] = M(-INFINITY);
}

// The online-softmax update of one row (Note [Online softmax]): s (bk scores) becomes P in place; returns
// alpha, the factor the row's accumulator must be scaled by before P @ V is added. Loops written for the
// vectoriser: kLanes partial maxima and sums (one running value would fix the order of the float operations).
constexpr int kLanes = 16;
template <typename M>
static inline __attribute__((always_inline)) M online_softmax_row(M *s, int64_t bk, M &mx, M &sum) {
  M lane[kLanes];
  for (M &l : lane) l = -INFINITY;
  int64_t j = 0;
  for (; j + kLanes <= bk; j += kLanes)
    for (int u = 0; u < kLanes; ++u) lane[u] = s[j + u] > lane[u] ? s[j + u] : lane[u];
  M bmax = -INFINITY;
  for (; j < bk; ++j) bmax = s[j] > bmax ? s[j] : bmax;
  for (M l : lane) bmax = l > bmax ? l : bmax;
  const M mnew = bmax > mx ? bmax : mx;
  if (mnew == M(-INFINITY)) {  // every key so far masked (or NaN, which the max skips)
    bool nan = false;
    for (j = 0; j < bk; ++j) nan |= s[j] != s[j], s[j] = s[j] != s[j] ? s[j] : M(0);
    if (nan) sum = M(NAN);  // a NaN score makes the whole row NaN, as in softmax
    return M(1);
  }
  const M alpha = exp_le0(mx - mnew);  // mx = -inf (first finite block) gives 0
  for (j = 0; j < bk; ++j) s[j] = exp_le0(s[j] - mnew);
  for (M &l : lane) l = 0;
  for (j = 0; j + kLanes <= bk; j += kLanes)
    for (int u = 0; u < kLanes; ++u) lane[u] += s[j + u];
  M bsum = 0;
  for (; j < bk; ++j) bsum += s[j];
  for (M l : lane) bsum += l;
  sum = sum * alpha + bsum;
  mx = mnew;
  return alpha;
}

// float32 rows, the common case, are built twice by TP_SIMD_LOOP (loop/simd.h), for AVX2+FMA and for the
// baseline, and one is picked at run time: the exp above is most of the non-GEMM time.
TP_SIMD_LOOP(float, online_softmax_row_f32, (float *s, int64_t bk, float &mx, float &sum), (s, bk, mx, sum), {
  return online_softmax_row<float>(s, bk, mx, sum);
})
template <typename M> static M softmax_row_update(M *s, int64_t bk, M &mx, M &sum) {
  if constexpr (std::is_same_v<M, float>) return online_softmax_row_f32(s, bk, mx, sum);
  else return online_softmax_row<M>(s, bk, mx, sum);
}

// The blockwise kernel (Note [Attention blocks]): out is a contiguous [batch, L, Ev] buffer.
template <typename M> static void attention_kernel(const AttnProblem<M> &p, M *out) {
  const int64_t L = p.L, S = p.S, Ev = p.Ev;
  const int64_t nqb = (L + kBlockQ - 1) / kBlockQ, tasks = p.batch * nqb;
  // A task of fewer than ~kGrainSize multiply-adds is not worth a thread.
  const int64_t task_work = std::min(kBlockQ, L) * std::max<int64_t>(S, 1) * (p.E + Ev);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(task_work, 1));
  // Called from inside someone else's parallel region, BLAS would start a pool per thread: use the reference
  // kernel then, as gemm_batched does (Note [GEMM threads] in blas.cpp).
  const bool nested = in_parallel_region(), blas = gemm_use_blas() && !nested;
  const bool threaded = get_num_threads() > 1 && tasks > grain && !nested;
  if (threaded) blas_hold_one_thread();  // each thread's GEMMs run on that thread (Note [GEMM threads])
  parallel_for(0, tasks, grain, [&](int64_t t0, int64_t t1) {
    std::vector<M> sbuf(size_t(kBlockQ * kBlockK)), acc(size_t(kBlockQ * Ev)), mx(kBlockQ), sum(kBlockQ),
        alpha(kBlockQ);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t b = task / nqb, i0 = (task % nqb) * kBlockQ, bq = std::min(kBlockQ, L - i0);
      std::fill(acc.begin(), acc.end(), M(0));
      std::fill(mx.begin(), mx.end(), M(-INFINITY));
      std::fill(sum.begin(), sum.end(), M(0));
      const M *qb = p.q.data + p.q.off[size_t(b)] + i0 * p.q.rs;
      const int64_t kend = p.causal ? std::min(S, i0 + bq) : S;  // the last row sees keys up to i0 + bq - 1
      for (int64_t j0 = 0; j0 < kend; j0 += kBlockK) {
        const int64_t bk = std::min(kBlockK, kend - j0);
        const M *kb = p.k.data + p.k.off[size_t(b)] + j0 * p.k.rs;
        const M *vb = p.v.data + p.v.off[size_t(b)] + j0 * p.v.rs;
        // S = scale * Q_blk @ K_blk^T: K's (j, e) element read as K^T's (e, j)
        block_gemm<M>(blas, bq, bk, p.E, p.scale, {qb, p.q.rs, p.q.cs}, {kb, p.k.cs, p.k.rs}, M(0),
                      {sbuf.data(), bk, 1});
        mask_block(p, b, i0, j0, bq, bk, sbuf.data());
        for (int64_t i = 0; i < bq; ++i) {
          alpha[size_t(i)] = softmax_row_update(sbuf.data() + i * bk, bk, mx[size_t(i)], sum[size_t(i)]);
          if (alpha[size_t(i)] != M(1))
            for (int64_t e = 0; e < Ev; ++e) acc[size_t(i * Ev + e)] *= alpha[size_t(i)];
        }
        block_gemm<M>(blas, bq, Ev, bk, M(1), {sbuf.data(), bk, 1}, {vb, p.v.rs, p.v.cs}, M(1), {acc.data(), Ev, 1});
      }
      M *o = out + (b * L + i0) * Ev;
      for (int64_t i = 0; i < bq; ++i) {
        // a fully masked row (sum 0, acc 0) gives zeros (Note [Attention semantics])
        const M l = sum[size_t(i)];
        const M inv = (l > 0 || l != l) ? M(1) / l : M(0);
        for (int64_t e = 0; e < Ev; ++e) o[i * Ev + e] = acc[size_t(i * Ev + e)] * inv;
      }
    }
  });
}

// ---- argument checks and layout --------------------------------------------------------------------------

static const char *kOp = "scaled_dot_product_attention";

// Can BLAS read the last two dims as they are (row- or column-major, Note [BLAS layouts] in blas.cpp)?
static bool blas_friendly(const Tensor &t) {
  const int64_t r = t.size(-2), c = t.size(-1), rs = t.stride(-2), cs = t.stride(-1);
  return (cs == 1 && rs >= std::max<int64_t>(c, 1)) || (rs == 1 && cs >= std::max<int64_t>(r, 1)) || r <= 1 ||
         c <= 1;
}

// The heads of `t` (dim -3) serve `group` query heads each when enable_gqa; 1 otherwise.
static int64_t gqa_group(const Tensor &q, const Tensor &t, bool enable_gqa, const char *name) {
  if (!enable_gqa || q.dim() < 3 || t.dim() < 3 || q.size(-3) == t.size(-3)) return 1;
  TP_CHECK(t.size(-3) > 0 && q.size(-3) % t.size(-3) == 0, Runtime, kOp, ": enable_gqa needs the number of ",
           name, " heads (", t.size(-3), ") to divide the number of query heads (", q.size(-3), ")");
  return q.size(-3) / t.size(-3);
}

// t's leading dims as they broadcast: with GQA the head dim counts as the query's.
static Shape batch_shape(const Tensor &t, int64_t group) {
  Shape s(t.sizes().begin(), t.sizes().end() - 2);
  if (group > 1) s.back() *= group;
  return s;
}

// Note [Attention dropout]
//   PyTorch's CPU kernels do not take dropout; with dropout_p > 0 it runs the math path: scores, softmax,
//   dropout(attn, p, train=True) on the [..., L, S] probabilities (one bernoulli_ draw per element, in that
//   tensor's order; 16-bit inputs in float32), then @ V. We make the same calls, so the op consumes the
//   generator as PyTorch's does. This path materialises the scores; there is no other way to draw the mask
//   PyTorch draws.
Tensor attention_with_dropout(Tensor q, Tensor k, Tensor v, const std::optional<Tensor> &mask, double dropout_p,
                              bool causal, double scale, int64_t kg, int64_t vg) {
  const ScalarType dt = q.dtype();
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)
    q = cast_to(q, ScalarType::Float32), k = cast_to(k, ScalarType::Float32), v = cast_to(v, ScalarType::Float32);
  if (kg > 1) k = call_op<Tensor>(TP_OP("repeat_interleave.self_int"), k, kg, std::optional<int64_t>(-3),
                                  std::optional<int64_t>());
  if (vg > 1) v = call_op<Tensor>(TP_OP("repeat_interleave.self_int"), v, vg, std::optional<int64_t>(-3),
                                  std::optional<int64_t>());
  Tensor kt = call_op<Tensor>(TP_OP("transpose"), k, int64_t(-2), int64_t(-1));
  Tensor attn = call_op<Tensor>(TP_OP("matmul"), q, kt);
  call_op<Tensor>(TP_OP("mul_"), attn, wrapped_scalar(Scalar(scale)));
  Tensor keep;  // bool: where the score takes part
  if (causal) {
    const int64_t L = q.size(-2), S = k.size(-2);
    keep = call_op<Tensor>(TP_OP("full"), Shape{L, S}, Scalar(true), std::optional<ScalarType>(ScalarType::Bool),
                           std::optional<Device>(q.device()));
    keep = call_op<Tensor>(TP_OP("tril"), keep, int64_t(0));
  } else if (mask && mask->dtype() == ScalarType::Bool) {
    keep = *mask;
  } else if (mask) {
    call_op<Tensor>(TP_OP("add_"), attn, cast_to(*mask, attn.dtype()), Scalar(int64_t(1)));
  }
  if (keep.defined()) attn = call_op<Tensor>(TP_OP("where"), keep, attn, wrapped_scalar(Scalar(-INFINITY)));
  // _safe_softmax: a row of -inf gives zeros, not NaN (Note [Attention semantics]); a NaN row stays NaN
  Tensor rowmax = call_op<Tensor>(TP_OP("amax"), attn, std::vector<int64_t>{-1}, true);
  Tensor dead = call_op<Tensor>(TP_OP("eq"), rowmax, wrapped_scalar(Scalar(-INFINITY)));
  attn = call_op<Tensor>(TP_OP("softmax.int"), attn, int64_t(-1), std::optional<ScalarType>());
  attn = call_op<Tensor>(TP_OP("where"), dead, wrapped_scalar(Scalar(0.0)), attn);
  attn = call_op<Tensor>(TP_OP("dropout"), attn, dropout_p, true);
  Tensor out = call_op<Tensor>(TP_OP("matmul"), attn, v);
  return out.dtype() == dt ? out : cast_to(out, dt);
}

static Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key, const Tensor &value,
                                           const std::optional<Tensor> &attn_mask, double dropout_p,
                                           bool is_causal, std::optional<double> scale, bool enable_gqa) {
  TP_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, Runtime, kOp,
           ": query, key and value must have at least 2 dims, got ", query.dim(), ", ", key.dim(), " and ",
           value.dim());
  TP_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), Runtime,
           "Expected query, key, and value to have the same dtype, but got query.dtype: ",
           scalar_type_name(query.dtype()), " key.dtype: ", scalar_type_name(key.dtype()),
           " and value.dtype: ", scalar_type_name(value.dtype()), " instead.");
  TP_CHECK(is_floating(query.dtype()), Runtime, kOp, ": expected floating point query, key and value, got ",
           scalar_type_name(query.dtype()));
  TP_CHECK(query.device() == key.device() && query.device() == value.device(), Runtime,
           "Expected query, key, and value to have the same device type, but got query.device: ",
           device_str(query.device()), " key.device: ", device_str(key.device()), " and value.device: ",
           device_str(value.device()), " instead.");
  TP_CHECK(query.size(-1) == key.size(-1), Runtime, kOp, ": query and key must have the same last dim "
           "(the embedding size), got query ", shape_str(query.sizes()), " and key ", shape_str(key.sizes()));
  TP_CHECK(key.size(-2) == value.size(-2), Runtime, kOp, ": key and value must have the same sequence length "
           "(dim -2), got key ", shape_str(key.sizes()), " and value ", shape_str(value.sizes()));
  TP_CHECK(dropout_p >= 0 && dropout_p <= 1, Value, kOp, ": dropout_p must be in [0, 1], got ", dropout_p);
  TP_CHECK(!(is_causal && attn_mask), Runtime,
           "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  if (attn_mask)
    TP_CHECK(attn_mask->dtype() == ScalarType::Bool || is_floating(attn_mask->dtype()), Runtime,
             "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
             scalar_type_name(attn_mask->dtype()), " and query.dtype: ", scalar_type_name(query.dtype()),
             " instead.");
  const int64_t kg = gqa_group(query, key, enable_gqa, "key"), vg = gqa_group(query, value, enable_gqa, "value");
  Shape bs = broadcast_shapes(batch_shape(query, 1), batch_shape(key, kg), kOp);
  bs = broadcast_shapes(bs, batch_shape(value, vg), kOp);
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1), Ev = value.size(-1);
  if (attn_mask) {
    Shape full = bs;
    full.push_back(L), full.push_back(S);
    TP_CHECK(is_expandable_to(attn_mask->sizes(), full), Runtime, kOp, ": attn_mask of shape ",
             shape_str(attn_mask->sizes()), " does not broadcast to the attention shape ", shape_str(full));
  }
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(E));
  Shape out_shape = bs;
  out_shape.push_back(L), out_shape.push_back(Ev);

  if (query.device().is_meta()) return empty_tensor(out_shape, query.dtype(), query.device());
  if (S == 0)  // softmax over no keys: the empty sum of PyTorch's attn @ V is zeros
    return call_op<Tensor>(TP_OP("full"), out_shape, Scalar(0.0), std::optional<ScalarType>(query.dtype()),
                           std::optional<Device>(query.device()));
  if (dropout_p > 0) return attention_with_dropout(query, key, value, attn_mask, dropout_p, is_causal, sc, kg, vg);

  // 16-bit floats compute in float32 (opmath); the casts are O(input), not O(L * S).
  const ScalarType dt = query.dtype();
  const ScalarType mt = (dt == ScalarType::Float64) ? ScalarType::Float64 : ScalarType::Float32;
  auto prepare = [&](const Tensor &t) {
    Tensor r = t.dtype() == mt ? t : cast_to(t, mt);
    return blas_friendly(r) ? r : call_op<Tensor>(TP_OP("contiguous"), r);
  };
  Tensor q = prepare(query), k = prepare(key), v = prepare(value);
  Tensor out = empty_tensor(out_shape, mt, query.device());
  if (out.numel() > 0) {
    TP_DISPATCH_FLOATING(mt, kOp, [&]<typename M>() {
      if constexpr (std::is_same_v<M, float> || std::is_same_v<M, double>) {
        AttnProblem<M> p{shape_numel(bs), L, S, E, Ev, M(sc), is_causal, operand<M>(q, bs, 1),
                         operand<M>(k, bs, kg), operand<M>(v, bs, vg)};
        Tensor m;
        if (attn_mask) {
          m = *attn_mask;
          while (m.dim() < 2) m = call_op<Tensor>(TP_OP("unsqueeze"), m, int64_t(0));
          if (m.dtype() == ScalarType::Bool) {
            p.mask_kind = MaskKind::Bool;
            p.bool_mask = operand<bool>(m, bs, 1);
          } else {
            if (m.dtype() != mt) m = cast_to(m, mt);
            p.mask_kind = MaskKind::Additive;
            p.add_mask = operand<M>(m, bs, 1);
          }
        }
        attention_kernel(p, out.data<M>());
      }
    });
  }
  return dt == mt ? out : cast_to(out, dt);
}

TP_LIBRARY(attention) {
  lib.def("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
          "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    impl_typed<scaled_dot_product_attention>(lib, "scaled_dot_product_attention", key, __LINE__);
}

}  // namespace tp::p10
