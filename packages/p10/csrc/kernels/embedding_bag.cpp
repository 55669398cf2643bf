// embedding_bag.cpp — embedding_bag: sums, means or maxima of bags of embedding rows, without the
// [num_indices, dim] tensor of rows that embedding() followed by a reduction would build.
//
// Where it sits: beside kernels/embedding.cpp (the plain lookup). Two ops, as in PyTorch:
//   _embedding_bag(weight, indices, offsets, ...) -> (output, offset2bag, bag_size, max_indices)
//       the kernel (CPU and Meta), aten's signature; the three extra outputs are what a backward needs.
//   embedding_bag(input, weight, offsets=None, max_norm=None, ...) -> output
//       torch.nn.functional.embedding_bag's signature and checks: a Composite that turns a 2-D input into
//       fixed-size bags, applies max_norm (embedding_renorm_, in place on weight, as PyTorch does) and calls
//       the kernel.
//
// Note [Bags]
//   Bag b holds indices[offsets[b] : end_b] with end_b = offsets[b + 1], and for the last bag the end of
//   indices (or, with include_last_offset, offsets has one more entry, which ends the last bag: indices after
//   it belong to no bag. PyTorch 2.13 drops them in mode sum but, for mean and max, adds them to the last bag
//   and counts them in its mean; its docs say that entry should equal len(indices), and then all agree).
//   Entries equal
//   to padding_idx are left out: they add nothing and do not count towards a mean. An empty bag (or one of
//   padding only) gives a row of zeros in every mode. mode sum multiplies each row by its per_sample_weight
//   when given; mean divides by the number of rows taken; max takes the elementwise maximum (a NaN wins).
//   16-bit weights accumulate in float32. Outputs besides `output`: offset2bag[i] = the bag of indices[i]
//   (-1 for an index in no bag), bag_size[b] = rows taken, max_indices[b, d] = the row that gave the maximum
//   (-1 for an empty bag; an empty [0] tensor in the other modes).
#include <cmath>
#include <vector>

#include "dispatch/kernel_box.h"
#include "kernels/binary_common.h"
#include "loop/parallel.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

enum BagMode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

static Tensor as_int64_contiguous(const Tensor &t) {
  Tensor r = t.dtype() == ScalarType::Int64 ? t : cast_to(t, ScalarType::Int64);
  return r.is_contiguous() ? r : call_op<Tensor>(TP_OP("contiguous"), r);
}

static void check_index_dtype(const Tensor &t, const char *name) {
  TP_CHECK(t.dtype() == ScalarType::Int64 || t.dtype() == ScalarType::Int32, Runtime, "embedding_bag: Expected tensor "
           "for argument '", name, "' to have one of the following scalar types: Long, Int; but got ",
           scalar_type_name(t.dtype()));
}

// One bag's reduction into `out` (D values). rows/psw: the bag's indices and per-sample weights (or null).
template <typename T>
static int64_t reduce_bag(const T *w, int64_t wrs, int64_t wcs, int64_t D, const int64_t *rows, int64_t n,
                          const T *psw, int64_t mode, int64_t pad, opmath_t<T> *acc, T *out, int64_t *argmax) {
  using M = opmath_t<T>;
  int64_t taken = 0;
  for (int64_t d = 0; d < D; ++d) acc[d] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = rows[i];
    if (r == pad) continue;
    const T *row = w + r * wrs;
    if (mode == kMax) {
      for (int64_t d = 0; d < D; ++d) {
        const M x = M(row[d * wcs]);
        if (taken == 0 || x > acc[d] || (x != x && acc[d] == acc[d])) acc[d] = x, argmax[d] = r;
      }
    } else if (psw) {
      const M s = M(psw[i]);
      if (wcs == 1) for (int64_t d = 0; d < D; ++d) acc[d] += s * M(row[d]);
      else for (int64_t d = 0; d < D; ++d) acc[d] += s * M(row[d * wcs]);
    } else {
      if (wcs == 1) for (int64_t d = 0; d < D; ++d) acc[d] += M(row[d]);
      else for (int64_t d = 0; d < D; ++d) acc[d] += M(row[d * wcs]);
    }
    ++taken;
  }
  if (mode == kMax && taken == 0)
    for (int64_t d = 0; d < D; ++d) argmax[d] = -1;
  const M div = (mode == kMean && taken > 0) ? M(taken) : M(1);
  for (int64_t d = 0; d < D; ++d) out[d] = T(acc[d] / div);
  return taken;
}

