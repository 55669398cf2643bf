// sort.cu — sorting the rows of a contiguous [rows, len] matrix: values and int64 indices, stable, NaN last.
//
// Where it sits: launched by csrc/cuda/ops_sort.cpp (sort, topk, kthvalue) and, through its sort_rows helper,
// by ops_order_stats.cpp (median, mode, quantile) and ops_search.cpp (unique). Two algorithms, one order:
//   bitonic_<T>:  one block per row, the whole row in shared memory (len <= 4096);
//   radix_*:      an LSD radix sort over all rows at once (8 bits a pass), for longer rows.
// Both sort by the pair (order key, index in the row), so equal keys keep their order (a stable sort) and the
// two algorithms agree element for element with the CPU's std::stable_sort (kernels/sort.cpp).
#include "sort_keys.cuh"

// ---- bitonic sort, one row per block --------------------------------------------------------------------------
// The row's keys (as u64) and indices (u16: len <= 4096) sit in dynamic shared memory, padded to the power of
// two `npow2` with (all-ones key, index 0xffff), which sorts after every real element. Each stage compares
// npow2 / 2 disjoint pairs; the pair order is (key, index), a total order on real elements, so the unstable
// network still gives the stable result. The first `keep` sorted elements are written (topk, kthvalue).
template <typename T>
__device__ void bitonic_rows(int64 rows, int64 len, int64 keep, int npow2, int descending, const T *x, T *values,
                             int64 *indices) {
  extern __shared__ __align__(16) unsigned char smem[];
  u64 *keys = reinterpret_cast<u64 *>(smem);
  unsigned short *ids = reinterpret_cast<unsigned short *>(keys + npow2);
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * len;
    for (int i = threadIdx.x; i < npow2; i += blockDim.x) {
      if (i < len) {
        keys[i] = u64(order_key(xr[i], descending));
        ids[i] = (unsigned short)i;
      } else {
        keys[i] = ~0ull;
        ids[i] = 0xffffu;
      }
    }
    __syncthreads();
    for (int k = 2; k <= npow2; k <<= 1) {
      for (int j = k >> 1; j > 0; j >>= 1) {
        for (int p = threadIdx.x; p < (npow2 >> 1); p += blockDim.x) {
          const int i = ((p & ~(j - 1)) << 1) | (p & (j - 1));  // the pair's lower element: bit j clear
          const int l = i | j;
          const u64 ki = keys[i], kl = keys[l];
          const unsigned short ii = ids[i], il = ids[l];
          const bool i_after = ki > kl || (ki == kl && ii > il);
          const bool l_after = kl > ki || (kl == ki && il > ii);
          if ((i & k) == 0 ? i_after : l_after) {  // ascending blocks where bit k of i is clear
            keys[i] = kl;
            keys[l] = ki;
            ids[i] = il;
            ids[l] = ii;
          }
        }
        __syncthreads();
      }
    }
    // The values are read back from the input: -0.0 and NaN payloads come out exactly as they went in.
    for (int64 t = threadIdx.x; t < keep; t += blockDim.x) {
      const int s = ids[t];
      values[r * keep + t] = xr[s];
      indices[r * keep + t] = s;
    }
    __syncthreads();  // the next row's loads overwrite ids
  }
}

// ---- Note [Segmented radix sort] --------------------------------------------------------------------------
// Long rows are sorted all at once: the payload of each element is its flat index g = row * len + col, and
// LSD passes of 8 bits run first over the key's bytes, then over the bytes of the row number g / len. Each
// pass is stable, so the final order is by (row, key, col): every row's elements land in its own slice
// [row * len, (row + 1) * len), in (key, col) order. A pass over n elements has three steps:
//   radix_hist:    each tile of kTile elements counts its digits -> counts[digit * ntiles + tile];
//   scan (below):  an exclusive scan of counts gives each (digit, tile) its first output position (digit-major
//                  order: all of digit 0 in tile order, then digit 1, ...);
//   radix_scatter: each tile walks its elements in order, blockDim at a time, and ranks every element among the
//                  equal digits before it (within a warp by ballots over the digit's 8 bits, across warps
//                  through per-warp counts in shared memory) — the stable position.
#define kRadixThreads 256
#define kRadixWarps (kRadixThreads / 32)
#define kTile (kRadixThreads * 16)

