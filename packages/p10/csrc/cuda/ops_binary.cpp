// ops_binary.cpp — CUDA kernels for add, sub, mul and div (and their in-place and out= forms; div's
// rounding modes 'trunc' and 'floor' run binary_math.cu's trunc_divide and floor_divide).
//
// Where it sits: the CUDA twin of kernels/binary.cpp. The arithmetic is in tensorplay_p10/cuda_kernels/
// binary.cu; this file does what the CPU loop helper does before its loop: type promotion (result_type, the
// CPU's own rules), broadcasting, the output's allocation and checks, and the choice of kernel form:
//   contig (every operand contiguous, no broadcast), scalar (one operand a CPU number, as in `x * 2`: its value
//   travels as a kernel argument), strided (anything else, Note [Kernel geometry]).
// bool results add and multiply with the bool kernels, and bool - bool raises the CPU's error (Note [Bool
// arithmetic] in binary.cu).
#include <type_traits>

#include "cuda/elementwise.h"
#include "cuda/ops_common.h"
#include "kernels/binary_common.h"
#include "kernels/cast.h"
#include "loop/tensor_iterator.h"

namespace tp::p10::cuda {

namespace {
// A CPU number's value straight in the op's arithmetic type (float for the 16-bit floats, not rounded to them
// first): the `scalar` kernels take it as PyTorch's opmath scalar.
template <typename A> A scalar_value(const Tensor &t) {
  A v{};
  TP_DISPATCH_ALL(t.dtype(), "scalar", [&]<typename S>() {
    if constexpr (!is_complex_dtype<S>) v = cast_value<A>(*t.data<S>());
  });
  return v;
}

struct BinarySpec {
  const char *op;      // "add_", for messages
  const char *kernel;  // "add" | "mul" | "div": the kernel family in binary.cu
  bool inplace;
  bool int_to_float;   // true division
};

Tensor binary(const BinarySpec &spec, const Tensor &a, const Tensor &b, const Scalar &alpha, Tensor out) {
  const int dev = common_device(spec.op, {a, b, out}, true);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  ScalarType common = result_type({a, b});
  if (spec.int_to_float && !is_floating(common) && !is_complex(common)) common = default_dtype();
  check_real(spec.op, common);
  check_add_alpha(spec.op, common, alpha);  // kernels/binary_common.h, as the CPU op
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), spec.op);
  if (spec.inplace) {
    TP_CHECK(shape == a.sizes(), Runtime, spec.op, ": output with shape ", shape_str(a.sizes()),
             " doesn't match the broadcast shape ", shape_str(shape));
    out = a;
  }
  if (out.defined()) {
    TP_CHECK(out.sizes() == shape, Runtime, spec.op, ": out has shape ", shape_str(out.sizes()),
             " but the result has shape ", shape_str(shape));
    TP_CHECK(can_cast(common, out.dtype()), Runtime, spec.op, ": result type ", scalar_type_name(common),
             " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
    TP_CHECK(out.device() == device, Runtime, spec.op, ": the result is on ", device_str(device),
             " but the output tensor is on ", device_str(out.device()));
    out.bump_version();
  } else {
    out = empty_tensor(shape, common, device);
  }
  if (out.numel() == 0) return out;
  // Compute in the common dtype; an out= of another dtype gets a cast copy at the end.
  Tensor res = out.dtype() == common ? out : empty_tensor(shape, common, device);
  auto as_common = [&](const Tensor &t) {
    return t.dtype() == common || is_cpu_number(t) ? t : contiguous_as(t, common);
  };
  Tensor x = as_common(a), y = as_common(b);
  const Stream stream = stream_for(dev);
  const int64_t n = res.numel();
  const auto body = [&]<typename T>() {
    using A = opmath_t<T>;  // the kernel's arithmetic type: float for the 16-bit floats
    A al = std::string(spec.kernel) == "add" ? alpha.to<A>() : A(1);
    if constexpr (!std::is_same_v<T, bool>)  // bool - bool is refused before (check_sub_bool)
      if (std::string(spec.op).rfind("sub", 0) == 0) al = A(-al);
    const bool flat = res.is_contiguous();
    const Tensor *tensor = nullptr, *number = nullptr;
    if (is_cpu_number(y) && !is_cpu_number(x)) { tensor = &x; number = &y; }
    if (is_cpu_number(x) && !is_cpu_number(y)) { tensor = &y; number = &x; }
    if (tensor && flat && tensor->is_contiguous() && tensor->sizes() == shape) {
      launch(kernel(dev, "binary.cu", kname((std::string(spec.kernel) + "_scalar").c_str(), common)),
             elementwise_config(dev, n, 4), stream, n, res.data_ptr(), tensor->data_ptr(),
             scalar_value<A>(*number), al, int(number == &x));
      return;
    }
    // A number in a strided call, or both numbers: a 0-d device tensor (broadcast by stride 0).
    Tensor xs = on_device(x, common, device), ys = on_device(y, common, device);
    if (flat && xs.is_contiguous() && ys.is_contiguous() && xs.sizes() == shape && ys.sizes() == shape) {
      launch(kernel(dev, "binary.cu", kname((std::string(spec.kernel) + "_contig").c_str(), common)),
             elementwise_config(dev, n, 4), stream, n, res.data_ptr(), xs.data_ptr(), ys.data_ptr(), al);
      return;
    }
    KernelGeometry g = make_geometry(shape, {&res, &xs, &ys}, spec.op);
    launch(kernel(dev, "binary.cu", kname((std::string(spec.kernel) + "_strided").c_str(), common)),
           elementwise_config(dev, n), stream, n, g, res.data_ptr(), xs.data_ptr(), ys.data_ptr(), al);
  };
  // Note [Bool arithmetic]: bool results run the bool kernels (add: a || (alpha && b), mul: a && b).
  if (common == ScalarType::Bool) body.template operator()<bool>();
  else TP_DISPATCH_REAL(common, spec.op, body);
  if (res.impl() != out.impl()) device_copy(out, res);
  return out;
}

// div with rounding_mode 'trunc' or 'floor': binary_math.cu's trunc_divide or floor_divide, with the checks,
// result dtype and layout of the CPU op asked on meta (elementwise.h), integer zero divisors refused as there.
Tensor rounding_div(const char *op, const Tensor &a, const Tensor &b, const std::string &mode, const Tensor &out,
                    bool inplace) {
  const Form f{op, op, "div", inplace ? a : out, inplace};
  const Tensor m = meta_result(f, a, b, std::optional<std::string>(mode));  // 'trunc' | 'floor', else ValueError
  const Target t = begin(f, m, {a, b});
  const ScalarType ct = m.dtype();
  check_real(op, ct);
  if (is_integral(ct, false) && t.out.numel() > 0) check_no_zero_divisor(op, b, ct);
  run(op, {"binary_math.cu", mode == "floor" ? "floor_divide" : "trunc_divide", ct, ct}, t, {a, b});
  return t.out;
}
}  // namespace

