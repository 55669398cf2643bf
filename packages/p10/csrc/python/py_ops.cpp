// py_ops.cpp — calling any op from Python by its schema, defining ops and kernels from Python, and the
// dispatcher's introspection (tp.ops, tp.explain, thread-local keys).
//
// Where it sits: every `tp.add(...)`, `x + y`, `x.view(...)` ends here: an OpPacket (all overloads of one op
// name) parses the Python arguments against each overload's schema in turn, fills defaults, calls the
// dispatcher and converts the results back. One generic parser instead of a binding per op keeps the bindings
// thin (STYLE.md rule 10) and makes every op — including ones defined later from Python or through the C ABI —
// callable the same way.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"
#include "python/py_tensor.h"

namespace nb = nanobind;

namespace tp::p10 {

GeneratorImpl *generator_from_object(nb::handle h);  // python/py_random.cpp

// Note [Wrapped numbers]
//   A Python number passed where a schema says Tensor becomes a 0-d tensor flagged `is_wrapped_number`. Type
//   promotion ranks such tensors below real tensors (Note [Result type]), so `int_tensor * 2.5` is float32 and
//   `float16_tensor + 1.0` stays float16, exactly like PyTorch.
static Tensor wrap_number(nb::handle obj) {
  Tensor t;
  if (PyBool_Check(obj.ptr())) {
    t = empty_tensor({}, ScalarType::Bool, Device{});
    *t.data<bool>() = obj.ptr() == Py_True;
  } else if (PyLong_Check(obj.ptr())) {
    t = empty_tensor({}, ScalarType::Int64, Device{});
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    TP_CHECK(!overflow, Runtime, "Overflow when unpacking long: ", nb::repr(obj).c_str());
    *t.data<int64_t>() = v;
  } else if (PyFloat_Check(obj.ptr())) {
    t = empty_tensor({}, ScalarType::Float64, Device{});
    *t.data<double>() = PyFloat_AS_DOUBLE(obj.ptr());
  } else {
    Py_complex c = PyComplex_AsCComplex(obj.ptr());
    t = empty_tensor({}, ScalarType::Complex128, Device{});
    *t.data<complex128>() = complex128(c.real, c.imag);
  }
  t->is_wrapped_number = true;
  return t;
}

static bool is_number(nb::handle h) {
  PyObject *o = h.ptr();
  return PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o);  // bool is a subclass of int
}

static bool to_int(nb::handle h, int64_t &out) {
  if (PyBool_Check(h.ptr())) return false;
  if (PyLong_Check(h.ptr())) { out = PyLong_AsLongLong(h.ptr()); return !PyErr_Occurred() || (PyErr_Clear(), false); }
  if (is_tensor(h)) {  // a one-element integer tensor (PyTorch accepts these for int arguments)
    const Tensor &t = unwrap(h);
    if (t.numel() != 1 || !is_integral(t.dtype(), false) || t.device().is_meta()) return false;
    out = nb::cast<int64_t>(h.attr("item")());
    return true;
  }
  if (PyObject_HasAttrString(h.ptr(), "__index__") && !PyFloat_Check(h.ptr())) {
    PyObject *r = PyNumber_Index(h.ptr());
    if (!r) { PyErr_Clear(); return false; }
    out = PyLong_AsLongLong(r);
    Py_DECREF(r);
    return true;
  }
  return false;
}

