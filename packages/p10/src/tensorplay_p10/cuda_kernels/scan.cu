// scan.cu — running reductions along one dim on the device: cumsum, cumprod, cummax, cummin, logcumsumexp.
//
// Where it sits: launched by csrc/cuda/ops_scan.cpp, which lays the input out as a contiguous [outer, n, inner]
// block (n the scanned dim) in the dtype the scan runs in. Kernels, per op <op> and dtype <T>:
//   <op>_rows_<T>: inner == 1. Each row is cut into chunks (256 threads x 16 elements, or x 8 for the 16-byte
//                  states of cummax/cummin: the chunk's states fit the 48 KB of static shared memory), one block
//                  per chunk, all rows' chunks in one grid; a single-pass scan with decoupled look-back (Note
//                  [Decoupled look-back]).
//                  A block stages its chunk through shared memory, so global loads and stores stay coalesced
//                  while each thread scans kItems consecutive elements.
//   <op>_warps_<T>: inner == 1 and short rows (n <= kWarpRow in ops_scan.cpp): one warp per row, its 32 lanes
//                  on 32 consecutive elements (coalesced) scanned by shuffles, a carry from segment to segment.
//                  A block per row would leave most of its threads idle and pay the block's barriers.
//   <op>_segtotals_<T>, <op>_segs_<T>: inner >= 32 with too few lines for a thread each: every line cut into
//                  segments, a thread per (segment, line), two passes (Note [Segmented column scan]).
//   <op>_cols_<T>: inner > 1 (or rows too many for a grid of chunks): one thread per (outer, inner) line walks n;
//                  neighbouring threads read neighbouring columns, so loads coalesce. (The host transposes when
//                  there are too few lines to fill the device.)
// An op has a state S and: S ident(); S elem(T x, int64 k) (k: the position along the dim); S combine(S a, S b)
// — associative AND commutative (the look-back folds predecessors in a tree), with ident() its identity;
// write(S, pos, out0, out1).
//
// Note [Decoupled look-back]
//   (Merrill and Garland's single-pass scan.) Blocks take chunk tickets from an atomic counter, so a block only
//   ever waits for chunks whose blocks have already started, and the scan cannot deadlock. Each block scans its
//   chunk, publishes the chunk's total (flag 1: "aggregate"), then warp 0 looks back over up to 32 predecessors
//   at a time: it folds their aggregates until it meets one with flag 2 ("inclusive": the total of the row up to
//   and including that chunk) or the row's start, publishes its own inclusive total (flag 2), and the block
//   writes its chunk from that prefix. A value is written, then __threadfence(), then its flag; a reader reads
//   the flag, then __threadfence(), then the value — both through volatile accesses, which skip the
//   (incoherent) L1. The host zeroes the counter and the flags before each launch.
//
// Note [Packed status words]
//   A long row (x.cumsum(0) of a 64M-element vector: 16K chunks) is as fast as the look-back: each chunk waits
//   for its predecessors' totals, and every step back costs a round trip to L2 for the flags, a fence, and
//   another for the values. A 4-byte state (cumsum, cumprod, logcumsumexp of float16/bfloat16/float32) fits
//   with its flag in ONE 64-bit word (flag << 32 | state bits), written and read by single volatile 64-bit
//   accesses, which the GPU performs whole: a reader that sees the flag sees its value, so no fence is needed
//   on either side and a step back is one round trip. The words sit after the ticket counter, one per chunk
//   (the host zeroes 2 ints per chunk for them); larger states keep the flag / fence / value protocol.
//
// Note [Scan chunk phases]
//   A chunk's block loads its elements, scans them, looks back and stores; only the first phase keeps HBM
//   busy, so throughput is how many chunks' loads are in flight per SM. Two things set that. (1) Every load of
//   a chunk must be issued before any of them is waited for: with the bounds test `j < m` (64-bit) on each,
//   the compiler interleaved loads with the shared-memory stores that consume them, a stall every two loads
//   (the H200 ran a 64M-element cumsum at 0.80x PyTorch). A full chunk — every chunk but a row's last — now
//   loads all its elements into registers, unconditionally, before storing any. (2) Blocks per SM: the
//   thread's elements are read from shared memory again for the final pass instead of being kept in
//   registers across the look-back, which brought cumsum_rows_float32 from 60 to 32 registers (4 -> 8 blocks
//   of 256 per SM; 17 KB of shared memory each).
#include "common.cuh"

