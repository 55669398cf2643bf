// reduce.h — the loop helper behind every reduction (sum, max, var, median, ...): tensor_iterator's sibling.
//
// Where it sits: kernels/reduce.cpp, reduce_stats.cpp and reduce_order.cpp build a ReducePlan from the input,
// the `dim` list and `keepdim`, then hand a per-row function to one of the drivers below:
//
//   ReducePlan plan = make_reduce_plan(self, dim, keepdim, "sum");
//   Tensor out = plan.new_output(ScalarType::Float32);
//   reduce_rows<float, double>(plan, row_sum, merge_add, [&](int64_t o, double v) { out_data[o] = v; });
//
// Note [Reduction plan]
//   A reduction maps each output element o (row-major over the kept dims) to a "row": the input elements that
//   fold into it. The plan arranges for every row to be ONE strided run — `n = red_numel` elements starting at
//   `offset(o)` and stepping `red_stride` elements — so kernels never do multi-dim index arithmetic (STYLE.md
//   rule 3). When the reduced dims of the input do not chain into one run (reducing dims 0 and 2 of a
//   contiguous 3-D tensor), the plan reads a copy with the kept dims first and the reduced dims last.
//   Three shapes of loop follow, chosen by the drivers:
//     - inner (red_stride == 1): each row is contiguous; rows are split over threads, and a single long row
//       (a full sum) is split into pieces whose partial results are merged in order;
//     - outer (the innermost kept dim has stride 1): whole input rows are added into a buffer of outputs, so
//       the inner loop runs over contiguous memory and vectorises (reduce_outer);
//     - strided: anything else reads each row with its stride.
#pragma once
#include <optional>
#include <type_traits>
#include <vector>

#include "core/tensor.h"
#include "loop/parallel.h"

namespace tp::p10 {

struct ReducePlan {
  const char *op = "";
  Shape out_shape;   // the result's shape (keepdim applied)
  Shape keep_shape;  // the result's shape with reduced dims kept as size 1
  std::vector<bool> reduced;  // per input dim (a 0-d input counts as one dim)
  int64_t out_numel = 1, red_numel = 1;
  Tensor src;        // the tensor the loops read: the input, or a copy with the reduced dims innermost
  Shape kept_sizes, kept_strides;  // the kept dims, coalesced, outermost first (element strides)
  int64_t red_stride = 1;          // element step between consecutive elements of one row
  bool is_meta = false;

  // Element offset (from src's first element) of output o's first row element.
  int64_t offset(int64_t o) const;
  // Columns of the outer layout (Note [Reduction plan]): the innermost kept run has stride 1 and the rows
  // step over it; 0 when the plan does not have that layout.
  int64_t outer_columns() const;
  // A new contiguous tensor of out_shape.
  Tensor new_output(ScalarType dtype) const;
};

// `dims`: nullopt or empty means every dim (PyTorch's rule for sum, mean, amax, ...); duplicates raise.
// `keep_order`: keep the reduced dims in their logical order inside a row (ops that return indices need it;
// others let the plan walk a transposed input in memory order and skip the copy).
ReducePlan make_reduce_plan(const Tensor &self, const std::optional<std::vector<int64_t>> &dims, bool keepdim,
                            const char *op, bool keep_order = false);

// Check that no reduced dim is empty, for reductions without an identity (max, argmax, median, ...):
// IndexError naming the op and dim, or for a full reduction of an empty tensor PyTorch's RuntimeError.
void check_nonempty_reduction(const Tensor &self, const std::optional<std::vector<int64_t>> &dims, const char *op);

// Write a computed result into a user's out= tensor: dtype check, resize, copy. Returns out.
Tensor copy_to_out(const char *op, const Tensor &result, const Tensor &out);

// ---- drivers ------------------------------------------------------------------------------------------------
// Rows shorter than this are many per thread; longer ones are split over threads when there are few outputs.
constexpr int64_t kReduceSplitMin = 4 * kGrainSize;

// For every output o: write(o, row(p, n, s, first)) where the row is n elements from p stepping s, and
// `first` is the index within the row of p (for arg-reductions). A single long row is split into pieces over
// threads, reduced separately and folded left to right with merge(a, b): pieces keep their order, so
// arg-reductions still return first occurrences.
template <typename T, typename Acc, typename Row, typename Merge, typename Write>
void reduce_rows(const ReducePlan &p, const Row &row, const Merge &merge, const Write &write) {
  if (p.is_meta || p.out_numel == 0) return;
  const T *base = static_cast<const T *>(p.src.data_ptr());
  const int64_t n = p.red_numel, s = p.red_stride;
  const int threads = get_num_threads();
  if (p.out_numel < threads && n >= kReduceSplitMin && !in_parallel_region()) {
    const int64_t pieces = std::min<int64_t>(threads, n / kGrainSize);
    const int64_t per = (n + pieces - 1) / pieces;
    for (int64_t o = 0; o < p.out_numel; ++o) {
      const T *row_base = base + p.offset(o);
      std::vector<Acc> part(pieces);
      parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          int64_t lo = k * per, hi = std::min(n, lo + per);
          part[k] = row(row_base + lo * s, hi - lo, s, lo);
        }
      });
      Acc acc = part[0];
      for (int64_t k = 1; k < pieces; ++k) acc = merge(acc, part[k]);
      write(o, acc);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
  parallel_for(0, p.out_numel, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) write(o, row(base + p.offset(o), n, s, int64_t(0)));
  });
}