bool python_to_value(nb::handle obj, const Argument &arg, Value &out, bool no_number_as_tensor) {
  if (obj.is_none()) {
    if (!arg.optional && !(arg.has_default && arg.default_value.is_none())) return false;
    out = Value();
    return true;
  }
  switch (arg.type) {
    case ArgType::Tensor:
      if (is_tensor(obj)) { out = Value(unwrap(obj)); return true; }
      if (!no_number_as_tensor && is_number(obj)) { out = Value(wrap_number(obj)); return true; }
      return false;
    case ArgType::TensorList: {
      if (!PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr())) return false;
      std::vector<Tensor> ts;
      for (nb::handle h : obj) {
        if (h.is_none() && arg.optional_elements) ts.emplace_back();
        else if (is_tensor(h)) ts.push_back(unwrap(h));
        else return false;
      }
      out = Value::from_tensors(std::move(ts));
      return true;
    }
    case ArgType::Int: {
      int64_t v;
      if (!to_int(obj, v)) return false;
      out = Value::from_int(v);
      return true;
    }
    case ArgType::IntList: {
      int64_t v;
      if (to_int(obj, v)) { out = Value::from_ints({v}); return true; }  // `dim=1` for an int[] argument
      if (!PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr())) return false;
      std::vector<int64_t> vs;
      for (nb::handle h : obj) {
        if (!to_int(h, v)) return false;
        vs.push_back(v);
      }
      out = Value::from_ints(std::move(vs));
      return true;
    }
    case ArgType::Float:
      if (PyFloat_Check(obj.ptr()) || (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()))) {
        out = Value::from_double(PyFloat_AsDouble(obj.ptr()));
        return true;
      }
      return false;
    case ArgType::Bool:
      if (!PyBool_Check(obj.ptr())) return false;
      out = Value::from_bool(obj.ptr() == Py_True);
      return true;
    case ArgType::Scalar:
      if (PyBool_Check(obj.ptr())) { out = Value::from_scalar(Scalar(obj.ptr() == Py_True)); return true; }
      if (PyLong_Check(obj.ptr())) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
        if (overflow) return false;
        out = Value::from_scalar(Scalar(int64_t(v)));
        return true;
      }
      if (PyFloat_Check(obj.ptr())) { out = Value::from_scalar(Scalar(PyFloat_AS_DOUBLE(obj.ptr()))); return true; }
      if (PyComplex_Check(obj.ptr())) {
        Py_complex c = PyComplex_AsCComplex(obj.ptr());
        out = Value::from_scalar(Scalar(std::complex<double>(c.real, c.imag)));
        return true;
      }
      if (is_tensor(obj) && unwrap(obj).numel() == 1 && unwrap(obj).dim() == 0) {  // a 0-d tensor as a number
        return python_to_value(obj.attr("item")(), arg, out, no_number_as_tensor);
      }
      return false;
    case ArgType::ScalarType:
      try { out = Value::from_dtype(dtype_from_object(obj)); } catch (const Error &) { return false; }
      return true;
    case ArgType::Device:
      if (!PyUnicode_Check(obj.ptr()) && !PyLong_Check(obj.ptr()) && !PyObject_HasAttrString(obj.ptr(), "type"))
        return false;
      out = Value::from_device(device_from_object(obj));
      return true;
    case ArgType::String:
      if (!PyUnicode_Check(obj.ptr())) return false;
      out = Value::from_string(nb::cast<std::string>(obj));
      return true;
    case ArgType::Generator: {
      GeneratorImpl *g = generator_from_object(obj);
      if (!g) return false;
      out = Value();
      out.tag = Value::Tag::Generator;
      out.generator = g;
      return true;
    }
  }
  return false;
}

nb::object value_to_python(const Value &v) {
  switch (v.tag) {
    case Value::Tag::None: return nb::none();
    case Value::Tag::Tensor: return wrap(v.tensor);
    case Value::Tag::Int: return nb::int_(v.to_int());
    case Value::Tag::Double: return nb::float_(v.to_double());
    case Value::Tag::Bool: return nb::bool_(v.to_bool());
    case Value::Tag::Scalar:
      if (v.scalar.is_floating()) return nb::float_(v.scalar.d);
      if (v.scalar.is_bool()) return nb::bool_(v.scalar.i != 0);
      if (v.scalar.is_complex()) return nb::steal(PyComplex_FromDoubles(v.scalar.c.real(), v.scalar.c.imag()));
      return nb::int_(v.scalar.i);
    case Value::Tag::IntList: return nb::tuple(nb::cast(v.ints));
    case Value::Tag::TensorList: {
      nb::list l;
      for (const Tensor &t : v.tensors) l.append(wrap(t));  // undefined entries (Tensor?[]) become None
      return l;
    }
    case Value::Tag::String: return nb::str(v.str.c_str());
    case Value::Tag::DType: return dtype_object(v.dtype);
    case Value::Tag::Device: return device_object(v.device);
    case Value::Tag::Generator: return nb::none();
  }
  return nb::none();
}

