// ops_search.cpp — CUDA kernels for unique and unique_consecutive (dim=None; dim= goes to ops_unique_dim.cpp),
// searchsorted (.Tensor, .Scalar; bucketize is a Composite over it), histc and bincount.
//
// Where it sits: the CUDA twin of the searching and counting ops in kernels/sort.cpp; the arithmetic is
// tensorplay_p10/cuda_kernels/search.cu (and sort.cu's row sort and scan). unique's and bincount's output sizes
// depend on the data (the CPU op refuses meta tensors for them), so their checks are repeated here with the
// CPU's messages, and each reads one or two numbers back to the host to size its result — as PyTorch's CUDA
// kernels do. searchsorted and histc ask the CPU op on meta tensors for their checks (cuda/ops_meta.h).
#include <cmath>

#include "cuda/ops_meta.h"
#include "cuda/sort.h"

namespace tp::p10::cuda {

// unique / unique_consecutive over the slices along `dim` (ops_unique_dim.cpp).
std::tuple<Tensor, Tensor, Tensor> unique_dim(const char *op, const Tensor &self, int64_t dim, bool sort_first);

namespace {
const char *kSearch = "search.cu";

// Element `pos` of a contiguous int64 device tensor, on the host (a synchronous download).
int64_t read_int64(const Tensor &t, int64_t pos) {
  return to_host(make_view(t, {}, {}, t.storage_offset() + pos)).data<int64_t>()[0];
}
// A device int64 tensor holding `values`.
Tensor int64_on(Device device, std::initializer_list<int64_t> values) {
  Tensor h = empty_tensor({int64_t(values.size())}, ScalarType::Int64, Device{});
  std::copy(values.begin(), values.end(), h.data<int64_t>());
  return to_device(h, device);
}
Tensor zeros_on(int64_t n, ScalarType dtype, Device device) {
  return call_op<Tensor>(TP_OP("fill_"), empty_tensor({n}, dtype, device), Scalar(int64_t(0)));
}
Tensor flat_contiguous(const Tensor &t) {
  const Tensor c = t.is_contiguous() ? t : contiguous_as(t, t.dtype());
  return make_view(c, {c.numel()}, {1}, c.storage_offset());
}

// Note [unique on the GPU]
//   The flattened tensor is sorted (unique) or taken as it is (unique_consecutive); flags mark the elements that
//   differ from their left neighbour under ==, and their inclusive scan numbers the groups (the last entry is
//   their count, read back to size the results). Each group's first element gives its value and start; counts
//   are differences of starts; each element's group goes back to its original position through the sort's
//   indices. Same groups, values and order as the CPU's walk (Note [unique] in kernels/sort.cpp).
std::tuple<Tensor, Tensor, Tensor> unique_flat(const char *op, const Tensor &self, std::optional<int64_t> dim,
                                               bool sort_first) {
  check_real(op, self.dtype());
  if (dim) return unique_dim(op, self, *dim, sort_first);  // over slices: ops_unique_dim.cpp
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  const Device device = self.device();
  const ScalarType t = self.dtype();
  const int64_t n = self.numel();
  Tensor inverse = empty_tensor(self.sizes(), ScalarType::Int64, device);
  if (n == 0) return {empty_tensor({0}, t, device), inverse, empty_tensor({0}, ScalarType::Int64, device)};
  Tensor v = flat_contiguous(self), order;
  if (sort_first) {
    Tensor sv = empty_tensor({n}, t, device);
    order = empty_tensor({n}, ScalarType::Int64, device);
    sort_rows(v, 1, n, false, n, sv, order);
    v = sv;
  }
  const Stream stream = stream_for(dev);
  const LaunchConfig flat = elementwise_config(dev, n);
  Tensor group = empty_tensor({n}, ScalarType::Int64, device);
  launch(kernel(dev, kSearch, kname("unique_flags", t)), flat, stream, n, v.data_ptr(), group.data_ptr());
  scan_int64(group, true);
  const int64_t u = read_int64(group, n - 1);
  Tensor values = empty_tensor({u}, t, device), starts = empty_tensor({u}, ScalarType::Int64, device);
  Tensor counts = empty_tensor({u}, ScalarType::Int64, device);
  launch(kernel(dev, kSearch, kname("unique_scatter", t)), flat, stream, n, v.data_ptr(), group.data_ptr(),
         order.defined() ? order.data_ptr() : static_cast<void *>(nullptr), values.data_ptr(), inverse.data_ptr(),
         starts.data_ptr());
  launch(kernel(dev, kSearch, "unique_counts"), elementwise_config(dev, u), stream, u, n, starts.data_ptr(),
         counts.data_ptr());
  return {values, inverse, counts};
}
}  // namespace

// As on the CPU, all three results are computed; Python's tp.unique hands back the ones asked for.
static std::tuple<Tensor, Tensor, Tensor> unique(const Tensor &self, bool sorted, bool return_inverse,
                                                 bool return_counts, std::optional<int64_t> dim) {
  (void)sorted, (void)return_inverse, (void)return_counts;
  return unique_flat("unique", self, dim, true);
}
static std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor &self, bool return_inverse,
                                                             bool return_counts, std::optional<int64_t> dim) {
  (void)return_inverse, (void)return_counts;
  return unique_flat("unique_consecutive", self, dim, false);
}

