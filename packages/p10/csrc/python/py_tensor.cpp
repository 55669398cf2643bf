// py_tensor.cpp — the `TensorBase` Python type (the C++ half of tensorplay_p10.Tensor) and object identity.
//
// Where it sits: tensorplay_p10/_tensor.py defines `class Tensor(_C.TensorBase)` with the Python-level API;
// this file gives it the fast metadata properties and the wrap/unwrap used by every binding. Bindings are thin:
// they convert arguments and call into core/ or the dispatcher.
#include "python/py_tensor.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/tensor.h"
#include "dispatch/fake_tensor.h"
#include "dispatch/kernel_box.h"
#include "kernels/cast.h"

namespace nb = nanobind;

namespace tp::p10 {

static nb::handle g_tensor_class;       // tensorplay_p10.Tensor (set by _tensor.py at import)
static nb::handle g_size_class;         // tensorplay_p10.Size
static nb::handle g_device_class;       // tensorplay_p10.device
static nb::handle g_dtypes[kNumScalarTypes];  // owned references, never released (live for the process)
static nb::dict *g_device_cache = nullptr;

PyTensor::~PyTensor() {
  if (t.defined() && t->pyobj) t->pyobj = nullptr;
}

nb::object wrap(Tensor t) {
  if (!t.defined()) return nb::none();
  if (t->pyobj) return nb::borrow(nb::handle(t->pyobj));
  TP_CHECK(g_tensor_class.is_valid(), Runtime, "internal: tensorplay_p10.Tensor is not registered yet");
  nb::object obj = nb::inst_alloc(g_tensor_class);
  new (nb::inst_ptr<PyTensor>(obj)) PyTensor(t);
  nb::inst_mark_ready(obj);
  t->pyobj = obj.ptr();
  return obj;
}

nb::object wrap_as(Tensor t, nb::handle cls) {
  TP_CHECK(PyType_Check(cls.ptr()) && PyType_IsSubtype((PyTypeObject *)cls.ptr(), (PyTypeObject *)g_tensor_class.ptr()),
           Type, "_make_subclass: expected a subclass of tensorplay Tensor");
  Tensor alias = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  nb::object obj = nb::inst_alloc(cls);
  new (nb::inst_ptr<PyTensor>(obj)) PyTensor(alias);
  nb::inst_mark_ready(obj);
  alias->pyobj = obj.ptr();
  return obj;
}

bool is_tensor(nb::handle h) {
  return g_tensor_class.is_valid() && PyObject_TypeCheck(h.ptr(), (PyTypeObject *)g_tensor_class.ptr());
}

const Tensor &unwrap(nb::handle h) {
  if (!is_tensor(h)) fail(ErrorKind::Type, "expected a Tensor, got ", Py_TYPE(h.ptr())->tp_name);
  return nb::inst_ptr<PyTensor>(h)->t;
}

nb::object dtype_object(ScalarType t) { return nb::borrow(g_dtypes[int(t)]); }
bool is_dtype(nb::handle h) {
  for (auto &d : g_dtypes) if (d.is(h)) return true;
  return false;
}
ScalarType dtype_from_object(nb::handle h) {
  for (int i = 0; i < kNumScalarTypes; ++i) if (g_dtypes[i].is(h)) return ScalarType(i);
  // Python's own types stand for the matching default dtypes, as in PyTorch (dtype=float).
  if (h.is((PyObject *)&PyFloat_Type)) return ScalarType::Float64;
  if (h.is((PyObject *)&PyLong_Type)) return ScalarType::Int64;
  if (h.is((PyObject *)&PyBool_Type)) return ScalarType::Bool;
  if (h.is((PyObject *)&PyComplex_Type)) return ScalarType::Complex128;
  fail(ErrorKind::Type, "expected a tensorplay dtype, got ", nb::repr(h).c_str());
}

nb::object device_object(Device d) {
  nb::tuple key = nb::make_tuple(int(d.type), int(d.index));
  if (g_device_cache->contains(key)) return (*g_device_cache)[key];
  nb::object obj = d.index >= 0 ? g_device_class(device_type_name(d.type), int(d.index))
                                : g_device_class(device_type_name(d.type));
  (*g_device_cache)[key] = obj;
  return obj;
}

Device device_from_object(nb::handle h) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {  // an integer means a cuda ordinal, as in PyTorch
    int64_t i = nb::cast<int64_t>(h);
    TP_CHECK(i >= 0, Runtime, "Device index must not be negative, got ", i);
    return Device{DeviceType::CUDA, int8_t(i)};
  }
  nb::object dev = PyObject_TypeCheck(h.ptr(), (PyTypeObject *)g_device_class.ptr()) ? nb::borrow(h)
                                                                                       : g_device_class(h);
  std::string type = nb::cast<std::string>(dev.attr("type"));
  nb::object idx = dev.attr("index");
  Device d;
  if (type == "cpu") d.type = DeviceType::CPU;
  else if (type == "cuda") d.type = DeviceType::CUDA;
  else if (type == "meta") d.type = DeviceType::Meta;
  else if (type == "privateuseone") d.type = DeviceType::PrivateUse1;
  else fail(ErrorKind::Runtime, "unsupported device type '", type, "'");
  d.index = idx.is_none() ? int8_t(-1) : int8_t(nb::cast<int>(idx));
  return d;
}

