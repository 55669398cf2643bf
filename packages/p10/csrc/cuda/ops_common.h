// ops_common.h — what the CUDA op files (ops_*.cpp) share: device checks, streams, and a few launches.
//
// Where it sits: between the dispatcher's CUDA kernels (ops_copy.cpp, ops_binary.cpp, ops_reduce.cpp) and
// launch.h. Every op runs with its tensors' device current (DeviceGuard) on that device's current stream.
#pragma once
#include <vector>

#include "cuda/geometry.h"
#include "cuda/launch.h"
#include "dispatch/kernel_box.h"
#include "kernels/cast.h"

namespace tp::p10::cuda {

// The CUDA device of an op's tensors: RuntimeError naming `op` when they are on different devices (PyTorch's
// "Expected all tensors to be on the same device"). CPU 0-d tensors are allowed when `allow_cpu_scalars`.
int common_device(const char *op, const std::vector<Tensor> &tensors, bool allow_cpu_scalars);
inline Stream stream_for(int device) { return current_stream(device); }

// dtype suffix of kernel names: "float32", "bool" — tensorplay's own dtype names.
inline std::string kname(const char *base, ScalarType t) { return std::string(base) + "_" + scalar_type_name(t); }
// Complex numbers have no CUDA kernels yet: NotImplementedError naming the op.
void check_real(const char *op, ScalarType t);
// A random op's `generator` argument, checked before anything else: a CPU generator is a RuntimeError naming the
// op, as PyTorch's device-type check. The op then draws from cuda_generator() (cuda/philox.h), which also checks
// the generator's device index once the op's device is known.
void check_cuda_generator(const Value &generator, const char *op);

// CPU numbers in CUDA ops: a CPU 0-d tensor (a wrapped Python number, or a 0-d tensor PyTorch lets mix with
// any device). Its value, cast to T as the CPU iterator casts its operands, in T's arithmetic type — for the
// kernels' `scalar` forms, which take the number as an argument.
inline bool is_cpu_number(const Tensor &t) { return t.defined() && t.device().is_cpu() && t.dim() == 0; }
template <typename T> opmath_t<T> number_as(const Tensor &t) {
  T v{};
  TP_DISPATCH_ALL(t.dtype(), "number", [&]<typename S>() {
    if constexpr (!is_complex_dtype<S>) v = cast_value<T>(*t.data<S>());
  });
  return opmath_t<T>(v);
}
// An operand in dtype `ct` on `device`: a CUDA tensor cast when needed; a CPU number becomes a 0-d device tensor
// (broadcast by stride 0), filled without a host-to-device copy.
Tensor on_device(const Tensor &t, ScalarType ct, Device device);

// dst = src (same CUDA device; src broadcast to dst's shape; any layouts, any real dtypes).
void device_copy(const Tensor &dst, const Tensor &src);
// A contiguous copy of `t` (on its device) in dtype `dtype`.
Tensor contiguous_as(const Tensor &t, ScalarType dtype);
// `t` itself when it is contiguous and of dtype `dtype`, else contiguous_as; an undefined tensor stays undefined.
Tensor dense(const Tensor &t, ScalarType dtype);
// A tensor's data pointer, or null for an undefined one (an absent optional argument of a kernel).
inline void *ptr_or_null(const Tensor &t) { return t.defined() ? t.data_ptr() : nullptr; }
// int32 zeros of `shape` on device `dev` (flags, counters, info arrays), zeroed by a driver memset on the current
// stream: no kernel to compile for it.
Tensor int_zeros(int dev, const Shape &shape);

}  // namespace tp::p10::cuda
