// attention_common.cuh — what attention.cu (forward) and attention_backward.cu share: the launch parameters,
// the batch-offset helper, masks, warp reductions and the tensor-core (mma.sync) helpers.
//
// Where it sits: included by the two attention kernel files; the host twin of AttnParams is csrc/cuda/
// attention.h (its static_assert keeps the two layouts equal). Semantics are the CPU op's (Note [Attention
// semantics] in csrc/kernels/attention.cpp): scores scale * q.k, a bool mask keeps True, a float mask is
// added, is_causal keeps key j for query i when j <= i (top-left aligned, also when L != S), a row whose keys
// are all masked gives zeros, a NaN score makes its row NaN.
#pragma once
#include "common.cuh"

// Arithmetic type: float32 for the 16-bit floats and float32, float64 for float64 (the CPU op's opmath).
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

__device__ __forceinline__ float a_exp(float x) { return expf(x); }
__device__ __forceinline__ double a_exp(double x) { return exp(x); }
__device__ __forceinline__ float a_log(float x) { return logf(x); }
__device__ __forceinline__ double a_log(double x) { return log(x); }
template <typename A> __device__ __forceinline__ A a_inf() { return A(__int_as_float(0x7f800000)); }
template <> __device__ __forceinline__ double a_inf<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <typename A> __device__ __forceinline__ A a_nan() { return A(__int_as_float(0x7fc00000)); }
template <> __device__ __forceinline__ double a_nan<double>() { return __longlong_as_double(0x7ff8000000000000ll); }

// max that skips a NaN (softmax's max: a NaN reaches the row through e^(NaN - m) instead).
template <typename A> __device__ __forceinline__ A max_skip_nan(A a, A b) { return (a != a || b > a) ? b : a; }

