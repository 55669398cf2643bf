// norm.cu — layer_norm and rms_norm over the rows of a contiguous [rows, N] matrix, and their backward.
//
// Where it sits: launched by csrc/cuda/ops_norm.cpp (the CUDA twin of kernels/norm.cpp and norm_backward.cpp),
// which makes the input contiguous as [rows, N], N = prod(normalized_shape), and the weight and bias contiguous
// vectors of N elements in the input's dtype (either may be null). Kernel names:
//   <op>_<form>_<vec|scalar>_<T>, <op>_long_<T>        forward, op = layer_norm | rms_norm (Note [Register
//                                                      rows] in rows_common.cuh; forms chosen by cuda/rows.h);
//   <op>_backward_<form>_<vec|scalar>_<T>, ..._long_<T> grad_input per row, and either each row's (mean,
//                                                      rstd) or the block's column sums (Note [Fused column
//                                                      sums]);
//   norm_columns_reduce_<T>                            grad_weight / grad_bias from the fused column sums;
//   norm_columns_partial_<T>, norm_columns_final_<T>   grad_weight / grad_bias from (mean, rstd), for the
//                                                      forms that do not fuse (Note [Norm column sums]).
//
// The maths is the CPU's (Note [Norm statistics] in norm.cpp, Note [Norm backward] in norm_backward.cpp), in
// Acc<T> (float32 for the 16-bit floats and float32, float64 for float64):
//   mean = sum(x) / N, var = sum((x - mean)^2) / N (two sums over the row held in registers: no
//   cancellation from E[x^2] - E[x]^2, no second read), rstd = 1 / sqrt(var + eps); rms_norm: mean = 0.
//   forward:  y = (x - mean) * rstd * w + b
//   backward: xhat = (x - mean) * rstd, g = dy * w,
//             dx = rstd * (g - sum(g) / N - xhat * sum(g * xhat) / N)   (rms_norm: no sum(g) term)
#include "rows_common.cuh"

// mean and rstd of a row held in registers (padding slots masked); every thread of the group gets them.
// `v` is the row's slots as A (v[j]): an A[EPT] array, or a PackedRow.
template <bool Centered, bool Warp, int EPT, int VEC, typename A, typename Row>
__device__ __forceinline__ void row_stats(const Row &v, int t, int G, int64 cols, double eps, A &mean, A &rstd) {
  mean = A(0);
  if (Centered) {
    A s = A(0);
#pragma unroll
    for (int j = 0; j < EPT; ++j) s += v[j];  // padding slots hold 0
    mean = group_all<Warp, SumOp>(s) / A(cols);
  }
  A q = A(0);
#pragma unroll
  for (int j = 0; j < EPT; ++j) {
    const A d = in_row<VEC>(j, t, G, cols) ? v[j] - mean : A(0);
    q += d * d;
  }
  rstd = A(1) / m_sqrt(group_all<Warp, SumOp>(q) / A(cols) + A(eps));
}

// ---- Note [Packed register rows] ---------------------------------------------------------------------------
// The block32 form (16-bit floats, 32 elements a thread) keeps the row as the 16-byte packs it loaded (16
// registers) and widens an element to float each time a pass reads it, instead of holding 32 floats. The
// widening is exact and every sum runs in the same order, so the result is bit for bit the float-array
// form's (checked on the H200 for both ops and both dtypes); only the register schedule changes. Holding 32
// floats, ptxas (capped at 80 registers by __launch_bounds__(128, 6)) kept them live beside the weight and bias
// packs it hoists for the store loop; bfloat16 layer_norm [16384, 4096] ran at 2068 GB/s against PyTorch 2.11's
// 2559 (0.81x). Packed, at the same 6 blocks of 128 threads an SM, it ran at 2400 (0.94x), and every 16-bit
// block32 case measured gained (rows of 2048, 3000 and 4096; rms_norm bfloat16 4096: 2434 -> 2806 GB/s;
// float16 layer_norm, now 55 registers: 2980 -> 3255). Tried on the way and slower: persistent grids that
// prefetch the next row, weight and bias held in registers across rows, 256..1024 threads a row, and
// __launch_bounds__(128, 5/7/8) (8 spills; 7 equals 6).
template <typename T, int EPT, int VEC> struct PackedRow {
  Pack<T, VEC> k[EPT / VEC];
  __device__ __forceinline__ typename Acc<T>::type operator[](int j) const {
    return typename Acc<T>::type(load(k[j / VEC].v[j % VEC]));
  }
};

