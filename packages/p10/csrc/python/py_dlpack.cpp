// py_dlpack.cpp — DLPack, both ways: Tensor.__dlpack__ / __dlpack_device__ and tp.from_dlpack.
//
// Where it sits: the zero-copy bridge to NumPy, PyTorch, CuPy, JAX. `Tensor.numpy()` and `tp.from_numpy()` are
// built on it in Python (tensorplay_p10/_interop.py), so memory is shared, never copied. The structs below are
// the DLPack 1.x ABI (dlpack.h), written out from the specification: the layout is the contract.
#include <nanobind/nanobind.h>

#include "python/py_tensor.h"

namespace nb = nanobind;

namespace tp::p10 {
namespace {

// ---- the DLPack ABI -----------------------------------------------------------------------------------------
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
struct DLDevice { int32_t device_type; int32_t device_id; };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;  // in elements; NULL means compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *self);
};
struct DLPackVersion { uint32_t major; uint32_t minor; };
constexpr uint64_t kDLReadOnly = 1ull << 0;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
};

DLDataType to_dl(ScalarType t) {
  uint8_t bits = uint8_t(element_size(t) * 8);
  switch (t) {
    case ScalarType::Bool: return {kDLBool, 8, 1};
    case ScalarType::UInt8: return {kDLUInt, 8, 1};
    case ScalarType::Int8: case ScalarType::Int16: case ScalarType::Int32: case ScalarType::Int64: return {kDLInt, bits, 1};
    case ScalarType::BFloat16: return {kDLBfloat, 16, 1};
    case ScalarType::Complex64: case ScalarType::Complex128: return {kDLComplex, bits, 1};
    default: return {kDLFloat, bits, 1};
  }
}

ScalarType from_dl(DLDataType d) {
  TP_CHECK(d.lanes == 1, Type, "from_dlpack: vector dtypes (lanes=", d.lanes, ") are not supported");
  switch (d.code) {
    case kDLBool: if (d.bits == 8) return ScalarType::Bool; break;
    case kDLUInt: if (d.bits == 8) return ScalarType::UInt8; break;
    case kDLInt:
      if (d.bits == 8) return ScalarType::Int8;
      if (d.bits == 16) return ScalarType::Int16;
      if (d.bits == 32) return ScalarType::Int32;
      if (d.bits == 64) return ScalarType::Int64;
      break;
    case kDLFloat:
      if (d.bits == 16) return ScalarType::Float16;
      if (d.bits == 32) return ScalarType::Float32;
      if (d.bits == 64) return ScalarType::Float64;
      break;
    case kDLBfloat: if (d.bits == 16) return ScalarType::BFloat16; break;
    case kDLComplex:
      if (d.bits == 64) return ScalarType::Complex64;
      if (d.bits == 128) return ScalarType::Complex128;
      break;
  }
  fail(ErrorKind::Type, "from_dlpack: unsupported DLPack dtype (code ", int(d.code), ", bits ", int(d.bits), ")");
}

// The exporter's context: keeps the tensor (and so its storage) alive, and owns the shape/stride arrays.
struct ExportCtx {
  Tensor t;
  Shape shape, strides;
};

template <typename M> void fill_dl(M *m, ExportCtx *ctx) {
  const Tensor &t = ctx->t;
  DLTensor &dl = m->dl_tensor;
  dl.data = t->storage->data;  // base pointer + byte_offset: consumers expect the allocation's start
  dl.byte_offset = uint64_t(t.storage_offset() * t.impl()->itemsize());
  if (!dl.data) dl.byte_offset = 0;  // an empty tensor has no allocation to be offset into
  Device dev = t.device();
  dl.device = {dev.type == DeviceType::CUDA ? kDLCUDA : kDLCPU, dev.index < 0 ? 0 : dev.index};
  dl.ndim = int32_t(t.dim());
  dl.dtype = to_dl(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  m->manager_ctx = ctx;
}

void delete_legacy(DLManagedTensor *m) {
  delete static_cast<ExportCtx *>(m->manager_ctx);
  delete m;
}
void delete_versioned(DLManagedTensorVersioned *m) {
  delete static_cast<ExportCtx *>(m->manager_ctx);
  delete m;
}

// A capsule nobody consumed still owns its tensor.
void legacy_capsule_destructor(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  }
}
void versioned_capsule_destructor(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto *m = static_cast<DLManagedTensorVersioned *>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (m && m->deleter) m->deleter(m);
  }
}

