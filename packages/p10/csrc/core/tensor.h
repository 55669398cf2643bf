// tensor.h — TensorImpl (what a tensor is) and Tensor (the refcounted handle C++ code passes around).
//
// Where it sits: the centre of P10. A TensorImpl is a view onto a Storage: (sizes, strides, storage_offset,
// dtype, device). It also carries what other layers hang on a tensor: a version counter shared by all views
// (autograd's use-after-modify check), requires_grad, the autograd-meta slot owned by tpx, and a weak
// back-pointer to its Python object. The C ABI's `TP_Tensor*` is a `TensorImpl*`.
#pragma once
#include <cstdint>
#include <vector>

#include "core/errors.h"
#include "core/scalar_type.h"
#include "core/storage.h"

struct _object;  // PyObject, without pulling Python.h into every kernel
namespace tp::p10 {

using Shape = std::vector<int64_t>;

// Shared by a tensor and all its views: bumped by every in-place write (Note [Version counter]).
struct VersionCounter : RefCounted {
  std::atomic<int64_t> version{0};
};

// Note [Inference tensors]
//   Inside `inference_mode()` (a thread-local flag, set by tpx through the C ABI) every new tensor is marked as
//   an inference tensor: it can never enter autograd later (PyTorch's rule), so autograd may skip all
//   bookkeeping for it. The mark is made when the TensorImpl is created.
bool inference_mode_enabled();
void set_inference_mode_enabled(bool on);

struct TensorImpl : RefCounted {
  Ref<Storage> storage;
  Shape sizes, strides;
  int64_t storage_offset = 0;  // in elements
  int64_t numel = 1;
  ScalarType dtype = ScalarType::Float32;
  Device device;
  Ref<VersionCounter> version;
  bool requires_grad = false;
  bool is_contiguous = true;      // cached; recomputed by set_geometry()
  bool is_wrapped_number = false; // a Python scalar turned into a 0-d tensor (Note [Wrapped numbers])
  bool is_inference = inference_mode_enabled();  // Note [Inference tensors]
  // For a view (make_view): the tensor it views, followed to the root. Autograd needs it to send an in-place
  // write into a view back to its base's history (tpx's Note [Views and in-place]).
  Ref<TensorImpl> view_base;

  // Note [Autograd meta slot]
  //   tpx stores its per-tensor state (grad, grad_fn, hooks) here through the C ABI. P10 never looks inside;
  //   it only calls the deleter when the tensor dies.
  void *autograd_meta = nullptr;
  void (*autograd_meta_deleter)(void *) = nullptr;

  // Note [Python object identity]
  //   While a Python Tensor object wraps this impl, `pyobj` points at it (a borrowed, weak pointer; the Python
  //   object owns the impl, not the other way round). Returning the same impl to Python again returns that
  //   same object, so `x.grad is x.grad` and attributes set on a tensor stay put. The Python object clears
  //   the pointer when it dies (python/py_tensor.cpp).
  _object *pyobj = nullptr;

  ~TensorImpl() override;
  void set_geometry(Shape sizes, Shape strides, int64_t offset);  // recomputes numel and is_contiguous
  void *data_ptr() const;  // element 0 of this view; nullptr for meta and empty tensors
  int64_t dim() const { return int64_t(sizes.size()); }
  int64_t itemsize() const { return element_size(dtype); }
};

[[noreturn]] void refuse_host_access(Device device);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}
  static Tensor adopt(TensorImpl *p) { return Tensor(Ref<TensorImpl>::adopt(p)); }

  bool defined() const { return bool(impl_); }
  TensorImpl *impl() const { return impl_.get(); }
  TensorImpl *operator->() const { return impl_.get(); }
  const Ref<TensorImpl> &ref() const { return impl_; }

  const Shape &sizes() const { return impl_->sizes; }
  const Shape &strides() const { return impl_->strides; }
  int64_t size(int64_t d) const;    // negative d counts from the end
  int64_t stride(int64_t d) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel; }
  ScalarType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  bool is_contiguous() const { return impl_->is_contiguous; }
  int64_t storage_offset() const { return impl_->storage_offset; }
  void *data_ptr() const { return impl_->data_ptr(); }
  // Typed host access, for CPU kernels. Note [No host reads of device memory]: on a CUDA tensor it raises
  // NotImplementedError instead of dereferencing a device pointer (a crash) — the op has no CUDA kernel yet.
  template <typename T> T *data() const {
    if (impl_->device.type == DeviceType::CUDA) [[unlikely]] refuse_host_access(impl_->device);
    return static_cast<T *>(impl_->data_ptr());
  }
  void bump_version() const { impl_->version->version.fetch_add(1, std::memory_order_relaxed); }
  // A fake tensor is a meta tensor that stands for another device (Note [Fake tensors] in
  // dispatch/fake_tensor.cpp). logical_device() is the device it reports; a meta rule that must behave as one
  // backend does (CUDA refusing an integer matmul) asks it.
  bool is_fake() const {
    return impl_->device.is_meta() && impl_->storage && !impl_->storage->fake_device.is_meta();
  }
  Device logical_device() const { return is_fake() ? impl_->storage->fake_device : impl_->device; }

 private:
  Ref<TensorImpl> impl_;
};