// The row's packs (Note [Register rows] layout); packs past the row's end hold zeros.
template <int EPT, int VEC, typename T>
__device__ __forceinline__ void load_row(PackedRow<T, EPT, VEC> &v, const T *x, int64 cols, int t, int G) {
  const T zero = store<T>(typename Acc<T>::type(0));
#pragma unroll
  for (int p = 0; p < EPT / VEC; ++p) {
    const int c = (p * G + t) * VEC;
    if (c < cols) {
      v.k[p] = load_pack<T, VEC>(x + c);
    } else {
#pragma unroll
      for (int i = 0; i < VEC; ++i) v.k[p].v[i] = zero;
    }
  }
}
template <int EPT, int VEC, typename T, typename A>
__device__ __forceinline__ void load_row(A (&v)[EPT], const T *x, int64 cols, int t, int G) {
  load_row<EPT, VEC>(v, x, cols, t, G, A(0));
}

template <bool P, typename X, typename Y> struct PickRow { typedef X type; };
template <typename X, typename Y> struct PickRow<false, X, Y> { typedef Y type; };

// Forward, the row in registers (as A, or as its packs when Packed: Note [Packed register rows]):
// y = (x - mean) * rstd * w + b (w, b may be null).
template <typename T, bool Centered, int EPT, int VEC, bool Warp, bool Packed = false>
__device__ void norm_regs(int64 rows, int64 cols, T *out, const T *in, const T *w, const T *b, double eps) {
  typedef typename Acc<T>::type A;
  typedef typename PickRow<Packed, PackedRow<T, EPT, VEC>, A[EPT]>::type Row;
  const RowGroup<Warp> g;
  for (int64 r = g.first; r < rows; r += g.step) {
    Row v;
    load_row<EPT, VEC>(v, in + r * cols, cols, g.t, g.G);
    A mean, rstd;
    row_stats<Centered, Warp, EPT, VEC>(v, g.t, g.G, cols, eps, mean, rstd);
#pragma unroll
    for (int p = 0; p < EPT / VEC; ++p) {
      const int c = (p * g.G + g.t) * VEC;
      if (c >= cols) continue;
      Pack<T, VEC> k;
      if (w) k = load_pack<T, VEC>(w + c);
      Pack<T, VEC> bk;
      if (b) bk = load_pack<T, VEC>(b + c);
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        A y = (v[p * VEC + i] - mean) * rstd;
        if (w) y *= A(load(k.v[i]));
        if (b) y += A(load(bk.v[i]));
        k.v[i] = store<T>(y);
      }
      store_pack<T, VEC>(out + r * cols + c, k);
    }
  }
}

// Forward for rows longer than the register forms hold: one block per row, three reads of the row.
template <typename T, bool Centered>
__device__ void norm_long(int64 rows, int64 cols, T *out, const T *in, const T *w, const T *b, double eps) {
  typedef typename Acc<T>::type A;
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * cols;
    A mean = A(0);
    if (Centered) {
      A s = A(0);
      for (int64 c = threadIdx.x; c < cols; c += blockDim.x) s += A(load(x[c]));
      mean = block_all<SumOp>(s) / A(cols);
    }
    A q = A(0);
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) {
      const A d = A(load(x[c])) - mean;
      q += d * d;
    }
    const A rstd = A(1) / m_sqrt(block_all<SumOp>(q) / A(cols) + A(eps));
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) {
      A y = (A(load(x[c])) - mean) * rstd;
      if (w) y *= A(load(w[c]));
      if (b) y += A(load(b[c]));
      out[r * cols + c] = store<T>(y);
    }
  }
}

