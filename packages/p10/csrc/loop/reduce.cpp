// reduce.cpp — building a ReducePlan: reduced dims, output shapes, and one strided run per output row.
#include "loop/reduce.h"

#include <algorithm>
#include <numeric>

#include "dispatch/kernel_box.h"
#include "loop/simd.h"

namespace tp::p10 {

// One leaf of sum_f32: up to 1024 values in 32 lanes (32 terms per lane), the lanes then folded in halves
// (lane j + lane j + w: whole vector registers added, no shuffles until the last few).
TP_VEC_INLINE float sum_leaf_f32(const float *p, int64_t n) {
  constexpr int kLanes = 32;
  float r[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) r[j] += p[i + j];
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) r[j] += r[j + w];
  for (; i < n; ++i) r[0] += p[i];
  return r[0];
}

// Leaves are combined like a binary counter: after leaf k, the partial sums of the completed power-of-two
// groups are added, so each value passes through about log2(n / 1024) more additions (Note [Pairwise
// summation]; the error bound is about (32 + 5 + log2(n / 1024)) roundings, against (16 + log2 n) there).
TP_SIMD_LOOP(float, sum_f32_loop, (const float *p, int64_t n), (p, n), {
  constexpr int64_t kLeaf = 1024;
  float stack[64];
  int depth = 0;
  int64_t i = 0, count = 0;
  for (; i + kLeaf <= n; i += kLeaf) {
    float s = sum_leaf_f32(p + i, kLeaf);
    for (int64_t c = ++count; (c & 1) == 0; c >>= 1) s = stack[--depth] + s;
    stack[depth++] = s;
  }
  float s = sum_leaf_f32(p + i, n - i);
  while (depth > 0) s = stack[--depth] + s;
  return s;
})
float sum_f32(const float *p, int64_t n) { return sum_f32_loop(p, n); }

static std::vector<bool> reduced_mask(const Tensor &self, const std::optional<std::vector<int64_t>> &dims,
                                      const char *op) {
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  std::vector<bool> mask(nd, !dims || dims->empty());
  if (dims)
    for (int64_t d : *dims) {
      int64_t w = wrap_dim(d, self.dim(), op);
      TP_CHECK(!mask[w] || dims->empty(), Runtime, op, ": dim ", w, " appears multiple times in the list of dims");
      mask[w] = true;
    }
  return mask;
}

ReducePlan make_reduce_plan(const Tensor &self, const std::optional<std::vector<int64_t>> &dims, bool keepdim,
                            const char *op, bool keep_order) {
  ReducePlan p;
  p.op = op;
  p.is_meta = self.device().is_meta();
  p.reduced = reduced_mask(self, dims, op);
  const int64_t nd = self.dim();
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t size = self.sizes()[d];
    if (p.reduced[d]) {
      p.red_numel *= size;
      p.keep_shape.push_back(1);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.out_numel *= size;
      p.keep_shape.push_back(size);
      p.out_shape.push_back(size);
    }
  }
  // Size-1 dims take no part in the walk. Kept dims stay in logical order: output o is row-major over them.
  std::vector<int64_t> kept, red;
  for (int64_t d = 0; d < nd; ++d)
    if (self.sizes()[d] != 1) (p.reduced[d] ? red : kept).push_back(d);
  const Shape &st = self.strides(), &sz = self.sizes();
  if (!keep_order)  // walk the reduced dims in memory order: a transposed input still gives one run
    std::stable_sort(red.begin(), red.end(), [&](int64_t a, int64_t b) { return st[a] > st[b]; });
  bool chained = true;
  for (size_t i = 0; i + 1 < red.size(); ++i) chained = chained && st[red[i]] == st[red[i + 1]] * sz[red[i + 1]];
  p.src = self;
  Shape ksz, kst;
  if (chained || p.is_meta) {
    for (int64_t d : kept) { ksz.push_back(sz[d]); kst.push_back(st[d]); }
    p.red_stride = red.empty() ? 1 : st[red.back()];
  } else {
    // The reduced dims do not form one run: read a copy with the kept dims outermost, reduced innermost.
    std::vector<int64_t> perm(kept);
    perm.insert(perm.end(), red.begin(), red.end());
    Shape psz;
    for (int64_t d : perm) psz.push_back(sz[d]);
    Tensor moved = call_op(TP_OP("as_strided"), self, psz, [&] {
      Shape s;
      for (int64_t d : perm) s.push_back(st[d]);
      return s;
    }(), std::optional<int64_t>(self.storage_offset()));
    p.src = call_op(TP_OP("contiguous"), moved);
    Shape cst = contiguous_strides(psz);
    for (size_t i = 0; i < kept.size(); ++i) { ksz.push_back(psz[i]); kst.push_back(cst[i]); }
    p.red_stride = 1;
  }
  // Coalesce the kept dims (outer d and inner d+1 merge when d steps over exactly one run of d+1).
  for (size_t i = 0; i < ksz.size(); ++i) {
    if (!p.kept_sizes.empty() && p.kept_strides.back() == kst[i] * ksz[i]) {
      p.kept_sizes.back() *= ksz[i];
      p.kept_strides.back() = kst[i];
    } else {
      p.kept_sizes.push_back(ksz[i]);
      p.kept_strides.push_back(kst[i]);
    }
  }
  return p;
}