// A call's positional arguments: the tensor a method is bound to (Note [Methods without binding]), if any,
// then the arguments as written.
struct Positional {
  PyObject *self = nullptr;
  nb::args args;
  size_t size() const { return args.size() + (self ? 1 : 0); }
  nb::handle operator[](size_t i) const { return self ? (i == 0 ? nb::handle(self) : args[i - 1]) : args[i]; }
};

// Try to bind (args, kwargs) to one overload; on failure `why` says what did not fit.
// `numbers_as_tensors`: may a Python number stand for a Tensor argument (other than the first)? OpPacket tries
// every overload without that first, so `x.scatter_(1, idx, 5.0)` picks the overload taking a Scalar value.
static bool bind_arguments(const Operator &op, const Positional &args, nb::kwargs kwargs, Stack &stack,
                           std::string &why, bool numbers_as_tensors = true) {
  const auto &params = op.schema.args;
  size_t npos = 0;
  while (npos < params.size() && !params[npos].kwarg_only) ++npos;
  if (args.size() > npos) {
    why = "takes " + std::to_string(npos) + " positional arguments but " + std::to_string(args.size()) + " were given";
    return false;
  }
  size_t used_kwargs = 0;
  stack.clear();
  stack.reserve(params.size());
  bool first_tensor = true;
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument &p = params[i];
    nb::handle obj;
    if (i < args.size()) obj = args[i];
    else if (kwargs && PyDict_GetItemString(kwargs.ptr(), p.name.c_str())) {
      obj = PyDict_GetItemString(kwargs.ptr(), p.name.c_str());
      ++used_kwargs;
    }
    Value v;
    if (!obj.is_valid()) {
      if (p.has_default) v = p.default_value;
      else if (p.optional) v = Value();
      else { why = "missing required argument '" + p.name + "'"; return false; }
    } else if (!python_to_value(obj, p, v, !numbers_as_tensors || (first_tensor && p.type == ArgType::Tensor))) {
      why = "argument '" + p.name + "' must be " + p.text.substr(0, p.text.find(' ')) + ", not " +
            Py_TYPE(obj.ptr())->tp_name;
      return false;
    }
    if (p.type == ArgType::Tensor) first_tensor = false;
    stack.push_back(std::move(v));
  }
  if (kwargs && used_kwargs != nb::len(kwargs)) {
    for (auto [k, _] : kwargs) {
      std::string name = nb::cast<std::string>(k);
      bool known = false;
      for (const Argument &p : params) known |= p.name == name;
      if (!known) { why = "got an unexpected keyword argument '" + name + "'"; return false; }
    }
  }
  return true;
}

// Results whose schema names them — `-> (Tensor values, Tensor indices)` — come back as a named tuple,
// `tensorplay.return_types.<op>`, like PyTorch's torch.return_types; the type is made once per op name.
static nb::object return_type(const Operator &op) {
  static nb::dict *types = new nb::dict();  // leaked: the types live as long as the ops
  nb::str key(op.schema.name.c_str());
  if (types->contains(key)) return (*types)[key];
  nb::list fields;
  for (const Argument &r : op.schema.returns) fields.append(nb::str(r.name.c_str()));
  nb::object cls = nb::module_::import_("tensorplay_p10.return_types").attr("_make")(key, fields);
  (*types)[key] = cls;
  return cls;
}

static nb::object results_to_python(const Operator &op, Stack &stack) {
  if (stack.size() == 1) return value_to_python(stack[0]);
  nb::list items;
  for (const Value &v : stack) items.append(value_to_python(v));
  bool named = !op.schema.returns.empty();
  for (const Argument &r : op.schema.returns) named = named && !r.name.empty();
  return named ? return_type(op)(*items) : nb::object(nb::tuple(items));
}