// Whole rows only (median, mode, quantile copy and sort each row): write(o, p, n, s) per output, in parallel.
template <typename T, typename F> void for_each_row(const ReducePlan &p, const F &f) {
  if (p.is_meta || p.out_numel == 0) return;
  const T *base = static_cast<const T *>(p.src.data_ptr());
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(p.red_numel, 1));
  parallel_for(0, p.out_numel, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) f(o, base + p.offset(o), p.red_numel, p.red_stride);
  });
}

// The outer layout (Note [Reduction plan]): acc[o] = step(acc[o], x) over every row element, walking whole
// input rows so the inner loop is contiguous. `acc` holds out_numel accumulators, each starting at `init`.
// Rows are taken in blocks of kOuterBlock whose partial results are merged, which keeps float sums accurate
// (a block's error grows with its length, not with the whole reduction's).
constexpr int64_t kOuterBlock = 512;
template <typename T, typename Acc, typename Step, typename Merge>
void reduce_outer(const ReducePlan &p, Acc init, const Step &step, const Merge &merge, Acc *acc) {
  const int64_t cols = p.outer_columns(), groups = p.out_numel / cols, n = p.red_numel, s = p.red_stride;
  const T *base = static_cast<const T *>(p.src.data_ptr());
  constexpr int64_t kTile = 1024;  // columns per task: the partial buffer stays in L1
  const int64_t tiles = (cols + kTile - 1) / kTile;
  // A task's work is n rows of its tile's real width (narrow outputs have tiles far below kTile wide).
  const int64_t work = n * std::min(kTile, cols);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1));
  parallel_for(0, groups * tiles, grain, [&](int64_t b, int64_t e) {
    Acc part[kTile];
    for (int64_t task = b; task < e; ++task) {
      const int64_t g = task / tiles, c0 = (task % tiles) * kTile, m = std::min(kTile, cols - c0);
      Acc *out = acc + g * cols + c0;
      const T *col = base + p.offset(g * cols + c0);
      for (int64_t j = 0; j < m; ++j) out[j] = init;
      for (int64_t r0 = 0; r0 < n; r0 += kOuterBlock) {
        for (int64_t j = 0; j < m; ++j) part[j] = init;
        for (int64_t r = r0, r1 = std::min(n, r0 + kOuterBlock); r < r1; ++r) {
          const T *x = col + r * s;
          for (int64_t j = 0; j < m; ++j) part[j] = step(part[j], x[j]);
        }
        for (int64_t j = 0; j < m; ++j) out[j] = merge(out[j], part[j]);
      }
    }
  });
}

// ---- float sums ---------------------------------------------------------------------------------------------
// The type a sum of T accumulates in: float32 for the 16-bit floats, int64 for bool, T otherwise.
template <typename T> using sum_acc_t = std::conditional_t<std::is_same_v<T, bool>, int64_t, opmath_t<T>>;

// Note [Pairwise summation]
//   A running float sum's error grows with the number of terms n; splitting the range in halves and adding the
//   halves' sums makes it grow with log2(n) (NumPy's method). Blocks of up to 128 terms are summed with 8
//   independent accumulators, which the compiler keeps in vector registers, so this is as fast as the naive
//   loop. sum(load(p[i * s])) over i < n; `Contig` (s == 1) lets the compiler see unit-stride loads.
template <typename Acc, bool Contig, typename T, typename Load>
Acc pairwise_sum_impl(const T *p, int64_t n, int64_t s, const Load &load) {
  if (Contig) s = 1;
  if (n < 8) {
    Acc r(0);
    for (int64_t i = 0; i < n; ++i) r += load(p[i * s]);
    return r;
  }
  if (n <= 128) {
    Acc r[8];
    for (int j = 0; j < 8; ++j) r[j] = load(p[j * s]);
    int64_t i = 8;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) r[j] += load(p[(i + j) * s]);
    Acc res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += load(p[i * s]);
    return res;
  }
  const int64_t half = (n / 2) & ~int64_t(7);
  return pairwise_sum_impl<Acc, Contig>(p, half, s, load) +
         pairwise_sum_impl<Acc, Contig>(p + half * s, n - half, s, load);
}

template <typename Acc, typename T, typename Load>
Acc pairwise_sum(const T *p, int64_t n, int64_t s, const Load &load) {
  return s == 1 ? pairwise_sum_impl<Acc, true>(p, n, 1, load) : pairwise_sum_impl<Acc, false>(p, n, s, load);
}

// The sum of n contiguous float32 values, as pairwise_sum<float> but with 32 lanes in leaves of 1024 and the
// leaves combined pairwise without recursion, built for AVX2+FMA and the baseline (loop/simd.h). 32 lanes are
// 4 AVX2 registers in flight, enough to hide the latency of the vector adds (loop/reduce.cpp has the bound).
float sum_f32(const float *p, int64_t n);

}  // namespace tp::p10