// item(): the single element as a Python number.
static nb::object item(const Tensor &t) {
  TP_CHECK(t.numel() == 1, Runtime, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  TP_CHECK(!t.device().is_meta(), NotImplemented, "Tensor.item() cannot be called on meta tensors");
  if (!t.device().is_cpu())  // a device tensor's element is read through a copy to the host
    return item(call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(), std::optional<Device>(Device{}), false));
  nb::object r;
  TP_DISPATCH_ALL(t.dtype(), "item", [&]<typename T>() {
    T v = *t.data<T>();
    if constexpr (std::is_same_v<T, bool>) r = nb::bool_(v);
    else if constexpr (is_complex_dtype<T>) r = nb::steal(PyComplex_FromDoubles(double(v.real()), double(v.imag())));
    else if constexpr (std::is_integral_v<T>) r = nb::int_(int64_t(v));
    else r = nb::float_(double(opmath_t<T>(v)));
  });
  return r;
}

static nb::object sizes_object(const Shape &s) {
  nb::object tup = nb::steal(PyTuple_New(Py_ssize_t(s.size())));
  for (size_t i = 0; i < s.size(); ++i) PyTuple_SET_ITEM(tup.ptr(), Py_ssize_t(i), PyLong_FromLongLong(s[i]));
  return g_size_class(tup);
}