// Set requires_grad; RuntimeError for dtypes that cannot carry gradients (PyTorch's rule). The one place the
// check lives: the Python property and the C ABI both call it.
void set_requires_grad(TensorImpl &t, bool flag);

// --- construction -------------------------------------------------------------------------------------------
Shape contiguous_strides(const Shape &sizes);
int64_t shape_numel(const Shape &sizes);  // raises on negative sizes or int64 overflow
// Note [Storage size]
//   The bytes a storage needs for a tensor: itemsize × numel for a contiguous one, itemsize × (offset + 1 +
//   Σ (size-1)·stride) for a strided one (0 when a size is 0). Every allocation (empty_tensor,
//   empty_strided_tensor, hence every factory, clone and op output, on every device) and as_strided's bounds
//   check get their byte count here and nowhere else. The arithmetic is checked: a product that wraps past 2^64
//   would allocate a few bytes and then write gigabytes into them (tp.zeros(2**62) crashed). A count above
//   INT64_MAX, a negative size or a negative stride raises RuntimeError, as PyTorch's computeStorageNbytes does
//   ("Storage size calculation overflowed with sizes=[...]"). So the allocators may add their rounding to the
//   result without overflowing size_t.
size_t storage_nbytes(const Shape &sizes, int64_t itemsize);
size_t storage_nbytes(const Shape &sizes, const Shape &strides, int64_t itemsize, int64_t storage_offset = 0);
Tensor empty_tensor(const Shape &sizes, ScalarType dtype, Device device);
Tensor empty_strided_tensor(const Shape &sizes, const Shape &strides, ScalarType dtype, Device device);
// A new TensorImpl over `base`'s storage with other geometry: what every view op returns.
// Shares the storage and the version counter (Note [Version counter]).
Tensor make_view(const Tensor &base, Shape sizes, Shape strides, int64_t offset);

// Note [Layout preservation]
//   PyTorch keeps a tensor's memory layout where it can: `x.t().clone()` and `x.t() + 1` are transposed too.
//   A layout is an order of dims from largest stride to smallest; strides_in_order() lays `sizes` out densely
//   in that order. empty_like_layout() does so for any `t` (its dims sorted by stride): a dense,
//   non-overlapping `t` gets its own strides back, a slice or an expanded tensor a dense layout in its dims'
//   order (`x[:, ::3].clone()` keeps x's order; an expanded dim, stride 0, goes innermost), as PyTorch's
//   preserve_format does (its infer_dense_strides).
Shape strides_in_order(const Shape &sizes, const std::vector<int64_t> &outer_to_inner);
bool is_non_overlapping_and_dense(const Tensor &t);
Tensor empty_like_layout(const Tensor &t, ScalarType dtype, Device device);

// --- shape helpers shared by kernels ------------------------------------------------------------------------
// Wrap a possibly negative dim into [0, ndim); IndexError naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char *op);
// Broadcast two shapes by NumPy's rules; RuntimeError naming `op` and both shapes when they do not match.
Shape broadcast_shapes(const Shape &a, const Shape &b, const char *op);
std::string shape_str(const Shape &s);  // "[2, 3]"
// Can a tensor of shape `from` be expanded (broadcast one way) to `to`? For ops that write into `to`.
bool is_expandable_to(const Shape &from, const Shape &to);

}  // namespace tp::p10