template <typename K>
__device__ __forceinline__ int digit_of(K key, int64 payload, int64 len, int shift, int by_row) {
  return by_row ? int((u64(payload / len) >> shift) & 255u) : int((key >> shift) & K(255));
}

template <typename T>
__device__ void radix_init(int64 n, int descending, const T *x, typename KeyTraits<T>::Key *keys, int64 *payload) {
  TP_GRID_STRIDE(i, n) {
    keys[i] = order_key(x[i], descending);
    payload[i] = i;
  }
}

template <typename K>
__device__ void radix_hist(int64 n, int64 len, int shift, int by_row, const K *keys, const int64 *payload,
                           int64 *counts, int64 ntiles) {
  __shared__ unsigned hist[256];
  for (int d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
  __syncthreads();
  const int64 start = int64(blockIdx.x) * kTile, end = min(n, start + kTile);
  for (int64 i = start + threadIdx.x; i < end; i += blockDim.x) {
    const K k = by_row ? K(0) : keys[i];
    atomicAdd(&hist[digit_of(k, by_row ? payload[i] : 0, len, shift, by_row)], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < 256; d += blockDim.x) counts[int64(d) * ntiles + blockIdx.x] = hist[d];
}

template <typename K>
__device__ void radix_scatter(int64 n, int64 len, int shift, int by_row, const K *keys_in, const int64 *pay_in,
                              K *keys_out, int64 *pay_out, const int64 *offsets, int64 ntiles) {
  __shared__ int64 base[256];
  __shared__ int total[256];
  __shared__ int wcount[kRadixWarps][256];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const unsigned lanes_below = (1u << lane) - 1u;
  for (int d = tid; d < 256; d += blockDim.x) base[d] = offsets[int64(d) * ntiles + blockIdx.x];
  const int64 start = int64(blockIdx.x) * kTile, end = min(n, start + kTile);
  for (int64 s = start; s < end; s += kRadixThreads) {
    for (int i = tid; i < kRadixWarps * 256; i += kRadixThreads) (&wcount[0][0])[i] = 0;
    __syncthreads();  // also orders base's first load and the previous step's update before the reads below
    const int64 i = s + tid;
    const bool valid = i < end;
    K k = K(0);
    int64 pl = 0;
    int d = 0;
    if (valid) {
      k = keys_in[i];
      pl = pay_in[i];
      d = digit_of(k, pl, len, shift, by_row);
    }
    // peers: the lanes of this warp holding a valid element with the same digit
    unsigned peers = __ballot_sync(0xffffffffu, valid);
    for (int b = 0; b < 8; ++b) {
      const bool bit = (d >> b) & 1;
      const unsigned m = __ballot_sync(0xffffffffu, bit);
      peers &= bit ? m : ~m;
    }
    const int rank = __popc(peers & lanes_below);
    if (valid && rank == 0) wcount[warp][d] = __popc(peers);
    __syncthreads();
    if (tid < 256) {  // counts per warp -> the warp's first slot among this step's elements of digit tid
      int run = 0;
      for (int w = 0; w < kRadixWarps; ++w) {
        const int c = wcount[w][tid];
        wcount[w][tid] = run;
        run += c;
      }
      total[tid] = run;
    }
    __syncthreads();
    if (valid) {
      const int64 pos = base[d] + wcount[warp][d] + rank;
      keys_out[pos] = k;
      pay_out[pos] = pl;
    }
    __syncthreads();
    if (tid < 256) base[tid] += total[tid];
  }
}

// Sorted payloads -> the first `keep` values and in-row indices of each row.
template <typename T>
__device__ void radix_gather(int64 n, int64 len, int64 keep, const int64 *payload, const T *x, T *values,
                             int64 *indices) {
  TP_GRID_STRIDE(pos, n) {
    const int64 g = payload[pos], r = g / len, c = pos - r * len;
    if (c < keep) {
      values[r * keep + c] = x[g];
      indices[r * keep + c] = g - r * len;
    }
  }
}

// ---- Note [topk by radix select] ------------------------------------------------------------------------------
// topk of a long row (len > 4096) with k <= kSelectMax, one block per row, without sorting the row. First a
// 256-bin histogram of the keys' top bytes over the whole row (a warp adds each bin once, __match_any_sync
// grouping its lanes, because real data piles up in a few top-byte bins). The bin where the running count
// reaches k splits the row into the elements surely kept (a smaller top byte: k - want of them), the candidates
// (that top byte: ncand of them, `want` of which are kept) and the rest. Then:
//   fast path, ncand <= kCandMax: ONE more read of the row copies the kept elements into the selection and the
//     candidates into shared memory, both in any order; a bitonic sort of the candidates by (key, index) puts
//     the `want` kept ones first — equal keys by index, which is what the stable order keeps. Two reads in all.
//   general path (many candidates, as with few distinct values): radix select over the remaining bytes, most
//     significant first, each a histogram of the keys matching the bytes chosen so far; then `kth` is the k-th
//     smallest key and `want` the number of elements equal to it that are kept. Collection: every key < kth,
//     and the first `want` keys equal to kth in index order — ranked a chunk of blockDim elements at a time
//     (ballots within a warp, counts per warp across warps). One read per key byte plus one to collect.
// Either way the k chosen (key, index) pairs are sorted in shared memory (bitonic, as above) and written in
// order. The reads of the row are unrolled kSelectUnroll deep, so each thread has that many loads in flight.
#define kSelectMax 1024
#define kCandMax 2048
#define kSelectThreads 512
#define kSelectWarps (kSelectThreads / 32)
#define kSelectUnroll 8
#define kNoBin 256u

// Bitonic sort of the npow2 (key, id) pairs in shared memory by (key, id), by the whole block; ends synced.
__device__ void bitonic_pairs(u64 *keys, unsigned *ids, int npow2) {
  for (int kk = 2; kk <= npow2; kk <<= 1) {
    for (int j = kk >> 1; j > 0; j >>= 1) {
      for (int p = threadIdx.x; p < (npow2 >> 1); p += blockDim.x) {
        const int a = ((p & ~(j - 1)) << 1) | (p & (j - 1)), l = a | j;
        const u64 ka = keys[a], kl = keys[l];
        const unsigned ia = ids[a], il = ids[l];
        const bool a_after = ka > kl || (ka == kl && ia > il);
        const bool l_after = kl > ka || (kl == ka && il > ia);
        if ((a & kk) == 0 ? a_after : l_after) {
          keys[a] = kl;
          keys[l] = ka;
          ids[a] = il;
          ids[l] = ia;
        }
      }
      __syncthreads();
    }
  }
}

// Warp 0: the bin of `hist` where the running count reaches want (1 <= want <= the total); it, the count of
// the bins before it and its own count go to *bin, *before and *count. Lane l holds bins 8l .. 8l + 7.
__device__ __forceinline__ void find_bin(const unsigned *hist, long long want, unsigned *bin, long long *before,
                                         unsigned *count) {
  const int lane = threadIdx.x & 31;
  long long c[8], sum = 0;
  for (int j = 0; j < 8; ++j) {
    c[j] = hist[lane * 8 + j];
    sum += c[j];
  }
  long long inc = sum;
  for (int o = 1; o < 32; o <<= 1) {
    const long long t = __shfl_up_sync(0xffffffffu, inc, o);
    if (lane >= o) inc += t;
  }
  const long long exc = inc - sum;
  if (exc < want && want <= inc) {  // exactly one lane
    long long cum = exc;
    int j = 0;
    while (cum + c[j] < want) cum += c[j++];
    *bin = unsigned(lane * 8 + j);
    *before = cum;
    *count = unsigned(c[j]);
  }
}

// hist[(key >> shift) & 255] += 1 for the row's keys with (key & mask) == prefix; the loop is warp-uniform.
template <typename T>
__device__ void select_hist(const T *xr, int64 len, int descending, int shift, typename KeyTraits<T>::Key prefix,
                            typename KeyTraits<T>::Key mask, unsigned *hist) {
  typedef typename KeyTraits<T>::Key K;
  const int lane = threadIdx.x & 31;
  for (int64 base = 0; base < len; base += int64(blockDim.x) * kSelectUnroll) {
    K key[kSelectUnroll];
#pragma unroll
    for (int u = 0; u < kSelectUnroll; ++u) {
      const int64 i = base + u * int64(blockDim.x) + threadIdx.x;
      key[u] = i < len ? order_key(xr[i], descending) : K(0);
    }
#pragma unroll
    for (int u = 0; u < kSelectUnroll; ++u) {
      const int64 i = base + u * int64(blockDim.x) + threadIdx.x;
      const bool in = i < len && (key[u] & mask) == prefix;
      const unsigned b = in ? unsigned(key[u] >> shift) & 255u : kNoBin;
      const unsigned peers = __match_any_sync(0xffffffffu, b);
      if (in && lane == __ffs(peers) - 1) atomicAdd(&hist[b], unsigned(__popc(peers)));
    }
  }
}

template <typename T>
__device__ void topk_select(int64 rows, int64 len, int64 k, int descending, const T *x, T *values, int64 *indices) {
  typedef typename KeyTraits<T>::Key K;
  const int top = 8 * KeyTraits<T>::bytes - 8;  // the shift of the key's top byte
  __shared__ unsigned hist[256];
  __shared__ u64 sel_keys[kSelectMax];
  __shared__ unsigned sel_ids[kSelectMax];
  __shared__ u64 cand_keys[kCandMax];
  __shared__ unsigned cand_ids[kCandMax];
  __shared__ K s_prefix, s_mask;
  __shared__ long long s_want, s_before, s_eq_taken;
  __shared__ unsigned s_bin, s_count, s_nlt, s_ncand;
  __shared__ int warp_eq[kSelectWarps];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const unsigned lanes_below = (1u << lane) - 1u;
  int npow2 = 1;
  while (npow2 < k) npow2 <<= 1;
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * len;
    // 1. the top bytes' histogram; the bin where the count reaches k
    for (int d = tid; d < 256; d += blockDim.x) hist[d] = 0;
    if (tid == 0) {
      s_nlt = 0;
      s_ncand = 0;
      s_eq_taken = 0;
    }
    __syncthreads();
    select_hist(xr, len, descending, top, K(0), K(0), hist);
    __syncthreads();
    if (warp == 0) find_bin(hist, k, &s_bin, &s_before, &s_count);
    __syncthreads();
    const unsigned bin = s_bin, ncand = s_count;
    const long long nlt = s_before;  // kept for sure: the elements of the bins before `bin`
    if (ncand <= kCandMax) {
      // 2. fast path: the kept elements to sel_*, the candidates to cand_*, then sort the candidates
      for (int64 base = 0; base < len; base += int64(blockDim.x) * kSelectUnroll) {
        K key[kSelectUnroll];
#pragma unroll
        for (int u = 0; u < kSelectUnroll; ++u) {
          const int64 i = base + u * int64(blockDim.x) + tid;
          key[u] = i < len ? order_key(xr[i], descending) : K(0);
        }
#pragma unroll
        for (int u = 0; u < kSelectUnroll; ++u) {
          const int64 i = base + u * int64(blockDim.x) + tid;
          const unsigned b = unsigned(key[u] >> top) & 255u;
          if (i < len && b < bin) {
            const unsigned s = atomicAdd(&s_nlt, 1u);
            sel_keys[s] = u64(key[u]);
            sel_ids[s] = unsigned(i);
          } else if (i < len && b == bin) {
            const unsigned s = atomicAdd(&s_ncand, 1u);
            cand_keys[s] = u64(key[u]);
            cand_ids[s] = unsigned(i);
          }
        }
      }
      int cpow2 = 1;
      while (cpow2 < int(ncand)) cpow2 <<= 1;
      for (int i = int(ncand) + tid; i < cpow2; i += blockDim.x) {
        cand_keys[i] = ~0ull;
        cand_ids[i] = 0xffffffffu;
      }
      __syncthreads();
      bitonic_pairs(cand_keys, cand_ids, cpow2);
      for (int t = tid; t < int(k - nlt); t += blockDim.x) {
        sel_keys[nlt + t] = cand_keys[t];
        sel_ids[nlt + t] = cand_ids[t];
      }
    } else {
      // 3. general path: radix select over the remaining bytes, then the collection
      if (tid == 0) {
        s_prefix = K(bin) << top;
        s_mask = K(255) << top;
        s_want = k - nlt;
      }
      for (int shift = top - 8; shift >= 0; shift -= 8) {
        for (int d = tid; d < 256; d += blockDim.x) hist[d] = 0;
        __syncthreads();  // also publishes the previous round's prefix, mask and want
        const K prefix = s_prefix, mask = s_mask;
        select_hist(xr, len, descending, shift, prefix, mask, hist);
        __syncthreads();
        if (warp == 0) find_bin(hist, s_want, &s_bin, &s_before, &s_count);
        __syncthreads();
        if (tid == 0) {
          s_prefix = prefix | (K(s_bin) << shift);
          s_mask = mask | (K(255) << shift);
          s_want -= s_before;
        }
      }
      __syncthreads();
      const K kth = s_prefix;
      const long long want = s_want, nlt_kth = k - want;
      // keys below kth anywhere in [0, nlt_kth); the first `want` keys equal to kth at [nlt_kth, k)
      for (int64 base = 0; base < len; base += blockDim.x) {
        const int64 i = base + tid;
        const bool valid = i < len;
        const K key = valid ? order_key(xr[i], descending) : K(0);
        const bool lt = valid && key < kth, eq = valid && key == kth;
        if (lt) {
          const unsigned slot = atomicAdd(&s_nlt, 1u);
          sel_keys[slot] = u64(key);
          sel_ids[slot] = unsigned(i);
        }
        const unsigned b = __ballot_sync(0xffffffffu, eq);
        if (lane == 0) warp_eq[warp] = __popc(b);
        __syncthreads();
        int before = 0, total = 0;
        for (int w = 0; w < kSelectWarps; ++w) {
          before += w < warp ? warp_eq[w] : 0;
          total += warp_eq[w];
        }
        const long long ord = s_eq_taken + before + __popc(b & lanes_below);
        if (eq && ord < want) {
          sel_keys[nlt_kth + ord] = u64(key);
          sel_ids[nlt_kth + ord] = unsigned(i);
        }
        __syncthreads();  // warp_eq and s_eq_taken are read before they change
        if (tid == 0) s_eq_taken += total;
      }
    }
    for (int i = int(k) + tid; i < npow2; i += blockDim.x) {
      sel_keys[i] = ~0ull;
      sel_ids[i] = 0xffffffffu;
    }
    __syncthreads();
    // 4. sort the k pairs by (key, index)
    bitonic_pairs(sel_keys, sel_ids, npow2);
    for (int t = tid; t < k; t += blockDim.x) {
      const unsigned s = sel_ids[t];
      values[r * k + t] = xr[s];
      indices[r * k + t] = s;
    }
    __syncthreads();  // the next row's setup writes the shared state
  }
}

#define TP_SORT(T)                                                                                          \
  extern "C" __global__ void bitonic_##T(int64 rows, int64 len, int64 keep, int npow2, int descending,       \
                                         const T *x, T *values, int64 *indices) {                           \
    bitonic_rows<T>(rows, len, keep, npow2, descending, x, values, indices);                                \
  }                                                                                                         \
  extern "C" __global__ void radix_init_##T(int64 n, int descending, const T *x,                            \
                                            KeyTraits<T>::Key *keys, int64 *payload) {                      \
    radix_init<T>(n, descending, x, keys, payload);                                                         \
  }                                                                                                         \
  extern "C" __global__ void radix_gather_##T(int64 n, int64 len, int64 keep, const int64 *payload,          \
                                              const T *x, T *values, int64 *indices) {                      \
    radix_gather<T>(n, len, keep, payload, x, values, indices);                                             \
  }                                                                                                         \
  extern "C" __global__ void topk_select_##T(int64 rows, int64 len, int64 k, int descending, const T *x,     \
                                             T *values, int64 *indices) {                                   \
    topk_select<T>(rows, len, k, descending, x, values, indices);                                           \
  }