// Every lane of the warp ends with the result over all 32 lanes (xor shuffles: the same value everywhere).
template <typename A> __device__ __forceinline__ A warp_max_all(A v) {
  for (int o = 16; o > 0; o >>= 1) v = max_skip_nan(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <typename A> __device__ __forceinline__ A warp_sum_all(A v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// ---- launch parameters (csrc/cuda/attention.h holds the host copy) -----------------------------------------
// q [.., L, E], k [.., S, E], v [.., S, Ev]: element (i, e) of batch element b at base + off(b) + i * rs + e
// (the last dim is contiguous: the host copies an operand whose last stride is not 1). The batch shape `sizes`
// is the broadcast one, innermost last; strides are 0 on broadcast dims. enable_gqa: the last batch dim is the
// query heads; k and v read head h / kgroup and h / vgroup. out is a contiguous [nb, L, Ev]; lse, when not
// null, a contiguous [nb, L] of Acc (the log-sum-exp of each row's scores, +inf for a row with no key).
#define TP_ATTN_MAX_DIMS 6
enum { kMaskNone = 0, kMaskBool = 1, kMaskAdd = 2 };
struct AttnParams {
  const void *q, *k, *v, *mask;  // mask: uint8 (bool) or Acc (additive) with strides ms, m_rs, m_cs
  void *out, *lse;
  int64 L, S, E, Ev;
  int64 q_rs, k_rs, v_rs, m_rs, m_cs;
  int64 nb;
  int64 sizes[TP_ATTN_MAX_DIMS];
  int64 qs[TP_ATTN_MAX_DIMS], ks[TP_ATTN_MAX_DIMS], vs[TP_ATTN_MAX_DIMS], ms[TP_ATTN_MAX_DIMS];
  double scale;
  int nd, kgroup, vgroup, causal, mask_kind, vec;  // vec: every q/k/v row may be read as 16-byte vectors
};

struct AttnOffsets { int64 q, k, v, m; };
__device__ __forceinline__ AttnOffsets attn_offsets(const AttnParams &p, int64 b) {
  AttnOffsets r = {0, 0, 0, 0};
  for (int d = p.nd - 1; d >= 0; --d) {
    const int64 i = b % p.sizes[d];
    b /= p.sizes[d];
    const bool heads = d == p.nd - 1;
    r.q += i * p.qs[d];
    r.m += i * p.ms[d];
    r.k += (heads ? i / p.kgroup : i) * p.ks[d];
    r.v += (heads ? i / p.vgroup : i) * p.vs[d];
  }
  return r;
}

// The score s of query i and key j with attn_mask applied (causal is applied by the callers' key ranges).
template <typename A>
__device__ __forceinline__ A apply_mask(const AttnParams &p, int64 moff, int64 i, int64 j, A s) {
  if (p.mask_kind == kMaskBool)
    return ((const unsigned char *)p.mask)[moff + i * p.m_rs + j * p.m_cs] ? s : -a_inf<A>();
  if (p.mask_kind == kMaskAdd) return s + ((const A *)p.mask)[moff + i * p.m_rs + j * p.m_cs];
  return s;
}

// ---- tensor cores: mma.sync m16n8k16, 16-bit inputs, float32 accumulators -------------------------------
// Note [mma fragments]
//   PTX ISA "Matrix fragments for mma.m16n8k16" (g = lane / 4, t = lane % 4; a register holds two 16-bit
//   values, the lower column / row index in the lower half):
//     A (16 x 16, row):  a0 = (g, 2t..2t+1)   a1 = (g+8, 2t..2t+1)   a2 = (g, 2t+8..)   a3 = (g+8, 2t+8..)
//     B (16 x 8, col):   b0 = (k 2t..2t+1, n g)   b1 = (k 2t+8..2t+9, n g)
//     C (16 x 8, f32):   c0, c1 = (g, 2t..2t+1)   c2, c3 = (g+8, 2t..2t+1)
//   So a C tile pair (columns 16 kt .. 16 kt + 15) is, packed to 16 bits, exactly the A fragment of the next
//   product (FlashAttention-2's P @ V without going through shared memory).
template <typename T> struct Mma;
template <> struct Mma<float16> {
  __device__ __forceinline__ static void run(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  // lo in the lower half (the lower index), hi in the upper
  __device__ __forceinline__ static unsigned pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
};
template <> struct Mma<bfloat16> {
  __device__ __forceinline__ static void run(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static unsigned pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
};

// The B fragments (Note [mma fragments]) of two neighbouring 16 x 8 blocks, rows 0..15 and columns 0..15 from
// `blk`, of a row-major 16-bit matrix in shared memory (`ld` values per row) whose rows are the k of the
// product (V in P V, dO in P^T dO, ...): b[0], b[1] for columns 0..7, b[2], b[3] for columns 8..15. One
// ldmatrix .x4 .trans: lanes 8i..8i+7 give the row addresses of 8 x 8 matrix i (rows 0-7 / 8-15, columns 0-7
// / 8-15; each row 16 contiguous bytes, 16-byte aligned), and .trans hands lane (g, t) rows 2t and 2t + 1 of
// column g of each, which is b0 (matrix 0 / 2) and b1 (matrix 1 / 3). It replaces four 16-bit loads and two
// packs per fragment.
__device__ __forceinline__ unsigned smem_u32(const void *p) {
  unsigned addr;
  asm("{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }" : "=r"(addr) : "l"(p));
  return addr;
}
__device__ __forceinline__ void ldsm_b_trans(unsigned b[4], const unsigned short *blk, int ld) {
  const int lane = threadIdx.x & 31;
  const unsigned short *row = blk + (lane & 15) * ld + (lane >> 4) * 8;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(smem_u32(row))
               : "memory");
}

// The B fragments of a product whose B is the transpose of a row-major 16-bit matrix in shared memory (K in
// Q K^T: B(k, n) = K(n, k)): 8 rows (the n) from `blk`, columns 0..31 (two k steps of 16). Without .trans,
// ldmatrix hands lane (g, t) values 2t, 2t + 1 of row g of each 8 x 8 matrix, which is b0 of Note [mma
// fragments] for matrices at columns 0 and 16 and b1 for those at 8 and 24: b[0], b[1] for k 0..15, b[2], b[3]
// for k 16..31. Lanes 8i..8i+7 address the rows of matrix i (columns 8i..8i+7).
__device__ __forceinline__ void ldsm_b(unsigned b[4], const unsigned short *blk, int ld) {
  const int lane = threadIdx.x & 31;
  const unsigned short *row = blk + (lane & 7) * ld + (lane >> 3) * 8;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(smem_u32(row))
               : "memory");
}

// ---- cp.async (sm_80): global -> shared copies that bypass registers, so a tile loads while the warps compute.
// A thread's copies since its last commit form one group; wait<N> blocks until at most N of its groups are still
// in flight. Other threads' copies become visible only after the waits and a __syncthreads.
__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Copy rows [r0, r0 + n) x cols [0, D) of a 16-bit matrix (row stride rs, `cols` valid columns, `rows` valid
// rows in all) into shared memory dst[n][ld], zero-filling past the valid rows and columns (zeros add nothing
// to a dot product, and a zero V row times a zero probability stays 0, where garbage could be NaN). 16-byte
// vectors when `vec` (cols % 8 == 0, rs % 8 == 0, 16-byte aligned rows: the host checks), elements otherwise.
// Async: the vectors go by cp.async (the caller commits and waits); zero fills and elements are plain stores.
template <int D, bool Async = false>
__device__ __forceinline__ void load_tile(unsigned short *dst, int ld, int n, const unsigned short *src, int64 rs,
                                          int64 r0, int64 rows, int64 cols, int vec) {
  const int chunks = D / 8;
  for (int c = threadIdx.x; c < n * chunks; c += blockDim.x) {
    const int r = c / chunks, e0 = (c % chunks) * 8;
    unsigned short *d = dst + r * ld + e0;
    const int64 row = r0 + r;
    if (vec && row < rows && e0 + 8 <= cols) {
      if (Async) cp_async16(d, src + row * rs + e0);
      else *(uint4 *)d = *(const uint4 *)(src + row * rs + e0);
    } else {
#pragma unroll
      for (int u = 0; u < 8; ++u) d[u] = (row < rows && e0 + u < cols) ? src[row * rs + e0 + u] : 0;
    }
  }
}