// Note [Methods without binding]
//   `x.exp()` must cost no more than `tp.exp(x)`. Tensor keeps each method's packet as a class attribute
//   (ops.py installs it on first use), and a packet is a descriptor: `x.exp` gives a BoundOp holding the
//   packet and x, and its call passes x as the first positional argument without building a new tuple, a
//   functools.partial or a closure. `Tensor.exp` (no instance) is the packet itself, like a plain function.

// All overloads of one op name, callable from Python. The overload list is the registry's own vector
// (stable: the registry never erases, and unordered_map keeps its values in place), so an overload defined
// after the packet was made is seen by it; `own` holds the one exact overload of a packet like "add.out".
struct OpPacket {
  std::string name;
  const std::vector<Operator *> *overloads = nullptr;
  std::vector<Operator *> own;

  nb::object call(const Positional &args, nb::kwargs kwargs) const {
    Stack stack;
    std::string why, all_why;
    // Two passes: exact matches first, then numbers allowed where a schema says Tensor (Note [Wrapped numbers]).
    for (bool numbers_as_tensors : {false, true}) {
      for (Operator *op : *overloads) {
        if (bind_arguments(*op, args, kwargs, stack, why, numbers_as_tensors)) {
          ::tp::p10::call(*op, stack);
          return results_to_python(*op, stack);
        }
        if (numbers_as_tensors) all_why += "\n * " + op->schema.text + "\n      (" + why + ")";
      }
    }
    fail(ErrorKind::Type, name, "() received an invalid combination of arguments, expected one of:", all_why);
  }
};

struct BoundOp {
  nb::object packet;  // keeps `op` alive
  const OpPacket *op;
  nb::object self;
};

// One packet object per name, made on first use, so `tp.exp is tp.ops.exp` and every cache agrees.
static nb::object packet_object(const std::string &name) {
  static nb::dict *packets = new nb::dict();  // leaked: packets live as long as the ops
  nb::str key(name.c_str());
  if (PyObject *hit = PyDict_GetItemWithError(packets->ptr(), key.ptr())) return nb::borrow(hit);
  OpPacket p{name, nullptr, {}};
  if (const auto &ovs = find_overloads(name); !ovs.empty()) p.overloads = &ovs;
  else if (Operator *op = find_op(name)) p.own = {op};  // "add.out": one exact overload
  TP_CHECK(p.overloads || !p.own.empty(), NotImplemented, "no op named '", name,
           "' is registered (see tensorplay.ops.list())");
  nb::object obj = nb::cast(std::move(p), nb::rv_policy::move);
  OpPacket &stored = nb::cast<OpPacket &>(obj);
  if (!stored.overloads) stored.overloads = &stored.own;
  nb::str short_name(name.substr(name.rfind(':') + 1).c_str());  // what help() and inspect print
  obj.attr("__name__") = short_name;
  obj.attr("__qualname__") = short_name;
  (*packets)[key] = obj;
  return obj;
}

// tp_descr_get of OpPacket (Note [Methods without binding]).
static PyObject *packet_descr_get(PyObject *self, PyObject *obj, PyObject *) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  try {
    nb::object packet = nb::borrow(self);
    const OpPacket *op = &nb::cast<const OpPacket &>(packet);
    return nb::cast(BoundOp{packet, op, nb::borrow(obj)}, nb::rv_policy::move).release().ptr();
  } catch (nb::python_error &e) {
    e.restore();
    return nullptr;
  }
}
static PyType_Slot packet_slots[] = {{Py_tp_descr_get, (void *)packet_descr_get}, {0, nullptr}};

// ---- schemas as Python data (tp.ops.info, OpPacket.parsed, _parse_schema) -----------------------------------
static nb::dict argument_dict(const Argument &a) {
  nb::dict d;
  d["name"] = a.name;
  d["type"] = a.type_text();
  d["has_default"] = a.has_default;
  d["default"] = a.has_default ? value_to_python(a.default_value) : nb::none();
  d["kwarg_only"] = a.kwarg_only;
  d["alias"] = a.alias_set.empty() ? nb::none() : nb::object(nb::str(a.alias_set.c_str()));
  d["alias_after"] = a.alias_after.empty() ? nb::none() : nb::object(nb::str(a.alias_after.c_str()));
  d["is_write"] = a.is_write;
  return d;
}