// ---- Note [Fused column sums] ------------------------------------------------------------------------------
// grad_weight[k] = sum over rows of dy[r, k] * xhat[r, k] and grad_bias[k] = sum over rows of dy[r, k]. The
// register forms already hold a row's x and dy, so they add each row into per-thread column accumulators
// (aw, ab: one per slot, the same columns for every row the group takes) instead of leaving the sums to a
// second kernel that reads x and dy again (two thirds more memory traffic than x + dy + dx; Note [Norm
// column sums] is that path, kept for long rows, single elements and float64). At the end each block writes
// its sums as one row of a [parts, cols] float matrix (a block form: its threads own distinct columns; a warp
// form: the block's kRowWarps warps are added in shared memory first, in warp order), and
// norm_columns_reduce adds the parts in a fixed order.
// No atomics, so the gradients do not depend on the order the blocks run in. The host launches a grid of
// `parts` blocks that are all resident at once (one wave; __launch_bounds__ guarantees the residency, see
// fused_config in ops_norm.cpp), so each block walks rows / parts rows and the parts stay few.
constexpr int kRowWarps = 4;  // warp forms run in 128-thread blocks (cuda/rows.h)

// Write a block's column sums `acc` (slot j of this thread) as row blockIdx.x of `part`.
template <bool Warp, int EPT, int VEC, typename A>
__device__ __forceinline__ void store_column_part(A *part, const A (&acc)[EPT], int64 cols,
                                                  const RowGroup<Warp> &g) {
  A *out = part + int64(blockIdx.x) * cols;
  if constexpr (!Warp) {
#pragma unroll
    for (int j = 0; j < EPT; ++j) {
      const int c = slot_col<VEC>(j, g.t, g.G);
      if (c < cols) out[c] = acc[j];
    }
  } else {
    __shared__ A red[kRowWarps][EPT * 32];  // slot_col < EPT * 32 when G = 32
    __syncthreads();                         // a previous call's readers are done before this one writes
#pragma unroll
    for (int j = 0; j < EPT; ++j) red[threadIdx.x >> 5][slot_col<VEC>(j, g.t, 32)] = acc[j];
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      A s = red[0][c];
      for (int k = 1; k < kRowWarps; ++k) s += red[k][c];
      out[c] = s;
    }
  }
}

