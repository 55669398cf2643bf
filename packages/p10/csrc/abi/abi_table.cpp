// abi_table.cpp — P10's implementation of the C ABI table (native/include/tensorplay/tp_abi.h).
//
// Where it sits: the only code that turns C ABI calls into dispatcher calls and back. Every entry point catches
// every C++ exception and reports it through the error channel (Note [ABI errors]); none may throw.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cuda/launch.h"
#include "dispatch/kernel_box.h"
#include "python/py_tensor.h"
#include "tensorplay/tp_abi.h"

namespace tp::p10 {
namespace {

namespace nb = nanobind;

struct ErrorChannel {
  int kind = TP_ERR_NONE;
  std::string message;
};
ErrorChannel &channel() {
  thread_local ErrorChannel c;
  return c;
}

void set_error(int kind, const char *message) {
  channel().kind = kind == TP_ERR_NONE ? TP_ERR_RUNTIME : kind;
  channel().message = message ? message : "";
}
const char *error_message() { return channel().message.c_str(); }
int error_kind() { return channel().kind; }
void clear_error() { channel() = ErrorChannel{}; }

PyObject *raise_python_error() {
  PyObject *type = PyExc_RuntimeError;
  switch (channel().kind) {
    case TP_ERR_TYPE: type = PyExc_TypeError; break;
    case TP_ERR_VALUE: type = PyExc_ValueError; break;
    case TP_ERR_INDEX: type = PyExc_IndexError; break;
    case TP_ERR_NOT_IMPLEMENTED: type = PyExc_NotImplementedError; break;
    default: break;
  }
  PyErr_SetString(type, channel().message.empty() ? "unknown tensorplay error" : channel().message.c_str());
  clear_error();
  return nullptr;
}

// Run `f`, converting any exception into the error channel; returns `fallback` on failure.
template <typename R, typename F> R guarded(R fallback, const F &f) {
  try {
    return f();
  } catch (const Error &e) {
    set_error(int(e.kind), e.what());
  } catch (nb::python_error &e) {
    set_error(TP_ERR_RUNTIME, e.what());
  } catch (const std::exception &e) {
    set_error(TP_ERR_RUNTIME, e.what());
  }
  return fallback;
}

TensorImpl *impl(const TP_Tensor *t) { return reinterpret_cast<TensorImpl *>(const_cast<TP_Tensor *>(t)); }
TP_Tensor *handle(TensorImpl *p) { return reinterpret_cast<TP_Tensor *>(p); }
const Operator *op_of(const TP_Op *op) { return reinterpret_cast<const Operator *>(op); }

// ---- boxed values across the ABI ----------------------------------------------------------------------------
Value from_abi(const TP_Value &v, const Argument &arg) {
  switch (v.tag) {
    case TP_VALUE_NONE: return Value();
    case TP_VALUE_TENSOR: return Value(Tensor(Ref<TensorImpl>(impl(v.v.tensor))));
    case TP_VALUE_INT:
      if (arg.type == ArgType::Float) return Value::from_double(double(v.v.i));
      if (arg.type == ArgType::Scalar) return Value::from_scalar(Scalar(v.v.i));
      return Value::from_int(v.v.i);
    case TP_VALUE_DOUBLE:
      if (arg.type == ArgType::Scalar) return Value::from_scalar(Scalar(v.v.d));
      return Value::from_double(v.v.d);
    case TP_VALUE_COMPLEX: return Value::from_scalar(Scalar(std::complex<double>(v.v.c.re, v.v.c.im)));
    case TP_VALUE_BOOL: return arg.type == ArgType::Scalar ? Value::from_scalar(Scalar(bool(v.v.i))) : Value::from_bool(v.v.i != 0);
    case TP_VALUE_INT_LIST: return Value::from_ints(std::vector<int64_t>(v.v.ints.data, v.v.ints.data + v.v.ints.len));
    case TP_VALUE_STRING: return Value::from_string(v.v.s ? v.v.s : "");
    case TP_VALUE_DTYPE:
      TP_CHECK(v.v.i >= 0 && v.v.i < kNumScalarTypes, Value, "invalid dtype code ", v.v.i);
      return Value::from_dtype(ScalarType(v.v.i));
    case TP_VALUE_TENSOR_LIST: {
      std::vector<Tensor> ts;
      ts.reserve(size_t(v.v.tensors.len));
      for (int64_t i = 0; i < v.v.tensors.len; ++i) {
        TP_Tensor *t = v.v.tensors.data[i];
        ts.push_back(t ? Tensor(Ref<TensorImpl>(impl(t))) : Tensor());
      }
      return Value::from_tensors(std::move(ts));
    }
    case TP_VALUE_DEVICE: {
      int type = TP_DEVICE_CODE_TYPE(v.v.i);
      TP_CHECK(type >= 0 && type <= TP_DEVICE_PRIVATEUSE1, Value, "invalid device code ", v.v.i);
      return Value::from_device(Device{DeviceType(type), int8_t(TP_DEVICE_CODE_INDEX(v.v.i))});
    }
    case TP_VALUE_GENERATOR: {
      Value g;
      g.tag = Value::Tag::Generator;
      g.generator = static_cast<GeneratorImpl *>(v.v.p);  // only ever a handle TensorPlay gave out
      return g;
    }
  }
  fail(ErrorKind::Type, "argument '", arg.name, "': unknown TP_Value tag ", v.tag);
}

// Values a kernel reads from are borrowed views into `v` (which must outlive the use). A tensor list needs an
// array of handles: `scratch` holds it (one per list argument, so it must outlive the use too).
TP_Value to_abi_borrowed(const Value &v, std::vector<TP_Tensor *> *scratch = nullptr) {
  TP_Value r{};
  switch (v.tag) {
    case Value::Tag::None: r.tag = TP_VALUE_NONE; break;
    case Value::Tag::Tensor: r.tag = TP_VALUE_TENSOR; r.v.tensor = handle(v.tensor.impl()); break;
    case Value::Tag::Int: r.tag = TP_VALUE_INT; r.v.i = v.to_int(); break;
    case Value::Tag::Bool: r.tag = TP_VALUE_BOOL; r.v.i = v.to_bool(); break;
    case Value::Tag::Double: r.tag = TP_VALUE_DOUBLE; r.v.d = v.to_double(); break;
    case Value::Tag::Scalar:
      if (v.scalar.is_complex()) { r.tag = TP_VALUE_COMPLEX; r.v.c.re = v.scalar.c.real(); r.v.c.im = v.scalar.c.imag(); }
      else if (v.scalar.is_floating()) { r.tag = TP_VALUE_DOUBLE; r.v.d = v.scalar.to_double(); }
      else if (v.scalar.is_bool()) { r.tag = TP_VALUE_BOOL; r.v.i = v.scalar.i; }
      else { r.tag = TP_VALUE_INT; r.v.i = v.scalar.i; }
      break;
    case Value::Tag::IntList: r.tag = TP_VALUE_INT_LIST; r.v.ints.data = v.ints.data(); r.v.ints.len = int64_t(v.ints.size()); break;
    case Value::Tag::String: r.tag = TP_VALUE_STRING; r.v.s = v.str.c_str(); break;
    case Value::Tag::DType: r.tag = TP_VALUE_DTYPE; r.v.i = int(v.dtype); break;
    case Value::Tag::Device: r.tag = TP_VALUE_DEVICE; r.v.i = TP_DEVICE_CODE(int(v.device.type), v.device.index); break;
    case Value::Tag::Generator: r.tag = TP_VALUE_GENERATOR; r.v.p = v.generator; break;
    case Value::Tag::TensorList:
      TP_CHECK(scratch, Type, "a tensor list cannot cross the C ABI here");
      scratch->clear();
      for (const Tensor &t : v.tensors) scratch->push_back(t.defined() ? handle(t.impl()) : nullptr);
      r.tag = TP_VALUE_TENSOR_LIST;
      r.v.tensors.data = scratch->data();
      r.v.tensors.len = int64_t(scratch->size());
      break;
  }
  return r;
}

// A tensor list result as a NEW malloc'd array of NEW references (Note [ABI tensor lists]).
TP_Value list_to_abi_owned(const std::vector<Tensor> &ts) {
  TP_Value r{};
  r.tag = TP_VALUE_TENSOR_LIST;
  auto **arr = static_cast<TP_Tensor **>(std::malloc(sizeof(TP_Tensor *) * (ts.size() ? ts.size() : 1)));
  TP_CHECK(arr, Runtime, "out of memory for a tensor list of ", ts.size(), " entries");
  for (size_t i = 0; i < ts.size(); ++i)
    arr[i] = ts[i].defined() ? handle(Ref<TensorImpl>(ts[i].ref()).release()) : nullptr;
  r.v.tensors.data = arr;
  r.v.tensors.len = int64_t(ts.size());
  return r;
}

// Adopt a received tensor-list output: takes the references, frees the array.
Value list_from_abi_owned(TP_Value &o) {
  std::vector<Tensor> ts;
  ts.reserve(size_t(o.v.tensors.len));
  for (int64_t i = 0; i < o.v.tensors.len; ++i)
    ts.push_back(o.v.tensors.data[i] ? Tensor::adopt(impl(o.v.tensors.data[i])) : Tensor());
  std::free(const_cast<TP_Tensor **>(o.v.tensors.data));
  o.tag = TP_VALUE_NONE;
  return Value::from_tensors(std::move(ts));
}

Stack stack_from_abi(const Operator &op, const TP_Value *args, int64_t n) {
  TP_CHECK(n <= op.num_args(), Type, op.name, ": got ", n, " arguments, the schema takes ", op.num_args());
  Stack s;
  s.reserve(op.num_args());
  for (int64_t i = 0; i < n; ++i) s.push_back(from_abi(args[i], op.schema.args[i]));
  fill_defaults(op, s);
  return s;
}

// Results go out as NEW references.
void outs_to_abi(const Operator &op, Stack &s, TP_Value *outs, int64_t n) {
  TP_CHECK(int64_t(s.size()) == n, Runtime, op.name, ": the op returned ", s.size(), " values, caller expected ", n);
  for (int64_t i = 0; i < n; ++i) {
    if (s[i].is_tensor()) {
      outs[i].tag = TP_VALUE_TENSOR;
      outs[i].v.tensor = handle(Ref<TensorImpl>(s[i].tensor.ref()).release());
    } else if (s[i].tag == Value::Tag::TensorList) {
      outs[i] = list_to_abi_owned(s[i].tensors);
    } else {
      outs[i] = to_abi_borrowed(s[i]);
      TP_CHECK(outs[i].tag != TP_VALUE_INT_LIST && outs[i].tag != TP_VALUE_STRING, Type, op.name,
               ": list and string results cannot cross the C ABI");
    }
  }
}

// ---- a kernel registered through the ABI ----------------------------------------------------------------------
struct AbiKernel {
  TP_BoxedKernel fn;
  void *user_data;
};

// Every op TPX records passes through here (its Autograd kernel is an ABI kernel), so the boxed arguments of a
// usual call — a few values, no tensor list — live in arrays on the C stack: no heap allocation per call.
void abi_kernel_trampoline(const Operator &op, Stack &stack, void *user) {
  auto *k = static_cast<AbiKernel *>(user);
  constexpr size_t kInlineArgs = 16, kInlineOuts = 4;
  TP_Value args_inline[kInlineArgs], outs_inline[kInlineOuts];
  std::vector<TP_Value> args_heap, outs_heap;
  std::vector<std::vector<TP_Tensor *>> lists;  // one handle array per tensor-list argument, made on demand
  const size_t nargs = stack.size(), nouts = op.num_returns();
  TP_Value *args = args_inline, *outs = outs_inline;
  if (nargs > kInlineArgs) args = (args_heap.resize(nargs), args_heap.data());
  if (nouts > kInlineOuts) outs = (outs_heap.resize(nouts), outs_heap.data());
  for (size_t i = 0; i < nouts; ++i) outs[i] = TP_Value{};
  for (size_t i = 0; i < nargs; ++i) {
    if (stack[i].tag == Value::Tag::TensorList) {
      if (lists.empty()) lists.resize(nargs);
      args[i] = to_abi_borrowed(stack[i], &lists[i]);
    } else {
      args[i] = to_abi_borrowed(stack[i]);
    }
  }
  clear_error();
  int rc = k->fn(k->user_data, reinterpret_cast<const TP_Op *>(&op), args, int64_t(nargs), outs, int64_t(nouts));
  if (rc != 0) {
    int kind = channel().kind;
    std::string msg = channel().message.empty() ? op.name + ": a kernel registered through the C ABI failed"
                                                : channel().message;
    clear_error();
    throw Error(kind == TP_ERR_NONE ? ErrorKind::Runtime : ErrorKind(kind), msg);
  }
  stack.clear();
  for (size_t i = 0; i < nouts; ++i) {
    TP_Value &o = outs[i];
    if (o.tag == TP_VALUE_TENSOR) stack.push_back(Value(Tensor::adopt(impl(o.v.tensor))));  // takes the NEW ref
    else if (o.tag == TP_VALUE_TENSOR_LIST) stack.push_back(list_from_abi_owned(o));
    else stack.push_back(from_abi(o, Argument{}));
  }
}

// ---- the table's entry points ---------------------------------------------------------------------------------
void tensor_incref(TP_Tensor *t) { if (t) impl(t)->incref(); }
void tensor_decref(TP_Tensor *t) { if (t) impl(t)->decref(); }
int64_t tensor_dim(const TP_Tensor *t) { return impl(t)->dim(); }
const int64_t *tensor_sizes(const TP_Tensor *t) { return impl(t)->sizes.data(); }
const int64_t *tensor_strides(const TP_Tensor *t) { return impl(t)->strides.data(); }
int64_t tensor_storage_offset(const TP_Tensor *t) { return impl(t)->storage_offset; }
int64_t tensor_numel(const TP_Tensor *t) { return impl(t)->numel; }
int tensor_dtype(const TP_Tensor *t) { return int(impl(t)->dtype); }
int tensor_device_type(const TP_Tensor *t) { return int(impl(t)->device.type); }
int tensor_device_index(const TP_Tensor *t) { return impl(t)->device.index; }
void *tensor_data_ptr(const TP_Tensor *t) { return impl(t)->data_ptr(); }
int tensor_requires_grad(const TP_Tensor *t) { return impl(t)->requires_grad; }
int tensor_set_requires_grad(TP_Tensor *t, int flag) {
  return guarded<int>(1, [&] {
    set_requires_grad(*impl(t), flag != 0);
    return 0;
  });
}
int64_t tensor_version(const TP_Tensor *t) { return impl(t)->version->version.load(); }
void tensor_bump_version(TP_Tensor *t) { impl(t)->version->version.fetch_add(1); }

TP_Tensor *tensor_empty(const int64_t *sizes, int64_t ndim, int dtype, int device_type, int device_index) {
  return guarded<TP_Tensor *>(nullptr, [&]() -> TP_Tensor * {
    TP_CHECK(dtype >= 0 && dtype < kNumScalarTypes, Value, "tensor_empty: invalid dtype code ", dtype);
    TP_CHECK(device_type >= 0 && device_type <= TP_DEVICE_PRIVATEUSE1, Value, "tensor_empty: invalid device type ",
             device_type);
    TP_CHECK(ndim >= 0 && (ndim == 0 || sizes), Value, "tensor_empty: invalid ndim ", ndim);
    Tensor t = empty_tensor(Shape(sizes, sizes + ndim), ScalarType(dtype),
                            Device{DeviceType(device_type), int8_t(device_index)});
    return handle(Ref<TensorImpl>(t.ref()).release());
  });
}

TP_Tensor *tensor_from_python(PyObject *obj) {
  return guarded<TP_Tensor *>(nullptr, [&]() -> TP_Tensor * {
    TP_CHECK(is_tensor(nb::handle(obj)), Type, "expected a tensorplay Tensor, got ", Py_TYPE(obj)->tp_name);
    return handle(Ref<TensorImpl>(unwrap(nb::handle(obj)).ref()).release());
  });
}

PyObject *tensor_to_python(TP_Tensor *t) {
  try {
    return wrap(Tensor(Ref<TensorImpl>(impl(t)))).release().ptr();
  } catch (nb::python_error &e) {
    e.restore();
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

const TP_Op *op_find(const char *name) {
  return guarded<const TP_Op *>(nullptr, [&] {
    return reinterpret_cast<const TP_Op *>(find_op(name ? name : ""));
  });
}
const TP_Op *op_define(const char *schema) {
  return guarded<const TP_Op *>(nullptr, [&] {
    return reinterpret_cast<const TP_Op *>(&define_op(schema ? schema : "", "C ABI (op_define)"));
  });
}
const char *op_name(const TP_Op *op) { return op_of(op)->name.c_str(); }
int64_t op_num_args(const TP_Op *op) { return op_of(op)->num_args(); }
int64_t op_num_returns(const TP_Op *op) { return op_of(op)->num_returns(); }

int op_call(const TP_Op *op, const TP_Value *args, int64_t n, TP_Value *outs, int64_t nouts) {
  return guarded<int>(1, [&] {
    Stack s = stack_from_abi(*op_of(op), args, n);
    call(*op_of(op), s);
    outs_to_abi(*op_of(op), s, outs, nouts);
    return 0;
  });
}

// The key of an ABI code (Note [Dispatch key table]); `runtime`: it must be a key a call can carry.
DispatchKey key_of_code(const char *what, int code, bool runtime) {
  DispatchKey k;
  TP_CHECK(key_from_abi_code(code, &k), Value, what, ": invalid dispatch key code ", code, " (P10 knows ",
           dispatch_key_names(), ")");
  TP_CHECK(!runtime || is_runtime_key(k), Value, what, ": ", dispatch_key_name(k),
           " is a kernel slot, not a key a call can carry");
  return k;
}

int op_redispatch(const TP_Op *op, int key, const TP_Value *args, int64_t n, TP_Value *outs, int64_t nouts) {
  return guarded<int>(1, [&] {
    DispatchKey k = key_of_code("op_redispatch", key, true);
    Stack s = stack_from_abi(*op_of(op), args, n);
    redispatch(*op_of(op), k, s);
    outs_to_abi(*op_of(op), s, outs, nouts);
    return 0;
  });
}

int op_register_kernel(const TP_Op *op, int key, TP_BoxedKernel fn, void *user_data, const char *file, int line) {
  return guarded<int>(1, [&] {
    TP_CHECK(op && fn, Value, "op_register_kernel: op and fn must not be NULL");
    DispatchKey slot = key_of_code("op_register_kernel", key, false);
    // Kernels registered through the ABI live for the whole process, like the ops themselves.
    auto *k = new AbiKernel{fn, user_data};
    std::string src = std::string(file ? file : "<C ABI>") + ":" + std::to_string(line);
    register_kernel(*const_cast<Operator *>(op_of(op)), slot, Kernel{&abi_kernel_trampoline, k, src});
    return 0;
  });
}

int op_register_fallback(int key, TP_BoxedKernel fn, void *user_data, const char *file, int line) {
  return guarded<int>(1, [&] {
    TP_CHECK(fn, Value, "op_register_fallback: fn must not be NULL");
    DispatchKey wrapper = key_of_code("op_register_fallback", key, true);
    auto *k = new AbiKernel{fn, user_data};  // lives for the process, like ABI kernels
    std::string src = std::string(file ? file : "<C ABI>") + ":" + std::to_string(line);
    register_fallback(wrapper, Kernel{&abi_kernel_trampoline, k, src});
    return 0;
  });
}

void value_release(TP_Value *v) {
  if (!v) return;
  if (v->tag == TP_VALUE_TENSOR && v->v.tensor) impl(v->v.tensor)->decref();
  if (v->tag == TP_VALUE_TENSOR_LIST) (void)list_from_abi_owned(*v);
  v->tag = TP_VALUE_NONE;
}

const char *op_schema(const TP_Op *op) { return op_of(op)->schema.text.c_str(); }
int op_arg_is_write(const TP_Op *op, int64_t i) {
  const Operator &o = *op_of(op);
  return i >= 0 && i < o.num_args() && o.schema.args[size_t(i)].is_write;
}

TP_Tensor *tensor_view_base(const TP_Tensor *t) { return handle(impl(t)->view_base.get()); }
int tensor_is_inference(const TP_Tensor *t) { return impl(t)->is_inference; }
int tls_inference_mode() { return inference_mode_enabled(); }
void tls_set_inference_mode(int on) { set_inference_mode_enabled(on != 0); }

int cuda_launch(const char *module, const char *kernel, int device, const uint32_t grid[3], const uint32_t block[3],
                uint32_t shared_bytes, void **args) {
  return guarded<int>(1, [&] {
    TP_CHECK(module && kernel && grid && block && args, Value,
             "cuda_launch: module, kernel, grid, block and args must not be NULL");
    cuda::DeviceGuard guard(device);  // checks the driver and the index
    const cuda::CUfunction f = cuda::kernel(device, module, kernel);
    TP_CU(cuLaunchKernel, f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
          cuda::current_stream(device).handle, args, nullptr);
    return 0;
  });
}

TP_Tensor *tensor_shallow_copy(const TP_Tensor *t) {
  const TensorImpl *src = impl(t);
  auto p = Ref<TensorImpl>::make();
  p->storage = src->storage;
  p->dtype = src->dtype;
  p->device = src->device;
  p->version = src->version;  // shared: a later in-place write into the original shows here
  p->is_inference = src->is_inference;
  p->set_geometry(src->sizes, src->strides, src->storage_offset);
  return handle(p.release());
}

void *tensor_autograd_meta(const TP_Tensor *t) { return impl(t)->autograd_meta; }
void tensor_set_autograd_meta(TP_Tensor *t, void *meta, TP_Deleter deleter) {
  TensorImpl *p = impl(t);
  if (p->autograd_meta && p->autograd_meta_deleter) p->autograd_meta_deleter(p->autograd_meta);
  p->autograd_meta = meta;
  p->autograd_meta_deleter = deleter;
}

// A TP_KeySet is a bitset of ABI codes, not of priorities (Note [Dispatch key table]).
TP_KeySet tls_included() { return keyset_to_abi(local_keys().included); }
TP_KeySet tls_excluded() { return keyset_to_abi(local_keys().excluded); }
void tls_set_included(TP_KeySet k) { local_keys().included = keyset_from_abi(k); }
void tls_set_excluded(TP_KeySet k) { local_keys().excluded = keyset_from_abi(k); }

int key_count() {
  int n = 0;
  for (const DispatchKeyInfo &k : kDispatchKeyTable) n = k.abi_code >= n ? k.abi_code + 1 : n;
  return n;
}
const char *key_name(int code) {
  DispatchKey k;
  return key_from_abi_code(code, &k) ? dispatch_key_name(k) : nullptr;
}
int key_find(const char *name) {
  DispatchKey k;
  return name && parse_dispatch_key(name, &k) ? key_info(k).abi_code : -1;
}

const TP_Api g_api = {
    TP_ABI_MAJOR, TP_ABI_MINOR, sizeof(TP_Api),
    set_error, error_message, error_kind, clear_error, raise_python_error,
    tensor_incref, tensor_decref, tensor_dim, tensor_sizes, tensor_strides, tensor_storage_offset, tensor_numel,
    tensor_dtype, tensor_device_type, tensor_device_index, tensor_data_ptr, tensor_requires_grad,
    tensor_set_requires_grad, tensor_version, tensor_bump_version, tensor_empty,
    tensor_from_python, tensor_to_python,
    op_find, op_define, op_name, op_num_args, op_num_returns, op_call, op_redispatch, op_register_kernel,
    tensor_autograd_meta, tensor_set_autograd_meta,
    tls_included, tls_excluded, tls_set_included, tls_set_excluded,
    op_register_fallback, value_release, op_schema, op_arg_is_write, tensor_view_base,
    tensor_is_inference, tls_inference_mode, tls_set_inference_mode,
    cuda_launch,
    tensor_shallow_copy,
    key_count, key_name, key_find,
};

}  // namespace

const TP_Api *abi_table() { return &g_api; }

}  // namespace tp::p10
