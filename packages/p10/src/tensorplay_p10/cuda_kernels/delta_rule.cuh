// delta_rule.cuh — what the delta-rule kernels share (delta_rule.cu, the forward scan, and
// delta_rule_backward.cu): the launch parameters, the thread layout over the state, where a thread keeps its part
// of the state, and the loads of one time step's operands.
//
// Where it sits: beside common.cuh; the host side is csrc/cuda/ops_delta_rule.cpp, whose DeltaParams is this
// file's byte for byte. The semantics are the CPU op's, Note [Delta rule semantics] in csrc/kernels/delta_rule.h.
//
// Note [Delta rule on CUDA]
//   Every line of the recurrence acts on the state S [Dk, Dv] column by column: column j of S_t depends only on
//   column j of S_{t-1}, on v_t[j] and on the vectors k_t, q_t, exp(g_t) and the number beta_t shared by all
//   columns. So the columns split over threads with no exchange between them except sums over rows:
//     a warp owns 4 columns, 8 lanes each (lane = 8 cl + rl: column lane cl, row lane rl); the lane keeps the
//     rows i = 8 r + rl, r = 0 .. nr - 1 (nr = ceil(Dk / 8)) of its column; a sum over the rows of a column
//     (S'^T k, S^T q, k^T dS) is the lane's own partial sum, then xor shuffles 1, 2, 4 (rows_sum).
//   A block of W warps owns 4 W neighbouring columns of one (b, h), a "tile"; rows past Dk and columns past Dv
//   compute with zeros and are never stored, so every warp runs every shuffle and barrier.
//   Where the rows live (DeltaRegs / DeltaSlot): in registers, nr <= R for R = 1, 2, 4, 8, 16, 32 (Dk <= 256:
//   one compiled kernel per R), or for larger Dk in a "slot" of global scratch, the block's nr x blockDim
//   values in thread-minor order (element (r, thread) at r * blockDim + thread), so that each access of a warp
//   is one contiguous run. Any Dk the CPU op takes therefore runs; only the speed changes past 256.
//   Operands are contiguous in the compute dtype M (float32, or float64 for float64 queries): the host casts
//   them first, as the CPU op does (delta_operand).
#pragma once
#include "common.cuh"

struct DeltaParams {
  const void *q, *k, *v, *g, *beta, *s0;  // [B,T,H,Dk] x2, [B,T,H,Dv], [B,T,H(,Dk)], [B,T,H], [B,H,Dk,Dv] or null
  const void *dout, *dstate;              // backward: [B,T,H,Dv], [B,H,Dk,Dv], either may be null
  void *out, *state;                      // forward: [B,T,H,Dv], [B,H,Dk,Dv]
  void *dq, *dk, *dv, *dg, *dbeta, *ds0;  // backward results (ds0 null without an initial state)
  void *scratch;                          // scratch_per_block values of M per block of the grid
  int64 B, T, H, Dk, Dv;
  int64 chunk;              // backward: steps between state checkpoints (Note [Delta rule backward on CUDA])
  int64 scratch_per_block;  // in values of M
  int per_channel;          // g is [B, T, H, Dk]
  int tiles;                // column tiles per (b, h): ceil(Dv / (4 W))
  int groups;               // backward: blocks sharing one (b, h)'s tiles, each summing into its own partials
  int red_shared;           // backward: the per-step sums across warps go through shared memory (else scratch)
};

__device__ __forceinline__ float d_exp(float x) { return expf(x); }
__device__ __forceinline__ double d_exp(double x) { return exp(x); }

// The sum over the 8 row lanes of a column (lanes that differ in their 3 low bits); every lane gets it.
template <typename M> __device__ __forceinline__ M rows_sum(M v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  v += __shfl_xor_sync(0xffffffffu, v, 2);
  v += __shfl_xor_sync(0xffffffffu, v, 4);
  return v;
}
// The sum over the 4 column lanes of a warp (lanes that differ in bits 3 and 4); every lane gets it.
template <typename M> __device__ __forceinline__ M cols_sum(M v) {
  v += __shfl_xor_sync(0xffffffffu, v, 8);
  v += __shfl_xor_sync(0xffffffffu, v, 16);
  return v;
}