// Backward, the rows of x and dy in registers: dx (when not null); stats[2r], stats[2r + 1] = mean, rstd
// (when not null); and, in the Fused forms, this block's share of grad_weight / grad_bias in part_w / part_b
// (when not null, Note [Fused column sums]). The other forms take null parts and keep their registers.
template <typename T, bool Centered, int EPT, int VEC, bool Warp, bool Fused>
__device__ void norm_backward_regs(int64 rows, int64 cols, T *dx, typename Acc<T>::type *stats, const T *in,
                                   const T *dy, const T *w, double eps, typename Acc<T>::type *part_w,
                                   typename Acc<T>::type *part_b) {
  typedef typename Acc<T>::type A;
  const RowGroup<Warp> g;
  A aw[EPT], ab[EPT];  // column sums of dy * xhat and dy over this group's rows
#pragma unroll
  for (int j = 0; j < EPT; ++j) aw[j] = ab[j] = A(0);
  for (int64 r = g.first; r < rows; r += g.step) {
    A v[EPT], gv[EPT];
    load_row<EPT, VEC>(v, in + r * cols, cols, g.t, g.G, A(0));
    load_row<EPT, VEC>(gv, dy + r * cols, cols, g.t, g.G, A(0));
    A mean, rstd;
    row_stats<Centered, Warp, EPT, VEC>(v, g.t, g.G, cols, eps, mean, rstd);
    if (stats && g.t == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
#pragma unroll
    for (int j = 0; j < EPT; ++j) v[j] = in_row<VEC>(j, g.t, g.G, cols) ? (v[j] - mean) * rstd : A(0);  // xhat
    if (Fused && part_w) {  // padding slots add 0: gv and xhat are 0 there
#pragma unroll
      for (int j = 0; j < EPT; ++j) aw[j] += gv[j] * v[j];
    }
    if (Fused && Centered && part_b) {
#pragma unroll
      for (int j = 0; j < EPT; ++j) ab[j] += gv[j];
    }
    if (!dx) continue;  // uniform over the group: every thread sees the same dx
    if (w) {
#pragma unroll
      for (int p = 0; p < EPT / VEC; ++p) {
        const int c = (p * g.G + g.t) * VEC;
        if (c >= cols) continue;
        const Pack<T, VEC> k = load_pack<T, VEC>(w + c);
#pragma unroll
        for (int i = 0; i < VEC; ++i) gv[p * VEC + i] *= A(load(k.v[i]));
      }
    }
    A sg = A(0), sgx = A(0);
#pragma unroll
    for (int j = 0; j < EPT; ++j) {
      sg += gv[j];
      sgx += gv[j] * v[j];
    }
    const A a = Centered ? group_all<Warp, SumOp>(sg) / A(cols) : A(0);
    const A bb = group_all<Warp, SumOp>(sgx) / A(cols);
#pragma unroll
    for (int j = 0; j < EPT; ++j) v[j] = rstd * (gv[j] - a - v[j] * bb);
    store_row<EPT, VEC>(dx + r * cols, v, cols, g.t, g.G);
  }
  if (Fused && part_w) store_column_part<Warp, EPT, VEC>(part_w, aw, cols, g);  // uniform over the block
  if (Fused && Centered && part_b) store_column_part<Warp, EPT, VEC>(part_b, ab, cols, g);
}

// Backward for long rows: one block per row, reading x, dy and w again for each of its four passes.
template <typename T, bool Centered>
__device__ void norm_backward_long(int64 rows, int64 cols, T *dx, typename Acc<T>::type *stats, const T *in,
                                   const T *dy, const T *w, double eps) {
  typedef typename Acc<T>::type A;
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * cols, *d = dy + r * cols;
    A mean = A(0);
    if (Centered) {
      A s = A(0);
      for (int64 c = threadIdx.x; c < cols; c += blockDim.x) s += A(load(x[c]));
      mean = block_all<SumOp>(s) / A(cols);
    }
    A q = A(0);
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) {
      const A e = A(load(x[c])) - mean;
      q += e * e;
    }
    const A rstd = A(1) / m_sqrt(block_all<SumOp>(q) / A(cols) + A(eps));
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
    if (!dx) continue;
    A sg = A(0), sgx = A(0);
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) {
      const A gc = w ? A(load(d[c])) * A(load(w[c])) : A(load(d[c]));
      sg += gc;
      sgx += gc * (A(load(x[c])) - mean) * rstd;
    }
    const A a = Centered ? block_all<SumOp>(sg) / A(cols) : A(0);
    const A bb = block_all<SumOp>(sgx) / A(cols);
    for (int64 c = threadIdx.x; c < cols; c += blockDim.x) {
      const A gc = w ? A(load(d[c])) * A(load(w[c])) : A(load(d[c]));
      dx[r * cols + c] = store<T>(rstd * (gc - a - (A(load(x[c])) - mean) * rstd * bb));
    }
  }
}

