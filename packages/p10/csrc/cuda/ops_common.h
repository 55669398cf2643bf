// ops_common.h — what the CUDA op files (ops_*.cpp) share: device checks, streams, and a few launches.
//
// Where it sits: between the dispatcher's CUDA kernels (ops_copy.cpp, ops_binary.cpp, ops_reduce.cpp) and
// launch.h. Every op runs with its tensors' device current (DeviceGuard) on that device's current stream.
#pragma once
#include <vector>

#include "cuda/geometry.h"
#include "cuda/launch.h"
#include "dispatch/kernel_box.h"

namespace tp::p10::cuda {

// The CUDA device of an op's tensors: RuntimeError naming `op` when they are on different devices (PyTorch's
// "Expected all tensors to be on the same device"). CPU 0-d tensors are allowed when `allow_cpu_scalars`.
int common_device(const char *op, const std::vector<Tensor> &tensors, bool allow_cpu_scalars);
inline Stream stream_for(int device) { return current_stream(device); }

// dtype suffix of kernel names: "float32", "bool" — tensorplay's own dtype names.
inline std::string kname(const char *base, ScalarType t) { return std::string(base) + "_" + scalar_type_name(t); }
// Complex numbers have no CUDA kernels yet: NotImplementedError naming the op.
void check_real(const char *op, ScalarType t);

// dst = src (same CUDA device; src broadcast to dst's shape; any layouts, any real dtypes).
void device_copy(const Tensor &dst, const Tensor &src);
// A contiguous copy of `t` (on its device) in dtype `dtype`.
Tensor contiguous_as(const Tensor &t, ScalarType dtype);

}  // namespace tp::p10::cuda
