// ops_factory.cpp — CUDA kernels for arange, linspace, logspace, eye and scalar_tensor on device="cuda".
//
// Where it sits: the CUDA twin of kernels/factory.cpp (empty, empty_strided, full and fill_ are in
// ops_copy.cpp). Factories have no tensor argument: the dispatcher picks CUDA from `device=` (Note [Kernel
// lookup]). Each call first runs the CPU op with device=meta — its checks ("step must be nonzero", negative
// steps, ...), the result's dtype (integer arange when start, end and step are) and its length — then fills
// the tensor with factory.cu's formulas, which are the CPU's.
#include <cstring>

#include "cuda/ops_common.h"
#include "kernels/cast.h"

namespace tp::p10::cuda {

namespace {
const std::optional<Device> kMeta = Device{DeviceType::Meta, -1};
Device cuda_or_current(std::optional<Device> d) { return d.value_or(Device{DeviceType::CUDA, -1}); }
}  // namespace

static Tensor arange(const Scalar &start, const Scalar &end, const Scalar &step, std::optional<ScalarType> dtype,
                     std::optional<Device> device) {
  const Tensor m = call_op<Tensor>(TP_OP("arange"), start, end, step, dtype, kMeta);
  Tensor out = empty_tensor(m.sizes(), m.dtype(), cuda_or_current(device));
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  const int64_t n = out.numel();
  const bool all_int = start.is_integral() && end.is_integral() && step.is_integral();
  TP_DISPATCH_REAL(out.dtype(), "arange", [&]<typename T>() {  // bool and complex raise, as on the CPU
    if (n == 0) return;
    const bool int_mode = all_int && std::is_integral_v<T>;
    launch(kernel(dev, "factory.cu", kname("arange", out.dtype())), elementwise_config(dev, n), stream_for(dev), n,
           out.data_ptr(), int_mode ? start.i : int64_t(0), int_mode ? step.i : int64_t(0), start.to_double(),
           step.to_double(), int(int_mode));
  });
  return out;
}

static Tensor linspace(const Scalar &start, const Scalar &end, int64_t steps, std::optional<ScalarType> dtype,
                       std::optional<Device> device) {
  const Tensor m = call_op<Tensor>(TP_OP("linspace"), start, end, steps, dtype, kMeta);
  Tensor out = empty_tensor(m.sizes(), m.dtype(), cuda_or_current(device));
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  TP_DISPATCH_REAL(out.dtype(), "linspace", [&]<typename T>() {
    if (steps == 0) return;
    launch(kernel(dev, "factory.cu", kname("linspace", out.dtype())), elementwise_config(dev, steps),
           stream_for(dev), steps, out.data_ptr(), start.to_double(), end.to_double());
  });
  return out;
}

static Tensor logspace(const Scalar &start, const Scalar &end, int64_t steps, double base,
                       std::optional<ScalarType> dtype, std::optional<Device> device) {
  const Tensor m = call_op<Tensor>(TP_OP("logspace"), start, end, steps, base, dtype, kMeta);
  Tensor out = empty_tensor(m.sizes(), m.dtype(), cuda_or_current(device));
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  TP_DISPATCH_REAL(out.dtype(), "logspace", [&]<typename T>() {
    if (steps == 0) return;
    launch(kernel(dev, "factory.cu", kname("logspace", out.dtype())), elementwise_config(dev, steps),
           stream_for(dev), steps, out.data_ptr(), start.to_double(), end.to_double(), base);
  });
  return out;
}

// eye: one pass writes the ones on the diagonal and the zeros elsewhere (`one` packed in the dtype's bits).
static Tensor eye(int64_t n, std::optional<int64_t> m_cols, std::optional<ScalarType> dtype,
                  std::optional<Device> device) {
  const Tensor m = call_op<Tensor>(TP_OP("eye"), n, m_cols, dtype, kMeta);
  Tensor out = empty_tensor(m.sizes(), m.dtype(), cuda_or_current(device));
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  check_real("eye", out.dtype());
  const int64_t rows = out.size(0), cols = out.size(1);
  if (rows * cols == 0) return out;
  uint64_t bits = 0;
  TP_DISPATCH_ALL(out.dtype(), "eye", [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      const T one = cast_value<T>(int64_t(1));
      std::memcpy(&bits, &one, sizeof(T));
    }
  });
  CUfunction f = kernel(dev, "factory.cu", "eye_b" + std::to_string(out->itemsize()));
  const LaunchConfig c = elementwise_config(dev, rows * cols);
  const Stream s = stream_for(dev);
  switch (out->itemsize()) {
    case 1: launch(f, c, s, rows, cols, out.data_ptr(), uint8_t(bits)); break;
    case 2: launch(f, c, s, rows, cols, out.data_ptr(), uint16_t(bits)); break;
    case 4: launch(f, c, s, rows, cols, out.data_ptr(), uint32_t(bits)); break;
    default: launch(f, c, s, rows, cols, out.data_ptr(), uint64_t(bits)); break;
  }
  return out;
}

// A number as a 0-d CUDA tensor: the CPU's dtype rule (on meta), then the CUDA fill_.
static Tensor scalar_tensor(const Scalar &value, std::optional<ScalarType> dtype, std::optional<Device> device) {
  const Tensor m = call_op<Tensor>(TP_OP("scalar_tensor"), value, dtype, kMeta);
  Tensor out = empty_tensor({}, m.dtype(), cuda_or_current(device));
  DeviceGuard guard(out.device().index);
  return call_op<Tensor>(TP_OP("fill_"), out, value);
}

TP_LIBRARY(cuda_factory) {
  TP_IMPL(lib, "arange", CUDA, arange);
  TP_IMPL(lib, "linspace", CUDA, linspace);
  TP_IMPL(lib, "logspace", CUDA, logspace);
  TP_IMPL(lib, "eye", CUDA, eye);
  TP_IMPL(lib, "scalar_tensor", CUDA, scalar_tensor);
}

}  // namespace tp::p10::cuda