// ---- Note [Norm column sums] -------------------------------------------------------------------------------
// grad_weight[k] = sum over rows of dy[r, k] * xhat[r, k] and grad_bias[k] = sum over rows of dy[r, k]: sums
// down the columns. Two stages, no atomics, so the result does not depend on the order blocks run in:
//   partial: block b takes a tile of 32 columns and a chunk of `chunk_rows` rows (b = tile + tiles * chunk);
//            its 256 threads are 32 columns x 8 row lanes, so each warp reads 32 neighbouring elements of a
//            row (coalesced); the 8 lanes' sums meet in shared memory in a fixed order, and the block writes
//            partial[chunk * cols + k];
//   final:   one thread per column adds the chunks' partials in chunk order and stores the gradient as T.
// xhat comes from the (mean, rstd) pairs the row kernel wrote, so x is read once more here, not re-reduced.
// The column kernels below run 256 threads as 32 columns x 8 row lanes (lane = threadIdx.x & 31, rl =
// threadIdx.x >> 5). Each thread's two sums meet the other row lanes' of its column in shared memory, added in
// lane order (a fixed order: the result does not depend on timing); the totals land in the rl == 0 threads.
template <typename A> __device__ __forceinline__ void meet_row_lanes(A &aw, A &ab) {
  __shared__ A sw[8][33], sb[8][33];
  const int lane = threadIdx.x & 31, rl = threadIdx.x >> 5;
  sw[rl][lane] = aw;
  sb[rl][lane] = ab;
  __syncthreads();
  if (rl == 0) {
    aw = ab = A(0);
    for (int i = 0; i < 8; ++i) {
      aw += sw[i][lane];
      ab += sb[i][lane];
    }
  }
}

template <typename T>
__device__ void norm_columns_partial(int64 rows, int64 cols, int64 chunk_rows, typename Acc<T>::type *part_w,
                                     typename Acc<T>::type *part_b, const T *in, const T *dy,
                                     const typename Acc<T>::type *stats) {
  typedef typename Acc<T>::type A;
  const int64 tiles = (cols + 31) / 32;
  const int64 tile = blockIdx.x % tiles, chunk = blockIdx.x / tiles;
  const int lane = threadIdx.x & 31, rl = threadIdx.x >> 5;
  const int64 k = tile * 32 + lane;
  const int64 r0 = chunk * chunk_rows, r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  A aw = A(0), ab = A(0);
  if (k < cols)
    for (int64 r = r0 + rl; r < r1; r += 8) {
      const A gk = A(load(dy[r * cols + k]));
      if (part_w) aw += gk * ((A(load(in[r * cols + k])) - stats[2 * r]) * stats[2 * r + 1]);
      ab += gk;
    }
  meet_row_lanes(aw, ab);
  if (rl == 0 && k < cols) {
    if (part_w) part_w[chunk * cols + k] = aw;
    if (part_b) part_b[chunk * cols + k] = ab;
  }
}

template <typename T>
__device__ void norm_columns_final(int64 cols, int64 chunks, T *grad_w, T *grad_b,
                                   const typename Acc<T>::type *part_w, const typename Acc<T>::type *part_b) {
  typedef typename Acc<T>::type A;
  TP_GRID_STRIDE(k, cols) {
    A tw = A(0), tb = A(0);
    for (int64 c = 0; c < chunks; ++c) {
      if (part_w) tw += part_w[c * cols + k];
      if (part_b) tb += part_b[c * cols + k];
    }
    if (grad_w) grad_w[k] = store<T>(tw);
    if (grad_b) grad_b[k] = store<T>(tb);
  }
}

