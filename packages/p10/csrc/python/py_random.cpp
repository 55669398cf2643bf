// py_random.cpp — the Python `Generator` type over random/GeneratorImpl (a CPU or a CUDA generator), and the
// default CPU generator.
//
// Where it sits: tensorplay_p10/random.py builds manual_seed, seed, get_rng_state, fork_rng … on these; ops
// receive a Generator through their `generator=` argument (python/py_ops.cpp: generator_from_object), and the
// kernels check its device type (Note [Generator devices] in random/generator.h). One Python type serves both
// kinds, as torch.Generator does: `Generator(device=...)` is a factory (nanobind's __new__) that makes a
// CPUGenerator or a CudaGenerator, and every method goes through GeneratorImpl's virtual functions.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "cuda/philox.h"
#include "python/py_tensor.h"
#include "random/cpu_generator.h"

namespace nb = nanobind;

namespace tp::p10 {

static nb::handle g_generator_type;

GeneratorImpl *generator_from_object(nb::handle h) {
  if (!g_generator_type.is_valid() || !PyObject_TypeCheck(h.ptr(), (PyTypeObject *)g_generator_type.ptr())) return nullptr;
  return nb::inst_ptr<GeneratorImpl>(h);
}

static nb::object state_tensor(const GeneratorImpl &g) {
  std::vector<uint8_t> bytes = g.get_state();
  Tensor t = empty_tensor({int64_t(bytes.size())}, ScalarType::UInt8, Device{});
  std::copy(bytes.begin(), bytes.end(), t.data<uint8_t>());
  return wrap(t);
}

static void set_state_from(GeneratorImpl &g, nb::handle state) {
  const Tensor &t = unwrap(state);
  TP_CHECK(t.dtype() == ScalarType::UInt8 && t.is_contiguous() && t.device().is_cpu(), Type,
           "set_state: expected a contiguous uint8 CPU tensor (as returned by get_state()), got dtype ",
           scalar_type_name(t.dtype()), " on ", device_str(t.device()));
  g.set_state(t.data<uint8_t>(), size_t(t.numel()));
}

// Generator(device=None): "cpu" (the default), "cuda", "cuda:1", tp.device(...) or a CUDA ordinal. A CUDA one is
// a (seed, offset) pair of its own, made without touching the driver, like PyTorch's (Note [Generator devices]).
static GeneratorImpl *make_generator(nb::handle device) {
  const Device d = device.is_none() ? Device{} : device_from_object(device);
  if (d.type == DeviceType::CPU) return new CPUGenerator();
  if (d.type == DeviceType::CUDA) return new cuda::CudaGenerator(d.index);
  fail(ErrorKind::Runtime, "Generator: device type '", device_type_name(d.type), "' has no random generator "
       "(use 'cpu' or 'cuda')");
}

void bind_random(nb::module_ &m) {
  auto cls = nb::class_<GeneratorImpl>(m, "Generator", "A source of random numbers: a CPU or CUDA generator.")
      .def(nb::new_([](nb::handle device) { return make_generator(device); }), nb::arg("device") = nb::none())
      .def("manual_seed", [](nb::handle self, nb::int_ seed) {
             // PyTorch takes any Python int and keeps its low 64 bits (negative seeds wrap).
             uint64_t s = PyLong_AsUnsignedLongLongMask(seed.ptr());
             nb::inst_ptr<GeneratorImpl>(self)->set_seed(s);
             return nb::borrow(self);
           }, nb::arg("seed"))
      .def("initial_seed", [](const GeneratorImpl &g) { return g.seed(); })
      .def("seed", [](GeneratorImpl &g) { uint64_t s = nondeterministic_seed(); g.set_seed(s); return s; })
      .def("get_state", [](const GeneratorImpl &g) { return state_tensor(g); })
      .def("set_state", [](nb::handle self, nb::handle state) {
             set_state_from(*nb::inst_ptr<GeneratorImpl>(self), state);
             return nb::borrow(self);
           }, nb::arg("new_state"))
      .def_prop_ro("device", [](const GeneratorImpl &g) { return device_object(g.device()); });
  g_generator_type = cls;
  m.attr("default_generator") =
      nb::cast(static_cast<GeneratorImpl *>(&default_cpu_generator()), nb::rv_policy::reference);
}

}  // namespace tp::p10
