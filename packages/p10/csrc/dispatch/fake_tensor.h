// fake_tensor.h — making fake tensors (Note [Fake tensors] in fake_tensor.cpp, which also holds the Fake key's
// fallback). Used by the Python binding (FakeTensorMode.from_tensor) and by C++ that traces on fake tensors.
#pragma once
#include "core/tensor.h"

namespace tp::p10 {

// The device a fake tensor reports: `cuda` without an index is the current device when CUDA is present and
// cuda:0 on a machine without it; `cpu` carries no index. ValueError for meta (a fake stands for a real device).
Device canonical_fake_device(Device d);

// A fake twin of `t`: its sizes, strides, dtype and wrapped-number flag, no bytes, standing for `device`.
Tensor fake_twin(const Tensor &t, Device device);

}  // namespace tp::p10
