// sort_radix.cu — LSD radix sorts of rows by 8-bit digits, ranked block-locally: values and int64 indices, stable.
//
// Where it sits: launched by sort_rows in csrc/cuda/ops_sort.cpp. Two kernels share one ranking step:
//   radix_rows<N>_<T>:  one block per row, the row in shared memory (256 < len <= 4096, keys of <= 32 bits);
//   onesweep_*_<T>:     all rows at once for long rows (len > 4096) when rows * len < 2^30 (larger inputs take
//                       sort.cu's radix_* kernels); CUB's "onesweep" (Adinets and Merrill, 2022), which
//                       PyTorch's sort runs too.
// Both sort by the order keys of sort_keys.cuh, so their results equal sort.cu's and the CPU's element for
// element.
#include "sort_keys.cuh"

#define kOsThreads 256  // one thread per digit in the per-tile bookkeeping
#define kOsWarps (kOsThreads / 32)
#define kNoDigit 256u  // the digit of a padding item: ranked by nobody, counted nowhere

// ---- Note [Block-local ranking] -------------------------------------------------------------------------------
// A block of 256 threads holds a tile of 256 * N items "warp-striped": warp w owns tile elements
// [32 N w, 32 N (w + 1)); its item j in lane l is element 32 N w + 32 j + l, so (warp, j, lane) order is element
// order and the loads are coalesced. One pass of a stable counting sort by an 8-bit digit then needs, for each
// item, its place: (items of smaller digits in the tile) + (items of its digit in earlier warps) + (items of its
// digit earlier in its own warp). warp_rank finds the last term: at each item step the lanes holding the same
// digit find each other with __match_any_sync, the lowest of them bumps the warp's counter for the digit by
// their number, and each adds the peers in lower lanes — no atomics, and equal digits keep element order.
// digit_scan turns the per-warp counters into the middle term (thread d walks digit d's column) and returns
// the tile's count of digit d, whose exclusive scan over digits is the first term.

// slot[j]: a digit (or kNoDigit) in, digit | (rank among the warp's earlier items of that digit) << 16 out.
// `counts` is the warp's row of 256 counters, zero on entry; on exit each holds the warp's count of its digit.
template <int N> __device__ __forceinline__ void warp_rank(u32 (&slot)[N], u32 *counts) {
  const int lane = threadIdx.x & 31;
  const unsigned lanes_below = (1u << lane) - 1u;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const u32 d = slot[j];
    const unsigned peers = __match_any_sync(0xffffffffu, d);
    const u32 before = d < kNoDigit ? counts[d] : 0u;
    __syncwarp();  // every peer has read the counter before its leader moves it
    if (d < kNoDigit && lane == __ffs(peers) - 1) counts[d] = before + u32(__popc(peers));
    __syncwarp();
    slot[j] = d | ((before + u32(__popc(peers & lanes_below))) << 16);
  }
}

// Thread d (of kOsThreads): the warps' counts of digit d become each warp's first rank; returns their total.
__device__ __forceinline__ u32 digit_scan(u32 (*warp_count)[256]) {
  const int d = threadIdx.x;
  u32 total = 0;
  for (int w = 0; w < kOsWarps; ++w) {
    const u32 c = warp_count[w][d];
    warp_count[w][d] = total;
    total += c;
  }
  return total;
}

// Exclusive scan of one u32 per thread across a block of kOsThreads; `tmp` is kOsWarps words of shared memory.
__device__ __forceinline__ u32 exclusive_scan_block(u32 v, u32 *tmp) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  u32 inc = v;
  for (int o = 1; o < 32; o <<= 1) {
    const u32 t = __shfl_up_sync(0xffffffffu, inc, o);
    if (lane >= o) inc += t;
  }
  if (lane == 31) tmp[warp] = inc;
  __syncthreads();
  u32 before = 0;
  for (int w = 0; w < warp; ++w) before += tmp[w];
  __syncthreads();  // every reader is done before tmp is reused
  return before + inc - v;
}