// grad_weight / grad_bias from the [parts, cols] sums of Note [Fused column sums]: a block per tile of 32
// columns, its 256 threads 32 columns x 8 lanes over the parts (each warp reads 32 neighbouring floats of a
// part: coalesced); the lanes meet in shared memory in a fixed order.
template <typename T>
__device__ void norm_columns_reduce(int64 cols, int64 parts, T *grad_w, T *grad_b,
                                    const typename Acc<T>::type *part_w, const typename Acc<T>::type *part_b) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31, rl = threadIdx.x >> 5;
  const int64 k = int64(blockIdx.x) * 32 + lane;
  A aw = A(0), ab = A(0);
  if (k < cols) {
#pragma unroll 8
    for (int64 p = rl; p < parts; p += 8) {  // independent loads: 8 in flight per thread
      if (part_w) aw += part_w[p * cols + k];
      if (part_b) ab += part_b[p * cols + k];
    }
  }
  meet_row_lanes(aw, ab);
  if (rl == 0 && k < cols) {
    if (grad_w) grad_w[k] = store<T>(aw);
    if (grad_b) grad_b[k] = store<T>(ab);
  }
}

// Note [Row kernel registers]
//   A thread holding 16 or 32 row elements (x and dy in backward, w and b packs, 64-bit offsets) needs up to
//   ~190 registers (ptxas -v); a 1024-thread block allows 64 each. The block forms are therefore compiled with
//   __launch_bounds__(512) and launched with at most 512 threads (cuda/rows.h: kRegisterBlockMax); the warp
//   forms run in 128-thread blocks. NB is the bound, MB the blocks of NB threads that must fit on one SM
//   (ptxas caps the registers at 65536 / (NB * MB)):
//   - block32 (16-bit floats, 16-byte packs): 32 elements a thread, 64 or 128 threads (rows of 1025..4096).
//     A row of 16-bit values is half the bytes of a float32 row, so block16 kept only half as many bytes in
//     flight per SM (4 blocks of 256 threads x 32 bytes) and bfloat16 layer_norm reached 1918 GB/s against
//     float32's ~3400. Twice the elements a thread loads 64 bytes a thread again; MB = 6 caps it at 80
//     registers, 768 threads x 64 bytes = 48 KB in flight per SM. The row is held as its packs, not as floats
//     (Note [Packed register rows]): bfloat16 layer_norm uses the 80 (ptxas parks ~24 bytes in L1), float16
//     55.
//   - the backward warp8 vec form: MB = 8 (at most 64 registers), so a one-wave grid of 8 blocks per SM is
//     resident at once (Note [Fused column sums]); block16's bound (512, 1) guarantees 512 threads per SM.
//     ops_norm.cpp (fused_config) launches exactly that many blocks.
#define TP_NORM_FWD_P(name, C, T, form, EPT, VEC, W, pack, NB, MB, PACKED)                   \
  extern "C" __global__ void __launch_bounds__(NB, MB) name##_##form##_##pack##_##T(          \
      int64 rows, int64 cols, T *out, const T *in, const T *w, const T *b, double eps) {      \
    norm_regs<T, C, EPT, VEC, W, PACKED>(rows, cols, out, in, w, b, eps);                     \
  }
#define TP_NORM_FWD(name, C, T, form, EPT, VEC, W, pack, NB, MB) \
  TP_NORM_FWD_P(name, C, T, form, EPT, VEC, W, pack, NB, MB, false)
#define TP_NORM_BWD(name, C, T, form, EPT, VEC, W, pack, NB, MB, FUSED)                       \
  extern "C" __global__ void __launch_bounds__(NB, MB) name##_backward_##form##_##pack##_##T( \
      int64 rows, int64 cols, T *dx, Acc<T>::type *stats, const T *in, const T *dy,           \
      const T *w, double eps, Acc<T>::type *part_w, Acc<T>::type *part_b) {                   \
    norm_backward_regs<T, C, EPT, VEC, W, FUSED>(rows, cols, dx, stats, in, dy, w, eps, part_w, \
                                                 part_b);                                     \
  }
