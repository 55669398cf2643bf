// storage.h — a refcounted byte buffer on one device, and the allocators that make them.
//
// Where it sits: below TensorImpl. Every view of a tensor shares one Storage; the tensor's sizes, strides and
// offset say which bytes it sees. A meta tensor's Storage has a size but no bytes (data == nullptr).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/device.h"
#include "core/ref.h"

namespace tp::p10 {

// Frees memory a Storage does not own through an allocator (NumPy arrays, DLPack capsules).
struct ExternalDeleter {
  void (*fn)(void *ctx) = nullptr;
  void *ctx = nullptr;
};

struct Allocator {
  virtual ~Allocator() = default;
  virtual void *allocate(size_t nbytes) = 0;
  // For allocators of devices with an index (cuda:N): the memory must live on `device`.
  virtual void *allocate_on(size_t nbytes, Device device) { (void)device; return allocate(nbytes); }
  virtual void deallocate(void *p, size_t nbytes) = 0;
};

// The allocator for a device type; CPU is always present, others are installed by their backend.
Allocator *allocator_for(DeviceType t);
void set_allocator(DeviceType t, Allocator *a);

struct Storage : RefCounted {
  void *data = nullptr;
  size_t nbytes = 0;
  Device device;
  // Meta storage only: the device this memory stands for (a fake tensor's device; Note [Fake tensors] in
  // dispatch/fake_tensor.cpp). Meta means a plain meta tensor. Every view shares it, so views stay fake.
  Device fake_device{DeviceType::Meta, -1};
  Allocator *allocator = nullptr;  // null for meta and for external memory
  ExternalDeleter external;        // set for memory borrowed from NumPy / DLPack

  ~Storage() override;
  static Ref<Storage> allocate(size_t nbytes, Device device);
  static Ref<Storage> wrap_external(void *data, size_t nbytes, Device device, ExternalDeleter d);
};

}  // namespace tp::p10