// ---- Note [One-sweep radix sort] ----------------------------------------------------------------------------
// What is sorted: element g (its flat index in the [rows, len] input) by (row, order key, g). LSD passes of 8
// bits run over the key's bytes, then over the bytes of the row number g / len (as in sort.cu's Note
// [Segmented radix sort]); every pass is stable, so the last one leaves each row in its own slice, in order.
// The payload that travels with a key is g as a u32 (n < 2^30), half the traffic of an int64.
//
// Why it is fast — every pass reads its keys once and writes them once, coalesced:
//   onesweep_hist_<T>:  ONE read of the input counts the digits of every pass at once (a histogram does not
//                       depend on the order, so pass 3's counts are known before pass 1 runs). Their exclusive
//                       scan is where each digit's run starts in a pass's output.
//   onesweep_pass_<T>:  one launch per pass. A block takes the next tile of kOsTile elements (a tile number from
//                       an atomic counter, so the tiles before it are held by blocks that already run: the wait
//                       below cannot deadlock) and
//     1. loads the tile coalesced, warp-striped, and takes each element's digit;
//     2. ranks each element among the equal digits before it in the tile (Note [Block-local ranking]);
//     3. publishes its 256 digit counts and finds, per digit, how many elements of the digit all earlier tiles
//        hold: "decoupled look-back". Each tile's status word per digit is 0 (not yet), kAggregate | count
//        (this tile's own count) or kInclusive | count (the count of this tile and all before it). Thread d
//        walks back from the previous tile adding aggregates until it meets an inclusive count; then it
//        publishes its own inclusive count. The flag and the count share one 32-bit word, so one store
//        publishes both and no fence is needed. No separate scan kernel and no second read of the keys;
//     4. writes its elements through shared memory: each element goes to its sorted place in the tile, then
//        consecutive threads write consecutive places, so each digit's run leaves as one contiguous burst to
//        global position (digit start) + (earlier tiles' count) + (place - the digit's first place in the tile).
// The first pass computes the keys from the input itself (no separate key pass), and the last pass writes the
// values (read back from the input, so -0.0 and NaN payloads come out as they went in) and the in-row indices
// instead of keys and payloads (no separate gather pass). A sort of 2^24 float32 thus reads, per element, the
// input three times (histogram, first pass, last pass) and 3 x 8 bytes of keys and payloads, and writes
// 3 x 8 + 12 bytes: about 1.2 GB in 5 launches, where sort.cu's segmented radix sort moves about 2.5 GB in 22.
#define kOsItems 16
#define kOsWarpTile (32 * kOsItems)
#define kOsTile (kOsThreads * kOsItems)
#define kOsMaxPasses 12  // 8 key bytes + 4 row bytes (rows < 2^30)
#define kHistUnroll 4     // elements a thread loads at once in onesweep_hist
#define kAggregate 0x40000000u
#define kInclusive 0x80000000u
#define kCountMask 0x3fffffffu

// The digit of pass (shift, by_row): a byte of the key, or of the row number of the payload g.
template <typename K> __device__ __forceinline__ u32 pass_digit(K key, u32 g, u32 len, int shift, int by_row) {
  return by_row ? ((g / len) >> shift) & 255u : u32(key >> shift) & 255u;
}

