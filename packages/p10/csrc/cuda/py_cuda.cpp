// py_cuda.cpp — tensorplay_p10._C._cuda: the thin bindings under the tp.cuda Python package.
//
// Where it sits: tensorplay_p10/cuda/*.py wraps these with PyTorch's names, docstrings and argument handling;
// nothing here has logic of its own. Streams and events cross as integers (their driver handles), owned by
// the Python Stream and Event objects. Also the OutOfMemoryError exception and _TestAllocator, the caching
// allocator over host memory that lets the allocator's tests run without a GPU.
#include <cstdlib>
#include <algorithm>
#include <map>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "cuda/graphs.h"
#include "cuda/launch.h"
#include "cuda/memory.h"
#include "cuda/philox.h"
#include "python/py_tensor.h"

namespace nb = nanobind;

namespace tp::p10 {
namespace cuda {
namespace {

PyObject *g_oom_class = nullptr;  // tp.cuda.OutOfMemoryError

CUstream as_stream(uintptr_t h) { return reinterpret_cast<CUstream>(h); }
CUevent as_event(uintptr_t h) { return reinterpret_cast<CUevent>(h); }

nb::dict stats_dict(const MemoryStats &s) {
  nb::dict d;
  auto put = [&d](const char *name, const Stat &st) {
    const std::string base = name;
    d[(base + ".all.current").c_str()] = st.current;
    d[(base + ".all.peak").c_str()] = st.peak;
    d[(base + ".all.allocated").c_str()] = st.allocated;
    d[(base + ".all.freed").c_str()] = st.freed;
  };
  put("allocated_bytes", s.allocated_bytes);
  put("reserved_bytes", s.reserved_bytes);
  put("active_bytes", s.active_bytes);
  put("requested_bytes", s.requested_bytes);
  put("allocation", s.allocation);
  put("segment", s.segment);
  put("active", s.active);
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  return d;
}

nb::dict pool_stats_dict(const PoolStats &s) {
  nb::dict d;
  d["reserved_bytes"] = s.reserved_bytes;
  d["allocated_bytes"] = s.allocated_bytes;
  d["segments"] = s.segments;
  d["use_count"] = s.use_count;
  return d;
}

// Host memory with a capacity, and events that complete when the test says so: the allocator's logic, testable
// on any machine.
struct HostMemory final : RawMemory {
  size_t capacity, used = 0;
  std::map<void *, size_t> blocks;
  std::map<uintptr_t, bool> events;  // id -> done
  uintptr_t next_event = 1;
  explicit HostMemory(size_t cap) : capacity(cap) {}
  ~HostMemory() override {
    for (auto &[p, n] : blocks) std::free(p);
  }
  void *alloc(size_t bytes, int) override {
    if (used + bytes > capacity) return nullptr;
    void *p = std::malloc(bytes);
    if (p) { used += bytes; blocks[p] = bytes; }
    return p;
  }
  void free(void *p, int) override {
    used -= blocks[p];
    blocks.erase(p);
    std::free(p);
  }
  void mem_info(int, size_t *free_bytes, size_t *total_bytes) override {
    *free_bytes = capacity - used;
    *total_bytes = capacity;
  }
  void *record_event(int, uintptr_t) override {
    events[next_event] = false;
    return reinterpret_cast<void *>(next_event++);
  }
  bool event_done(void *e) override { return events[reinterpret_cast<uintptr_t>(e)]; }
  void destroy_event(void *e) override { events.erase(reinterpret_cast<uintptr_t>(e)); }
};

struct TestAllocator {
  HostMemory raw;
  CachingAllocator alloc;
  explicit TestAllocator(size_t capacity) : raw(capacity), alloc(&raw) {}
};

}  // namespace
}  // namespace cuda

void bind_cublas(nb::module_ &m);    // cuda/py_cublas.cpp
void bind_cusolver(nb::module_ &m);  // cuda/py_cusolver.cpp

void bind_cuda(nb::module_ &parent) {
  using namespace cuda;
  nb::module_ m = parent.def_submodule("_cuda", "CUDA runtime bindings; use tensorplay_p10.cuda.");
  // OutOfMemoryError is a Python class (tensorplay_p10/cuda/__init__.py) handed over at import; until then an
  // out-of-memory error is a plain RuntimeError. Registered after module.cpp's translator, so tried first.
  m.def("_set_oom_class", [](nb::handle cls) {
    Py_XINCREF(cls.ptr());
    g_oom_class = cls.ptr();
  });
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const OutOfMemoryError &e) {
      PyErr_SetString(g_oom_class ? g_oom_class : PyExc_RuntimeError, e.what());
    }
  });

  m.def("_is_available", &cuda_available);
  m.def("_unavailable_reason", &cuda_unavailable_reason);
  m.def("_load_driver", [](const std::string &path) {
    DriverApi api = load_driver(path);  // a separate table: probing never replaces the process-wide driver
    return api.version;
  });
  m.def("_driver_version", [] { return driver().version; });
  m.def("device_count", &device_count);
  m.def("current_device", &current_device);
  m.def("set_device", &set_device);
  m.def("synchronize", &synchronize);
  m.def("_device_properties", [](int i) {
    const DeviceProperties &p = properties(i);
    nb::dict d;
    d["name"] = p.name;
    d["major"] = p.major;
    d["minor"] = p.minor;
    d["total_memory"] = p.total_memory;
    d["multi_processor_count"] = p.multi_processor_count;
    d["max_threads_per_block"] = p.max_threads_per_block;
    d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
    d["warp_size"] = p.warp_size;
    d["regs_per_multiprocessor"] = p.regs_per_multiprocessor;
    d["L2_cache_size"] = p.l2_cache_size;
    d["shared_memory_per_block"] = p.shared_memory_per_block;
    d["shared_memory_per_multiprocessor"] = p.shared_memory_per_multiprocessor;
    d["is_integrated"] = p.is_integrated;
    d["clock_rate"] = p.clock_rate_khz;
    d["memory_clock_rate"] = p.memory_clock_rate_khz;
    d["memory_bus_width"] = p.memory_bus_width;
    d["pci_bus_id"] = p.pci_bus_id;
    d["pci_device_id"] = p.pci_device_id;
    return d;
  });

  // ---- streams and events (handles as integers) -------------------------------------------------------------
  m.def("_stream_create", [](int device, int priority) {
    DeviceGuard g(resolve_index(device, "Stream"));
    CUstream s = nullptr;
    TP_CU(cuStreamCreateWithPriority, &s, 1u /* CU_STREAM_NON_BLOCKING, as PyTorch's streams */, priority);
    return reinterpret_cast<uintptr_t>(s);
  });
  m.def("_stream_destroy", [](uintptr_t s, int device) {
    DeviceGuard g(device);
    driver().cuStreamDestroy(as_stream(s));
  });
  m.def("_stream_synchronize", [](uintptr_t s, int device) {
    DeviceGuard g(device);
    TP_CU(cuStreamSynchronize, as_stream(s));
  });
  m.def("_stream_query", [](uintptr_t s, int device) {
    DeviceGuard g(device);
    CUresult r = driver().cuStreamQuery(as_stream(s));
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuStreamQuery");
    return true;
  });
  m.def("_stream_wait_event", [](uintptr_t s, uintptr_t e, int device) {
    DeviceGuard g(device);
    TP_CU(cuStreamWaitEvent, as_stream(s), as_event(e), 0u);
  });
  m.def("_current_stream", [](int device) { return reinterpret_cast<uintptr_t>(current_stream(device).handle); });
  m.def("_set_current_stream", [](int device, uintptr_t s) { set_current_stream(Stream{device, as_stream(s)}); });
  m.def("_event_create", [](int device, bool timing, bool blocking) {
    DeviceGuard g(resolve_index(device, "Event"));
    CUevent e = nullptr;
    TP_CU(cuEventCreate, &e, (timing ? 0u : 2u) | (blocking ? 1u : 0u));  // DISABLE_TIMING = 2, BLOCKING_SYNC = 1
    return reinterpret_cast<uintptr_t>(e);
  });
  m.def("_event_destroy", [](uintptr_t e, int device) {
    DeviceGuard g(device);
    driver().cuEventDestroy(as_event(e));
  });
  m.def("_event_record", [](uintptr_t e, uintptr_t s, int device) {
    DeviceGuard g(device);
    TP_CU(cuEventRecord, as_event(e), as_stream(s));
  });
  m.def("_event_synchronize", [](uintptr_t e, int device) {
    DeviceGuard g(device);
    TP_CU(cuEventSynchronize, as_event(e));
  });
  m.def("_event_query", [](uintptr_t e, int device) {
    DeviceGuard g(device);
    CUresult r = driver().cuEventQuery(as_event(e));
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
  });
  m.def("_event_elapsed_time", [](uintptr_t a, uintptr_t b, int device) {
    DeviceGuard g(device);
    float ms = 0;
    TP_CU(cuEventElapsedTime, &ms, as_event(a), as_event(b));
    return ms;
  });

  // ---- memory -------------------------------------------------------------------------------------------------
  m.def("_memory_stats", [](int device) { return stats_dict(device_allocator().stats(resolve_index(device))); });
  m.def("_reset_peak_memory_stats", [](int device) { device_allocator().reset_peak_stats(resolve_index(device)); });
  m.def("_reset_accumulated_memory_stats",
        [](int device) { device_allocator().reset_accumulated_stats(resolve_index(device)); });
  m.def("_empty_cache", [] {
    if (cuda_available()) device_allocator().empty_cache();
  });
  m.def("_mem_get_info", [](int device) {
    size_t f = 0, t = 0;
    mem_get_info(device, &f, &t);
    return nb::make_tuple(f, t);
  });
  m.def("_record_stream", [](nb::handle tensor, uintptr_t s) {
    const Tensor &t = unwrap(tensor);
    TP_CHECK(t.device().type == DeviceType::CUDA, Runtime, "record_stream: expected a CUDA tensor, got one on ",
             device_str(t.device()));
    device_allocator().record_stream(t->storage->data, s);
  });

  // ---- the Philox generators (cuda/philox.h); tensorplay_p10/cuda/random.py wraps them --------------------------
  m.def("_rng_manual_seed_all", [](nb::int_ seed) { manual_seed_all(PyLong_AsUnsignedLongLongMask(seed.ptr())); });
  // tp.cuda.default_generators[i]: the device's default generator as a tp.Generator (never destroyed).
  m.def("_rng_default_generator", [](int device) {
    return nb::cast(static_cast<GeneratorImpl *>(&default_cuda_generator(resolve_index(device, "default_generators"))),
                    nb::rv_policy::reference);
  });
  m.def("_rng_manual_seed", [](int device, nb::int_ seed) {
    default_cuda_generator(resolve_index(device, "manual_seed")).set_seed(PyLong_AsUnsignedLongLongMask(seed.ptr()));
  });
  m.def("_rng_initial_seed", [](int device) { return default_cuda_generator(resolve_index(device, "initial_seed")).seed(); });
  m.def("_rng_offset", [](int device) { return default_cuda_generator(resolve_index(device, "get_rng_state")).offset(); });
  m.def("_rng_get_state", [](int device) {
    std::vector<uint8_t> bytes = default_cuda_generator(resolve_index(device, "get_rng_state")).get_state();
    Tensor t = empty_tensor({int64_t(bytes.size())}, ScalarType::UInt8, Device{});
    std::copy(bytes.begin(), bytes.end(), t.data<uint8_t>());
    return wrap(t);
  });
  m.def("_rng_set_state", [](int device, nb::handle state) {
    const Tensor &t = unwrap(state);
    TP_CHECK(t.dtype() == ScalarType::UInt8 && t.is_contiguous() && t.device().is_cpu(), Type,
             "set_rng_state: expected a contiguous uint8 CPU tensor (as returned by tp.cuda.get_rng_state()), got "
             "dtype ", scalar_type_name(t.dtype()), " on ", device_str(t.device()));
    default_cuda_generator(resolve_index(device, "set_rng_state")).set_state(t.data<uint8_t>(), size_t(t.numel()));
  });

  // ---- CUDA graphs (cuda/graphs.h); tensorplay_p10/cuda/graphs.py wraps them -----------------------------------
  nb::class_<CudaGraph>(m, "_Graph", "A CUDA graph: stream capture and replay (tp.cuda.CUDAGraph).")
      .def(nb::init<>())
      .def("capture_begin", [](CudaGraph &g, uint64_t p0, uint64_t p1, int mode) { g.capture_begin({p0, p1}, mode); })
      .def("capture_end", &CudaGraph::capture_end)
      .def("replay", &CudaGraph::replay)
      .def("reset", &CudaGraph::reset)
      .def("pool", [](const CudaGraph &g) { return nb::make_tuple(g.pool().first, g.pool().second); });
  m.def("_graph_pool_handle", [] {
    const PoolId id = graph_pool_handle();
    return nb::make_tuple(id.first, id.second);
  });
  m.def("_check_not_capturing", [](const std::string &what) { check_not_capturing(what.c_str()); });
  m.def("_is_current_stream_capturing", &current_stream_capturing);
  m.def("_pool_stats", [](int device, uint64_t p0, uint64_t p1) {
    return pool_stats_dict(device_allocator().pool_stats(resolve_index(device), {p0, p1}));
  });

  // ---- kernels --------------------------------------------------------------------------------------------------
  m.def("_set_module_provider", [](nb::callable fn) {
    // Called from C++ ops (with or without the GIL held): take it, call Python, copy the bytes out.
    nb::object keep = fn;
    // A template module (Note [Template kernels]) passes its name expressions too and gets (image, lowered
    // names) back; a provider that answers with bytes alone (a test's stand-in image) keeps the expressions.
    set_module_provider([keep](const std::string &module, const std::vector<std::string> &names, int major,
                               int minor) -> ModuleImage {
      nb::gil_scoped_acquire gil;
      nb::object r = names.empty() ? keep(module, major, minor) : keep(module, major, minor, names);
      ModuleImage out;
      if (nb::isinstance<nb::bytes>(r)) {
        out.lowered = names;
      } else {
        out.lowered = nb::cast<std::vector<std::string>>(r[1]);
        r = r[0];
      }
      nb::bytes b = nb::cast<nb::bytes>(r);
      out.image.assign(b.c_str(), b.size());
      return out;
    });
  });
  m.def("_template_modules", [] {
    nb::dict d;
    for (const auto &[module, names] : template_modules()) d[nb::str(module.c_str())] = nb::cast(names);
    return d;
  });
  m.def("_unload_modules", &unload_modules);
  bind_cublas(m);
  bind_cusolver(m);

  // ---- the allocator over host memory, for tests --------------------------------------------------------------
  nb::class_<TestAllocator>(m, "_TestAllocator", "CachingAllocator over host memory of a fixed capacity (tests).")
      .def(nb::init<size_t>(), nb::arg("capacity"))
      .def("malloc", [](TestAllocator &a, size_t n, int device, uintptr_t stream) {
             return reinterpret_cast<uintptr_t>(a.alloc.malloc(n, device, stream));
           }, nb::arg("size"), nb::arg("device") = 0, nb::arg("stream") = 0)
      .def("free", [](TestAllocator &a, uintptr_t p) { a.alloc.free(reinterpret_cast<void *>(p)); })
      .def("record_stream", [](TestAllocator &a, uintptr_t p, uintptr_t s) {
             a.alloc.record_stream(reinterpret_cast<void *>(p), s);
           })
      .def("block_size", [](TestAllocator &a, uintptr_t p) { return a.alloc.block_size(reinterpret_cast<void *>(p)); })
      .def("empty_cache", [](TestAllocator &a) { a.alloc.empty_cache(); })
      .def("stats", [](TestAllocator &a, int device) { return stats_dict(a.alloc.stats(device)); },
           nb::arg("device") = 0)
      .def("reset_peak_stats", [](TestAllocator &a, int device) { a.alloc.reset_peak_stats(device); },
           nb::arg("device") = 0)
      .def("begin_allocate_to_pool", [](TestAllocator &a, nb::tuple pool, int device, uintptr_t stream) {
             a.alloc.begin_allocate_to_pool(device, {nb::cast<uint64_t>(pool[0]), nb::cast<uint64_t>(pool[1])}, stream);
           }, nb::arg("pool"), nb::arg("device") = 0, nb::arg("stream") = 0)
      .def("end_allocate_to_pool", [](TestAllocator &a, nb::tuple pool, int device) {
             a.alloc.end_allocate_to_pool(device, {nb::cast<uint64_t>(pool[0]), nb::cast<uint64_t>(pool[1])});
           }, nb::arg("pool"), nb::arg("device") = 0)
      .def("release_pool", [](TestAllocator &a, nb::tuple pool, int device) {
             a.alloc.release_pool(device, {nb::cast<uint64_t>(pool[0]), nb::cast<uint64_t>(pool[1])});
           }, nb::arg("pool"), nb::arg("device") = 0)
      .def("pool_stats", [](TestAllocator &a, nb::tuple pool, int device) {
             return pool_stats_dict(a.alloc.pool_stats(device, {nb::cast<uint64_t>(pool[0]), nb::cast<uint64_t>(pool[1])}));
           }, nb::arg("pool"), nb::arg("device") = 0)
      .def("complete_events", [](TestAllocator &a) {
             for (auto &[id, done] : a.raw.events) done = true;
           })
      .def_prop_ro("raw_used", [](TestAllocator &a) { return a.raw.used; })
      .def_prop_ro("raw_segments", [](TestAllocator &a) { return a.raw.blocks.size(); });
}

}  // namespace tp::p10