static std::tuple<Tensor, Tensor, Tensor, Tensor> _embedding_bag(
    const Tensor &weight, const Tensor &indices, const Tensor &offsets, bool scale_grad_by_freq, int64_t mode,
    bool sparse, const std::optional<Tensor> &per_sample_weights, bool include_last_offset, int64_t padding_idx) {
  (void)scale_grad_by_freq, (void)sparse;  // they change only the gradient
  TP_CHECK(weight.dim() == 2, Runtime, "embedding_bag: 'weight' must be 2-D, got a ", weight.dim(), "-D tensor");
  TP_CHECK(indices.dim() == 1, Runtime, "embedding_bag: 'indices' must be 1-D, got a ", indices.dim(), "-D tensor");
  TP_CHECK(offsets.dim() == 1, Runtime, "embedding_bag: 'offsets' must be 1-D, got a ", offsets.dim(), "-D tensor");
  check_index_dtype(indices, "indices");
  check_index_dtype(offsets, "offsets");
  TP_CHECK(is_floating(weight.dtype()), Runtime, "embedding_bag: expected a floating point 'weight', got ",
           scalar_type_name(weight.dtype()));
  TP_CHECK(mode >= kSum && mode <= kMax, Value, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got ",
           mode);
  if (per_sample_weights) {
    TP_CHECK(mode == kSum, NotImplemented, "embedding_bag: per_sample_weights is only supported for mode='sum' "
             "(got mode=", mode == kMean ? "'mean'" : "'max'", ")");
    TP_CHECK(per_sample_weights->dtype() == weight.dtype(), Runtime, "embedding_bag: expected per_sample_weights "
             "to have the dtype of weight (", scalar_type_name(weight.dtype()), "), got ",
             scalar_type_name(per_sample_weights->dtype()));
    TP_CHECK(per_sample_weights->sizes() == indices.sizes(), Runtime, "embedding_bag: per_sample_weights of shape ",
             shape_str(per_sample_weights->sizes()), " must have the shape of indices ", shape_str(indices.sizes()));
  }
  const int64_t num = weight.size(0), D = weight.size(1), n = indices.numel();
  TP_CHECK(!include_last_offset || offsets.numel() >= 1, Runtime,
           "embedding_bag: include_last_offset needs at least one offset");
  const int64_t B = offsets.numel() - (include_last_offset ? 1 : 0);
  const Device dev = weight.device();
  Tensor out = empty_tensor({B, D}, weight.dtype(), dev);
  Tensor offset2bag = empty_tensor({n}, ScalarType::Int64, dev);
  Tensor bag_size = empty_tensor({B}, ScalarType::Int64, dev);
  Tensor max_indices = empty_tensor(mode == kMax ? Shape{B, D} : Shape{0}, ScalarType::Int64, dev);
  if (dev.is_meta()) return {out, offset2bag, bag_size, max_indices};

  // Check everything before the parallel loop (which must not throw).
  Tensor idx_t = as_int64_contiguous(indices), off_t = as_int64_contiguous(offsets);
  const int64_t *idx = idx_t.data<int64_t>(), *off = off_t.data<int64_t>();
  std::vector<int64_t> start(static_cast<size_t>(B)), end(static_cast<size_t>(B));
  if (offsets.numel() > 0)
    TP_CHECK(off[0] == 0, Runtime, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
             "start from position 0. However, got ", off[0]);
  for (int64_t b = 0; b < offsets.numel(); ++b) {
    TP_CHECK(off[b] <= n, Runtime, "offsets[", b, "] can not be greater than input's length (", n, "), but got ",
             off[b]);
    TP_CHECK(b == 0 || off[b] >= off[b - 1], Runtime, "embedding_bag: offsets must be non-decreasing, but offsets[",
             b, "] = ", off[b], " < offsets[", b - 1, "] = ", off[b - 1]);
  }
  for (int64_t b = 0; b < B; ++b) start[size_t(b)] = off[b], end[size_t(b)] = b + 1 < offsets.numel() ? off[b + 1] : n;
  for (int64_t i = 0; i < n; ++i)
    TP_CHECK(idx[i] >= 0 && idx[i] < num, Index, "embedding_bag: index ", idx[i], " is out of bounds for dim 0 of "
             "weight with size ", num);
  int64_t *o2b = offset2bag.data<int64_t>();
  std::fill(o2b, o2b + n, int64_t(-1));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = start[size_t(b)]; i < end[size_t(b)]; ++i) o2b[i] = b;

  Tensor psw;
  if (per_sample_weights) psw = call_op<Tensor>(TP_OP("contiguous"), *per_sample_weights);
  TP_DISPATCH_FLOATING(weight.dtype(), "embedding_bag", [&]<typename T>() {
    const T *w = weight.data<T>();
    const T *pw = psw.defined() ? psw.data<T>() : nullptr;
    T *o = out.data<T>();
    int64_t *bs = bag_size.data<int64_t>(), *mi = mode == kMax ? max_indices.data<int64_t>() : nullptr;
    const int64_t rs = weight.stride(0), cs = weight.stride(1);
    const int64_t per_bag = D * std::max<int64_t>(n / std::max<int64_t>(B, 1), 1);  // elements read per bag
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(per_bag, 1));
    parallel_for(0, B, grain, [&](int64_t b0, int64_t b1) {
      std::vector<opmath_t<T>> acc(static_cast<size_t>(D));
      std::vector<int64_t> argmax(size_t(mode == kMax ? D : 0));
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t s = start[size_t(b)], len = end[size_t(b)] - s;
        bs[b] = reduce_bag<T>(w, rs, cs, D, idx + s, len, pw ? pw + s : nullptr, mode, padding_idx, acc.data(),
                              o + b * D, argmax.data());
        if (mi) std::copy(argmax.begin(), argmax.end(), mi + b * D);
      }
    });
  });
  return {out, offset2bag, bag_size, max_indices};
}

