// paged_attention.h — what paged_attention.cpp (the CPU kernel and the op-written reference) and the CUDA kernel
// (csrc/cuda/ops_paged_attention.cpp) share: the semantics, the dimensions and the argument checks.
//
// Note [Paged attention semantics]
//   query [B, H, T, D]; key_pool [N, block_size, Hkv, D] and value_pool [N, block_size, Hkv, Dv] (Dv may differ
//   from D); block_table int64 [B, blocks_per_row], entry (b, j) the pool index of row b's logical block j;
//   seq_lens int64 [B], S_b the number of tokens of row b, so token s of row b is at
//   pool[block_table[b, s / block_size], s % block_size]. The T queries of row b are its last T positions,
//   S_b - T ... S_b - 1, and query i sees tokens 0 .. S_b - T + i (causal, aligned bottom-right: at T = S_b this
//   is the usual lower triangle, at T = 1 the query sees the whole row). H % Hkv == 0: query head h reads
//   key/value head h / (H / Hkv) (grouped-query attention, as scaled_dot_product_attention's enable_gqa).
//   scale defaults to 1 / sqrt(D). Output [B, H, T, Dv] in query's dtype; float32 arithmetic for 16-bit inputs.
//   Checked: T <= S_b <= blocks_per_row * block_size, and every block a row uses (j < ceil(S_b / block_size))
//   indexes the pool; entries past that are not read (padding such as -1 is fine there).
#pragma once
#include "dispatch/kernel_box.h"
#include "kernels/linalg_common.h"

namespace tp::p10 {

// An int64 tensor's values as a contiguous tensor in host memory: `t` itself on the CPU, else a copy (the host
// never reads device memory, Note [No host reads of device memory]).
inline Tensor paged_host_int64(const Tensor &t) {
  Tensor h = t.device().is_cpu() ? t
                                 : call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(),
                                                   std::optional<Device>(Device{}), false);
  return h.is_contiguous() ? h : call_op<Tensor>(TP_OP("contiguous"), h);
}

struct PagedDims {
  int64_t B, H, T, D, N, bs, Hkv, Dv, bpr;
  ScalarType mt;  // compute dtype
};

// Shapes, dtypes and (on real devices) the values of block_table and seq_lens, against Note [Paged attention
// semantics]. On a GPU the values are read back first (a synchronising copy of each, as the index ops' checks).
inline PagedDims check_paged_args(const char *op, const Tensor &q, const Tensor &kp, const Tensor &vp,
                                  const Tensor &table, const Tensor &lens) {
  TP_CHECK(q.dim() == 4, Runtime, op, ": expected query of shape [B, H, T, D], got ", shape_str(q.sizes()));
  TP_CHECK(kp.dim() == 4, Runtime, op, ": expected key_pool of shape [N, block_size, Hkv, D], got ",
           shape_str(kp.sizes()));
  TP_CHECK(vp.dim() == 4 && vp.size(0) == kp.size(0) && vp.size(1) == kp.size(1) && vp.size(2) == kp.size(2),
           Runtime, op, ": expected value_pool of shape [N, block_size, Hkv, Dv] with key_pool's N, block_size "
           "and Hkv (key_pool is ", shape_str(kp.sizes()), "), got ", shape_str(vp.sizes()));
  const PagedDims d{q.size(0), q.size(1), q.size(2), q.size(3), kp.size(0), kp.size(1), kp.size(2), vp.size(3),
                    table.dim() == 2 ? table.size(1) : 0,
                    q.dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32};
  TP_CHECK(kp.size(3) == d.D, Runtime, op, ": expected key_pool's head size to equal query's (", d.D,
           "), got key_pool ", shape_str(kp.sizes()));
  TP_CHECK(is_floating(q.dtype()) && kp.dtype() == q.dtype() && vp.dtype() == q.dtype(), Runtime, op,
           ": expected floating point query, key_pool and value_pool of one dtype, got ",
           scalar_type_name(q.dtype()), ", ", scalar_type_name(kp.dtype()), " and ", scalar_type_name(vp.dtype()));
  TP_CHECK(table.dtype() == ScalarType::Int64 && table.dim() == 2 && table.size(0) == d.B, Runtime, op,
           ": expected an int64 block_table of shape [B, blocks_per_row] with B = ", d.B, ", got ",
           scalar_type_name(table.dtype()), " ", shape_str(table.sizes()));
  TP_CHECK(lens.dtype() == ScalarType::Int64 && lens.sizes() == Shape{d.B}, Runtime, op,
           ": expected int64 seq_lens of shape [B] = [", d.B, "], got ", scalar_type_name(lens.dtype()), " ",
           shape_str(lens.sizes()));
  TP_CHECK(d.Hkv > 0 && d.H % d.Hkv == 0, Runtime, op, ": the number of query heads (", d.H,
           ") must be a multiple of the number of key/value heads (", d.Hkv, ")");
  for (const Tensor *t : {&kp, &vp, &table, &lens})
    TP_CHECK(t->device() == q.device(), Runtime, op, ": expected every tensor on query's device ",
             device_str(q.device()), ", got one on ", device_str(t->device()));
  if (q.device().is_meta()) return d;
  const Tensor tb = paged_host_int64(table), ln = paged_host_int64(lens);
  for (int64_t b = 0; b < d.B; ++b) {
    const int64_t S = ln.data<int64_t>()[b];
    TP_CHECK(S >= d.T, Runtime, op, ": seq_lens[", b, "] = ", S, " is smaller than the number of queries T = ",
             d.T, " (the queries are the last T positions of the row)");
    TP_CHECK(S <= d.bpr * d.bs, Runtime, op, ": seq_lens[", b, "] = ", S, " exceeds the block table's capacity of ",
             d.bpr, " blocks x block_size ", d.bs, " = ", d.bpr * d.bs, " tokens");
    const int64_t used = d.bs ? (S + d.bs - 1) / d.bs : 0;
    for (int64_t j = 0; j < used; ++j) {
      const int64_t id = tb.data<int64_t>()[b * d.bpr + j];
      TP_CHECK(id >= 0 && id < d.N, Index, op, ": block_table[", b, ", ", j, "] = ", id,
               " is not a block of the pools (expected 0 <= id < N = ", d.N, ")");
    }
  }
  return d;
}

}  // namespace tp::p10
