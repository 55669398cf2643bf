// ops_copy.cpp — CUDA kernels for copy_, to, clone, contiguous, fill_ and the factories, plus pin_memory.
//
// Where it sits: the CUDA twin of kernels/copy.cpp and kernels/factory.cpp. copy_ is the one op that crosses
// devices: a cpu -> cuda copy reaches it because the dispatcher ranks CUDA above CPU (Note [Kernel lookup]),
// and the CPU `to` kernel hands cross-device copies to the dispatched copy_. Host <-> device moves go through
// cuMemcpy{HtoD,DtoH}Async on the current stream; casting and re-layout happen on whichever side is cheaper
// (a CPU tensor is cast on the CPU before upload; a download is cast on the CPU after).
//
// Note [Synchronous copies]
//   A copy to the host returns when the data is there (the stream is synchronised), unless non_blocking=True and
//   the destination is pinned memory: then the copy is queued and the caller synchronises (an Event or
//   tp.cuda.synchronize()). A copy from pageable host memory is staged by the driver before
//   cuMemcpyHtoDAsync returns, so the source may be freed at once.
#include <cstring>

#include "cuda/memory.h"
#include "kernels/cast.h"
#include "cuda/ops_common.h"
#include "cuda/strided32.h"

namespace tp::p10::cuda {

int common_device(const char *op, const std::vector<Tensor> &tensors, bool allow_cpu_scalars) {
  int device = -1;
  Device first;
  for (const Tensor &t : tensors) {
    if (!t.defined()) continue;
    if (t.device().type == DeviceType::CUDA) {
      if (device < 0) { device = t.device().index; first = t.device(); continue; }
      TP_CHECK(t.device().index == device, Runtime, op, ": Expected all tensors to be on the same device, but found "
               "at least two devices, ", device_str(first), " and ", device_str(t.device()), "!");
    } else if (!(allow_cpu_scalars && t.dim() == 0 && t.device().is_cpu())) {
      fail(ErrorKind::Runtime, op, ": Expected all tensors to be on the same device, but found at least two devices, "
           "cuda and ", device_str(t.device()), "!");
    }
  }
  TP_CHECK(device >= 0, Runtime, op, ": no CUDA tensor among the arguments");
  return device;
}

void check_real(const char *op, ScalarType t) {
  TP_CHECK(!is_complex(t), NotImplemented, op, ": complex dtypes (", scalar_type_name(t),
           ") have no CUDA kernels yet");
}

static CUdeviceptr dptr(const Tensor &t) { return reinterpret_cast<CUdeviceptr>(t.data_ptr()); }

// Note [Packed strided copy]
//   A strided copy is a memory-bound loop whose cost is the number of memory instructions and the index
//   arithmetic per element. When the innermost (merged) dim steps by one element on both sides — the D rows
//   of a [B, T, H, D] <-> [B, H, T, D] transpose, a slice of rows, a flip of an outer dim — the copy is the
//   same copy of wider "elements": units of U bytes (16 when the row length, every outer stride and both
//   pointers allow it), so the innermost size and the outer strides are divided by U / itemsize. A row
//   running backwards in the source (flip of the innermost dim) moves the same way, each 16-byte pack loaded
//   forwards from where the reversed row's pack starts, and its elements reversed (copy.cu copy_flip_b<N>).
//   The units then go through copy.cu copy_fast_b<U> with 32-bit offsets (Note [Fast strided offsets]).
//   Returns false (nothing launched) when the geometry does not fit 32 bits: the int64 kernel runs instead.
static bool packed_strided_copy(int dev, Stream s, KernelGeometry g, const Tensor &dst, const Tensor &src) {
  const int64_t item = dst->itemsize();
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst.data_ptr());
  uintptr_t p = reinterpret_cast<uintptr_t>(src.data_ptr());
  const int in = g.ndim - 1;
  const bool forward = g.strides[0][in] == 1 && g.strides[1][in] == 1;
  const bool reverse = g.strides[0][in] == 1 && g.strides[1][in] == -1 && g.sizes[in] > 1;
  int64_t unit = item;
  auto fits = [&](int64_t u) {  // u-byte units tile every row of both operands, aligned
    const int64_t per = u / item;
    if (g.sizes[in] % per) return false;
    for (int k = 0; k < in; ++k)
      if (g.strides[0][k] % per || g.strides[1][k] % per) return false;
    const uintptr_t first = reverse ? p - uintptr_t((per - 1) * item) : p;  // the lowest address of pack 0
    return d % uintptr_t(u) == 0 && first % uintptr_t(u) == 0;
  };
  if (forward) {
    for (int64_t u = 16; u > item; u /= 2)
      if (fits(u)) { unit = u; break; }
  } else if (reverse && item < 16 && fits(16)) {
    unit = 16;
  }
  if (unit > item) {
    const int64_t per = unit / item;
    g.sizes[in] /= per;
    for (int k = 0; k < in; ++k) {
      g.strides[0][k] /= per;
      g.strides[1][k] /= per;
    }
    if (reverse) p -= uintptr_t((per - 1) * item);
  }
  const std::optional<Strided32> fast = make_strided32(g, 2);
  if (!fast) return false;
  int64_t n = 1;
  for (int k = 0; k < g.ndim; ++k) n *= g.sizes[k];
  const bool flip = reverse && unit > item;
  const std::string name = (flip ? "copy_flip_b" : "copy_fast_b") + std::to_string(flip ? item : unit);
  launch(kernel(dev, "copy.cu", name), elementwise_config(dev, n, 4), s, uint32_t(n), *fast,
         reinterpret_cast<void *>(d), reinterpret_cast<const void *>(p));
  return true;
}

