// ops_join.cpp — the CUDA kernel for cat (and so for stack, hstack, vstack, dstack, concat, roll, pad, ...,
// which are Composites over it in kernels/join.cpp and kernels/rearrange.cpp).
//
// Where it sits: the CUDA twin of cat in kernels/join.cpp; the copying is join.cu. The CPU cat, run on meta
// copies of the inputs, checks them (same rank, sizes matching outside dim, the legacy empty [0] inputs it
// skips) and gives the result's shape and promoted dtype. Then contiguous inputs of the result's dtype are
// copied up to kCatMax at a time in one launch (a table of pointers and row sizes, Note [Blocks per input]
// in join.cu); any other input (strided, or of another dtype) is copied by device_copy into its narrow slice
// of the output.
#include <algorithm>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

namespace {
constexpr int kCatMax = 32;  // join.cu's TP_CAT_MAX
struct CatTable {            // join.cu's CatTable, byte for byte
  int64_t count = 0, out_row = 0;
  const void *src[kCatMax] = {};
  int64_t row[kCatMax] = {}, col[kCatMax] = {}, numel[kCatMax] = {};
  int64_t first_block[kCatMax + 1] = {};
};
static_assert(sizeof(CatTable) == 16 + 8 * kCatMax * 4 + 8 * (kCatMax + 1), "CatTable must match join.cu");

// One launch for the table's inputs (rows and columns in elements of `item` bytes). The unit: the widest of
// 16, 8, 4, 2, 1 bytes (at least one element) dividing every row, column, and pointer.
void flush(int dev, CatTable &t, const Tensor &out, int64_t item) {
  if (t.count == 0) return;
  auto fits = [&](int64_t unit) {
    if ((t.out_row * item) % unit || reinterpret_cast<uintptr_t>(out.data_ptr()) % uintptr_t(unit)) return false;
    for (int64_t k = 0; k < t.count; ++k)
      if ((t.row[k] * item) % unit || (t.col[k] * item) % unit ||
          reinterpret_cast<uintptr_t>(t.src[k]) % uintptr_t(unit))
        return false;
    return true;
  };
  int64_t unit = 16;
  while (unit > item && !fits(unit)) unit /= 2;
  const int64_t per = unit / item;  // elements per unit
  CatTable u = t;
  u.out_row /= per;
  constexpr unsigned kBlock = 256;
  for (int64_t k = 0; k < t.count; ++k) {
    u.row[k] /= per;
    u.col[k] /= per;
    u.numel[k] /= per;
    const int64_t blocks = std::clamp<int64_t>((u.numel[k] + kBlock * 4 - 1) / (kBlock * 4), 1, 4096);
    u.first_block[k + 1] = u.first_block[k] + blocks;
  }
  launch(kernel(dev, "join.cu", "cat_b" + std::to_string(unit)),
         LaunchConfig{unsigned(u.first_block[u.count]), kBlock, 0}, stream_for(dev), u, out.data_ptr());
  const int64_t out_row = t.out_row;  // the output's row stays: the next table's inputs land in the same rows
  t = CatTable{};
  t.out_row = out_row;
}
}  // namespace

static Tensor cat(std::vector<Tensor> tensors, int64_t dim) {
  std::vector<Tensor> metas;
  for (const Tensor &t : tensors) metas.push_back(meta_like(t));
  const Tensor m = call_op<Tensor>(TP_OP("cat"), metas, dim);  // the checks, the shape, the promoted dtype
  const int dev = common_device("cat", tensors, false);
  DeviceGuard guard(dev);
  check_real("cat", m.dtype());
  Tensor out = empty_as_meta(m, Device{DeviceType::CUDA, int8_t(dev)});
  if (out.numel() == 0) return out;
  const int64_t d = wrap_dim(dim, out.dim(), "cat");
  int64_t inner = 1;
  for (int64_t k = d + 1; k < out.dim(); ++k) inner *= out.size(k);
  const int64_t item = out->itemsize();
  CatTable table;
  table.out_row = out.size(d) * inner;
  int64_t offset = 0;
  for (const Tensor &t : tensors) {
    if (t.dim() == 1 && t.size(0) == 0) continue;  // the legacy empty input cat skips (kernels/join.cpp)
    const int64_t n = t.size(d);
    if (t.numel() > 0) {
      if (t.dtype() == out.dtype() && t.is_contiguous()) {
        const int64_t k = table.count++;
        table.src[k] = t.data_ptr();
        table.row[k] = n * inner;
        table.col[k] = offset * inner;
        table.numel[k] = t.numel();
        if (table.count == kCatMax) flush(dev, table, out, item);
      } else {
        device_copy(call_op<Tensor>(TP_OP("narrow"), out, d, offset, n), t);
      }
    }
    offset += n;
  }
  flush(dev, table, out, item);
  return out;
}

TP_LIBRARY(cuda_join) { TP_IMPL(lib, "cat", CUDA, cat); }

}  // namespace tp::p10::cuda