static Tensor searchsorted(const Tensor &seq, const Tensor &values, bool out_int32, bool right,
                           std::optional<std::string> side, std::optional<Tensor> sorter) {
  call_op<Tensor>(TP_OP("searchsorted.Tensor"), meta_like(seq), meta_like(values), out_int32, right, side,
                  meta_like(sorter));  // the checks: side, right, the shapes
  if (side) right = *side == "right";  // the meta call has checked side against right
  std::vector<Tensor> operands{seq, values};
  if (sorter) operands.push_back(*sorter);
  const int dev = common_device("searchsorted", operands, false);
  DeviceGuard guard(dev);
  const Device device = values.device();
  if (sorter) {
    TP_CHECK(sorter->dtype() == ScalarType::Int64, Runtime, "gather(): Expected dtype int64 for index, got ",
             scalar_type_name(sorter->dtype()));
    TP_CHECK(sorter->sizes() == seq.sizes(), Runtime, "searchsorted(): boundary and sorter must have the same "
             "size, but got boundary tensor ", shape_str(seq.sizes()), " and got sorter tensor ",
             shape_str(sorter->sizes()));
  }
  const ScalarType common = promote_types(seq.dtype(), values.dtype());
  check_real("searchsorted", common);
  Tensor out = empty_tensor(values.sizes(), ScalarType::Int64, device);
  const int64_t nv = values.numel(), len = seq.size(seq.dim() - 1);
  if (nv == 0) return out_int32 ? contiguous_as(out, ScalarType::Int32) : out;
  const Stream stream = stream_for(dev);
  Tensor so;
  if (sorter && sorter->numel()) {
    so = flat_contiguous(*sorter);
    Tensor first_bad = int64_on(device, {so.numel()});
    launch(kernel(dev, kSearch, "sorter_check"), elementwise_config(dev, so.numel()), stream, so.numel(), len,
           so.data_ptr(), first_bad.data_ptr());
    const int64_t bad = read_int64(first_bad, 0);
    if (bad < so.numel())
      fail(ErrorKind::Index, "gather(): index ", read_int64(so, bad), " is out of bounds for dimension ",
           seq.dim() - 1, " with size ", len);
  }
  const Tensor sc = flat_contiguous(seq.dtype() == common ? seq : contiguous_as(seq, common));
  const Tensor vc = flat_contiguous(values.dtype() == common ? values : contiguous_as(values, common));
  const int64_t per_row = values.dim() ? values.size(values.dim() - 1) : 1;
  launch(kernel(dev, kSearch, kname("searchsorted", common)), elementwise_config(dev, nv), stream, nv, len, per_row,
         int(seq.dim() == 1), sc.data_ptr(), so.defined() ? so.data_ptr() : static_cast<void *>(nullptr),
         vc.data_ptr(), int(right), out.data_ptr());
  return out_int32 ? contiguous_as(out, ScalarType::Int32) : out;
}

static Tensor searchsorted_scalar(const Tensor &seq, const Scalar &value, bool out_int32, bool right,
                                  std::optional<std::string> side, std::optional<Tensor> sorter) {
  call_op<Tensor>(TP_OP("searchsorted.Scalar"), meta_like(seq), value, out_int32, right, side, meta_like(sorter));
  // The value as the CPU op makes it (scalar_tensor: its dtype takes part in the promotion), then uploaded.
  const Tensor v = call_op<Tensor>(TP_OP("scalar_tensor"), value, std::optional<ScalarType>(),
                                   std::optional<Device>(Device{}));
  return searchsorted(seq, to_device(v, seq.device()), out_int32, right, side, sorter);
}

