// elementwise.cpp — launching the elementwise kernel families (cuda_kernels/elementwise.cuh) and the two
// device checks that end in one value read back: a zero integer divisor, and "all true" (allclose, equal).
//
// Where it sits: behind elementwise.h, for the ops_*.cpp files that compute elementwise on CUDA. The form
// chosen: contig when the result and every input are contiguous of the result's shape (16-byte packs, Note
// [16-byte packs]); scalar when one of two inputs is a CPU number (its value travels as a kernel argument);
// strided otherwise (Note [Kernel geometry]).
#include "cuda/elementwise.h"

#include <algorithm>

#include "kernels/cast.h"

namespace tp::p10::cuda {

Target begin(const Form &f, const Tensor &meta, const std::vector<Tensor> &inputs) {
  std::vector<Tensor> all = inputs;
  all.push_back(f.out);
  const int dev = common_device(f.op, all, true);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  DeviceGuard guard(dev);  // a new result is allocated on the op's device
  return {dev, device, result_tensor(f.op, f.out, meta, device)};
}

void run(const char *op, const Kernel &k, const Target &t, const std::vector<Tensor> &inputs) {
  DeviceGuard guard(t.dev);
  const Tensor &out = t.out;
  check_real(op, k.ct);
  if (out.numel() == 0) return;
  Tensor res = out.dtype() == k.rt ? out : empty_tensor(out.sizes(), k.rt, t.device);
  const Stream stream = stream_for(t.dev);
  const int64_t n = res.numel();
  const double p0 = k.p[0], p1 = k.p[1], p2 = k.p[2];
  auto fn = [&](const char *form) { return kernel(t.dev, k.module, kname((k.fn + "_" + form).c_str(), k.ct)); };
  auto dense = [&](const Tensor &v) { return v.is_contiguous() && v.sizes() == res.sizes(); };
  const int pack = int(16 / std::max(element_size(k.ct), element_size(k.rt)));
  const LaunchConfig flat_cfg = elementwise_config(t.dev, n, pack), strided_cfg = elementwise_config(t.dev, n);
  const bool flat = res.is_contiguous();
  const size_t count = inputs.size();
  TP_CHECK(count >= 1 && count <= 3, Runtime, op, ": elementwise kernels take 1 to 3 inputs, got ", count);

  // CUDA inputs in the compute dtype; CPU numbers stay numbers for now.
  std::vector<Tensor> x;
  for (const Tensor &in : inputs) x.push_back(is_cpu_number(in) ? in : on_device(in, k.ct, t.device));
  // Two inputs, one a CPU number and the other laid out as the result: the scalar form.
  if (count == 2 && flat && is_cpu_number(x[0]) != is_cpu_number(x[1])) {
    const int si = is_cpu_number(x[0]) ? 0 : 1;
    if (dense(x[1 - si])) {
      TP_DISPATCH_ALL(k.ct, op, [&]<typename T>() {
        if constexpr (!is_complex_dtype<T>)
          launch(fn("scalar"), flat_cfg, stream, n, res.data_ptr(), x[1 - si].data_ptr(), number_as<T>(x[si]),
                 int(si == 0), p0, p1, p2);
      });
      if (res.impl() != out.impl()) device_copy(out, res);
      return;
    }
  }
  for (Tensor &v : x)
    if (is_cpu_number(v)) v = on_device(v, k.ct, t.device);  // a 0-d device tensor, broadcast by stride 0
  // The third input is read by the linear output index: contiguous, of the result's shape.
  if (count == 3 && !dense(x[2])) {
    Tensor c = empty_tensor(res.sizes(), k.ct, t.device);
    device_copy(c, x[2]);
    x[2] = c;
  }
  const bool contig = flat && std::all_of(x.begin(), x.end(), dense);
  if (count == 1) {
    if (contig) {
      launch(fn("contig"), flat_cfg, stream, n, res.data_ptr(), x[0].data_ptr(), p0, p1, p2);
    } else {
      const KernelGeometry g = make_geometry(res.sizes(), {&res, &x[0]}, op);
      launch(fn("strided"), strided_cfg, stream, n, g, res.data_ptr(), x[0].data_ptr(), p0, p1, p2);
    }
  } else if (count == 2) {
    if (contig) {
      launch(fn("contig"), flat_cfg, stream, n, res.data_ptr(), x[0].data_ptr(), x[1].data_ptr(), p0, p1, p2);
    } else {
      const KernelGeometry g = make_geometry(res.sizes(), {&res, &x[0], &x[1]}, op);
      launch(fn("strided"), strided_cfg, stream, n, g, res.data_ptr(), x[0].data_ptr(), x[1].data_ptr(), p0, p1,
             p2);
    }
  } else {
    if (contig) {
      launch(fn("contig"), flat_cfg, stream, n, res.data_ptr(), x[0].data_ptr(), x[1].data_ptr(), x[2].data_ptr(),
             p0, p1, p2);
    } else {
      const KernelGeometry g = make_geometry(res.sizes(), {&res, &x[0], &x[1]}, op);
      launch(fn("strided"), strided_cfg, stream, n, g, res.data_ptr(), x[0].data_ptr(), x[1].data_ptr(),
             x[2].data_ptr(), p0, p1, p2);
    }
  }
  if (res.impl() != out.impl()) device_copy(out, res);
}

void copy_into(const Target &t, const Tensor &x) {
  DeviceGuard guard(t.dev);
  if (t.out.numel() > 0 && t.out.impl() != x.impl()) device_copy(t.out, x);
}

void fill_into(const Target &t, const Scalar &v) {
  DeviceGuard guard(t.dev);
  if (t.out.numel() > 0) call_op<Tensor>(TP_OP("fill_"), t.out, v);
}

namespace {
// A device int, zeroed; after a kernel sets it, its value on the host (the read waits for the stream).
Tensor device_flag(Device device) {
  return call_op<Tensor>(TP_OP("fill_"), empty_tensor({}, ScalarType::Int32, device), Scalar(int64_t(0)));
}
int32_t read_flag(const Tensor &flag) {
  Tensor h = empty_tensor({}, ScalarType::Int32, Device{});
  call_op<Tensor>(TP_OP("copy_"), h, flag, false);
  return *h.data<int32_t>();
}
}  // namespace

void check_no_zero_divisor(const char *op, const Tensor &divisor, ScalarType ct) {
  if (is_cpu_number(divisor)) {
    bool zero = false;
    TP_DISPATCH_REAL(ct, op, [&]<typename T>() { zero = number_as<T>(divisor) == opmath_t<T>(0); });
    TP_CHECK(!zero, Runtime, "ZeroDivisionError: integer division or modulo by zero in ", op);
    return;
  }
  if (divisor.numel() == 0) return;
  const int dev = divisor.device().index;
  DeviceGuard guard(dev);
  const Tensor d = divisor.dtype() == ct ? divisor : contiguous_as(divisor, ct);
  const Tensor flag = device_flag(d.device());
  const KernelGeometry g = make_geometry(d.sizes(), {&d}, op);
  const int64_t n = d.numel();
  launch(kernel(dev, "binary_math.cu", kname("any_zero", ct)), elementwise_config(dev, n), stream_for(dev), n, g,
         d.data_ptr(), flag.data_ptr());
  TP_CHECK(read_flag(flag) == 0, Runtime, "ZeroDivisionError: integer division or modulo by zero in ", op);
}

bool all_true(const Tensor &b) {
  if (b.numel() == 0) return true;
  const int dev = b.device().index;
  DeviceGuard guard(dev);
  const Tensor c = b.is_contiguous() && b.dtype() == ScalarType::Bool ? b : contiguous_as(b, ScalarType::Bool);
  const Tensor flag = device_flag(c.device());
  const int64_t n = c.numel();
  launch(kernel(dev, "close.cu", "any_false"), elementwise_config(dev, n, 16), stream_for(dev), n, c.data_ptr(),
         flag.data_ptr());
  return read_flag(flag) == 0;
}

}  // namespace tp::p10::cuda
