// py_random.cpp — the Python `Generator` type over random/CPUGenerator, and the global seeding functions.
//
// Where it sits: tensorplay_p10/random.py builds manual_seed, seed, get_rng_state, fork_rng … on these; ops
// receive a Generator through their `generator=` argument (python/py_ops.cpp: generator_from_object).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/py_tensor.h"
#include "random/cpu_generator.h"

namespace nb = nanobind;

namespace tp::p10 {

static nb::handle g_generator_type;

void *generator_from_object(nb::handle h) {
  if (!g_generator_type.is_valid() || !PyObject_TypeCheck(h.ptr(), (PyTypeObject *)g_generator_type.ptr())) return nullptr;
  return nb::inst_ptr<CPUGenerator>(h);
}

static nb::object state_tensor(const CPUGenerator &g) {
  std::vector<uint8_t> bytes = g.get_state();
  Tensor t = empty_tensor({int64_t(bytes.size())}, ScalarType::UInt8, Device{});
  std::copy(bytes.begin(), bytes.end(), t.data<uint8_t>());
  return wrap(t);
}

static void set_state_from(CPUGenerator &g, nb::handle state) {
  const Tensor &t = unwrap(state);
  TP_CHECK(t.dtype() == ScalarType::UInt8 && t.is_contiguous() && t.device().is_cpu(), Type,
           "set_state: expected a contiguous uint8 CPU tensor (as returned by get_state()), got dtype ",
           scalar_type_name(t.dtype()));
  g.set_state(t.data<uint8_t>(), size_t(t.numel()));
}

void bind_random(nb::module_ &m) {
  auto cls = nb::class_<CPUGenerator>(m, "Generator", "A source of random numbers (PyTorch's CPU stream).")
      .def("__init__", [](CPUGenerator *g, nb::object device) {
             std::string dev = device.is_none() ? "cpu" : nb::cast<std::string>(nb::str(device));
             TP_CHECK(dev == "cpu", Runtime, "Generator: device '", dev, "' is not supported here (only cpu)");
             new (g) CPUGenerator();
           }, nb::arg("device") = nb::none())
      .def("manual_seed", [](nb::handle self, nb::int_ seed) {
             // PyTorch takes any Python int and keeps its low 64 bits (negative seeds wrap).
             uint64_t s = PyLong_AsUnsignedLongLongMask(seed.ptr());
             nb::inst_ptr<CPUGenerator>(self)->set_seed(s);
             return nb::borrow(self);
           }, nb::arg("seed"))
      .def("initial_seed", [](const CPUGenerator &g) { return g.seed(); })
      .def("seed", [](CPUGenerator &g) { uint64_t s = nondeterministic_seed(); g.set_seed(s); return s; })
      .def("get_state", [](const CPUGenerator &g) { return state_tensor(g); })
      .def("set_state", [](nb::handle self, nb::handle state) {
             set_state_from(*nb::inst_ptr<CPUGenerator>(self), state);
             return nb::borrow(self);
           })
      .def_prop_ro("device", [](const CPUGenerator &) { return device_object(Device{}); });
  g_generator_type = cls;
  m.attr("default_generator") = nb::cast(&default_cpu_generator(), nb::rv_policy::reference);
}

}  // namespace tp::p10