TP_SORT(bool)
TP_SORT(uint8)
TP_SORT(int8)
TP_SORT(int16)
TP_SORT(int32)
TP_SORT(int64)
TP_SORT(float16)
TP_SORT(bfloat16)
TP_SORT(float32)
TP_SORT(float64)

#define TP_RADIX(K, NAME)                                                                                   \
  extern "C" __global__ void radix_hist_##NAME(int64 n, int64 len, int shift, int by_row, const K *keys,     \
                                               const int64 *payload, int64 *counts, int64 ntiles) {         \
    radix_hist<K>(n, len, shift, by_row, keys, payload, counts, ntiles);                                    \
  }                                                                                                         \
  extern "C" __global__ void radix_scatter_##NAME(int64 n, int64 len, int shift, int by_row,                 \
                                                  const K *keys_in, const int64 *pay_in, K *keys_out,       \
                                                  int64 *pay_out, const int64 *offsets, int64 ntiles) {     \
    radix_scatter<K>(n, len, shift, by_row, keys_in, pay_in, keys_out, pay_out, offsets, ntiles);           \
  }
TP_RADIX(u32, k32)
TP_RADIX(u64, k64)

// ---- scan of int64 (radix offsets, unique's group numbers) --------------------------------------------------
// Three launches over n values: scan_tile_sums (each block's tile total), scan_sums (one block scans those
// totals, exclusive), scan_tiles (each block scans its tile and adds its tile's offset). `inclusive` picks the
// kind of the final scan; it runs in place.
#define kScanThreads 1024
#define kScanPer 4
#define kScanTile (kScanThreads * kScanPer)