nb::object to_dlpack(nb::handle self, nb::object max_version) {
  const Tensor &t = unwrap(self);
  TP_CHECK(!t.device().is_meta(), Runtime, "__dlpack__: meta tensors have no data to share");
  TP_CHECK(!t->requires_grad, Runtime, "Can't export tensors that require gradient, use tensor.detach()");
  auto *ctx = new ExportCtx{t, t.sizes(), t.strides()};
  bool versioned = !max_version.is_none() && nb::cast<int>(max_version[0]) >= 1;
  if (versioned) {
    auto *m = new DLManagedTensorVersioned{};
    m->version = {1, 0};
    m->deleter = delete_versioned;
    fill_dl(m, ctx);
    return nb::steal(PyCapsule_New(m, "dltensor_versioned", versioned_capsule_destructor));
  }
  auto *m = new DLManagedTensor{};
  m->deleter = delete_legacy;
  fill_dl(m, ctx);
  return nb::steal(PyCapsule_New(m, "dltensor", legacy_capsule_destructor));
}

struct ImportCtx {
  void *managed;
  bool versioned;
};
void release_import(void *p) {
  auto *c = static_cast<ImportCtx *>(p);
  if (c->versioned) {
    auto *m = static_cast<DLManagedTensorVersioned *>(c->managed);
    if (m->deleter) m->deleter(m);
  } else {
    auto *m = static_cast<DLManagedTensor *>(c->managed);
    if (m->deleter) m->deleter(m);
  }
  delete c;
}

// Build a tensor over a DLPack capsule's memory; the capsule is marked used and its deleter runs when the
// tensor's storage dies.
nb::object from_capsule(nb::handle cap) {
  const DLTensor *dl;
  auto *ctx = new ImportCtx{};
  if (PyCapsule_IsValid(cap.ptr(), "dltensor_versioned")) {
    auto *m = static_cast<DLManagedTensorVersioned *>(PyCapsule_GetPointer(cap.ptr(), "dltensor_versioned"));
    if (m->version.major > 1) {
      delete ctx;
      fail(ErrorKind::Runtime, "from_dlpack: DLPack version ", m->version.major, ".", m->version.minor,
           " is newer than the supported 1.x");
    }
    ctx->managed = m;
    ctx->versioned = true;
    dl = &m->dl_tensor;
    PyCapsule_SetName(cap.ptr(), "used_dltensor_versioned");
  } else if (PyCapsule_IsValid(cap.ptr(), "dltensor")) {
    auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
    ctx->managed = m;
    dl = &m->dl_tensor;
    PyCapsule_SetName(cap.ptr(), "used_dltensor");
  } else {
    delete ctx;
    fail(ErrorKind::Type, "from_dlpack: expected a DLPack capsule named 'dltensor' or 'dltensor_versioned' "
         "(was it consumed already?)");
  }
  ScalarType dtype;
  try {
    dtype = from_dl(dl->dtype);
    const int32_t type = dl->device.device_type;
    TP_CHECK(type == kDLCPU || type == kDLCUDAHost || type == kDLCUDA, Runtime, "from_dlpack: device type ", type,
             " is not supported (cpu, cuda and cuda_host are)");
  } catch (...) {
    release_import(ctx);
    throw;
  }
  Shape shape(dl->shape, dl->shape + dl->ndim);
  Shape strides = dl->strides ? Shape(dl->strides, dl->strides + dl->ndim) : contiguous_strides(shape);
  int64_t item = element_size(dtype);
  // The storage covers [data, data + byte_offset + extent]; strides may be zero for broadcast exports.
  int64_t extent = 1;
  for (int i = 0; i < dl->ndim; ++i) extent += shape[i] == 0 ? 0 : (shape[i] - 1) * strides[i];
  char *base = static_cast<char *>(dl->data) + dl->byte_offset;
  // CUDA memory is shared as it is: the producer made it ready on the stream tp.from_dlpack passed it.
  const Device device = dl->device.device_type == kDLCUDA ? Device{DeviceType::CUDA, int8_t(dl->device.device_id)}
                                                          : Device{};
  auto storage = Storage::wrap_external(base, size_t(extent * item), device, ExternalDeleter{release_import, ctx});
  auto impl = Ref<TensorImpl>::make();
  impl->storage = storage;
  impl->dtype = dtype;
  impl->device = device;
  impl->version = Ref<VersionCounter>::make();
  impl->set_geometry(shape, strides, 0);
  return wrap(Tensor(impl));
}

}  // namespace

void bind_dlpack(nb::module_ &m) {
  m.def("_to_dlpack", &to_dlpack, nb::arg("tensor"), nb::arg("max_version") = nb::none());
  m.def("_from_dlpack_capsule", &from_capsule);
  m.def("_dlpack_device", [](nb::handle self) {
    Device d = unwrap(self).device();
    return nb::make_tuple(d.type == DeviceType::CUDA ? int(kDLCUDA) : int(kDLCPU), d.index < 0 ? 0 : int(d.index));
  });
}

}  // namespace tp::p10
