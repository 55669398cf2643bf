// factory.cpp — tensors from nothing: empty, empty_strided, full, fill_, arange, linspace, logspace, eye.
//
// Where it sits: factories have no tensor argument, so the dispatcher picks their backend from `device=`
// (Note [Kernel lookup]). The Python layer (tensorplay_p10/_factories.py) adds zeros/ones/*_like on top.
#include <cmath>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

static Device device_or_cpu(std::optional<Device> d) { return d.value_or(Device{}); }

static Tensor empty(std::vector<int64_t> size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return empty_tensor(size, dtype.value_or(default_dtype()), device_or_cpu(device));
}

static Tensor empty_strided(std::vector<int64_t> size, std::vector<int64_t> stride, std::optional<ScalarType> dtype,
                            std::optional<Device> device) {
  return empty_strided_tensor(size, stride, dtype.value_or(default_dtype()), device_or_cpu(device));
}

// self[...] = value, for any layout. Bumps the version counter.
static Tensor fill_(const Tensor &self, const Scalar &value) {
  self.bump_version();
  if (self.device().is_meta() || self.numel() == 0) return self;
  TensorIterator it({.op = "fill_", .promote_inputs = false, .out_dtype = self.dtype(), .compute_dtype = self.dtype(),
                     .resize_out = false},
                    self, {});
  TP_DISPATCH_ALL(self.dtype(), "fill_", [&]<typename T>() {
    const T v = value.to<T>();
    it.for_each([v](char **data, const int64_t *s, int64_t n) {
      if (s[0] == sizeof(T)) std::fill_n(reinterpret_cast<T *>(data[0]), n, v);
      else for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T *>(data[0] + i * s[0]) = v;
    });
  });
  return self;
}

// full(size, value): the dtype defaults to the value's own kind (bool, int64, default float), as in PyTorch.
static Tensor full(std::vector<int64_t> size, const Scalar &value, std::optional<ScalarType> dtype,
                   std::optional<Device> device) {
  Tensor t = empty_tensor(size, dtype.value_or(value.natural_dtype()), device_or_cpu(device));
  return fill_(t, value);
}

static int64_t arange_length(double start, double end, double step) {
  TP_CHECK(step != 0, Runtime, "arange: step must be nonzero");
  TP_CHECK(std::isfinite(start) && std::isfinite(end), Runtime, "arange: unsupported range: ", start, " -> ", end);
  TP_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), Runtime,
           "arange: upper bound and larger bound inconsistent with step sign (start=", start, ", end=", end,
           ", step=", step, ")");
  return int64_t(std::ceil((end - start) / step));
}

// arange(start, end, step): integer when all three are integers, else the default float dtype.
static Tensor arange(const Scalar &start, const Scalar &end, const Scalar &step, std::optional<ScalarType> dtype,
                     std::optional<Device> device) {
  bool all_int = start.is_integral() && end.is_integral() && step.is_integral();
  ScalarType dt = dtype.value_or(all_int ? ScalarType::Int64 : default_dtype());
  int64_t n = all_int ? std::max<int64_t>(0, arange_length(double(start.i), double(end.i), double(step.i)))
                      : arange_length(start.to_double(), end.to_double(), step.to_double());
  if (all_int) {  // exact integer length (doubles lose precision past 2^53)
    int64_t s = start.i, e = end.i, st = step.i;
    n = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    n = std::max<int64_t>(n, 0);
  }
  Tensor out = empty_tensor({n}, dt, device_or_cpu(device));
  if (out.device().is_meta()) return out;
  TP_DISPATCH_REAL(dt, "arange", [&]<typename T>() {
    T *p = out.data<T>();
    if (all_int && std::is_integral_v<T>) {
      for (int64_t i = 0; i < n; ++i) p[i] = T(start.i + i * step.i);
    } else {
      double s = start.to_double(), st = step.to_double();
      for (int64_t i = 0; i < n; ++i) p[i] = cast_value<T>(s + double(i) * st);
    }
  });
  return out;
}