// Exclusive scan of one value per thread across the block (1024 threads); `block_total` gets the sum.
__device__ __forceinline__ int64 block_exclusive_scan(int64 v, int64 &block_total) {
  __shared__ int64 warp_sums[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64 inc = v;
  for (int o = 1; o < 32; o <<= 1) {
    const int64 t = __shfl_up_sync(0xffffffffu, inc, o);
    if (lane >= o) inc += t;
  }
  __syncthreads();  // a previous call's readers of warp_sums are done
  if (lane == 31) warp_sums[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    const int nwarps = blockDim.x >> 5;
    int64 w = lane < nwarps ? warp_sums[lane] : 0;
    for (int o = 1; o < 32; o <<= 1) {
      const int64 t = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += t;
    }
    if (lane < nwarps) warp_sums[lane] = w;  // inclusive over warps
  }
  __syncthreads();
  block_total = warp_sums[(blockDim.x >> 5) - 1];
  return (warp ? warp_sums[warp - 1] : 0) + inc - v;
}

extern "C" __global__ void scan_tile_sums(int64 n, const int64 *data, int64 *sums) {
  const int64 start = int64(blockIdx.x) * kScanTile;
  int64 s = 0;
  for (int k = 0; k < kScanPer; ++k) {
    const int64 i = start + int64(threadIdx.x) * kScanPer + k;
    if (i < n) s += data[i];
  }
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

extern "C" __global__ void scan_sums(int64 m, int64 *sums) {
  int64 carry = 0;
  for (int64 c = 0; c < m; c += blockDim.x) {
    const int64 i = c + threadIdx.x;
    const int64 v = i < m ? sums[i] : 0;
    int64 total;
    const int64 ex = block_exclusive_scan(v, total);
    if (i < m) sums[i] = carry + ex;
    carry += total;
  }
}

extern "C" __global__ void scan_tiles(int64 n, int64 *data, const int64 *sums, int inclusive) {
  const int64 start = int64(blockIdx.x) * kScanTile + int64(threadIdx.x) * kScanPer;
  int64 v[kScanPer], s = 0;
  for (int k = 0; k < kScanPer; ++k) {
    v[k] = start + k < n ? data[start + k] : 0;
    s += v[k];
  }
  int64 total;
  int64 run = sums[blockIdx.x] + block_exclusive_scan(s, total);
  for (int k = 0; k < kScanPer; ++k) {
    if (start + k < n) data[start + k] = inclusive ? run + v[k] : run;
    run += v[k];
  }
}