// Rescale, in place, each row of `self` picked by `indices` whose norm_type-norm exceeds max_norm to norm
// max_norm (PyTorch's embedding_renorm_: scale = max_norm / (norm + 1e-7)). Each row once, however often picked.
static Tensor embedding_renorm_(const Tensor &self, const Tensor &indices, double max_norm, double norm_type) {
  TP_CHECK(self.dim() == 2, Runtime, "embedding_renorm_: 'self' must be 2-D, got a ", self.dim(), "-D tensor");
  check_index_dtype(indices, "indices");
  TP_CHECK(is_floating(self.dtype()), Runtime, "embedding_renorm_: expected a floating point tensor, got ",
           scalar_type_name(self.dtype()));
  self.bump_version();
  if (self.device().is_meta() || indices.numel() == 0) return self;
  Tensor idx_t = as_int64_contiguous(indices);
  const int64_t *idx = idx_t.data<int64_t>(), num = self.size(0), D = self.size(1);
  std::vector<int64_t> rows(idx, idx + idx_t.numel());
  for (int64_t r : rows)
    TP_CHECK(r >= 0 && r < num, Index, "embedding_renorm_: index ", r, " is out of bounds for dim 0 with size ", num);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  TP_DISPATCH_FLOATING(self.dtype(), "embedding_renorm_", [&]<typename T>() {
    using M = opmath_t<T>;
    T *w = self.data<T>();
    const int64_t rs = self.stride(0), cs = self.stride(1);
    for (int64_t r : rows) {
      T *row = w + r * rs;
      M norm = 0;
      if (norm_type == 1) {
        for (int64_t d = 0; d < D; ++d) norm += std::abs(M(row[d * cs]));
      } else if (norm_type == 2) {
        for (int64_t d = 0; d < D; ++d) norm += M(row[d * cs]) * M(row[d * cs]);
        norm = std::sqrt(norm);
      } else if (std::isinf(norm_type)) {
        for (int64_t d = 0; d < D; ++d) norm = std::max(norm, M(std::abs(M(row[d * cs]))));
      } else {
        for (int64_t d = 0; d < D; ++d) norm += M(std::pow(std::abs(M(row[d * cs])), M(norm_type)));
        norm = M(std::pow(norm, M(1.0 / norm_type)));
      }
      if (norm > M(max_norm)) {
        const M scale = M(max_norm) / (norm + M(1e-7));
        for (int64_t d = 0; d < D; ++d) row[d * cs] = T(M(row[d * cs]) * scale);
      }
    }
  });
  return self;
}

