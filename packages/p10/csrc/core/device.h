// device.h — where a tensor's memory lives: cpu, cuda:N, meta (shapes only) or a user's PrivateUse1 backend.
#pragma once
#include <cstdint>
#include <string>

#include "tensorplay/tp_abi.h"

namespace tp::p10 {

enum class DeviceType : int8_t { CPU = TP_DEVICE_CPU, CUDA = TP_DEVICE_CUDA, Meta = TP_DEVICE_META,
                                 PrivateUse1 = TP_DEVICE_PRIVATEUSE1 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1 = "the current one" (only meaningful for cuda)
  bool operator==(const Device &o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device &o) const { return !(*this == o); }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_meta() const { return type == DeviceType::Meta; }
};

inline const char *device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Meta: return "meta";
    case DeviceType::PrivateUse1: return "privateuseone";
  }
  return "?";
}

inline std::string device_str(Device d) {
  std::string s = device_type_name(d.type);
  if (d.index >= 0) s += ":" + std::to_string(int(d.index));
  return s;
}

// `cuda` with no index means the current CUDA device; tensors are made on, and report, `cuda:<current>`.
// Defined by the CUDA backend (cuda/memory.cpp); raises when CUDA is unavailable or the index is bad.
Device resolve_cuda_device(Device d);
inline Device canonical_device(Device d) {
  return d.type == DeviceType::CUDA && d.index < 0 ? resolve_cuda_device(d) : d;
}

}  // namespace tp::p10
