// ops_embedding.cpp — the CUDA kernels for _embedding_bag (sum, mean and max bags; per_sample_weights,
// padding_idx, include_last_offset), the op under torch.nn.functional.embedding_bag, and embedding_renorm_.
//
// Where it sits: the CUDA twin of _embedding_bag in kernels/embedding_bag.cpp; the arithmetic is embedding.cu.
// embedding itself is a Composite (index_select, ops_index.cpp) and its gradient is index_add (ops_index.cpp);
// _embedding_bag's gradient is index_select / index_add / scatter_add, all on CUDA. embedding_renorm_ (the
// max_norm of embedding and embedding_bag) is here too.
//
// Note [Bag checks on the device]
//   The CPU op's argument checks (ranks, dtypes, mode, per_sample_weights) run on meta copies. The checks of
//   the data — offsets start at 0, never pass len(indices), never decrease; every index is a row — run in one
//   kernel that records what it finds; the host reads the flags (one synchronisation) and, if any is
//   set, copies indices and offsets to the CPU and runs the CPU op on them with a stand-in weight of the
//   same shape (one element, expanded), which raises the CPU's own error for the first problem, in the CPU's
//   order. Only a call that fails pays for those copies.
#include <algorithm>

#include "cuda/index_common.h"

namespace tp::p10::cuda {

namespace {
// The CPU op's tuple, from a boxed call (call_op's typed results stop at three tensors).
std::vector<Tensor> call_bag(const Tensor &weight, const Tensor &indices, const Tensor &offsets, bool scale, int64_t mode,
                             bool sparse, const std::optional<Tensor> &psw, bool include_last, int64_t pad) {
  Stack s{to_value(weight), to_value(indices), to_value(offsets), to_value(scale), to_value(mode),
          to_value(sparse), to_value(psw), to_value(include_last), to_value(pad)};
  call(TP_OP("_embedding_bag"), s);
  std::vector<Tensor> out;
  for (size_t k = 0; k < 4; ++k) out.push_back(s.at(k).tensor);
  return out;
}

Tensor to_cpu(const Tensor &t) {
  return call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(), std::optional<Device>(Device{}), false);
}
}  // namespace

