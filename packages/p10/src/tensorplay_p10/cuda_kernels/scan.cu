// scan.cu — running reductions along one dim on the device: cumsum, cumprod, cummax, cummin, logcumsumexp.
//
// Where it sits: launched by csrc/cuda/ops_scan.cpp, which lays the input out as a contiguous [outer, n, inner]
// block (n the scanned dim) in the dtype the scan runs in. Kernels, per op <op> and dtype <T>:
//   <op>_rows_<T>:   inner == 1. Block (x, y) scans chunk x of row y (rows grid-strided over y) in tiles of
//                    kItems * blockDim.x elements: each thread folds kItems consecutive elements, a block-wide
//                    scan (warp shuffles, then the warp totals) gives each thread its exclusive prefix, and a
//                    running carry joins the tiles. With one chunk per row that is the whole scan.
//   <op>_totals_<T>: long rows are cut into chunks (a multi-pass scan): the host first runs <op>_rows_<T> in
//                    "totals" mode (each chunk's total to the workspace, nothing written), then this kernel
//                    scans each row's chunk totals in place (one block per row), then <op>_rows_<T> again with
//                    the workspace: chunk x starts from the inclusive total of chunks 0..x-1.
//   <op>_cols_<T>:   inner > 1: one thread per (outer, inner) line walks n; neighbouring threads read
//                    neighbouring columns, so loads coalesce. (The host transposes when there are too few lines.)
// An op has a state S and: S ident(); S elem(T x, int64 k) (k: the position along the dim); S combine(S a, S b)
// with a before b — associative, with ident() a two-sided identity; write(S, pos, out0, out1).
#include "common.cuh"

#define TP_SCAN_ITEMS 4

template <typename T> struct Acc { typedef int64 type; };
template <> struct Acc<float16> { typedef float type; };
template <> struct Acc<bfloat16> { typedef float type; };
template <> struct Acc<float> { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename S> __device__ __forceinline__ S shfl_up_state(S s, int offset) {
  static_assert(sizeof(S) % 4 == 0, "scan states are whole words");
  int *w = reinterpret_cast<int *>(&s);
#pragma unroll
  for (int k = 0; k < int(sizeof(S) / 4); ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], offset);
  return s;
}

