// ops_compare.cpp — CUDA kernels for eq, ne, lt, le, gt, ge, maximum, minimum, pow (all with their in-place
// and out= forms, and pow's number overloads) and where.
//
// Where it sits: the CUDA twin of kernels/compare.cpp, the pow/maximum/minimum of kernels/binary_special.cpp
// and where in kernels/ternary.cpp; the arithmetic is tensorplay_p10/cuda_kernels/compare.cu. As in
// ops_binary.cpp, the operands are promoted to one dtype and broadcast, and one of three kernel forms runs:
// contig, scalar (one operand a CPU number: its value travels as a kernel argument) or strided (Note [Kernel
// geometry]); contig and scalar move 16-byte packs (Note [16-byte packs] in cuda_kernels/elementwise.cuh).
// The rules — the result dtype (bool for comparisons), the checks and their messages, the layout — come from
// the CPU op itself, asked on meta tensors (cuda/ops_meta.h). clamp with tensor bounds is built on maximum and
// minimum here (ops_unary.cpp).
#include <algorithm>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "kernels/binary_common.h"
#include "kernels/cast.h"

namespace tp::p10::cuda {

namespace {
// How a two-operand op was called: `op` for messages ("lt_", "pow.out"), `functional` its plain form.
struct PairCall {
  const char *op;
  const char *functional;
  const char *kernel;  // the kernel family in compare.cu
  Tensor out;
  bool inplace;
  bool to_bool;        // comparisons: computed in the operands' common dtype, written as bool
};

Tensor pair(const PairCall &c, const Tensor &a, const Tensor &b) {
  const Tensor ma = meta_like(a), mb = meta_like(b);
  if (c.inplace) call_op<Tensor>(require_op(c.op), ma, mb);
  else if (c.out.defined()) call_op<Tensor>(require_op(c.op), ma, mb, meta_like(c.out));
  const Tensor m = call_op<Tensor>(require_op(c.functional), ma, mb);
  const int dev = common_device(c.op, {a, b, c.out}, true);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType ct = c.to_bool ? result_type({a, b}) : m.dtype();
  check_real(c.op, ct);
  Tensor out = result_tensor(c.op, c.inplace ? a : c.out, m, device);
  if (out.numel() == 0) return out;
  const ScalarType rt = c.to_bool ? ScalarType::Bool : ct;
  Tensor res = out.dtype() == rt ? out : empty_tensor(out.sizes(), rt, device);
  const Tensor x = is_cpu_number(a) ? a : on_device(a, ct, device);
  const Tensor y = is_cpu_number(b) ? b : on_device(b, ct, device);
  const Stream stream = stream_for(dev);
  const int64_t n = res.numel();
  const std::string fn = c.kernel;
  // The contig and scalar forms move 16-byte packs (Note [16-byte packs] in cuda_kernels/elementwise.cuh).
  const LaunchConfig packed = elementwise_config(dev, n, int(16 / std::max(element_size(ct), element_size(rt))));
  TP_DISPATCH_ALL(ct, c.op, [&]<typename T>() {
    if constexpr (!is_complex_dtype<T>) {
      const Tensor *tensor = nullptr, *number = nullptr;
      if (is_cpu_number(y) && !is_cpu_number(x)) { tensor = &x; number = &y; }
      if (is_cpu_number(x) && !is_cpu_number(y)) { tensor = &y; number = &x; }
      if (tensor && res.is_contiguous() && tensor->is_contiguous() && tensor->sizes() == res.sizes()) {
        launch(kernel(dev, "compare.cu", kname((fn + "_scalar").c_str(), ct)), packed, stream,
               n, res.data_ptr(), tensor->data_ptr(), number_as<T>(*number), int(number == &x));
        return;
      }
      const Tensor xs = is_cpu_number(x) ? on_device(x, ct, device) : x;
      const Tensor ys = is_cpu_number(y) ? on_device(y, ct, device) : y;
      if (res.is_contiguous() && xs.is_contiguous() && ys.is_contiguous() && xs.sizes() == res.sizes() &&
          ys.sizes() == res.sizes()) {
        launch(kernel(dev, "compare.cu", kname((fn + "_contig").c_str(), ct)), packed, stream,
               n, res.data_ptr(), xs.data_ptr(), ys.data_ptr());
        return;
      }
      const KernelGeometry g = make_geometry(res.sizes(), {&res, &xs, &ys}, c.op);
      launch(kernel(dev, "compare.cu", kname((fn + "_strided").c_str(), ct)), elementwise_config(dev, n), stream,
             n, g, res.data_ptr(), xs.data_ptr(), ys.data_ptr());
    }
  });
  if (res.impl() != out.impl()) device_copy(out, res);
  return out;
}
}  // namespace

// The three forms of each op, as TP_BINARY_FORMS makes them on the CPU.
#define TP_CUDA_PAIR(name, to_bool)                                                                         \
  static Tensor name(const Tensor &self, const Tensor &other) {                                            \
    return pair({#name, #name, #name, Tensor(), false, to_bool}, self, other);                              \
  }                                                                                                         \
  static Tensor name##_(const Tensor &self, const Tensor &other) {                                         \
    return pair({#name "_", #name, #name, self, true, to_bool}, self, other);                               \
  }                                                                                                         \
  static Tensor name##_out(const Tensor &self, const Tensor &other, const Tensor &out) {                   \
    return pair({#name ".out", #name, #name, out, false, to_bool}, self, other);                            \
  }
TP_CUDA_PAIR(eq, true)
TP_CUDA_PAIR(ne, true)
TP_CUDA_PAIR(lt, true)
TP_CUDA_PAIR(le, true)
TP_CUDA_PAIR(gt, true)
TP_CUDA_PAIR(ge, true)
TP_CUDA_PAIR(maximum, false)
TP_CUDA_PAIR(minimum, false)
TP_CUDA_PAIR(pow, false)

// `2 ** t` and pow(t, 2) from C++: the number becomes a wrapped number, as on the CPU.
static Tensor pow_scalar(const Scalar &self, const Tensor &exponent) { return pow(wrapped_scalar(self), exponent); }
static Tensor pow_tensor_scalar(const Tensor &self, const Scalar &exponent) {
  return pow(self, wrapped_scalar(exponent));
}

// where(cond, a, b): the kernels read cond as a contiguous bool tensor of the output's shape.
static Tensor where_impl(const char *op, const Tensor &cond, const Tensor &self, const Tensor &other, Tensor out) {
  const Tensor mc = meta_like(cond), ma = meta_like(self), mb = meta_like(other);
  if (out.defined()) call_op<Tensor>(TP_OP("where.self_out"), mc, ma, mb, meta_like(out));
  const Tensor m = call_op<Tensor>(TP_OP("where"), mc, ma, mb);
  const int dev = common_device(op, {cond, self, other, out}, true);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType ct = m.dtype();
  check_real(op, ct);
  out = result_tensor(op, out, m, device);
  if (out.numel() == 0) return out;
  Tensor res = out.dtype() == ct ? out : empty_tensor(out.sizes(), ct, device);
  // A bool condition on this device, contiguous and of the result's shape, is read as it is; any other is
  // broadcast into one first (and uploaded, for a CPU 0-d condition): one extra pass, so not in the common case.
  Tensor c = cond;
  if (!(cond.device() == device && cond.dtype() == ScalarType::Bool && cond.is_contiguous() &&
        cond.sizes() == res.sizes())) {
    c = empty_tensor(res.sizes(), ScalarType::Bool, device);
    call_op<Tensor>(TP_OP("copy_"), c, cond, false);
  }
  const Tensor x = on_device(self, ct, device), y = on_device(other, ct, device);
  const int64_t n = res.numel();
  if (res.is_contiguous() && x.is_contiguous() && y.is_contiguous() && x.sizes() == res.sizes() &&
      y.sizes() == res.sizes()) {
    const LaunchConfig packed = elementwise_config(dev, n, int(16 / element_size(ct)));
    launch(kernel(dev, "compare.cu", kname("where_contig", ct)), packed, stream_for(dev), n,
           res.data_ptr(), c.data_ptr(), x.data_ptr(), y.data_ptr());
  } else {
    const KernelGeometry g = make_geometry(res.sizes(), {&res, &x, &y}, op);
    launch(kernel(dev, "compare.cu", kname("where_strided", ct)), elementwise_config(dev, n), stream_for(dev), n, g,
           res.data_ptr(), c.data_ptr(), x.data_ptr(), y.data_ptr());
  }
  if (res.impl() != out.impl()) device_copy(out, res);
  return out;
}
static Tensor where(const Tensor &cond, const Tensor &self, const Tensor &other) {
  return where_impl("where", cond, self, other, Tensor());
}
static Tensor where_out(const Tensor &cond, const Tensor &self, const Tensor &other, const Tensor &out) {
  return where_impl("where.self_out", cond, self, other, out);
}

TP_LIBRARY(cuda_compare) {
#define TP_IMPL_PAIR(name)                                                                                  \
  TP_IMPL(lib, #name, CUDA, name);                                                                          \
  TP_IMPL(lib, #name "_", CUDA, name##_);                                                                   \
  TP_IMPL(lib, #name ".out", CUDA, name##_out);
  TP_IMPL_PAIR(eq)
  TP_IMPL_PAIR(ne)
  TP_IMPL_PAIR(lt)
  TP_IMPL_PAIR(le)
  TP_IMPL_PAIR(gt)
  TP_IMPL_PAIR(ge)
  TP_IMPL_PAIR(maximum)
  TP_IMPL_PAIR(minimum)
  TP_IMPL_PAIR(pow)
  TP_IMPL(lib, "pow.Scalar", CUDA, pow_scalar);
  TP_IMPL(lib, "pow.Tensor_Scalar", CUDA, pow_tensor_scalar);
  TP_IMPL(lib, "where", CUDA, where);
  TP_IMPL(lib, "where.self_out", CUDA, where_out);
}

}  // namespace tp::p10::cuda