#define TP_SCAN_THREADS 256
// Elements per thread: the chunk is TP_SCAN_THREADS * items (kChunk and kChunkIndexed in csrc/cuda/ops_scan.cpp).
#define TP_SCAN_ITEMS 16         // states of at most 8 bytes: a 4096-element chunk, <= 34 KB of shared memory
#define TP_SCAN_ITEMS_INDEXED 8  // cummax/cummin's 16-byte (value, index) states: 2048 elements, 34 KB

template <typename T> struct Acc { typedef int64 type; };
template <> struct Acc<float16> { typedef float type; };
template <> struct Acc<bfloat16> { typedef float type; };
template <> struct Acc<float> { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename S> __device__ __forceinline__ S shfl_state(S s, int offset, bool up) {
  static_assert(sizeof(S) % 4 == 0 && sizeof(S) <= 16, "scan states are whole words, at most 16 bytes");
  int *w = reinterpret_cast<int *>(&s);
#pragma unroll
  for (int k = 0; k < int(sizeof(S) / 4); ++k)
    w[k] = up ? __shfl_up_sync(0xffffffffu, w[k], offset) : __shfl_down_sync(0xffffffffu, w[k], offset);
  return s;
}

// Lane `src`'s state, in every lane.
template <typename S> __device__ __forceinline__ S shfl_state_from(S s, int src) {
  int *w = reinterpret_cast<int *>(&s);
#pragma unroll
  for (int k = 0; k < int(sizeof(S) / 4); ++k) w[k] = __shfl_sync(0xffffffffu, w[k], src);
  return s;
}

// A state read word by word through volatile loads (Note [Decoupled look-back]).
template <typename S> __device__ __forceinline__ S load_volatile(const S *p) {
  S s;
  const volatile int *src = reinterpret_cast<const volatile int *>(p);
  int *dst = reinterpret_cast<int *>(&s);
#pragma unroll
  for (int k = 0; k < int(sizeof(S) / 4); ++k) dst[k] = src[k];
  return s;
}

// The exclusive prefix (in thread order) of each thread's `v` over the block, and the block's total in `total`
// (every thread). blockDim.x a multiple of 32.
template <typename Op, typename S> __device__ __forceinline__ S block_exclusive(const Op &op, S v, S &total) {
  __shared__ S warp_incl[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  S incl = v;
  for (int off = 1; off < 32; off <<= 1) {
    const S up = shfl_state(incl, off, true);
    if (lane >= off) incl = op.combine(up, incl);
  }
  S excl = shfl_state(incl, 1, true);
  if (lane == 0) excl = op.ident();
  __syncthreads();  // a previous call's readers are done
  if (lane == 31) warp_incl[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    S w = lane < nwarps ? warp_incl[lane] : op.ident();
    for (int off = 1; off < 32; off <<= 1) {
      const S up = shfl_state(w, off, true);
      if (lane >= off) w = op.combine(up, w);
    }
    if (lane < nwarps) warp_incl[lane] = w;
  }
  __syncthreads();
  if (warp > 0) excl = op.combine(warp_incl[warp - 1], excl);
  total = warp_incl[nwarps - 1];
  return excl;
}

// Note [Packed status words]: a 4-byte state and its flag as one 64-bit word, and back.
template <typename S> __device__ __forceinline__ unsigned long long pack_status(int flag, S s) {
  static_assert(sizeof(S) == 4, "only 4-byte states are packed");
  return (static_cast<unsigned long long>(flag) << 32) | *reinterpret_cast<const unsigned *>(&s);
}
template <typename S> __device__ __forceinline__ S status_value(unsigned long long w) {
  const unsigned bits = unsigned(w);
  return *reinterpret_cast<const S *>(&bits);
}

// One window of the look-back, shared by both status layouts: lane i holds the flag f and value v of the i-th
// nearest predecessor still to visit. The values up to the nearest lane whose flag ends the walk (2: an
// inclusive prefix; 3: before the row) are combined, older ones first, into lane 0's `prefix`; true when the
// walk is over.
template <typename Op, typename S> __device__ __forceinline__ bool fold_window(const Op &op, int f, S v, S &prefix) {
  const int lane = threadIdx.x & 31;
  const unsigned stop = __ballot_sync(0xffffffffu, f >= 2);
  const int last = stop ? __ffs(stop) - 1 : 31;  // the nearest lane that ends the walk
  if (lane > last) v = op.ident();
  for (int off = 16; off > 0; off >>= 1) v = op.combine(v, shfl_state(v, off, false));
  if (lane == 0) prefix = op.combine(v, prefix);
  return stop != 0;
}

// The look-back of Note [Decoupled look-back] on packed status words (Note [Packed status words]).
template <typename Op, typename S>
__device__ S look_back_packed(const Op &op, int64 t, int64 c, S total, volatile unsigned long long *words) {
  const int lane = threadIdx.x & 31;
  if (c == 0) {
    if (lane == 0) words[t] = pack_status(2, total);
    return op.ident();
  }
  if (lane == 0) words[t] = pack_status(1, total);
  const int64 row_first = t - c;
  S prefix = op.ident();
  for (int64 base = t - 1;; base -= 32) {
    const int64 p = base - lane;  // lane 0 the nearest predecessor
    int f = 3;                    // 3: before the row's first chunk, an identity that ends the walk
    S v = op.ident();
    if (p >= row_first) {
      unsigned long long w;
      do {
        w = words[p];
      } while ((w >> 32) == 0);
      f = int(w >> 32);
      v = status_value<S>(w);
    }
    if (fold_window(op, f, v, prefix)) break;
  }
  if (lane == 0) words[t] = pack_status(2, op.combine(prefix, total));
  return prefix;
}

// Warp 0 of the block holding ticket t (chunk c of its row): publish, look back, publish; returns the prefix of
// the chunk (the row's total before it) in lane 0. Note [Decoupled look-back].
template <typename Op, typename S>
__device__ S look_back(const Op &op, int64 t, int64 c, S total, volatile int *flags, S *agg, S *incl) {
  const int lane = threadIdx.x & 31;
  if (c == 0) {
    if (lane == 0) {
      incl[t] = total;
      __threadfence();
      flags[t] = 2;
    }
    return op.ident();
  }
  if (lane == 0) {
    agg[t] = total;
    __threadfence();
    flags[t] = 1;
  }
  const int64 row_first = t - c;
  S prefix = op.ident();
  for (int64 base = t - 1;; base -= 32) {
    const int64 p = base - lane;  // lane 0 the nearest predecessor
    int f = 3;                    // 3: before the row's first chunk, an identity that ends the walk
    if (p >= row_first) {
      do {
        f = flags[p];
      } while (f == 0);
    }
    __threadfence();
    S v = f == 1 ? load_volatile(agg + p) : f == 2 ? load_volatile(incl + p) : op.ident();
    if (fold_window(op, f, v, prefix)) break;
  }
  if (lane == 0) {
    incl[t] = op.combine(prefix, total);
    __threadfence();
    flags[t] = 2;
  }
  return prefix;
}

// One chunk of Items * TP_SCAN_THREADS elements of one row per block (blockDim.x == TP_SCAN_THREADS). ctrl: an
// int64 ticket counter, then two ints per chunk of every row (all zero at launch): one int flag per chunk, or
// for a 4-byte state one 64-bit status word per chunk (Note [Packed status words]); agg, incl: one state per
// chunk (unused with packed words).
template <typename Op, typename T, int Items>
__device__ void scan_rows(int64 n, int64 nchunks, char *out0, char *out1, int *ctrl, typename Op::S *agg,
                          typename Op::S *incl, const T *in) {
  typedef typename Op::S S;
  const int kChunk = TP_SCAN_THREADS * Items;
  const Op op;
  __shared__ S tile[kChunk + kChunk / 32];  // padded: thread-consecutive reads skip bank conflicts
  __shared__ int64 s_ticket;
  __shared__ S s_prefix;
  if (threadIdx.x == 0) s_ticket = int64(atomicAdd(reinterpret_cast<unsigned long long *>(ctrl), 1ull));
  __syncthreads();
  const int64 t = s_ticket, r = t / nchunks, c = t % nchunks;
  const int64 lo = c * kChunk;
  const int m = n - lo < kChunk ? int(n - lo) : kChunk;  // elements in this chunk
  const T *src = in + r * n + lo;
  // Striped loads (coalesced), every one issued before the first store to shared memory waits for one (Note
  // [Scan chunk phases]): a full chunk, every chunk but a row's last, loads without bounds tests.
  if (m == kChunk) {
    T x[Items];
#pragma unroll
    for (int k = 0; k < Items; ++k) x[k] = src[k * TP_SCAN_THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = k * TP_SCAN_THREADS + threadIdx.x;
      tile[j + (j >> 5)] = op.elem(x[k], lo + j);
    }
  } else {
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = k * TP_SCAN_THREADS + threadIdx.x;
      tile[j + (j >> 5)] = j < m ? op.elem(src[j], lo + j) : op.ident();
    }
  }
  __syncthreads();
  S mine = op.ident();
#pragma unroll
  for (int k = 0; k < Items; ++k) {  // blocked: thread i folds elements i * Items ...
    const int j = threadIdx.x * Items + k;
    mine = op.combine(mine, tile[j + (j >> 5)]);
  }
  S total;
  const S excl = block_exclusive(op, mine, total);
  if (threadIdx.x < 32) {
    S prefix;
    if constexpr (sizeof(S) == 4)
      prefix = look_back_packed(op, t, c, total, reinterpret_cast<volatile unsigned long long *>(ctrl + 2));
    else
      prefix = look_back(op, t, c, total, reinterpret_cast<volatile int *>(ctrl + 2), agg, incl);
    if (threadIdx.x == 0) s_prefix = prefix;
  }
  __syncthreads();
  S run = op.combine(s_prefix, excl);
#pragma unroll
  for (int k = 0; k < Items; ++k) {  // the thread's elements again, from shared memory (Note [Scan chunk phases])
    const int j = threadIdx.x * Items + k;
    run = op.combine(run, tile[j + (j >> 5)]);
    tile[j + (j >> 5)] = run;
  }
  __syncthreads();
  char *o0 = out0, *o1 = out1;
#pragma unroll
  for (int k = 0; k < Items; ++k) {  // striped again: coalesced stores
    const int j = k * TP_SCAN_THREADS + threadIdx.x;
    if (j < m) op.write(tile[j + (j >> 5)], r * n + lo + j, o0, o1);
  }
}

// One warp per row of n contiguous elements, rows grid-strided over the warps (every lane of a warp takes the
// same rows and segments, so the shuffles see all 32 lanes).
template <typename Op, typename T>
__device__ void scan_warps(int64 rows, int64 n, char *out0, char *out1, const T *in) {
  typedef typename Op::S S;
  const Op op;
  const int lane = threadIdx.x & 31;
  const int64 per_block = blockDim.x >> 5, warps = int64(gridDim.x) * per_block;
  for (int64 r = int64(blockIdx.x) * per_block + (threadIdx.x >> 5); r < rows; r += warps) {
    S carry = op.ident();  // the row's total before this segment
    for (int64 base = 0; base < n; base += 32) {
      const int64 k = base + lane;
      S v = k < n ? op.elem(in[r * n + k], k) : op.ident();
      for (int off = 1; off < 32; off <<= 1) {  // inclusive scan of the segment (Hillis-Steele)
        const S up = shfl_state(v, off, true);
        if (lane >= off) v = op.combine(up, v);
      }
      v = op.combine(carry, v);
      if (k < n) op.write(v, r * n + k, out0, out1);
      carry = shfl_state_from(v, 31);
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

// Note [Segmented column scan]
//   x.cumsum(0) of a [8192, 8192] matrix has 8192 lines (columns) of 8192 elements: a thread per line (scan_cols)
//   is 8192 threads, far too few to keep HBM busy, and moving the dim last costs two transposing copies. Instead
//   each line is cut into `segs` segments of `per` consecutive elements and a thread takes one (segment, line):
//     pass 1 (scan_seg_totals): each thread folds its segment into ws[seg * lines + line];
//     pass 2 (scan_segs): each thread folds ws[0 .. seg-1] of its line (the line's total before its segment; ws
//            is small and in L2), then scans its segment from there and writes it.
//   Consecutive threads take consecutive lines, so for inner >= 32 a warp reads 32 adjacent columns of one row:
//   coalesced, as scan_cols. The input is read twice and the output written once, all at full speed. combine is
//   associative, so the result is the serial walk's (up to float rounding, as in the row scan). Each thread
//   loads TP_SCAN_SEG_BATCH rows before it folds them: that many loads in flight instead of one.
#define TP_SCAN_SEG_BATCH 8

template <typename Op, typename T>
__device__ void scan_seg_totals(int64 outer, int64 n, int64 inner, int64 segs, typename Op::S *ws, const T *in) {
  typedef typename Op::S S;
  const Op op;
  const int64 lines = outer * inner, per = (n + segs - 1) / segs;
  TP_GRID_STRIDE(t, lines * segs) {
    const int64 seg = t / lines, line = t - seg * lines, o = line / inner, i = line - o * inner;
    const int64 lo = seg * per, hi = lo + per < n ? lo + per : n;
    const T *p = in + (o * n + lo) * inner + i;
    S acc = op.ident();
    int64 k = lo;
    for (; k + TP_SCAN_SEG_BATCH <= hi; k += TP_SCAN_SEG_BATCH, p += TP_SCAN_SEG_BATCH * inner) {
      T x[TP_SCAN_SEG_BATCH];
#pragma unroll
      for (int g = 0; g < TP_SCAN_SEG_BATCH; ++g) x[g] = p[g * inner];
#pragma unroll
      for (int g = 0; g < TP_SCAN_SEG_BATCH; ++g) acc = op.combine(acc, op.elem(x[g], k + g));
    }
    for (; k < hi; ++k, p += inner) acc = op.combine(acc, op.elem(*p, k));
    ws[t] = acc;
  }
}

template <typename Op, typename T>
__device__ void scan_segs(int64 outer, int64 n, int64 inner, int64 segs, char *out0, char *out1,
                          const typename Op::S *ws, const T *in) {
  typedef typename Op::S S;
  const Op op;
  const int64 lines = outer * inner, per = (n + segs - 1) / segs;
  TP_GRID_STRIDE(t, lines * segs) {
    const int64 seg = t / lines, line = t - seg * lines, o = line / inner, i = line - o * inner;
    S acc = op.ident();
#pragma unroll 8
    for (int64 j = 0; j < seg; ++j) acc = op.combine(acc, ws[j * lines + line]);  // in order, L2 hits
    const int64 lo = seg * per, hi = lo + per < n ? lo + per : n;
    int64 pos = (o * n + lo) * inner + i;
    int64 k = lo;
    for (; k + TP_SCAN_SEG_BATCH <= hi; k += TP_SCAN_SEG_BATCH, pos += TP_SCAN_SEG_BATCH * inner) {
      T x[TP_SCAN_SEG_BATCH];  // all loads first, then the stores: they may alias as far as the compiler knows
#pragma unroll
      for (int g = 0; g < TP_SCAN_SEG_BATCH; ++g) x[g] = in[pos + g * inner];
#pragma unroll
      for (int g = 0; g < TP_SCAN_SEG_BATCH; ++g) {
        acc = op.combine(acc, op.elem(x[g], k + g));
        op.write(acc, pos + g * inner, out0, out1);
      }
    }
    for (; k < hi; ++k, pos += inner) {
      acc = op.combine(acc, op.elem(in[pos], k));
      op.write(acc, pos, out0, out1);
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
// NaN, or when the best is not NaN and the element is >= (<=) it. That is the maximum of the key (is NaN, value,
// index) — NaN above every number, and on equal values (or two NaNs) the later index — which makes combine
// commutative as well as associative; index -1 marks the identity.
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
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an != bn) return an ? a : b;
    if (!an && a.v != b.v) return (IsMax ? b.v > a.v : b.v < a.v) ? b : a;
    return b.i > a.i ? b : a;  // equal values, or both NaN: the later index
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
  extern "C" __global__ void __launch_bounds__(TP_SCAN_THREADS)                                              \
      name##_rows_##T(int64 n, int64 nchunks, char *out0, char *out1, int *ctrl, OpT<T>::S *agg,            \
                      OpT<T>::S *incl, const T *in) {                                                        \
    const int items = sizeof(OpT<T>::S) <= 8 ? TP_SCAN_ITEMS : TP_SCAN_ITEMS_INDEXED;                        \
    scan_rows<OpT<T>, T, items>(n, nchunks, out0, out1, ctrl, agg, incl, in);                                \
  }                                                                                                          \
  extern "C" __global__ void name##_warps_##T(int64 rows, int64 n, char *out0, char *out1, const T *in) {     \
    scan_warps<OpT<T>, T>(rows, n, out0, out1, in);                                                          \
  }                                                                                                          \
  extern "C" __global__ void name##_cols_##T(int64 outer, int64 n, int64 inner, char *out0, char *out1,      \
                                             const T *in) {                                                  \
    scan_cols<OpT<T>, T>(outer, n, inner, out0, out1, in);                                                   \
  }                                                                                                          \
  extern "C" __global__ void name##_segtotals_##T(int64 outer, int64 n, int64 inner, int64 segs,             \
                                                  OpT<T>::S *ws, const T *in) {                              \
    scan_seg_totals<OpT<T>, T>(outer, n, inner, segs, ws, in);                                               \
  }                                                                                                          \
  extern "C" __global__ void name##_segs_##T(int64 outer, int64 n, int64 inner, int64 segs, char *out0,      \
                                             char *out1, const OpT<T>::S *ws, const T *in) {                 \
    scan_segs<OpT<T>, T>(outer, n, inner, segs, out0, out1, ws, in);                                         \
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
