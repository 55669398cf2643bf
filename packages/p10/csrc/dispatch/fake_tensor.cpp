// fake_tensor.cpp — fake tensors: meta tensors that stand for a device, and the Fake key's fallback.
//
// Where it sits: a wrapper key just above the backends and below Autograd (dispatch_keys.def). A call that
// involves a fake tensor, or any call while FakeTensorMode is on (tensorplay_p10/fake_tensor.py), reaches the
// fallback below; it hands the call on to the Meta kernel and labels the results with their device. Stax
// captures programs on fake tensors (docs/design.md §5).
//
// Note [Fake tensors]
//   A fake tensor has everything a tensor has but its bytes: sizes, strides, dtype, requires_grad, views — and
//   the device it stands for. It is a meta tensor (impl->device is Meta, so every Meta kernel and every
//   `is_meta()` test inside the kernels treats it as one) whose Storage records `fake_device`; views share the
//   Storage and so stay fake. Python reports the fake device (`.device`, `.is_cuda`), so a program that picks
//   code paths by device traces as it would run, and a CUDA program traces on a machine without a GPU.
//   - Keys: tensor_keys (dispatcher.cpp) adds Fake for a fake tensor; FakeTensorMode adds Fake to the
//     thread-local included set, so factories, which have no tensor argument, reach it too.
//   - The fallback checks that the fake inputs agree on one device (the error a real call would raise), turns
//     Device arguments into meta, runs the op below itself — Autograd, above, has already recorded its node, so
//     backward traces too — and stamps each result with its device: the op's Device argument when it has one
//     (factories, `to(device=)`), else the inputs' device.
//   - Meta rules see the device: a kernel that must behave as one backend does asks `t.logical_device()`
//     (CUDA refuses integer matrix products: kernels/matmul.cpp's check_backend_dtype).
//   - Real tensors: a 0-dim CPU tensor (a Python number) mixes with fake tensors as it mixes with CUDA ones; it
//     is replaced by a fake CPU tensor of its dtype. Any other real tensor is an error naming the op: mixing
//     would read bytes that do not exist, or hide that the program runs on two devices.
#include "dispatch/fake_tensor.h"

#include "dispatch/dispatcher.h"

#include <algorithm>

#include <optional>

namespace tp::p10 {

Device canonical_fake_device(Device d) {
  TP_CHECK(!d.is_meta(), Value, "fake tensors stand for a real device, got meta");
  if (d.type == DeviceType::CPU) return Device{DeviceType::CPU, -1};
  if (d.type != DeviceType::CUDA || d.index >= 0) return d;
  try {
    return resolve_cuda_device(d);
  } catch (const Error &) {
    return Device{DeviceType::CUDA, 0};
  }
}

Tensor fake_twin(const Tensor &t, Device device) {
  Tensor f = empty_strided_tensor(t.sizes(), t.strides(), t.dtype(), Device{DeviceType::Meta, -1});
  f->storage->fake_device = canonical_fake_device(device);
  f->is_wrapped_number = t->is_wrapped_number;
  return f;
}

namespace {

// A fake stand-in for a real 0-dim CPU tensor (a Python number among fake tensors).
Tensor fake_cpu_scalar(const Tensor &t) { return fake_twin(t, Device{DeviceType::CPU, -1}); }

struct FakeInputs {
  std::optional<Device> device;  // where the fake (non-scalar) inputs live
  bool saw_tensor = false;       // any tensor argument at all
  bool saw_fake = false;         // any fake one (plain meta tensors alone are left plain)
  bool saw_cpu_scalar = false;
};

void visit_input(const Operator &op, FakeInputs &in, Tensor &t) {
  if (!t.defined()) return;
  in.saw_tensor = true;
  if (!t.is_fake()) {
    if (t.device().is_meta()) return;  // a plain meta tensor: no device to agree on
    TP_CHECK(t.dim() == 0 && t.device().is_cpu(), Runtime, op.name, ": got a real tensor on ",
             device_str(t.device()), " of shape ", shape_str(t.sizes()),
             " among fake tensors (or inside FakeTensorMode); make it fake first with FakeTensorMode.from_tensor");
    t = fake_cpu_scalar(t);
    in.saw_fake = in.saw_cpu_scalar = true;
    return;
  }
  in.saw_fake = true;
  Device d = t.logical_device();
  if (t.dim() == 0 && d.is_cpu()) { in.saw_cpu_scalar = true; return; }  // CPU scalars mix with any device
  if (!in.device) { in.device = d; return; }
  TP_CHECK(*in.device == d, Runtime, op.name, ": Expected all tensors to be on the same device, but found at "
           "least two devices, ", device_str(*in.device), " and ", device_str(d), "!");
}

// Label a result with the device it belongs on. A result that is a fake input standing for another device
// can only come from an op with a Device argument that returned its input (meta == meta, so `to` saw nothing to
// do): it gets storage of its own, as the real call would have copied.
void stamp(Tensor &t, Device device, bool moved) {
  if (!t.defined() || !t.device().is_meta()) return;
  if (t.is_fake()) {
    if (t.logical_device() == device || !moved) return;
    t = empty_like_layout(t, t.dtype(), t.device());
  }
  t->storage->fake_device = device;
}

void fake_fallback(const Operator &op, Stack &stack, void *) {
  FakeInputs in;
  std::optional<Device> target;
  const size_t n = std::min(op.schema.args.size(), stack.size());
  for (size_t i = 0; i < n; ++i) {
    Value &v = stack[i];
    if (v.tag == Value::Tag::Tensor) {
      visit_input(op, in, v.tensor);
    } else if (v.tag == Value::Tag::TensorList) {
      for (Tensor &t : v.tensors) visit_input(op, in, t);
    } else if (op.schema.args[i].type == ArgType::Device) {
      // `device=None` is the default device, the CPU (a factory's or `to`'s own default is then no concern:
      // a factory has no other device to take, and `to(device=None)` keeps its input's, which stamp keeps).
      const bool given = v.tag == Value::Tag::Device;
      if (!target && given) target = v.device.is_meta() ? v.device : canonical_fake_device(v.device);
      else if (!target && !in.saw_tensor && !given) target = Device{DeviceType::CPU, -1};
      v = Value::from_device(Device{DeviceType::Meta, -1});
    }
  }
  redispatch(op, DispatchKey::Fake, stack);
  if (in.saw_tensor && !in.saw_fake && !target) return;  // plain meta in, plain meta out
  const Device cpu{DeviceType::CPU, -1};
  const Device out = target ? *target : in.device ? *in.device : cpu;
  for (Value &v : stack) {
    if (v.tag == Value::Tag::Tensor) stamp(v.tensor, out, bool(target));
    else if (v.tag == Value::Tag::TensorList)
      for (Tensor &t : v.tensors) stamp(t, out, bool(target));
  }
}

struct RegisterFakeFallback {
  RegisterFakeFallback() {
    register_fallback(DispatchKey::Fake,
                      Kernel{&fake_fallback, nullptr, "packages/p10/csrc/dispatch/fake_tensor.cpp:fake_fallback"});
  }
} register_fake_fallback;

}  // namespace

}  // namespace tp::p10