// linspace: PyTorch fills the first half stepping up from start and the second half stepping down from end,
// so both endpoints are exact.
static Tensor linspace(const Scalar &start, const Scalar &end, int64_t steps, std::optional<ScalarType> dtype,
                       std::optional<Device> device) {
  TP_CHECK(steps >= 0, Runtime, "linspace: number of steps must be non-negative, got ", steps);
  ScalarType dt = dtype.value_or(default_dtype());
  Tensor out = empty_tensor({steps}, dt, device_or_cpu(device));
  if (out.device().is_meta() || steps == 0) return out;
  TP_DISPATCH_REAL(dt, "linspace", [&]<typename T>() {
    T *p = out.data<T>();
    double a = start.to_double(), b = end.to_double();
    if (steps == 1) { p[0] = cast_value<T>(a); return; }
    if constexpr (std::is_integral_v<T>) {
      double step = (b - a) / double(steps - 1);
      for (int64_t i = 0; i < steps; ++i) p[i] = T(int64_t(a + step * double(i)));
    } else {
      using M = opmath_t<T>;
      M step = (M(b) - M(a)) / M(steps - 1);
      int64_t half = steps / 2;
      for (int64_t i = 0; i < steps; ++i)
        p[i] = T(i < half ? M(a) + step * M(i) : M(b) - step * M(steps - i - 1));
    }
  });
  return out;
}

static Tensor logspace(const Scalar &start, const Scalar &end, int64_t steps, double base,
                       std::optional<ScalarType> dtype, std::optional<Device> device) {
  TP_CHECK(steps >= 0, Runtime, "logspace: number of steps must be non-negative, got ", steps);
  ScalarType dt = dtype.value_or(default_dtype());
  Tensor out = empty_tensor({steps}, dt, device_or_cpu(device));
  if (out.device().is_meta() || steps == 0) return out;
  TP_DISPATCH_REAL(dt, "logspace", [&]<typename T>() {
    T *p = out.data<T>();
    double a = start.to_double(), b = end.to_double();
    if (steps == 1) { p[0] = cast_value<T>(std::pow(base, a)); return; }
    double step = (b - a) / double(steps - 1);
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i)
      p[i] = cast_value<T>(std::pow(base, i < half ? a + step * double(i) : b - step * double(steps - i - 1)));
  });
  return out;
}

static Tensor eye(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, std::optional<Device> device) {
  int64_t cols = m.value_or(n);
  TP_CHECK(n >= 0, Runtime, "eye: n must be greater or equal to 0, got ", n);
  TP_CHECK(cols >= 0, Runtime, "eye: m must be greater or equal to 0, got ", cols);
  Tensor out = empty_tensor({n, cols}, dtype.value_or(default_dtype()), device_or_cpu(device));
  fill_(out, Scalar(int64_t(0)));
  if (out.device().is_meta()) return out;
  TP_DISPATCH_ALL(out.dtype(), "eye", [&]<typename T>() {
    T *p = out.data<T>();
    for (int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = cast_value<T>(int64_t(1));
  });
  return out;
}

// A Python number as a 0-d tensor that promotes like a number (Note [Wrapped numbers] in tensor.h).
static Tensor scalar_tensor(const Scalar &value, std::optional<ScalarType> dtype, std::optional<Device> device) {
  ScalarType dt = dtype.value_or(value.kind == Scalar::Kind::Double ? ScalarType::Float64
                                 : value.kind == Scalar::Kind::Complex ? ScalarType::Complex128
                                 : value.natural_dtype());
  Tensor t = empty_tensor({}, dt, device_or_cpu(device));
  return fill_(t, value);
}

TP_LIBRARY(factory) {
  lib.def("empty(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("empty_strided(int[] size, int[] stride, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)");
  lib.def("arange(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("logspace(Scalar start, Scalar end, int steps, float base=10.0, *, ScalarType? dtype=None, "
          "Device? device=None) -> Tensor");
  lib.def("eye(int n, int? m=None, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("scalar_tensor(Scalar s, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<empty>(lib, "empty", key, __LINE__);
    impl_typed<empty_strided>(lib, "empty_strided", key, __LINE__);
    impl_typed<full>(lib, "full", key, __LINE__);
    impl_typed<fill_>(lib, "fill_", key, __LINE__);
    impl_typed<arange>(lib, "arange", key, __LINE__);
    impl_typed<linspace>(lib, "linspace", key, __LINE__);
    impl_typed<logspace>(lib, "logspace", key, __LINE__);
    impl_typed<eye>(lib, "eye", key, __LINE__);
    impl_typed<scalar_tensor>(lib, "scalar_tensor", key, __LINE__);
  }
}

}  // namespace tp::p10