static Tensor histc(const Tensor &self, int64_t bins, const Scalar &min_s, const Scalar &max_s) {
  call_op<Tensor>(TP_OP("histc"), meta_like(self), bins, min_s, max_s);  // floating dtype, bins > 0
  const int dev = common_device("histc", {self}, false);
  DeviceGuard guard(dev);
  const Device device = self.device();
  const ScalarType t = self.dtype();
  double lo = min_s.to_double(), hi = max_s.to_double();
  TP_CHECK(std::isfinite(lo) && std::isfinite(hi), Runtime, "torch.histc(): range of [", lo, ", ", hi,
           "] is not finite");
  const Tensor x = flat_contiguous(self);
  const int64_t n = x.numel();
  const Stream stream = stream_for(dev);
  if (lo == hi && n) {  // the data's own range (Note in search.cu's minmax_partial)
    const unsigned nparts = std::min<unsigned>(elementwise_config(dev, n).grid, 1024);
    Tensor partial = empty_tensor({2 * int64_t(nparts) + 1}, ScalarType::Float64, device);
    Tensor range = empty_tensor({2}, ScalarType::Float64, device);
    launch(kernel(dev, kSearch, kname("minmax_partial", t)), LaunchConfig{nparts, 256, 0}, stream, n, x.data_ptr(),
           partial.data_ptr());
    launch(kernel(dev, kSearch, "minmax_final"), LaunchConfig{1, 1024, 0}, stream, int(nparts), partial.data_ptr(),
           range.data_ptr());
    const Tensor h = to_host(range);
    lo = h.data<double>()[0];
    hi = h.data<double>()[1];
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TP_CHECK(lo < hi, Runtime, "torch.histc(): max must be larger than min");
  Tensor counts = zeros_on(bins, ScalarType::Int64, device);
  if (n)
    launch(kernel(dev, kSearch, kname("histc_count", t)), elementwise_config(dev, n), stream, n, x.data_ptr(), bins,
           lo, hi, counts.data_ptr());
  return contiguous_as(counts, t);
}

static Tensor bincount(const Tensor &self, std::optional<Tensor> weights, int64_t minlength) {
  // The CPU op's checks and messages (it cannot run on meta tensors: its size depends on the data).
  TP_CHECK(self.dim() == 1 && is_integral(self.dtype(), false), Runtime,
           "bincount only supports 1-d non-negative integral inputs, got dtype ", scalar_type_name(self.dtype()),
           " with ", self.dim(), " dims");
  TP_CHECK(minlength >= 0, Runtime, "minlength should be >= 0, got ", minlength);
  TP_CHECK(!weights || (weights->dim() == 1 && weights->numel() == self.numel()), Runtime,
           "weights should be 1-d and have the same length as input");
  std::vector<Tensor> operands{self};
  if (weights) operands.push_back(*weights);
  const int dev = common_device("bincount", operands, false);
  DeviceGuard guard(dev);
  const Device device = self.device();
  const Stream stream = stream_for(dev);
  const int64_t n = self.numel();
  const Tensor idx = flat_contiguous(self.dtype() == ScalarType::Int64 ? self : contiguous_as(self, ScalarType::Int64));
  int64_t len = minlength;
  if (n) {
    Tensor stats = int64_on(device, {-1, n});  // [max, first negative index]
    launch(kernel(dev, kSearch, "bincount_stats"), elementwise_config(dev, n), stream, n, idx.data_ptr(),
           stats.data_ptr());
    const Tensor h = to_host(stats);
    const int64_t mx = h.data<int64_t>()[0], first_negative = h.data<int64_t>()[1];
    TP_CHECK(first_negative >= n, Runtime, "bincount only supports 1-d non-negative integral inputs, found ",
             first_negative < n ? read_int64(idx, first_negative) : 0);
    len = std::max(len, mx + 1);
  }
  if (!weights) {
    Tensor out = zeros_on(len, ScalarType::Int64, device);
    if (n)
      launch(kernel(dev, kSearch, "bincount_count"), elementwise_config(dev, n), stream, n, idx.data_ptr(),
             out.data_ptr());
    return out;
  }
  check_real("bincount", weights->dtype());
  // PyTorch: floating weights keep their dtype, others accumulate in float64
  const ScalarType wt = is_floating(weights->dtype()) ? weights->dtype() : ScalarType::Float64;
  const Tensor w = flat_contiguous(contiguous_as(*weights, ScalarType::Float64));
  Tensor sums = zeros_on(len, ScalarType::Float64, device);
  if (n)
    launch(kernel(dev, kSearch, "bincount_weighted"), elementwise_config(dev, n), stream, n, idx.data_ptr(),
           w.data_ptr(), sums.data_ptr());
  return wt == ScalarType::Float64 ? sums : contiguous_as(sums, wt);
}

TP_LIBRARY(cuda_search) {
  TP_IMPL(lib, "unique", CUDA, unique);
  TP_IMPL(lib, "unique_consecutive", CUDA, unique_consecutive);
  TP_IMPL(lib, "searchsorted.Tensor", CUDA, searchsorted);
  TP_IMPL(lib, "searchsorted.Scalar", CUDA, searchsorted_scalar);
  TP_IMPL(lib, "histc", CUDA, histc);
  TP_IMPL(lib, "bincount", CUDA, bincount);
}

}  // namespace tp::p10::cuda