// Where one thread keeps its rows of a column state (Note [Delta rule on CUDA]). Both have get/set by r and
// `count`, the number of r to visit: a compile-time R for registers, nr for a slot.
template <typename M, int R> struct DeltaRegs {
  static constexpr int kFixed = R;
  M s[R];
  __device__ __forceinline__ M get(int r) const { return s[r]; }
  __device__ __forceinline__ void set(int r, M x) { s[r] = x; }
};
template <typename M> struct DeltaSlot {
  static constexpr int kFixed = 0;
  M *base;  // this thread's first value; value r at base[r * stride]
  int stride;
  __device__ __forceinline__ M get(int r) const { return base[int64(r) * stride]; }
  __device__ __forceinline__ void set(int r, M x) { base[int64(r) * stride] = x; }
};
#define TP_DELTA_ROWS(St, nr) ((St::kFixed > 0) ? St::kFixed : (nr))

// A thread's place: its column j (valid when j < Dv), its row lane and the rows it visits.
struct DeltaLane {
  int rl, cl, warp, nr;
  int64 j;
  bool jv;
  __device__ DeltaLane(const DeltaParams &p, int64 tile) {
    const int lane = threadIdx.x & 31;
    rl = lane & 7, cl = lane >> 3, warp = threadIdx.x >> 5;
    nr = int((p.Dk + 7) / 8);
    j = tile * int64(blockDim.x >> 3) + warp * 4 + cl;
    jv = j < p.Dv;
  }
  __device__ __forceinline__ int64 row(int r) const { return int64(r) * 8 + rl; }
};

// One time step's operands for (b, t, h): pointers to the rows of k and q (Dk values), v (Dv), g (Dk values or
// one), and beta; values past Dk / Dv read as 0 (k, q, v) and the decay as 1.
template <typename M> struct DeltaStep {
  const M *k, *q, *g;
  M v, beta, a_head;
  int64 Dk;
  int per_channel;
  __device__ DeltaStep(const DeltaParams &p, const DeltaLane &ln, int64 b, int64 t, int64 h) {
    const int64 r = (b * p.T + t) * p.H + h;
    Dk = p.Dk, per_channel = p.per_channel;
    k = (const M *)p.k + r * p.Dk;
    q = (const M *)p.q + r * p.Dk;
    v = ln.jv ? ((const M *)p.v)[r * p.Dv + ln.j] : M(0);
    beta = ((const M *)p.beta)[r];
    g = per_channel ? (const M *)p.g + r * p.Dk : nullptr;
    a_head = per_channel ? M(1) : d_exp(((const M *)p.g)[r]);
  }
  __device__ __forceinline__ M k_at(int64 i) const { return i < Dk ? k[i] : M(0); }
  __device__ __forceinline__ M q_at(int64 i) const { return i < Dk ? q[i] : M(0); }
  __device__ __forceinline__ M a_at(int64 i) const { return i < Dk ? (per_channel ? d_exp(g[i]) : a_head) : M(1); }
};

// The lane's rows of the initial state (or zeros), and of any [B, H, Dk, Dv] tensor: element (i, j) of (b, h).
template <typename M, typename St>
__device__ __forceinline__ void delta_load(St &S, const M *src, const DeltaParams &p, const DeltaLane &ln,
                                           int64 task) {
#pragma unroll
  for (int r = 0; r < TP_DELTA_ROWS(St, ln.nr); ++r) {
    const int64 i = ln.row(r);
    S.set(r, (src && ln.jv && i < p.Dk) ? src[(task * p.Dk + i) * p.Dv + ln.j] : M(0));
  }
}
template <typename M, typename St>
__device__ __forceinline__ void delta_store(const St &S, M *dst, const DeltaParams &p, const DeltaLane &ln,
                                            int64 task) {
#pragma unroll
  for (int r = 0; r < TP_DELTA_ROWS(St, ln.nr); ++r) {
    const int64 i = ln.row(r);
    if (ln.jv && i < p.Dk) dst[(task * p.Dk + i) * p.Dv + ln.j] = S.get(r);
  }
}
