// tensor.cpp — TensorImpl geometry, construction and the shape helpers every kernel uses.
#include "core/tensor.h"

#include <algorithm>
#include <limits>

namespace tp::p10 {

// Note [Version counter]
//   Every in-place write bumps the counter of the tensor written to. Views share their base's counter (see
//   make_view), so writing through a view is visible to anyone who saved the base. Autograd records the
//   version of each saved tensor and complains if it moved before backward reads it.

TensorImpl::~TensorImpl() {
  if (autograd_meta && autograd_meta_deleter) autograd_meta_deleter(autograd_meta);
}

static bool compute_contiguous(const Shape &sizes, const Shape &strides) {
  int64_t expected = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;  // the stride of a size-1 dim never matters
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

void TensorImpl::set_geometry(Shape new_sizes, Shape new_strides, int64_t offset) {
  sizes = std::move(new_sizes);
  strides = std::move(new_strides);
  storage_offset = offset;
  numel = shape_numel(sizes);
  is_contiguous = compute_contiguous(sizes, strides);
}

// Note [No host reads of device memory]
//   CPU kernels read and write memory through the host's pointers: TensorIterator's loops and Tensor::data<T>().
//   A CUDA tensor reaching one of them (an op with no CUDA kernel whose Composite or CPU code runs anyway, such
//   as a helper reading index values) would dereference a device address and crash the process. Both doors
//   refuse instead, with NotImplementedError (TensorIterator names the op).
void refuse_host_access(Device device) {
  fail(ErrorKind::NotImplemented, "this op has no CUDA kernel yet: its CPU code was reached with a ",
       device_str(device), " tensor, whose memory the host cannot read");
}

void *TensorImpl::data_ptr() const {
  if (!storage || !storage->data) return nullptr;
  return static_cast<char *>(storage->data) + storage_offset * itemsize();
}

static bool &inference_flag() {
  thread_local bool on = false;
  return on;
}
bool inference_mode_enabled() { return inference_flag(); }
void set_inference_mode_enabled(bool on) { inference_flag() = on; }

void set_requires_grad(TensorImpl &t, bool flag) {
  TP_CHECK(!flag || is_floating(t.dtype) || is_complex(t.dtype), Runtime,
           "only Tensors of floating point and complex dtype can require gradients, got ", scalar_type_name(t.dtype));
  TP_CHECK(!flag || !t.is_inference || inference_mode_enabled(), Runtime,
           "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  t.requires_grad = flag;
}

int64_t Tensor::size(int64_t d) const { return impl_->sizes[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return impl_->strides[wrap_dim(d, dim(), "stride")]; }

Shape contiguous_strides(const Shape &sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

int64_t shape_numel(const Shape &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    TP_CHECK(s >= 0, Runtime, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
    TP_CHECK(s == 0 || n <= std::numeric_limits<int64_t>::max() / s, Runtime,
             "the number of elements of shape ", shape_str(sizes), " overflows int64");
    n *= s;
  }
  return n;
}

// Note [Storage size]. `strides` null: a contiguous layout. Sizes are checked first, with PyTorch's message for
// a negative dimension; everything after is unsigned arithmetic that reports a wrap instead of hiding it.
static size_t checked_storage_nbytes(const Shape &sizes, const Shape *strides, int64_t itemsize, int64_t offset) {
  for (int64_t s : sizes)
    TP_CHECK(s >= 0, Runtime, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
  auto overflowed = [&]() {
    if (strides)
      fail(ErrorKind::Runtime, "Storage size calculation overflowed with sizes=", shape_str(sizes),
           " and strides=", shape_str(*strides));
    fail(ErrorKind::Runtime, "Storage size calculation overflowed with sizes=", shape_str(sizes));
  };
  uint64_t elements = 1;
  if (strides) {
    TP_CHECK(strides->size() == sizes.size(), Runtime, "storage size: sizes ", shape_str(sizes), " and strides ",
             shape_str(*strides), " have different lengths");
    if (offset < 0) overflowed();
    if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
    elements = 1 + uint64_t(offset);
    for (size_t d = 0; d < sizes.size(); ++d) {
      if ((*strides)[d] < 0) overflowed();
      uint64_t reach;
      if (__builtin_mul_overflow(uint64_t(sizes[d] - 1), uint64_t((*strides)[d]), &reach) ||
          __builtin_add_overflow(elements, reach, &elements))
        overflowed();
    }
  } else {
    for (int64_t s : sizes)
      if (__builtin_mul_overflow(elements, uint64_t(s), &elements)) overflowed();
    if (elements == 0) return 0;
  }
  uint64_t nbytes;
  if (__builtin_mul_overflow(elements, uint64_t(itemsize), &nbytes) ||
      nbytes > uint64_t(std::numeric_limits<int64_t>::max()))
    overflowed();
  return size_t(nbytes);
}

size_t storage_nbytes(const Shape &sizes, int64_t itemsize) {
  return checked_storage_nbytes(sizes, nullptr, itemsize, 0);
}
size_t storage_nbytes(const Shape &sizes, const Shape &strides, int64_t itemsize, int64_t storage_offset) {
  return checked_storage_nbytes(sizes, &strides, itemsize, storage_offset);
}

static Tensor new_tensor(Ref<Storage> storage, ScalarType dtype, Device device) {
  auto impl = Ref<TensorImpl>::make();
  impl->storage = std::move(storage);
  impl->dtype = dtype;
  impl->device = device;
  impl->version = Ref<VersionCounter>::make();
  return Tensor(std::move(impl));
}

Tensor empty_tensor(const Shape &sizes, ScalarType dtype, Device device) {
  device = canonical_device(device);
  Tensor t = new_tensor(Storage::allocate(storage_nbytes(sizes, element_size(dtype)), device), dtype, device);
  t->set_geometry(sizes, contiguous_strides(sizes), 0);
  return t;
}

Tensor empty_strided_tensor(const Shape &sizes, const Shape &strides, ScalarType dtype, Device device) {
  TP_CHECK(sizes.size() == strides.size(), Runtime, "empty_strided: sizes ", shape_str(sizes), " and strides ",
           shape_str(strides), " have different lengths");
  for (int64_t s : strides)
    TP_CHECK(s >= 0, Runtime, "empty_strided: negative strides are not supported, got ", shape_str(strides));
  device = canonical_device(device);
  size_t nbytes = storage_nbytes(sizes, strides, element_size(dtype));  // Note [Storage size]
  Tensor t = new_tensor(Storage::allocate(nbytes, device), dtype, device);
  t->set_geometry(sizes, strides, 0);
  return t;
}

Tensor make_view(const Tensor &base, Shape sizes, Shape strides, int64_t offset) {
  auto impl = Ref<TensorImpl>::make();
  impl->storage = base->storage;
  impl->dtype = base.dtype();
  impl->device = base.device();
  impl->version = base->version;
  impl->view_base = base->view_base ? base->view_base : base.ref();  // the root, never a view itself
  impl->set_geometry(std::move(sizes), std::move(strides), offset);
  return Tensor(std::move(impl));
}

// Dims ordered from largest stride to smallest (stable, so equal strides keep their logical order).
static std::vector<int64_t> dims_by_stride(const Tensor &t) {
  std::vector<int64_t> perm(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) perm[d] = d;
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return t.strides()[a] > t.strides()[b]; });
  return perm;
}

Shape strides_in_order(const Shape &sizes, const std::vector<int64_t> &outer_to_inner) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (int64_t i = int64_t(outer_to_inner.size()) - 1; i >= 0; --i) {
    strides[outer_to_inner[i]] = s;
    s *= std::max<int64_t>(sizes[outer_to_inner[i]], 1);
  }
  return strides;
}

bool is_non_overlapping_and_dense(const Tensor &t) {
  if (t.is_contiguous()) return true;
  int64_t expected = 1;
  auto perm = dims_by_stride(t);
  for (int64_t i = int64_t(perm.size()) - 1; i >= 0; --i) {
    int64_t size = t.sizes()[perm[i]];
    if (size == 1) continue;
    if (t.strides()[perm[i]] != expected) return false;
    expected *= size;
  }
  return true;
}

Tensor empty_like_layout(const Tensor &t, ScalarType dtype, Device device) {
  if (t.is_contiguous()) return empty_tensor(t.sizes(), dtype, device);
  return empty_strided_tensor(t.sizes(), strides_in_order(t.sizes(), dims_by_stride(t)), dtype, device);
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char *op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 and -1, as in PyTorch
  if (dim < -n || dim >= n)
    fail(ErrorKind::Index, op, ": Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
         "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(const Shape &a, const Shape &b, const char *op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(ErrorKind::Runtime, op, ": The size of tensor a (", da, ") must match the size of tensor b (", db,
           ") at non-singleton dimension ", i, " (shapes ", shape_str(a), " and ", shape_str(b), ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool is_expandable_to(const Shape &from, const Shape &to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 1; i <= from.size(); ++i) {
    int64_t f = from[from.size() - i], t = to[to.size() - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

std::string shape_str(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace tp::p10