int64_t ReducePlan::offset(int64_t o) const {
  int64_t off = 0;
  for (int64_t d = int64_t(kept_sizes.size()) - 1; d >= 0 && o; --d) {
    off += (o % kept_sizes[d]) * kept_strides[d];
    o /= kept_sizes[d];
  }
  return off;
}

int64_t ReducePlan::outer_columns() const {
  if (red_stride == 1 || red_numel <= 1 || kept_sizes.empty() || kept_strides.back() != 1) return 0;
  return kept_sizes.back();
}

Tensor ReducePlan::new_output(ScalarType dtype) const { return empty_tensor(out_shape, dtype, src.device()); }

void check_nonempty_reduction(const Tensor &self, const std::optional<std::vector<int64_t>> &dims, const char *op) {
  if (self.numel() != 0) return;
  if (!dims || dims->empty()) {
    // PyTorch raises IndexError for the arg-reductions here and RuntimeError for the others.
    bool arg = std::string(op).rfind("arg", 0) == 0;
    fail(arg ? ErrorKind::Index : ErrorKind::Runtime, op, "(): Expected reduction dim to be specified for "
         "input.numel() == 0.", arg ? "" : " Specify the reduction dim with the 'dim' argument.");
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, self.dim(), op);
    TP_CHECK(self.dim() == 0 || self.sizes()[w] != 0, Index, op, "(): Expected reduction dim ", w,
             " to have non-zero size.");
  }
}

Tensor copy_to_out(const char *op, const Tensor &result, const Tensor &out) {
  TP_CHECK(can_cast(result.dtype(), out.dtype()), Runtime, op, ": result type ", scalar_type_name(result.dtype()),
           " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
  TP_CHECK(out.device() == result.device(), Runtime, op, ": output is on ", device_str(out.device()),
           " but the input is on ", device_str(result.device()));
  if (out.sizes() != result.sizes()) {
    TP_CHECK(out.numel() == 0 || out.is_contiguous(), Runtime, op, ": cannot resize a non-contiguous out= tensor from ",
             shape_str(out.sizes()), " to ", shape_str(result.sizes()));
    Tensor fresh = empty_tensor(result.sizes(), out.dtype(), out.device());
    out->storage = fresh->storage;
    out->set_geometry(result.sizes(), contiguous_strides(result.sizes()), 0);
  }
  return call_op(TP_OP("copy_"), out, result, false);
}

}  // namespace tp::p10