// Same dtype, same device: one cuMemcpy when both are contiguous with one shape, else the strided kernel.
static void same_dtype_copy(const Tensor &dst, const Tensor &src) {
  const int dev = dst.device().index;
  Stream s = stream_for(dev);
  if (dst.is_contiguous() && src.is_contiguous() && dst.sizes() == src.sizes()) {
    TP_CU(cuMemcpyDtoDAsync, dptr(dst), dptr(src), size_t(dst.numel() * dst->itemsize()), s.handle);
    return;
  }
  KernelGeometry g = make_geometry(dst.sizes(), {&dst, &src}, "copy_");
  if (packed_strided_copy(dev, s, g, dst, src)) return;
  const std::string name = "copy_strided_b" + std::to_string(dst->itemsize());
  launch(kernel(dev, "copy.cu", name), elementwise_config(dev, dst.numel()), s, int64_t(dst.numel()), g,
         dst.data_ptr(), src.data_ptr());
}

// Contiguous, same numel, different dtypes.
static void cast_contiguous(const Tensor &dst, const Tensor &src) {
  const int dev = dst.device().index;
  const std::string name = std::string("cast_") + scalar_type_name(dst.dtype()) + "_" + scalar_type_name(src.dtype());
  launch(kernel(dev, "copy.cu", name), elementwise_config(dev, dst.numel()), stream_for(dev), int64_t(dst.numel()),
         dst.data_ptr(), src.data_ptr());
}

void device_copy(const Tensor &dst, const Tensor &src) {
  if (dst.numel() == 0) return;
  check_real("copy_", dst.dtype());
  check_real("copy_", src.dtype());
  if (dst.dtype() == src.dtype()) return same_dtype_copy(dst, src);
  Tensor s = src.is_contiguous() ? src : contiguous_as(src, src.dtype());
  if (dst.is_contiguous() && dst.sizes() == s.sizes()) return cast_contiguous(dst, s);
  Tensor tmp = empty_tensor(s.sizes(), dst.dtype(), dst.device());
  cast_contiguous(tmp, s);
  same_dtype_copy(dst, tmp);
}

Tensor dense(const Tensor &t, ScalarType dtype) {
  if (!t.defined()) return t;
  return t.is_contiguous() && t.dtype() == dtype ? t : contiguous_as(t, dtype);
}

Tensor int_zeros(int dev, const Shape &shape) {
  Tensor t = empty_tensor(shape, ScalarType::Int32, Device{DeviceType::CUDA, int8_t(dev)});
  if (t.numel() > 0)
    TP_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(t.data_ptr()), 0, size_t(t.numel()) * sizeof(int32_t),
          stream_for(dev).handle);
  return t;
}

Tensor contiguous_as(const Tensor &t, ScalarType dtype) {
  Tensor out = empty_tensor(t.sizes(), dtype, t.device());
  DeviceGuard g(t.device().index);
  device_copy(out, t);
  return out;
}

// A CPU tensor with `src`'s values, `dtype` and shape, contiguous (the CPU kernels cast and re-layout).
static Tensor host_contiguous(const Tensor &src, ScalarType dtype) {
  if (src.is_contiguous() && src.dtype() == dtype) return src;
  Tensor tmp = empty_tensor(src.sizes(), dtype, Device{});
  call_op<Tensor>(TP_OP("copy_"), tmp, src, false);
  return tmp;
}