static Tensor add(const Tensor &a, const Tensor &b, const Scalar &al) { return binary({"add", "add", false, false}, a, b, al, {}); }
static Tensor add_(const Tensor &a, const Tensor &b, const Scalar &al) { return binary({"add_", "add", true, false}, a, b, al, {}); }
static Tensor add_out(const Tensor &a, const Tensor &b, const Scalar &al, const Tensor &out) {
  return binary({"add.out", "add", false, false}, a, b, al, out);
}
// sub's first check is the CPU op's (check_sub_bool, kernels/binary_common.h).
static Tensor sub(const Tensor &a, const Tensor &b, const Scalar &al) {
  check_sub_bool(a, b);
  return binary({"sub", "add", false, false}, a, b, al, {});
}
static Tensor sub_(const Tensor &a, const Tensor &b, const Scalar &al) {
  check_sub_bool(a, b);
  return binary({"sub_", "add", true, false}, a, b, al, {});
}
static Tensor sub_out(const Tensor &a, const Tensor &b, const Scalar &al, const Tensor &out) {
  check_sub_bool(a, b);
  return binary({"sub.out", "add", false, false}, a, b, al, out);
}
static Tensor mul(const Tensor &a, const Tensor &b) { return binary({"mul", "mul", false, false}, a, b, Scalar(int64_t(1)), {}); }
static Tensor mul_(const Tensor &a, const Tensor &b) { return binary({"mul_", "mul", true, false}, a, b, Scalar(int64_t(1)), {}); }
static Tensor mul_out(const Tensor &a, const Tensor &b, const Tensor &out) {
  return binary({"mul.out", "mul", false, false}, a, b, Scalar(int64_t(1)), out);
}
static Tensor div(const Tensor &a, const Tensor &b, std::optional<std::string> mode) {
  if (mode) return rounding_div("div", a, b, *mode, Tensor(), false);
  return binary({"div", "div", false, true}, a, b, Scalar(int64_t(1)), {});
}
static Tensor div_(const Tensor &a, const Tensor &b, std::optional<std::string> mode) {
  if (mode) return rounding_div("div_", a, b, *mode, a, true);
  return binary({"div_", "div", true, true}, a, b, Scalar(int64_t(1)), {});
}
static Tensor div_out(const Tensor &a, const Tensor &b, std::optional<std::string> mode, const Tensor &out) {
  if (mode) return rounding_div("div.out", a, b, *mode, out, false);
  return binary({"div.out", "div", false, true}, a, b, Scalar(int64_t(1)), out);
}

TP_LIBRARY(cuda_binary) {
  TP_IMPL(lib, "add", CUDA, add);
  TP_IMPL(lib, "add_", CUDA, add_);
  TP_IMPL(lib, "add.out", CUDA, add_out);
  TP_IMPL(lib, "sub", CUDA, sub);
  TP_IMPL(lib, "sub_", CUDA, sub_);
  TP_IMPL(lib, "sub.out", CUDA, sub_out);
  TP_IMPL(lib, "mul", CUDA, mul);
  TP_IMPL(lib, "mul_", CUDA, mul_);
  TP_IMPL(lib, "mul.out", CUDA, mul_out);
  TP_IMPL(lib, "div", CUDA, div);
  TP_IMPL(lib, "div_", CUDA, div_);
  TP_IMPL(lib, "div.out", CUDA, div_out);
}

}  // namespace tp::p10::cuda