// Forward: warp8, warp32, block16, long (16-bit floats add block32). Backward holds two rows (x and dy):
// warp8, block16, long; its 16-byte-pack forms of the 16-bit floats and float32 add the column sums
// (FUSED: three more rows' worth of registers would make float64 and the scalar forms spill).
#define TP_FUSED(T) (sizeof(T) != 8)
#define TP_NORM_OP(name, C, T)                                                                \
  TP_NORM_FWD(name, C, T, warp8, 8, 16 / sizeof(T), true, vec, 128, 1)                        \
  TP_NORM_FWD(name, C, T, warp32, 32, 16 / sizeof(T), true, vec, 128, 1)                      \
  TP_NORM_FWD(name, C, T, block16, 16, 16 / sizeof(T), false, vec, 512, 1)                    \
  TP_NORM_FWD(name, C, T, warp8, 8, 1, true, scalar, 128, 1)                                  \
  TP_NORM_FWD(name, C, T, warp32, 32, 1, true, scalar, 128, 1)                                \
  TP_NORM_FWD(name, C, T, block16, 16, 1, false, scalar, 512, 1)                              \
  TP_NORM_BWD(name, C, T, warp8, 8, 16 / sizeof(T), true, vec, 128, TP_FUSED(T) ? 8 : 1, TP_FUSED(T)) \
  TP_NORM_BWD(name, C, T, block16, 16, 16 / sizeof(T), false, vec, 512, 1, TP_FUSED(T))       \
  TP_NORM_BWD(name, C, T, warp8, 8, 1, true, scalar, 128, 1, false)                           \
  TP_NORM_BWD(name, C, T, block16, 16, 1, false, scalar, 512, 1, false)                       \
  extern "C" __global__ void __launch_bounds__(512) name##_long_##T(                          \
      int64 rows, int64 cols, T *out, const T *in, const T *w, const T *b, double eps) {      \
    norm_long<T, C>(rows, cols, out, in, w, b, eps);                                          \
  }                                                                                           \
  extern "C" __global__ void __launch_bounds__(512) name##_backward_long_##T(                 \
      int64 rows, int64 cols, T *dx, Acc<T>::type *stats, const T *in, const T *dy,           \
      const T *w, double eps) {                                                               \
    norm_backward_long<T, C>(rows, cols, dx, stats, in, dy, w, eps);                          \
  }
#define TP_NORM(T)                                                                            \
  TP_NORM_OP(layer_norm, true, T)                                                             \
  TP_NORM_OP(rms_norm, false, T)                                                              \
  extern "C" __global__ void __launch_bounds__(256) norm_columns_partial_##T(                 \
      int64 rows, int64 cols, int64 chunk_rows, Acc<T>::type *part_w, Acc<T>::type *part_b,  \
      const T *in, const T *dy, const Acc<T>::type *stats) {                                  \
    norm_columns_partial<T>(rows, cols, chunk_rows, part_w, part_b, in, dy, stats);           \
  }                                                                                           \
  extern "C" __global__ void norm_columns_final_##T(int64 cols, int64 chunks, T *grad_w,      \
                                                    T *grad_b, const Acc<T>::type *part_w,    \
                                                    const Acc<T>::type *part_b) {             \
    norm_columns_final<T>(cols, chunks, grad_w, grad_b, part_w, part_b);                      \
  }                                                                                           \
  extern "C" __global__ void __launch_bounds__(256) norm_columns_reduce_##T(                  \
      int64 cols, int64 parts, T *grad_w, T *grad_b, const Acc<T>::type *part_w,              \
      const Acc<T>::type *part_b) {                                                           \
    norm_columns_reduce<T>(cols, parts, grad_w, grad_b, part_w, part_b);                      \
  }
#define TP_NORM16(T)                                                                          \
  TP_NORM(T)                                                                                  \
  TP_NORM_FWD_P(layer_norm, true, T, block32, 32, 8, false, vec, 128, 6, true)                \
  TP_NORM_FWD_P(rms_norm, false, T, block32, 32, 8, false, vec, 128, 6, true)
TP_NORM16(float16)
TP_NORM16(bfloat16)
TP_NORM(float32)
TP_NORM(float64)