void bind_tensor(nb::module_ &m) {
  g_device_cache = new nb::dict();
  nb::class_<PyTensor>(m, "TensorBase", nb::is_weak_referenceable(),
                       "The C++ half of tensorplay_p10.Tensor: storage, geometry and dtype. Use Tensor instead.")
      .def_prop_ro("shape", [](const PyTensor &p) { return sizes_object(p.t.sizes()); })
      .def("size", [](const PyTensor &p, nb::object dim) -> nb::object {
             if (dim.is_none()) return sizes_object(p.t.sizes());
             return nb::int_(p.t.size(nb::cast<int64_t>(dim)));
           }, nb::arg("dim") = nb::none())
      .def("stride", [](const PyTensor &p, nb::object dim) -> nb::object {
             if (dim.is_none()) return nb::tuple(nb::cast(p.t.strides()));
             return nb::int_(p.t.stride(nb::cast<int64_t>(dim)));
           }, nb::arg("dim") = nb::none())
      .def_prop_ro("dtype", [](const PyTensor &p) { return dtype_object(p.t.dtype()); })
      // A fake tensor reports the device it stands for (Note [Fake tensors] in dispatch/fake_tensor.cpp).
      .def_prop_ro("device", [](const PyTensor &p) { return device_object(p.t.logical_device()); })
      .def_prop_ro("ndim", [](const PyTensor &p) { return p.t.dim(); })
      .def("dim", [](const PyTensor &p) { return p.t.dim(); })
      .def("numel", [](const PyTensor &p) { return p.t.numel(); })
      .def("element_size", [](const PyTensor &p) { return p.t.impl()->itemsize(); })
      .def_prop_ro("itemsize", [](const PyTensor &p) { return p.t.impl()->itemsize(); })
      .def_prop_ro("nbytes", [](const PyTensor &p) { return p.t.numel() * p.t.impl()->itemsize(); })
      .def("storage_offset", [](const PyTensor &p) { return p.t.storage_offset(); })
      .def("is_contiguous", [](const PyTensor &p) { return p.t.is_contiguous(); })
      .def("data_ptr", [](const PyTensor &p) { return reinterpret_cast<uintptr_t>(p.t.data_ptr()); })
      .def("_storage_data_ptr", [](const PyTensor &p) { return reinterpret_cast<uintptr_t>(p.t->storage->data); })
      .def("_storage_nbytes", [](const PyTensor &p) { return int64_t(p.t->storage->nbytes); })
      .def("_shares_storage", [](const PyTensor &p, const PyTensor &o) { return p.t->storage.get() == o.t->storage.get(); })
      .def_prop_ro("is_meta", [](const PyTensor &p) { return p.t.logical_device().is_meta(); })
      .def_prop_ro("is_cpu", [](const PyTensor &p) { return p.t.logical_device().is_cpu(); })
      .def_prop_ro("is_cuda", [](const PyTensor &p) { return p.t.logical_device().type == DeviceType::CUDA; })
      .def_prop_ro("_is_fake", [](const PyTensor &p) { return p.t.is_fake(); })
      .def_prop_ro("_version", [](const PyTensor &p) { return p.t->version->version.load(); })
      .def("_bump_version", [](const PyTensor &p) { p.t.bump_version(); })
      .def_prop_ro("_is_wrapped_number", [](const PyTensor &p) { return p.t->is_wrapped_number; })
      .def_prop_ro("_requires_grad", [](const PyTensor &p) { return p.t->requires_grad; })
      .def("is_inference", [](const PyTensor &p) { return p.t->is_inference; },
           "Whether this tensor was made in inference mode (it can never enter autograd).")
      .def("_set_requires_grad", [](const PyTensor &p, bool flag) { set_requires_grad(*p.t.impl(), flag); })
      .def("item", [](const PyTensor &p) { return item(p.t); })
      .def("_impl_id", [](const PyTensor &p) { return reinterpret_cast<uintptr_t>(p.t.impl()); });

  m.def("_set_tensor_classes", [](nb::handle tensor, nb::handle size, nb::handle device) {
    g_tensor_class = tensor.inc_ref();
    g_size_class = size.inc_ref();
    g_device_class = device.inc_ref();
  });
  m.def("_register_dtypes", [](nb::list dtypes) {
    TP_CHECK(nb::len(dtypes) == size_t(kNumScalarTypes), Value, "expected ", kNumScalarTypes, " dtypes");
    for (int i = 0; i < kNumScalarTypes; ++i) g_dtypes[i] = nb::handle(dtypes[i]).inc_ref();
  });
  // FakeTensorMode.from_tensor (tensorplay_p10/fake_tensor.py): a fake twin of `data` — same sizes, strides
  // and dtype, no bytes — standing for `device` (data's own device when None).
  m.def("_make_fake", [](nb::handle data, nb::handle device) {
    const Tensor &t = unwrap(data);
    return wrap(fake_twin(t, device.is_none() ? t.logical_device() : device_from_object(device)));
  }, nb::arg("data"), nb::arg("device") = nb::none());
  m.def("_make_subclass", [](nb::handle cls, nb::handle data, bool requires_grad) {
    nb::object obj = wrap_as(unwrap(data), cls);
    if (requires_grad) set_requires_grad(*nb::inst_ptr<PyTensor>(obj)->t.impl(), true);
    return obj;
  });
}

}  // namespace tp::p10