static std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor &weight, const Tensor &indices, const Tensor &offsets, bool scale_grad_by_freq, int64_t mode,
    bool sparse, const std::optional<Tensor> &per_sample_weights, bool include_last_offset, int64_t padding_idx) {
  const std::vector<Tensor> m = call_bag(meta_like(weight), meta_like(indices), meta_like(offsets), scale_grad_by_freq,
                                         mode, sparse, meta_like(per_sample_weights), include_last_offset, padding_idx);
  std::vector<Tensor> all{weight, indices, offsets};
  if (per_sample_weights) all.push_back(*per_sample_weights);
  const int dev = common_device("embedding_bag", all, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor out = empty_as_meta(m[0], device), offset2bag = empty_as_meta(m[1], device);
  Tensor bag_size = empty_as_meta(m[2], device), max_indices = empty_as_meta(m[3], device);
  const int64_t num = weight.size(0), D = weight.size(1), n = indices.numel(), noff = offsets.numel();
  const int64_t nbags = out.size(0);
  const Tensor idx = contiguous_as(indices, ScalarType::Int64), off = contiguous_as(offsets, ScalarType::Int64);
  const Stream s = stream_for(dev);
  if (std::max(n, noff) > 0) {  // Note [Bag checks on the device]
    IndexErrorFlag err(dev, 4);
    launch(kernel(dev, "embedding.cu", "embedding_bag_check"), elementwise_config(dev, std::max(n, noff)), s, n,
           idx.data_ptr(), num, noff, off.data_ptr(), err.ptr());
    if (err.any_set()) {
      const Tensor stand_in = call_op<Tensor>(
          TP_OP("expand"), empty_tensor({1, 1}, weight.dtype(), Device{}), std::vector<int64_t>{num, D});
      std::optional<Tensor> psw_cpu;
      if (per_sample_weights) psw_cpu = to_cpu(*per_sample_weights);
      call_bag(stand_in, to_cpu(indices), to_cpu(offsets), scale_grad_by_freq, mode, sparse, psw_cpu,
               include_last_offset, padding_idx);
      fail(ErrorKind::Index, "embedding_bag: an index or offset is out of range");  // the CPU raised first
    }
  }
  if (n > 0)
    launch(kernel(dev, "embedding.cu", "embedding_bag_offset2bag"), elementwise_config(dev, n), s, n, off.data_ptr(),
           noff, nbags, offset2bag.data_ptr());
  if (nbags == 0) return {out, offset2bag, bag_size, max_indices};
  const Tensor psw = per_sample_weights ? contiguous_as(*per_sample_weights, weight.dtype()) : Tensor();
  const unsigned block = unsigned(std::clamp<int64_t>((D + 31) / 32 * 32, 32, 256));
  const unsigned grid = unsigned(std::min<int64_t>(nbags, int64_t(properties(dev).multi_processor_count) * 32));
  launch(kernel(dev, "embedding.cu", kname("embedding_bag", weight.dtype())), LaunchConfig{grid, block, 0}, s, nbags,
         n, noff, D, weight.data_ptr(), weight.stride(0), weight.stride(1), idx.data_ptr(), off.data_ptr(),
         psw.defined() ? psw.data_ptr() : nullptr, int(mode), padding_idx, out.data_ptr(), bag_size.data_ptr(),
         mode == 2 ? max_indices.data_ptr() : nullptr);
  return {out, offset2bag, bag_size, max_indices};
}

// max_norm: rows picked by `indices` whose norm_type-norm exceeds max_norm are scaled to it, in place (each row
// once however often picked). Marking first, so a bad index raises before any row changes, as on the CPU.
static Tensor embedding_renorm_(const Tensor &self, const Tensor &indices, double max_norm, double norm_type) {
  call_op<Tensor>(TP_OP("embedding_renorm_"), meta_like(self), meta_like(indices), max_norm, norm_type);
  const int dev = common_device("embedding_renorm_", {self, indices}, false);
  DeviceGuard guard(dev);
  self.bump_version();
  const int64_t n = indices.numel(), num = self.size(0), D = self.size(1);
  if (n == 0) return self;
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const Tensor marked = call_op<Tensor>(TP_OP("full"), Shape{num}, Scalar(int64_t(0)),
                                        std::optional<ScalarType>(ScalarType::Int32), std::optional<Device>(device));
  const Tensor idx = contiguous_as(indices, ScalarType::Int64);
  const Stream s = stream_for(dev);
  IndexErrorFlag err(dev);
  launch(kernel(dev, "embedding.cu", "embedding_renorm_mark"), elementwise_config(dev, n), s, n, idx.data_ptr(), num,
         marked.data_ptr(), err.ptr());
  if (const auto bad = err.value())
    fail(ErrorKind::Index, "embedding_renorm_: index ", *bad, " is out of bounds for dim 0 with size ", num);
  const unsigned block = unsigned(std::clamp<int64_t>((D + 31) / 32 * 32, 32, 256));
  const unsigned grid = unsigned(std::min<int64_t>(num, int64_t(properties(dev).multi_processor_count) * 8));
  launch(kernel(dev, "embedding.cu", kname("embedding_renorm", self.dtype())), LaunchConfig{grid, block, 0}, s, num, D,
         self.data_ptr(), self.stride(0), self.stride(1), marked.data_ptr(), max_norm, norm_type);
  return self;
}

TP_LIBRARY(cuda_embedding) {
  TP_IMPL(lib, "_embedding_bag", CUDA, embedding_bag);
  TP_IMPL(lib, "embedding_renorm_", CUDA, embedding_renorm_);
}

}  // namespace tp::p10::cuda