// torch.nn.functional.embedding_bag: the checks and conventions of the Python function, then the kernel.
static Tensor embedding_bag(const Tensor &input, const Tensor &weight, const std::optional<Tensor> &offsets_in,
                            std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
                            const std::string &mode, bool sparse, const std::optional<Tensor> &per_sample_weights,
                            bool include_last_offset, std::optional<int64_t> padding_idx) {
  TP_CHECK(weight.dim() == 2, Runtime, "embedding_bag: 'weight' must be 2-D, got a ", weight.dim(), "-D tensor");
  if (per_sample_weights)
    TP_CHECK(per_sample_weights->sizes() == input.sizes(), Value, "embedding_bag: If per_sample_weights (",
             shape_str(per_sample_weights->sizes()), ") is not None, then it must have the same shape as the input (",
             shape_str(input.sizes()), ")");
  Tensor indices = input, offsets;
  std::optional<Tensor> psw = per_sample_weights;
  if (input.dim() == 2) {
    TP_CHECK(!offsets_in, Value, "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
             "of fixed length sequences. However, found offsets of type Tensor");
    const int64_t B = input.size(0), N = input.size(1);
    // bag b starts at b * N; N == 0 gives B empty bags (PyTorch's arange(0, numel, N) fails on a step of 0)
    const auto i64 = std::optional<ScalarType>(ScalarType::Int64);
    const auto dev = std::optional<Device>(input.device());
    offsets = N == 0 ? call_op<Tensor>(TP_OP("full"), Shape{B}, Scalar(int64_t(0)), i64, dev)
                     : call_op<Tensor>(TP_OP("arange"), Scalar(int64_t(0)), Scalar(B * N), Scalar(N), i64, dev);
    indices = call_op<Tensor>(TP_OP("reshape"), input, Shape{-1});
    if (psw) psw = call_op<Tensor>(TP_OP("reshape"), *psw, Shape{-1});
  } else if (input.dim() == 1) {
    TP_CHECK(offsets_in.has_value(), Value, "offsets has to be a 1D Tensor but got None");
    TP_CHECK(offsets_in->dim() == 1, Value, "offsets has to be a 1D Tensor");
    offsets = *offsets_in;
  } else {
    fail(ErrorKind::Value, "input has to be 1D or 2D Tensor, but got Tensor of dimension ", input.dim());
  }
  int64_t m;
  if (mode == "sum") m = kSum;
  else if (mode == "mean") m = kMean;
  else if (mode == "max") {
    m = kMax;
    TP_CHECK(!scale_grad_by_freq, Value, "max mode does not support scaling the gradient by the frequency");
    TP_CHECK(!sparse, Value, "max mode does not support sparse weights");
  } else {
    fail(ErrorKind::Value, "mode has to be one of sum, mean or max");
  }
  int64_t pad = -1;
  if (padding_idx) {
    const int64_t num = weight.size(0);
    TP_CHECK(*padding_idx < num && *padding_idx >= -num, Value, "Padding_idx must be within num_embeddings");
    pad = *padding_idx < 0 ? *padding_idx + num : *padding_idx;
  }
  if (max_norm) call_op<Tensor>(TP_OP("embedding_renorm_"), weight, indices, *max_norm, norm_type);
  TP_CHECK(!psw || m == kSum, NotImplemented, "embedding_bag: per_sample_weights was not None. per_sample_weights is "
           "only supported for mode='sum' (got mode='", mode, "'). Please open a feature request on GitHub.");
  // A boxed call: call_op's typed results stop at three tensors, and only the first one is wanted here.
  const Operator &op = TP_OP("_embedding_bag");
  Stack s{to_value(weight), to_value(indices), to_value(offsets), to_value(scale_grad_by_freq), to_value(m),
          to_value(sparse), to_value(psw), to_value(include_last_offset), to_value(pad)};
  call(op, s);
  return s.at(0).tensor;
}

TP_LIBRARY(embedding_bag) {
  lib.def("_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
          "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, "
          "int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)");
  lib.def("embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)");
  lib.def("embedding_bag(Tensor input, Tensor weight, Tensor? offsets=None, float? max_norm=None, "
          "float norm_type=2, bool scale_grad_by_freq=False, str mode='mean', bool sparse=False, "
          "Tensor? per_sample_weights=None, bool include_last_offset=False, int? padding_idx=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<_embedding_bag>(lib, "_embedding_bag", key, __LINE__);
    impl_typed<embedding_renorm_>(lib, "embedding_renorm_", key, __LINE__);
  }
  TP_IMPL(lib, "embedding_bag", Composite, embedding_bag);
}

}  // namespace tp::p10