static nb::dict schema_dict(const Schema &s) {
  nb::list args, rets;
  for (const Argument &a : s.args) args.append(argument_dict(a));
  for (const Argument &r : s.returns) rets.append(argument_dict(r));
  nb::dict d;
  d["name"] = s.base_name();
  d["overload"] = s.overload;
  d["arguments"] = args;
  d["returns"] = rets;
  d["is_view"] = s.is_view_op();
  d["schema"] = s.text;
  return d;
}

// The Python half of an op's surface (signature, docstring) is built in tensorplay_p10/ops.py.
static nb::object ops_hook(const char *fn, nb::handle packet, bool method) {
  return nb::module_::import_("tensorplay_p10.ops").attr(fn)(packet, method);
}

// ---- kernels written in Python ------------------------------------------------------------------------------
static void python_kernel(const Operator &op, Stack &stack, void *user) {
  nb::gil_scoped_acquire gil;
  nb::handle fn((PyObject *)user);
  nb::list pos;
  nb::dict kw;
  for (size_t i = 0; i < stack.size(); ++i) {
    nb::object v = value_to_python(stack[i]);
    if (op.schema.args[i].kwarg_only) kw[op.schema.args[i].name.c_str()] = v;
    else pos.append(v);
  }
  nb::object r = fn(*nb::tuple(pos), **kw);
  stack.clear();
  const auto &rets = op.schema.returns;
  auto push = [&](nb::handle h, const Argument &ret) {
    Value v;
    TP_CHECK(python_to_value(h, ret, v, true), Type, op.name, ": the Python kernel returned ",
             Py_TYPE(h.ptr())->tp_name, " where the schema says ", arg_type_name(ret.type));
    stack.push_back(std::move(v));
  };
  if (rets.size() == 1) push(r, rets[0]);
  else {
    TP_CHECK(PyTuple_Check(r.ptr()) && nb::len(r) == rets.size(), Type, op.name, ": the Python kernel must return a ",
             rets.size(), "-tuple");
    for (size_t i = 0; i < rets.size(); ++i) push(r[i], rets[i]);
  }
}

static std::string python_source(nb::handle fn) {
  try {
    nb::object code = fn.attr("__code__");
    return nb::cast<std::string>(code.attr("co_filename")) + ":" + std::to_string(nb::cast<int>(code.attr("co_firstlineno")));
  } catch (...) {
    return "<python>";
  }
}

static DispatchKey key_from_name(const std::string &name) {
  DispatchKey k;
  TP_CHECK(parse_dispatch_key(name, &k), Value, "unknown dispatch key '", name, "' (expected one of ",
           dispatch_key_names(), ")");
  return k;
}

// A key a call's key set can hold (not a kernel slot); `what` names the caller for the error.
static DispatchKey runtime_key_from_name(const std::string &name, const std::string &what) {
  DispatchKey k = key_from_name(name);
  TP_CHECK(is_runtime_key(k), Value, what, ": '", name, "' is a kernel slot, not a key a call can carry (",
           "runtime keys: ", kRuntimeKeys.str(), ")");
  return k;
}

static const char *kind_name(KeyKind kind) {
  switch (kind) {
    case KeyKind::Backend: return "backend";
    case KeyKind::Wrapper: return "wrapper";
    case KeyKind::Slot: return "slot";
  }
  return "?";
}