// All passes' digit counts in one read: hist[p * 256 + d] += the number of elements whose pass-p digit is d.
// A warp adds a digit's count once (__match_any_sync groups the lanes), so the skewed top bytes of real data
// do not serialise on one shared-memory counter.
template <typename T>
__device__ void onesweep_hist(u32 n, u32 len, int key_bytes, int npasses, int descending, const T *x, u32 *hist) {
  typedef typename KeyTraits<T>::Key K;
  __shared__ u32 h[kOsMaxPasses * 256];
  const int lane = threadIdx.x & 31;
  for (int i = threadIdx.x; i < npasses * 256; i += blockDim.x) h[i] = 0;
  __syncthreads();
  const u32 step = blockDim.x * kHistUnroll;
  for (u32 base = blockIdx.x * step; base < n; base += gridDim.x * step) {  // uniform: warps stay converged
    K key[kHistUnroll];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {  // the loads first, all in flight together
      const u32 i = base + u * blockDim.x + threadIdx.x;
      key[u] = i < n ? order_key(x[i], descending) : K(0);
    }
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      const u32 i = base + u * blockDim.x + threadIdx.x;
      const bool valid = i < n;
      for (int p = 0; p < npasses; ++p) {
        const int by_row = p >= key_bytes;
        const u32 d = pass_digit(key[u], i, len, 8 * (by_row ? p - key_bytes : p), by_row);
        const unsigned peers = __match_any_sync(0xffffffffu, valid ? d : kNoDigit);
        if (valid && lane == __ffs(peers) - 1) atomicAdd(&h[p * 256 + int(d)], u32(__popc(peers)));
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < npasses * 256; i += blockDim.x)
    if (h[i]) atomicAdd(&hist[i], h[i]);
}

// One pass (Note [One-sweep radix sort]). `hist` is this pass's 256 counts; `status` its ntiles * 256 words and
// `tile_counter` its counter, both zero before the launch. first: keys come from x and payloads are the
// indices; last: values and indices are written instead of keys_out and pay_out.
template <typename T>
__device__ void onesweep_pass(u32 n, u32 len, u32 keep, int shift, int by_row, int first, int last, int descending,
                              const T *x, const typename KeyTraits<T>::Key *keys_in, const u32 *pay_in,
                              typename KeyTraits<T>::Key *keys_out, u32 *pay_out, T *values, int64 *indices,
                              const u32 *hist, u32 *status, u32 *tile_counter) {
  typedef typename KeyTraits<T>::Key K;
  __shared__ __align__(8) K stage[kOsTile];  // the tile in sorted order: keys, then payloads (as u32)
  __shared__ unsigned char stage_digit[kOsTile];
  __shared__ u32 warp_count[kOsWarps][256];  // digit counts per warp, then each warp's first rank per digit
  __shared__ u32 tile_start[256], out_base[256], scan_tmp[kOsWarps];
  __shared__ u32 s_tile;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) s_tile = atomicAdd(tile_counter, 1u);
  for (int i = tid; i < kOsWarps * 256; i += kOsThreads) (&warp_count[0][0])[i] = 0;
  __syncthreads();
  const u32 tile = s_tile, tile_base = tile * kOsTile, tile_n = min(u32(kOsTile), n - tile_base);

  // 1. load: keys, payloads, digits (kNoDigit past the end)
  const bool need_key = !by_row || !last;  // the last row pass writes values, not keys
  K key[kOsItems];
  u32 pay[kOsItems], slot[kOsItems];
#pragma unroll
  for (int j = 0; j < kOsItems; ++j) {
    const u32 i = tile_base + u32(warp * kOsWarpTile + j * 32 + lane);
    key[j] = K(0);
    pay[j] = i;
    slot[j] = kNoDigit;
    if (i < n) {
      if (first) {
        key[j] = order_key(x[i], descending);
      } else {
        if (need_key) key[j] = keys_in[i];
        pay[j] = pay_in[i];
      }
      slot[j] = pass_digit(key[j], pay[j], len, shift, by_row);
    }
  }

  // 2. rank within the warp: slot[j] becomes digit | rank << 16 (Note [Block-local ranking])
  warp_rank<kOsItems>(slot, warp_count[warp]);
  __syncthreads();

  // 3. thread tid owns digit tid: its count in the tile, published at once; the warps' first ranks
  const u32 d = u32(tid);
  const u32 total = digit_scan(warp_count);
  volatile u32 *st = status + u64(tile) * 256;
  st[d] = (tile == 0 ? kInclusive : kAggregate) | total;
  const u32 start = exclusive_scan_block(total, scan_tmp);
  const u32 digit_start = exclusive_scan_block(hist[d], scan_tmp);
  tile_start[d] = start;
  u32 before = 0;  // elements of digit d in all earlier tiles: the decoupled look-back
  if (tile > 0) {
    const volatile u32 *prev = status + u64(tile - 1) * 256 + d;
    for (;;) {
      const u32 s = *prev;
      if (!(s & (kAggregate | kInclusive))) continue;  // that tile has not published yet: wait for it
      before += s & kCountMask;
      if (s & kInclusive) break;  // tile 0 is always inclusive, so the walk stops there at the latest
      prev -= 256;
    }
    st[d] = kInclusive | (before + total);
  }
  out_base[d] = digit_start + before - start;  // + the place in the sorted tile = the global position (mod 2^32)
  __syncthreads();

  // 4. scatter through shared memory: slot[j] becomes digit | place in the sorted tile << 16
#pragma unroll
  for (int j = 0; j < kOsItems; ++j) {
    const u32 dj = slot[j] & 0xffffu;
    if (dj < kNoDigit) slot[j] = dj | ((tile_start[dj] + warp_count[warp][dj] + (slot[j] >> 16)) << 16);
  }
  if (!last) {
#pragma unroll
    for (int j = 0; j < kOsItems; ++j) {
      if ((slot[j] & 0xffffu) < kNoDigit) {
        stage[slot[j] >> 16] = key[j];
        stage_digit[slot[j] >> 16] = (unsigned char)(slot[j] & 255u);
      }
    }
    __syncthreads();
    for (u32 p = tid; p < tile_n; p += kOsThreads) keys_out[out_base[stage_digit[p]] + p] = stage[p];
    __syncthreads();  // the keys are read before the payloads overwrite them
  }
  u32 *stage_pay = reinterpret_cast<u32 *>(stage);
#pragma unroll
  for (int j = 0; j < kOsItems; ++j) {
    if ((slot[j] & 0xffffu) < kNoDigit) {
      stage_pay[slot[j] >> 16] = pay[j];
      stage_digit[slot[j] >> 16] = (unsigned char)(slot[j] & 255u);
    }
  }
  __syncthreads();
  for (u32 p = tid; p < tile_n; p += kOsThreads) {
    const u32 g = stage_pay[p], out = out_base[stage_digit[p]] + p;
    if (!last) {
      pay_out[out] = g;
    } else {
      const u32 row = out / len, c = out - row * len;  // out is in row `row`'s slice, and so is g
      if (c < keep) {
        values[int64(row) * keep + c] = x[g];
        indices[int64(row) * keep + c] = int64(g - row * len);
      }
    }
  }
}