// The exclusive prefix (in thread order) of each thread's `v` over the block, and the block's total in `total`
// (every thread). blockDim.x a multiple of 32.
template <typename Op, typename S> __device__ __forceinline__ S block_exclusive(const Op &op, S v, S &total) {
  __shared__ S warp_incl[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  S incl = v;
  for (int off = 1; off < 32; off <<= 1) {
    const S up = shfl_up_state(incl, off);
    if (lane >= off) incl = op.combine(up, incl);
  }
  S excl = shfl_up_state(incl, 1);
  if (lane == 0) excl = op.ident();
  __syncthreads();  // the previous tile's readers are done
  if (lane == 31) warp_incl[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    S w = lane < nwarps ? warp_incl[lane] : op.ident();
    for (int off = 1; off < 32; off <<= 1) {
      const S up = shfl_up_state(w, off);
      if (lane >= off) w = op.combine(up, w);
    }
    if (lane < nwarps) warp_incl[lane] = w;
  }
  __syncthreads();
  if (warp > 0) excl = op.combine(warp_incl[warp - 1], excl);
  total = warp_incl[nwarps - 1];
  return excl;
}

// Chunk blockIdx.x of row blockIdx.y (+ k * gridDim.y). `ws` (rows x nchunks states) is null for a one-chunk
// scan; with `totals_only` the chunk's total goes to ws and nothing is written; otherwise a chunk after the
// first starts from ws[chunk - 1], the scanned totals.
template <typename Op, typename T>
__device__ void scan_rows(int64 rows, int64 n, int64 chunk, char *out0, char *out1, typename Op::S *ws,
                          int totals_only, const T *in) {
  typedef typename Op::S S;
  const Op op;
  const int64 nchunks = (n + chunk - 1) / chunk;
  const int64 c = blockIdx.x;
  for (int64 r = blockIdx.y; r < rows; r += gridDim.y) {
    const int64 lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
    S carry = (ws && !totals_only && c > 0) ? ws[r * nchunks + c - 1] : op.ident();
    const T *row = in + r * n;
    for (int64 base = lo; base < hi; base += int64(blockDim.x) * TP_SCAN_ITEMS) {
      const int64 first = base + int64(threadIdx.x) * TP_SCAN_ITEMS;
      S items[TP_SCAN_ITEMS];
      S mine = op.ident();
#pragma unroll
      for (int k = 0; k < TP_SCAN_ITEMS; ++k) {
        items[k] = first + k < hi ? op.elem(row[first + k], first + k) : op.ident();
        mine = op.combine(mine, items[k]);
      }
      S total;
      S prefix = op.combine(carry, block_exclusive(op, mine, total));
      carry = op.combine(carry, total);
      if (!totals_only) {
#pragma unroll
        for (int k = 0; k < TP_SCAN_ITEMS; ++k) {
          prefix = op.combine(prefix, items[k]);
          if (first + k < hi) op.write(prefix, r * n + first + k, out0, out1);
        }
      }
    }
    if (totals_only && threadIdx.x == 0) ws[r * nchunks + c] = carry;
  }
}

// Row blockIdx.y's `nchunks` chunk totals scanned in place (inclusive).
template <typename Op>
__device__ void scan_totals(int64 rows, int64 nchunks, typename Op::S *ws) {
  typedef typename Op::S S;
  const Op op;
  for (int64 r = blockIdx.y; r < rows; r += gridDim.y) {
    S carry = op.ident();
    S *t = ws + r * nchunks;
    for (int64 base = 0; base < nchunks; base += blockDim.x) {
      const int64 k = base + threadIdx.x;
      const S v = k < nchunks ? t[k] : op.ident();
      S total;
      const S excl = block_exclusive(op, v, total);
      if (k < nchunks) t[k] = op.combine(op.combine(carry, excl), v);
      carry = op.combine(carry, total);
    }
  }
}

template <typename Op, typename T>
__device__ void scan_cols(int64 outer, int64 n, int64 inner, char *out0, char *out1, const T *in) {
  typedef typename Op::S S;
  const Op op;
  TP_GRID_STRIDE(line, outer * inner) {
    const int64 o = line / inner, i = line % inner;
    S s = op.ident();
    for (int64 k = 0; k < n; ++k) {
      const int64 pos = (o * n + k) * inner + i;
      s = op.combine(s, op.elem(in[pos], k));
      op.write(s, pos, out0, out1);
    }
  }
}

// ---- the ops -------------------------------------------------------------------------------------------------
// cumsum / cumprod in Acc<T> (int64 for integers and bool: a running sum of 0/1 stored as bool is their OR, a
// product their AND — the CPU's bool rule).
template <typename T, bool Prod> struct CumOp {
  typedef typename Acc<T>::type A;
  struct S {
    A v;
  };
  __device__ __forceinline__ S ident() const { return S{A(Prod ? 1 : 0)}; }
  __device__ __forceinline__ S elem(T x, int64) const { return S{A(load(x))}; }
  __device__ __forceinline__ S combine(S a, S b) const { return S{Prod ? a.v * b.v : a.v + b.v}; }
  __device__ __forceinline__ void write(S s, int64 pos, char *out0, char *) const {
    reinterpret_cast<T *>(out0)[pos] = store<T>(s.v);
  }
};
template <typename T> using CumsumOp = CumOp<T, false>;
template <typename T> using CumprodOp = CumOp<T, true>;

// cummax / cummin, PyTorch's CPU rule (kernels/scan.cpp): a later element replaces the running best when it is
// NaN, or when the best is not NaN and the element is >= (<=) it. That is the maximum of the key (is NaN,
// value, index), an associative combine; index -1 marks the identity.
template <typename T, bool IsMax> struct CumBestOp {
  typedef typename OpMath<T>::type M;
  struct S {
    M v;
    int64 i;
  };
  __device__ __forceinline__ S ident() const { return S{M(0), -1}; }
  __device__ __forceinline__ S elem(T x, int64 k) const { return S{load(x), k}; }
  __device__ __forceinline__ S combine(S a, S b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    const bool take = b.v != b.v || (a.v == a.v && (IsMax ? b.v >= a.v : b.v <= a.v));
    return take ? b : a;
  }
  __device__ __forceinline__ void write(S s, int64 pos, char *out0, char *out1) const {
    reinterpret_cast<T *>(out0)[pos] = store<T>(s.v);
    reinterpret_cast<int64 *>(out1)[pos] = s.i;
  }
};
template <typename T> using CummaxOp = CumBestOp<T, true>;
template <typename T> using CumminOp = CumBestOp<T, false>;

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double m_log1p(double x) { return log1p(x); }
__device__ __forceinline__ bool m_isfinite(float x) { return x - x == 0.f; }
__device__ __forceinline__ bool m_isfinite(double x) { return x - x == 0.0; }

// logcumsumexp: log(e^a + e^b) = hi + log1p(e^(lo - hi)), never overflowing; two equal infinities stay as they
// are (inf - inf would be NaN); NaN sticks. -inf is the identity.
template <typename T> struct LogCumSumExpOp {
  typedef typename Acc<T>::type A;
  struct S {
    A v;
  };
  __device__ __forceinline__ S ident() const { return S{-__int_as_float(0x7f800000)}; }
  __device__ __forceinline__ S elem(T x, int64) const { return S{A(load(x))}; }
  __device__ __forceinline__ S combine(S a, S b) const {
    if (a.v != a.v || b.v != b.v) return S{a.v + b.v};
    const A lo = a.v < b.v ? a.v : b.v, hi = a.v < b.v ? b.v : a.v;
    if (lo != hi || m_isfinite(lo)) return S{hi + m_log1p(m_exp(lo - hi))};
    return S{hi};
  }
  __device__ __forceinline__ void write(S s, int64 pos, char *out0, char *) const {
    reinterpret_cast<T *>(out0)[pos] = store<T>(s.v);
  }
};

#define TP_SCAN_KERNELS(name, OpT, T)                                                                        \
  extern "C" __global__ void name##_rows_##T(int64 rows, int64 n, int64 chunk, char *out0, char *out1,       \
                                             OpT<T>::S *ws, int totals_only, const T *in) {                  \
    scan_rows<OpT<T>, T>(rows, n, chunk, out0, out1, ws, totals_only, in);                                   \
  }                                                                                                          \
  extern "C" __global__ void name##_totals_##T(int64 rows, int64 nchunks, OpT<T>::S *ws) {                   \
    scan_totals<OpT<T>>(rows, nchunks, ws);                                                                  \
  }                                                                                                          \
  extern "C" __global__ void name##_cols_##T(int64 outer, int64 n, int64 inner, char *out0, char *out1,      \
                                             const T *in) {                                                  \
    scan_cols<OpT<T>, T>(outer, n, inner, out0, out1, in);                                                   \
  }
#define TP_SCAN_FLOATS(name, OpT)                                                                            \
  TP_SCAN_KERNELS(name, OpT, float16)                                                                        \
  TP_SCAN_KERNELS(name, OpT, bfloat16) TP_SCAN_KERNELS(name, OpT, float32) TP_SCAN_KERNELS(name, OpT, float64)
#define TP_SCAN_ALL(name, OpT)                                                                               \
  TP_SCAN_KERNELS(name, OpT, bool)                                                                           \
  TP_SCAN_KERNELS(name, OpT, uint8) TP_SCAN_KERNELS(name, OpT, int8) TP_SCAN_KERNELS(name, OpT, int16)        \
  TP_SCAN_KERNELS(name, OpT, int32) TP_SCAN_KERNELS(name, OpT, int64) TP_SCAN_FLOATS(name, OpT)

TP_SCAN_ALL(cumsum, CumsumOp)
TP_SCAN_ALL(cumprod, CumprodOp)
TP_SCAN_ALL(cummax, CummaxOp)
TP_SCAN_ALL(cummin, CumminOp)
TP_SCAN_FLOATS(logcumsumexp, LogCumSumExpOp)