void bind_ops(nb::module_ &m) {
  nb::class_<OpPacket>(m, "OpPacket", nb::type_slots(packet_slots), nb::dynamic_attr())
      .def("__call__", [](const OpPacket &p, nb::args args, nb::kwargs kwargs) {
        return p.call(Positional{nullptr, args}, kwargs);
      })
      .def_ro("name", &OpPacket::name)
      .def_prop_ro("schemas", [](const OpPacket &p) {
        std::vector<std::string> v;
        for (auto *op : *p.overloads) v.push_back(op->schema.text);
        return v;
      })
      .def_prop_ro("parsed", [](const OpPacket &p) {
        nb::list l;
        for (auto *op : *p.overloads) l.append(schema_dict(op->schema));
        return l;
      })
      .def_prop_ro("__signature__", [](const OpPacket &p) { return ops_hook("_signature", nb::find(&p), false); })
      .def_prop_ro("__doc__", [](const OpPacket &p) { return ops_hook("_doc", nb::find(&p), false); })
      .def("__repr__", [](const OpPacket &p) { return "<op '" + p.name + "'>"; });

  nb::class_<BoundOp>(m, "BoundOp")
      .def("__call__", [](const BoundOp &b, nb::args args, nb::kwargs kwargs) {
        return b.op->call(Positional{b.self.ptr(), args}, kwargs);
      })
      .def_ro("__self__", &BoundOp::self)
      .def_ro("__func__", &BoundOp::packet)
      .def("__getattr__", [](const BoundOp &b, const std::string &attr) -> nb::object {
        if (attr == "__name__" || attr == "__qualname__") return b.packet.attr("__name__");
        throw nb::attribute_error(attr.c_str());
      })
      .def_prop_ro("__signature__", [](const BoundOp &b) { return ops_hook("_signature", b.packet, true); })
      .def_prop_ro("__doc__", [](const BoundOp &b) { return ops_hook("_doc", b.packet, true); })
      .def("__repr__", [](const BoundOp &b) { return "<bound op '" + b.op->name + "' of a Tensor>"; });
  // Py_TPFLAGS_METHOD_DESCRIPTOR: CPython may call packet(x, ...) for `x.exp(...)` without making a BoundOp
  // (its method-call fast path, where the instance's type allows it); the flag promises they are the same.
  ((PyTypeObject *)nb::type<OpPacket>().ptr())->tp_flags |= Py_TPFLAGS_METHOD_DESCRIPTOR;

  m.def("_op", &packet_object, nb::arg("name"));
  m.def("_parse_schema", [](const std::string &text) { return schema_dict(parse_schema(text)); }, nb::arg("schema"));
  m.def("_op_names", [] {
    std::vector<std::string> names;
    for (Operator *op : all_ops()) names.push_back(op->name);
    return names;
  });
  m.def("_op_info", [](const std::string &name) {
    Operator *op = find_op(name);
    TP_CHECK(op != nullptr, Value, "no op named '", name, "'");
    nb::dict kernels;
    for (int k = 0; k < kNumSlots; ++k)
      if (op->kernels[k].defined()) kernels[dispatch_key_name(DispatchKey(k))] = op->kernels[k].source;
    nb::dict d;
    d["name"] = op->name;
    d["schema"] = op->schema.text;
    d["defined_at"] = op->defined_at;
    d["kernels"] = kernels;
    nb::dict parsed = schema_dict(op->schema);
    for (const char *k : {"overload", "arguments", "returns", "is_view"}) d[k] = parsed[k];
    return d;
  });
  m.def("_define", [](const std::string &schema, const std::string &where) { return define_op(schema, where).name; });
  m.def("_impl", [](const std::string &name, const std::string &key, nb::handle fn) {
    Operator *op = find_op(name);
    TP_CHECK(op != nullptr, Value, "impl: no op named '", name, "' (define it first)");
    fn.inc_ref();  // kept for the life of the process, like the op
    register_kernel(*op, key_from_name(key), Kernel{&python_kernel, fn.ptr(), python_source(fn)});
  });
  m.def("_impl_fallback", [](const std::string &key, nb::handle fn) {
    fn.inc_ref();
    register_fallback(key_from_name(key), Kernel{&python_kernel, fn.ptr(), python_source(fn)});
  });
  m.def("_redispatch", [](const std::string &name, const std::string &key, nb::args args, nb::kwargs kwargs) {
    Operator *op = find_op(name);
    TP_CHECK(op != nullptr, Value, "redispatch: no op named '", name, "'");
    Stack stack;
    std::string why;
    TP_CHECK(bind_arguments(*op, Positional{nullptr, args}, kwargs, stack, why), Type, name, "(): ", why);
    redispatch(*op, runtime_key_from_name(key, "redispatch"), stack);
    return results_to_python(*op, stack);
  });

  m.def("_broadcast_shapes", [](std::vector<std::vector<int64_t>> shapes) {
    Shape out;
    for (const auto &s : shapes) out = broadcast_shapes(out, s, "broadcast_shapes");
    return out;
  });
  m.def("_wrapped_number", [](nb::handle x) {
    TP_CHECK(is_number(x), Type, "expected a Python number, got ", Py_TYPE(x.ptr())->tp_name);
    return wrap(wrap_number(x));
  });
  m.def("_result_type", [](nb::handle a, nb::handle b) {
    std::vector<Tensor> operands;
    for (nb::handle h : {a, b}) {
      TP_CHECK(is_tensor(h) || is_number(h), Type, "result_type(): expected Tensors or Python numbers, got ",
               Py_TYPE(h.ptr())->tp_name);
      operands.push_back(is_tensor(h) ? unwrap(h) : wrap_number(h));
    }
    return dtype_object(result_type(operands));
  });

  // dispatch keys (Note [Dispatch key table]) and thread-local sets. Python sees internal (priority) bits; only
  // the C ABI speaks in TP_KEY_* codes, and _keyset_to_abi / _keyset_from_abi expose that translation to tests.
  m.def("_dispatch_keys", [] {
    nb::list rows;
    for (int i = 0; i < kNumSlots; ++i) {
      const DispatchKeyInfo &k = kDispatchKeyTable[i];
      nb::dict d;
      d["name"] = k.name;
      d["priority"] = is_runtime_key(DispatchKey(i)) ? nb::object(nb::int_(i)) : nb::none();
      d["abi_code"] = k.abi_code;
      d["abi_name"] = k.abi_name;
      d["kind"] = kind_name(k.kind);
      d["doc"] = k.doc;
      rows.append(d);
    }
    return rows;
  }, "The dispatch key table, lowest priority first: one dict per row of dispatch_keys.def.");
  m.def("_key_masks", [] {
    nb::dict d;
    d["backend"] = kBackendKeys.bits;
    d["wrapper"] = kWrapperKeys.bits;
    d["runtime"] = kRuntimeKeys.bits;
    return d;
  });
  m.def("_key_bit", [](const std::string &name, const std::string &what) {
    return KeySet(runtime_key_from_name(name, what)).bits;
  }, nb::arg("name"), nb::arg("what") = "dispatch key set");
  m.def("_keys_at_or_above", [](const std::string &name) {
    return KeySet::at_or_above(runtime_key_from_name(name, "at_or_above")).bits;
  });
  m.def("_keyset_str", [](uint64_t bits) { return KeySet(bits).str(); });
  m.def("_keyset_to_abi", [](uint64_t bits) { return keyset_to_abi(KeySet(bits)); });
  m.def("_keyset_from_abi", [](TP_KeySet bits) { return keyset_from_abi(bits).bits; });
  m.def("_tls_included", [] { return local_keys().included.bits; });
  m.def("_tls_excluded", [] { return local_keys().excluded.bits; });
  m.def("_set_tls_included", [](uint64_t bits) { local_keys().included = KeySet(bits) & kRuntimeKeys; });
  m.def("_set_tls_excluded", [](uint64_t bits) { local_keys().excluded = KeySet(bits) & kRuntimeKeys; });

  // tracing for tp.explain
  m.def("_trace_begin", [] { take_trace(); set_trace_collect(true); });
  m.def("_trace_end", [] {
    set_trace_collect(false);
    nb::list out;
    for (auto &r : take_trace()) out.append(nb::make_tuple(r.op, r.keys, r.chosen, r.source, r.depth, r.unboxed));
    return out;
  });
  m.def("_set_trace_print", [](bool on) { set_trace_print(on); });
}

}  // namespace tp::p10