#define TP_ONESWEEP(T)                                                                                      \
  extern "C" __global__ void __launch_bounds__(kOsThreads)                                                 \
      onesweep_hist_##T(u32 n, u32 len, int key_bytes, int npasses, int descending, const T *x, u32 *hist) { \
    onesweep_hist<T>(n, len, key_bytes, npasses, descending, x, hist);                                      \
  }                                                                                                         \
  extern "C" __global__ void __launch_bounds__(kOsThreads) onesweep_pass_##T(                              \
      u32 n, u32 len, u32 keep, int shift, int by_row, int first, int last, int descending, const T *x,      \
      const KeyTraits<T>::Key *keys_in, const u32 *pay_in, KeyTraits<T>::Key *keys_out, u32 *pay_out,        \
      T *values, int64 *indices, const u32 *hist, u32 *status, u32 *tile_counter) {                         \
    onesweep_pass<T>(n, len, keep, shift, by_row, first, last, descending, x, keys_in, pay_in, keys_out,     \
                     pay_out, values, indices, hist, status, tile_counter);                                 \
  }
TP_ONESWEEP(bool)
TP_ONESWEEP(uint8)
TP_ONESWEEP(int8)
TP_ONESWEEP(int16)
TP_ONESWEEP(int32)
TP_ONESWEEP(int64)
TP_ONESWEEP(float16)
TP_ONESWEEP(bfloat16)
TP_ONESWEEP(float32)
TP_ONESWEEP(float64)

