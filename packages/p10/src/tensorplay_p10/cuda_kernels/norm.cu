// norm.cu — layer_norm and rms_norm over the rows of a contiguous [rows, N] matrix, and their backward.
//
// Where it sits: launched by csrc/cuda/ops_norm.cpp (the CUDA twin of kernels/norm.cpp and norm_backward.cpp),
// which makes the input contiguous as [rows, N], N = prod(normalized_shape), and the weight and bias contiguous
// vectors of N elements in the input's dtype (either may be null). Kernel names:
//   <op>_<form>_<vec|scalar>_<T>, <op>_long_<T>        forward, op = layer_norm | rms_norm (Note [Register
//                                                      rows] in rows_common.cuh; forms chosen by cuda/rows.h);
//   <op>_backward_<form>_<vec|scalar>_<T>, ..._long_<T> grad_input per row, and each row's (mean, rstd);
//   norm_columns_partial_<T>, norm_columns_final_<T>   grad_weight / grad_bias (Note [Norm column sums]).
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
template <bool Centered, bool Warp, int EPT, int VEC, typename A>
__device__ __forceinline__ void row_stats(const A (&v)[EPT], int t, int G, int64 cols, double eps, A &mean,
                                          A &rstd) {
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

// Forward, the row in registers: y = (x - mean) * rstd * w + b (w, b may be null).
template <typename T, bool Centered, int EPT, int VEC, bool Warp>
__device__ void norm_regs(int64 rows, int64 cols, T *out, const T *in, const T *w, const T *b, double eps) {
  typedef typename Acc<T>::type A;
  const RowGroup<Warp> g;
  for (int64 r = g.first; r < rows; r += g.step) {
    A v[EPT];
    load_row<EPT, VEC>(v, in + r * cols, cols, g.t, g.G, A(0));
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

// Backward, the rows of x and dy in registers: dx (when not null) and stats[2r], stats[2r + 1] = mean, rstd.
template <typename T, bool Centered, int EPT, int VEC, bool Warp>
__device__ void norm_backward_regs(int64 rows, int64 cols, T *dx, typename Acc<T>::type *stats, const T *in,
                                   const T *dy, const T *w, double eps) {
  typedef typename Acc<T>::type A;
  const RowGroup<Warp> g;
  for (int64 r = g.first; r < rows; r += g.step) {
    A v[EPT], gv[EPT];
    load_row<EPT, VEC>(v, in + r * cols, cols, g.t, g.G, A(0));
    load_row<EPT, VEC>(gv, dy + r * cols, cols, g.t, g.G, A(0));
    A mean, rstd;
    row_stats<Centered, Warp, EPT, VEC>(v, g.t, g.G, cols, eps, mean, rstd);
    if (g.t == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
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
      v[j] = in_row<VEC>(j, g.t, g.G, cols) ? (v[j] - mean) * rstd : A(0);  // xhat; padding gv is 0 already
      sg += gv[j];
      sgx += gv[j] * v[j];
    }
    const A a = Centered ? group_all<Warp, SumOp>(sg) / A(cols) : A(0);
    const A bb = group_all<Warp, SumOp>(sgx) / A(cols);
#pragma unroll
    for (int j = 0; j < EPT; ++j) v[j] = rstd * (gv[j] - a - v[j] * bb);
    store_row<EPT, VEC>(dx + r * cols, v, cols, g.t, g.G);
  }
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
template <typename T>
__device__ void norm_columns_partial(int64 rows, int64 cols, int64 chunk_rows, typename Acc<T>::type *part_w,
                                     typename Acc<T>::type *part_b, const T *in, const T *dy,
                                     const typename Acc<T>::type *stats) {
  typedef typename Acc<T>::type A;
  __shared__ A sw[8][33], sb[8][33];
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
  sw[rl][lane] = aw;
  sb[rl][lane] = ab;
  __syncthreads();
  if (rl == 0 && k < cols) {
    A tw = A(0), tb = A(0);
    for (int i = 0; i < 8; ++i) {
      tw += sw[i][lane];
      tb += sb[i][lane];
    }
    if (part_w) part_w[chunk * cols + k] = tw;
    if (part_b) part_b[chunk * cols + k] = tb;
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

// Note [Row kernel registers]
//   A thread holding 16 or 32 row elements (x and dy in backward, w and b packs, 64-bit offsets) needs up to
//   ~190 registers (ptxas -v); a 1024-thread block allows 64 each. The block forms are therefore compiled with
//   __launch_bounds__(512) and launched with at most 512 threads (cuda/rows.h: kRegisterBlockMax); the warp
//   forms run in 128-thread blocks. NB is the bound.
#define TP_NORM_FWD(name, C, T, form, EPT, VEC, W, pack, NB)                                  \
  extern "C" __global__ void __launch_bounds__(NB) name##_##form##_##pack##_##T(              \
      int64 rows, int64 cols, T *out, const T *in, const T *w, const T *b, double eps) {      \
    norm_regs<T, C, EPT, VEC, W>(rows, cols, out, in, w, b, eps);                             \
  }
#define TP_NORM_BWD(name, C, T, form, EPT, VEC, W, pack, NB)                                  \
  extern "C" __global__ void __launch_bounds__(NB) name##_backward_##form##_##pack##_##T(     \
      int64 rows, int64 cols, T *dx, Acc<T>::type *stats, const T *in, const T *dy,           \
      const T *w, double eps) {                                                               \
    norm_backward_regs<T, C, EPT, VEC, W>(rows, cols, dx, stats, in, dy, w, eps);             \
  }
// Forward: warp8, warp32, block16, long. Backward holds two rows (x and dy): warp8, block16, long.
#define TP_NORM_OP(name, C, T)                                                                \
  TP_NORM_FWD(name, C, T, warp8, 8, 16 / sizeof(T), true, vec, 128)                           \
  TP_NORM_FWD(name, C, T, warp32, 32, 16 / sizeof(T), true, vec, 128)                         \
  TP_NORM_FWD(name, C, T, block16, 16, 16 / sizeof(T), false, vec, 512)                       \
  TP_NORM_FWD(name, C, T, warp8, 8, 1, true, scalar, 128)                                     \
  TP_NORM_FWD(name, C, T, warp32, 32, 1, true, scalar, 128)                                   \
  TP_NORM_FWD(name, C, T, block16, 16, 1, false, scalar, 512)                                 \
  TP_NORM_BWD(name, C, T, warp8, 8, 16 / sizeof(T), true, vec, 128)                          \
  TP_NORM_BWD(name, C, T, block16, 16, 16 / sizeof(T), false, vec, 512)                      \
  TP_NORM_BWD(name, C, T, warp8, 8, 1, true, scalar, 128)                                    \
  TP_NORM_BWD(name, C, T, block16, 16, 1, false, scalar, 512)                                \
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
  }
TP_NORM(float16)
TP_NORM(bfloat16)
TP_NORM(float32)
TP_NORM(float64)