static void upload(const Tensor &dst, const Tensor &src, bool non_blocking) {
  const int dev = dst.device().index;
  DeviceGuard g(dev);
  Stream s = stream_for(dev);
  Tensor h = host_contiguous(src, dst.dtype());
  Tensor d = (dst.is_contiguous() && dst.sizes() == h.sizes()) ? dst : empty_tensor(h.sizes(), dst.dtype(), dst.device());
  TP_CU(cuMemcpyHtoDAsync, dptr(d), h.data_ptr(), size_t(h.numel() * h->itemsize()), s.handle);
  if (d.impl() != dst.impl()) device_copy(dst, d);  // broadcast or strided destination
  // Note [Synchronous copies]: from pinned memory the copy is truly asynchronous; wait unless asked not to.
  if (!non_blocking && is_pinned(h->storage->data)) TP_CU(cuStreamSynchronize, s.handle);
}

static void download(const Tensor &dst, const Tensor &src, bool non_blocking) {
  const int dev = src.device().index;
  DeviceGuard g(dev);
  Stream s = stream_for(dev);
  Tensor d = src.is_contiguous() ? src : contiguous_as(src, src.dtype());
  const bool direct = dst.is_contiguous() && dst.dtype() == d.dtype() && dst.sizes() == d.sizes();
  Tensor h = direct ? dst : empty_tensor(d.sizes(), d.dtype(), Device{});
  TP_CU(cuMemcpyDtoHAsync, h.data_ptr(), dptr(d), size_t(d.numel() * d->itemsize()), s.handle);
  const bool async = non_blocking && direct && is_pinned(dst->storage->data);
  if (!async) TP_CU(cuStreamSynchronize, s.handle);  // Note [Synchronous copies]
  if (!direct) call_op<Tensor>(TP_OP("copy_"), dst, h, false);  // cast / broadcast / re-layout on the CPU
}

// self.copy_(src) where either side (or both) is on a CUDA device.
static Tensor copy_(const Tensor &self, const Tensor &src, bool non_blocking) {
  TP_CHECK(is_expandable_to(src.sizes(), self.sizes()), Runtime, "copy_: the source of shape ", shape_str(src.sizes()),
           " cannot be broadcast to the destination of shape ", shape_str(self.sizes()));
  check_real("copy_", self.dtype());
  check_real("copy_", src.dtype());
  TP_CHECK(!self.device().is_meta() && !src.device().is_meta(), NotImplemented,
           "copy_: cannot copy between meta and ", device_str(self.device().is_meta() ? src.device() : self.device()));
  self.bump_version();
  if (self.numel() == 0) return self;
  const bool dst_cuda = self.device().type == DeviceType::CUDA, src_cuda = src.device().type == DeviceType::CUDA;
  if (dst_cuda && src_cuda) {
    if (self.device() == src.device()) {
      DeviceGuard g(self.device().index);
      device_copy(self, src);
    } else {  // between two GPUs: through the host (simple and always allowed; peer access is not assumed)
      Tensor h = empty_tensor(src.sizes(), src.dtype(), Device{});
      download(h, src, false);
      upload(self, h, false);
    }
  } else if (dst_cuda) {
    upload(self, src, non_blocking);
  } else {
    download(self, src, non_blocking);
  }
  return self;
}

// A non_blocking copy to the host lands in pinned memory, as PyTorch's _to_copy does: from pageable memory the
// driver would have to wait for the stream, so the copy could not overlap anything (Note [Synchronous copies]).
static Tensor pinned_empty_like(const Tensor &self, ScalarType dtype);

Tensor on_device(const Tensor &t, ScalarType ct, Device device) {
  if (!is_cpu_number(t)) return t.dtype() == ct ? t : contiguous_as(t, ct);
  Scalar v;
  TP_DISPATCH_ALL(t.dtype(), "number", [&]<typename S>() {
    if constexpr (!is_complex_dtype<S>) {
      if (is_floating(ct)) v = Scalar(cast_value<double>(*t.data<S>()));
      else v = Scalar(cast_value<int64_t>(*t.data<S>()));
    }
  });
  return call_op<Tensor>(TP_OP("fill_"), empty_tensor({}, ct, device), v);
}

static Tensor to_impl(const Tensor &self, std::optional<ScalarType> dtype, std::optional<Device> device, bool copy,
                      bool non_blocking) {
  ScalarType dt = dtype.value_or(self.dtype());
  Device dev = canonical_device(device.value_or(self.device()));
  if (dev.type == DeviceType::CPU) dev.index = -1;
  if (!copy && dt == self.dtype() && dev == self.device()) return self;
  const bool pinned_out = non_blocking && dev.is_cpu() && self.device().type == DeviceType::CUDA;
  Tensor out = pinned_out ? pinned_empty_like(self, dt) : empty_like_layout(self, dt, dev);
  if (self.numel() == 0 || dev.is_meta()) return out;
  return copy_(out, self, non_blocking);
}

static Tensor clone(const Tensor &self) {
  Tensor out = empty_like_layout(self, self.dtype(), self.device());
  return copy_(out, self, false);
}

