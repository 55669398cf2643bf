// ops_softmax.cpp — CUDA kernels for softmax and log_softmax along any dim (with dtype=).
//
// Where it sits: the CUDA twin of kernels/softmax.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// softmax.cu. The CPU op, asked on a meta tensor (cuda/ops_meta.h), checks the call and gives the result dtype
// (dtype= if given; floats only). The softmax dim is then moved last — a permuted view, made contiguous in the
// result dtype when it is not already — so the kernels always see the rows of a [rows, cols] matrix; a
// result computed in that permuted order is copied back into the output's own (contiguous) layout.
// Rows of at most 1024 elements take one warp each; longer rows take one block each, with the row held in
// shared memory when it fits in kRowCacheBytes.
#include <algorithm>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

namespace {
constexpr int64_t kWarpRowMax = 1024;      // longest row one warp handles (32 elements per lane)
constexpr int64_t kRowCacheBytes = 32768;  // a block's row cache: two blocks of 512 threads fit one SM's budget
constexpr unsigned kBlockThreads = 512;

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
  const Stream stream = stream_for(dev);
  const int sms = properties(dev).multi_processor_count;
  const std::string base = Log ? "log_softmax" : "softmax";
  if (cols <= kWarpRowMax) {
    const unsigned block = 128, rows_per_block = block / 32;
    const unsigned grid = unsigned(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, int64_t(sms) * 16));
    launch(kernel(dev, "softmax.cu", kname((base + "_warp").c_str(), ct)), LaunchConfig{grid, block, 0}, stream,
           rows, cols, y.data_ptr(), x.data_ptr());
  } else {
    const int64_t acc_bytes = ct == ScalarType::Float64 ? 8 : 4;  // softmax.cu's Acc<T>
    const bool cached = cols * acc_bytes <= kRowCacheBytes;
    const unsigned grid = unsigned(std::min<int64_t>(rows, int64_t(sms) * 4));
    launch(kernel(dev, "softmax.cu", kname((base + "_block").c_str(), ct)),
           LaunchConfig{grid, kBlockThreads, cached ? unsigned(cols * acc_bytes) : 0u}, stream, rows, cols,
           y.data_ptr(), x.data_ptr(), int(cached));
  }
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