// ---- Note [Block radix sort of a row] -------------------------------------------------------------------------
// Rows of 256 < len <= 4096 elements with keys of at most 32 bits: one block of 256 threads per row, the row a
// tile of 256 * N items (N = 2, 4, 8 or 16, the smallest that holds it; the rest are padding, digit kNoDigit).
// The keys and the in-row indices stay in registers; each pass by one key byte ranks them (Note [Block-local
// ranking]), writes them to their places in shared memory and reads them back warp-striped, the next pass's
// order. A float32 row takes 4 passes of ~6 barriers, where a bitonic network of 1024 takes 55 stages with a
// barrier each and compares (key, index) pairs: the radix sort is stable by construction, so the index is only
// carried. At the end the sorted indices in shared memory give the first `keep` values, read back from the
// input (-0.0 and NaN payloads come out as they went in).
template <typename T, int N>
__device__ void radix_rows(int64 rows, int64 len, int64 keep, int descending, const T *x, T *values,
                           int64 *indices) {
  __shared__ u32 keys_s[kOsThreads * N];
  __shared__ unsigned short ids_s[kOsThreads * N];
  __shared__ u32 warp_count[kOsWarps][256];
  __shared__ u32 tile_start[256], scan_tmp[kOsWarps];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, n = int(len);
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * len;
    u32 key[N], id[N], slot[N];  // id >= n marks a padding item, whose place never changes
#pragma unroll
    for (int j = 0; j < N; ++j) {
      id[j] = u32(warp * 32 * N + j * 32 + lane);
      key[j] = id[j] < u32(n) ? u32(order_key(xr[id[j]], descending)) : 0u;
    }
    for (int shift = 0; shift < 8 * KeyTraits<T>::bytes; shift += 8) {
      for (int i = tid; i < kOsWarps * 256; i += kOsThreads) (&warp_count[0][0])[i] = 0;
      __syncthreads();  // also: the previous pass's reads of keys_s and ids_s are done
#pragma unroll
      for (int j = 0; j < N; ++j) slot[j] = id[j] < u32(n) ? (key[j] >> shift) & 255u : kNoDigit;
      warp_rank<N>(slot, warp_count[warp]);
      __syncthreads();
      tile_start[tid] = exclusive_scan_block(digit_scan(warp_count), scan_tmp);
      __syncthreads();
#pragma unroll
      for (int j = 0; j < N; ++j) {
        const u32 d = slot[j] & 0xffffu;
        if (d < kNoDigit) {
          const u32 place = tile_start[d] + warp_count[warp][d] + (slot[j] >> 16);
          keys_s[place] = key[j];
          ids_s[place] = (unsigned short)id[j];
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < N; ++j) {
        const u32 e = u32(warp * 32 * N + j * 32 + lane);
        if (e < u32(n)) {
          key[j] = keys_s[e];
          id[j] = ids_s[e];
        }
      }
    }
    for (int64 t = tid; t < keep; t += kOsThreads) {
      const int s = ids_s[t];
      values[r * keep + t] = xr[s];
      indices[r * keep + t] = s;
    }
    __syncthreads();  // the next row's passes overwrite ids_s
  }
}

#define TP_RADIX_ROWS(T, N)                                                                                 \
  extern "C" __global__ void __launch_bounds__(kOsThreads) radix_rows##N##_##T(                            \
      int64 rows, int64 len, int64 keep, int descending, const T *x, T *values, int64 *indices) {           \
    radix_rows<T, N>(rows, len, keep, descending, x, values, indices);                                      \
  }
#define TP_RADIX_ROWS_ALL(T) TP_RADIX_ROWS(T, 2) TP_RADIX_ROWS(T, 4) TP_RADIX_ROWS(T, 8) TP_RADIX_ROWS(T, 16)
TP_RADIX_ROWS_ALL(bool)
TP_RADIX_ROWS_ALL(uint8)
TP_RADIX_ROWS_ALL(int8)
TP_RADIX_ROWS_ALL(int16)
TP_RADIX_ROWS_ALL(int32)
TP_RADIX_ROWS_ALL(float16)
TP_RADIX_ROWS_ALL(bfloat16)
TP_RADIX_ROWS_ALL(float32)