static Tensor contiguous(const Tensor &self) {
  return self.is_contiguous() ? self : copy_(empty_tensor(self.sizes(), self.dtype(), self.device()), self, false);
}

static Tensor fill_(const Tensor &self, const Scalar &value) {
  check_real("fill_", self.dtype());
  self.bump_version();
  if (self.numel() == 0) return self;
  uint64_t bits = 0;  // the value in the tensor's dtype, as raw bytes: one fill kernel per element size
  TP_DISPATCH_ALL(self.dtype(), "fill_", [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      T v = value.to<T>();
      std::memcpy(&bits, &v, sizeof(T));
    }
  });
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  KernelGeometry g = make_geometry(self.sizes(), {&self}, "fill_");
  CUfunction f = kernel(dev, "copy.cu", "fill_b" + std::to_string(self->itemsize()));
  LaunchConfig c = elementwise_config(dev, self.numel());
  const int64_t n = self.numel();
  switch (self->itemsize()) {
    case 1: launch(f, c, stream_for(dev), n, g, self.data_ptr(), uint8_t(bits)); break;
    case 2: launch(f, c, stream_for(dev), n, g, self.data_ptr(), uint16_t(bits)); break;
    case 4: launch(f, c, stream_for(dev), n, g, self.data_ptr(), uint32_t(bits)); break;
    default: launch(f, c, stream_for(dev), n, g, self.data_ptr(), uint64_t(bits)); break;
  }
  return self;
}

static Tensor empty(std::vector<int64_t> size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return empty_tensor(size, dtype.value_or(default_dtype()), device.value_or(Device{DeviceType::CUDA, -1}));
}

static Tensor empty_strided(std::vector<int64_t> size, std::vector<int64_t> stride, std::optional<ScalarType> dtype,
                            std::optional<Device> device) {
  return empty_strided_tensor(size, stride, dtype.value_or(default_dtype()),
                              device.value_or(Device{DeviceType::CUDA, -1}));
}

static Tensor full(std::vector<int64_t> size, const Scalar &value, std::optional<ScalarType> dtype,
                   std::optional<Device> device) {
  Tensor t = empty_tensor(size, dtype.value_or(value.natural_dtype()), device.value_or(Device{DeviceType::CUDA, -1}));
  return fill_(t, value);
}

// A contiguous CPU tensor of `self`'s shape in page-locked memory.
static Tensor pinned_empty_like(const Tensor &self, ScalarType dtype) {
  const size_t nbytes = size_t(self.numel() * element_size(dtype));
  void *p = pinned_alloc(nbytes);
  auto storage = Storage::wrap_external(p, nbytes, Device{}, ExternalDeleter{[](void *q) { pinned_free(q); }, p});
  auto impl = Ref<TensorImpl>::make();
  impl->storage = storage;
  impl->dtype = dtype;
  impl->device = Device{};
  impl->version = Ref<VersionCounter>::make();
  impl->set_geometry(self.sizes(), contiguous_strides(self.sizes()), 0);
  return Tensor(impl);
}

// pin_memory(): a copy of a CPU tensor in page-locked memory, so uploads from it run asynchronously.
static Tensor pin_memory(const Tensor &self) {
  TP_CHECK(self.device().is_cpu(), Runtime, "pin_memory: cannot pin a '", device_str(self.device()),
           "' tensor: only dense CPU tensors can be pinned");
  Tensor out = pinned_empty_like(self, self.dtype());
  if (out.numel()) call_op<Tensor>(TP_OP("copy_"), out, self, false);
  return out;
}

static bool is_pinned_op(const Tensor &self) {
  return self.device().is_cpu() && self->storage && self->storage->data && is_pinned(self->storage->data);
}

TP_LIBRARY(cuda_copy) {
  lib.def("pin_memory(Tensor self) -> Tensor");
  lib.def("is_pinned(Tensor self) -> bool");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {  // a meta tensor is never pinned and cannot be
    impl_typed<pin_memory>(lib, "pin_memory", key, __LINE__);
    impl_typed<is_pinned_op>(lib, "is_pinned", key, __LINE__);
  }
  TP_IMPL(lib, "is_pinned", CUDA, is_pinned_op);
  TP_IMPL(lib, "copy_", CUDA, copy_);
  TP_IMPL(lib, "to", CUDA, to_impl);
  TP_IMPL(lib, "clone", CUDA, clone);
  TP_IMPL(lib, "contiguous", CUDA, contiguous);
  TP_IMPL(lib, "fill_", CUDA, fill_);
  TP_IMPL(lib, "empty", CUDA, empty);
  TP_IMPL(lib, "empty_strided", CUDA, empty_strided);
  TP_IMPL(lib, "full", CUDA, full);
}

}  // namespace tp::p10::cuda
