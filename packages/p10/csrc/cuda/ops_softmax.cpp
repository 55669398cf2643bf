// ops_softmax.cpp — CUDA kernels for softmax and log_softmax along any dim (with dtype=).
//
// Where it sits: the CUDA twin of kernels/softmax.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// softmax.cu. The CPU op, asked on a meta tensor (cuda/ops_meta.h), checks the call and gives the result dtype
// (dtype= if given; floats only). The softmax dim is then moved last — a permuted view, made contiguous in the
// result dtype when it is not already — so the kernels always see the rows of a [rows, cols] matrix; a
// result computed in that permuted order is copied back into the output's own (contiguous) layout.
// The form per row length is chosen by launch_softmax_rows (Note [Softmax one read] in softmax.cu).
#include <algorithm>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "cuda/rows.h"

namespace tp::p10::cuda {

namespace {
// softmax_long's row cache: a block gets at most 48 KiB of shared memory without opting in, static (block_all's
// totals) and dynamic together; 46 KiB leaves room, so float32 rows of 8193..11776 elements are read once.
constexpr int64_t kRowCacheBytes = 46 * 1024;

// The register forms (Note [Register rows], cuda/rows.h) up to kRegisterRowMax elements; softmax_long after,
// with the row cached in shared memory when it fits in kRowCacheBytes.
void launch_softmax_rows(int dev, const std::string &base, ScalarType ct, int64_t rows, int64_t cols,
                         const Tensor &y, const Tensor &x) {
  const Stream stream = stream_for(dev);
  RowForm f = row_form(dev, rows, cols, rows_vec_ok(cols, x->itemsize(), {x.data_ptr(), y.data_ptr()}));
  if (f.is_long) {
    const int64_t acc_bytes = ct == ScalarType::Float64 ? 8 : 4;  // softmax.cu's Acc<T>
    const bool cached = cols * acc_bytes <= kRowCacheBytes;
    f.config.shared_bytes = cached ? unsigned(cols * acc_bytes) : 0u;
    launch(kernel(dev, "softmax.cu", kname((base + f.suffix).c_str(), ct)), f.config, stream, rows, cols,
           y.data_ptr(), x.data_ptr(), int(cached));
    return;
  }
  launch(kernel(dev, "softmax.cu", kname((base + f.suffix).c_str(), ct)), f.config, stream, rows, cols,
         y.data_ptr(), x.data_ptr());
}

template <bool Log>
Tensor softmax_cuda(const char *op, const Operator &meta_op, const Tensor &self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  const Tensor m = call_op<Tensor>(meta_op, meta_like(self), dim, dtype);
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType ct = m.dtype();
  Tensor out = empty_as_meta(m, device);
  if (out.numel() == 0) return out;
  const int64_t nd = self.dim();
  const int64_t d = nd == 0 ? 0 : wrap_dim(dim, nd, op);
  const int64_t cols = nd == 0 ? 1 : self.size(d), rows = out.numel() / cols;
  // The softmax dim last: `perm` lists the other dims in order, then d.
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nd; ++i)
    if (i != d) perm.push_back(i);
  if (nd > 0) perm.push_back(d);
  auto permuted = [&](const Tensor &t) {
    Shape sizes, strides;
    for (int64_t i : perm) { sizes.push_back(t.size(i)); strides.push_back(t.stride(i)); }
    return make_view(t, sizes, strides, t.storage_offset());
  };
  Tensor x = permuted(self);
  if (!x.is_contiguous() || x.dtype() != ct) x = contiguous_as(x, ct);
  const Tensor out_p = permuted(out);
  const Tensor y = out_p.is_contiguous() ? out_p : empty_tensor(x.sizes(), ct, device);
  launch_softmax_rows(dev, Log ? "log_softmax" : "softmax", ct, rows, cols, y, x);
  if (y.impl() != out_p.impl()) device_copy(out_p, y);
  return out;
}
}  // namespace

static Tensor softmax(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_cuda<false>("softmax", TP_OP("softmax.int"), self, dim, dtype);
}
static Tensor log_softmax(const Tensor &self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_cuda<true>("log_softmax", TP_OP("log_softmax.int"), self, dim, dtype);
}

TP_LIBRARY(cuda_softmax) {
  TP_IMPL(lib, "softmax.int", CUDA, softmax);
  TP_IMPL(lib, "log_softmax.int", CUDA, log_softmax);
}

}  // namespace tp::p10::cuda
