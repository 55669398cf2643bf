// fused_optim.cpp — multi-tensor SGD and Adam/AdamW steps: one native call updates a whole param group.
//
// Where it sits: NN's native module (module.cpp) defines two ops through P10's C ABI (tp_abi.h) and registers
// the CPU kernels below and CUDA kernels that launch tensorplay_nn/cuda_kernels/fused_optim.cu through the
// ABI's `cuda_launch` (P10 compiles it with NVRTC); tensorplay_nn/optim/_fused.py calls them when an optimizer
// is built with `foreach=True` or `fused=True`. The reference they are tested against is each optimizer's for-loop path
// (sgd.py `_sgd_single`, adam.py `_adam_single`): the element steps (cuda_kernels/fused_optim_step.h, shared with
// the CUDA kernels) perform the same arithmetic in the same order and precision (scalars cast to the tensor's dtype as PyTorch's tensor-scalar ops do), so the
// result agrees to float rounding while reading and writing each element once instead of once per op.
//
// Scope: float32/float64, contiguous tensors of one device (CPU, or one GPU) whose dtype matches the
// parameter's; the step counters are CPU float32 scalars (the bias corrections are computed on the host, as
// the for-loop computes them from `step.item()`). The Python side checks that first and keeps the for-loop path
// for anything else, but the kernels check again and raise clear errors. On CUDA each parameter is one launch
// of an elementwise kernel running the same element step as the CPU loop (float rounding of fused multiply-adds
// aside).
#include <tensorplay/tp_abi.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "../src/tensorplay_nn/cuda_kernels/fused_optim_step.h"

namespace tp::nn {

extern const TP_Api *api;  // module.cpp owns it

namespace {

// A failed check: the message goes to P10's error channel, the kernel returns 1.
struct KernelError {
  int kind;
  std::string message;
};

// fused_optim.cu's path (set from Python at import: module.cpp's _set_cuda_kernel_dir).
std::string g_kernels;

std::string device_name(int type, int index) {
  return type == TP_DEVICE_CUDA ? "cuda:" + std::to_string(index) : type == TP_DEVICE_CPU ? "cpu" : "meta";
}

// The tensors of list argument `arg`, checked to match `params` one for one (same count, numel, dtype, device)
// and to live on `device_type` (the dispatch key that chose this kernel).
std::vector<TP_Tensor *> tensor_list(const char *op, const TP_Value &v, const char *arg,
                                     const std::vector<TP_Tensor *> *params, int device_type) {
  if (v.tag != TP_VALUE_TENSOR_LIST) throw KernelError{TP_ERR_TYPE, std::string(op) + ": '" + arg + "' must be a list of tensors"};
  std::vector<TP_Tensor *> out(v.v.tensors.data, v.v.tensors.data + v.v.tensors.len);
  if (params && out.size() != params->size())
    throw KernelError{TP_ERR_VALUE, std::string(op) + ": '" + arg + "' has " + std::to_string(out.size()) +
                                        " tensors but 'params' has " + std::to_string(params->size())};
  const int index = out.empty() ? 0 : api->tensor_device_index(params && !params->empty() ? (*params)[0] : out[0]);
  for (size_t i = 0; i < out.size(); ++i) {
    const TP_Tensor *t = out[i];
    const std::string where = std::string(op) + ": " + arg + "[" + std::to_string(i) + "]";
    if (!t) throw KernelError{TP_ERR_VALUE, where + " is None"};
    const int type = api->tensor_device_type(t);
    if (type != device_type || (type == TP_DEVICE_CUDA && api->tensor_device_index(t) != index))
      throw KernelError{TP_ERR_RUNTIME, where + " is on " + device_name(type, api->tensor_device_index(t)) +
                                            ", expected " + device_name(device_type, index) + " like the others"};
    const int dtype = api->tensor_dtype(t);
    if (dtype != TP_FLOAT32 && dtype != TP_FLOAT64)
      throw KernelError{TP_ERR_TYPE, where + " must be float32 or float64, got dtype code " + std::to_string(dtype)};
    if (!tp_tensor_is_contiguous(api, t)) throw KernelError{TP_ERR_NOT_IMPLEMENTED, where + " must be contiguous"};
    if (params) {
      const TP_Tensor *p = (*params)[i];
      if (dtype != api->tensor_dtype(p)) throw KernelError{TP_ERR_TYPE, where + " has a different dtype from params[" + std::to_string(i) + "]"};
      if (api->tensor_numel(t) != api->tensor_numel(p))
        throw KernelError{TP_ERR_VALUE, where + " has " + std::to_string(api->tensor_numel(t)) + " elements but params[" +
                                            std::to_string(i) + "] has " + std::to_string(api->tensor_numel(p))};
    }
  }
  return out;
}

// Launch `name` (suffixed with the dtype) of fused_optim.cu over n elements on params' device: a grid-stride
// loop of 256-thread blocks, at most 1024 blocks (enough to fill any GPU a few times over).
void launch_elementwise(const char *op, const TP_Tensor *param, const std::string &name, int64_t n, void **args) {
  if (n == 0) return;
  if (g_kernels.empty())
    throw KernelError{TP_ERR_RUNTIME, std::string(op) + ": NN's CUDA kernel directory is not set (import tensorplay_nn)"};
  const std::string kernel = name + (api->tensor_dtype(param) == TP_FLOAT32 ? "_float32" : "_float64");
  const int64_t blocks = (n + 255) / 256;
  const uint32_t grid[3] = {uint32_t(blocks < 1024 ? blocks : 1024), 1, 1}, block[3] = {256, 1, 1};
  if (api->cuda_launch(g_kernels.c_str(), kernel.c_str(), api->tensor_device_index(param), grid, block, 0, args) != 0)
    throw KernelError{api->error_kind(), std::string(op) + ": " + api->error_message()};
}

double number(const TP_Value &v) { return v.tag == TP_VALUE_DOUBLE ? v.v.d : static_cast<double>(v.v.i); }

// Run `body` inside the C ABI's error contract: no C++ exception leaves a kernel.
template <typename F>
int guarded(const char *op, F &&body) noexcept {
  try {
    body();
    return 0;
  } catch (const KernelError &e) {
    api->set_error(e.kind, e.message.c_str());
  } catch (const std::exception &e) {
    api->set_error(TP_ERR_RUNTIME, (std::string(op) + ": " + e.what()).c_str());
  } catch (...) {
    api->set_error(TP_ERR_RUNTIME, (std::string(op) + ": unknown C++ exception").c_str());
  }
  return 1;
}

// ---- SGD ----

constexpr const char *kSgdName = "nn::_fused_sgd_";
constexpr const char *kSgdSchema =
    "nn::_fused_sgd_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] momentum_buffers, int[] is_first, "
    "float lr, float weight_decay, float momentum, float dampening, bool nesterov, bool maximize) -> ()";

struct SgdArgs {
  double lr, weight_decay, momentum, dampening;
  bool nesterov, maximize;
};

// One parameter on the CPU, as sgd.py's `_sgd_single` (fused_optim_step.h): buf is null without momentum.
template <typename T>
void sgd_loop(void *p, const void *grad, void *buf, bool first, int64_t n, const SgdScalars &s) {
  const SgdStep<T> step(s);
  for (int64_t i = 0; i < n; ++i)
    step(i, static_cast<T *>(p), static_cast<const T *>(grad), static_cast<T *>(buf), first);
}

// One call of the op on `device_type` (CPU or CUDA): parse, check, then update each parameter.
int fused_sgd(const TP_Value *args, int64_t num_args, int device_type) noexcept {
  return guarded(kSgdName, [&] {
    if (num_args != 10) throw KernelError{TP_ERR_RUNTIME, std::string(kSgdName) + ": expected 10 arguments"};
    const auto params = tensor_list(kSgdName, args[0], "params", nullptr, device_type);
    const auto grads = tensor_list(kSgdName, args[1], "grads", &params, device_type);
    const SgdArgs a{number(args[4]), number(args[5]), number(args[6]), number(args[7]), args[8].v.i != 0,
                    args[9].v.i != 0};
    // not const: the launch takes its address as a void *
    SgdScalars sc{a.weight_decay, a.momentum, 1 - a.dampening, -a.lr,
                  (a.maximize ? kMaximize : 0) | (a.nesterov ? kNesterov : 0) |
                      (a.weight_decay != 0 ? kWeightDecay : 0)};
    std::vector<TP_Tensor *> bufs;
    if (a.momentum != 0) bufs = tensor_list(kSgdName, args[2], "momentum_buffers", &params, device_type);
    if (args[3].tag != TP_VALUE_INT_LIST || (a.momentum != 0 && args[3].v.ints.len != (int64_t)params.size()))
      throw KernelError{TP_ERR_VALUE, std::string(kSgdName) + ": 'is_first' needs one entry per parameter"};
    for (size_t i = 0; i < params.size(); ++i) {
      int64_t n = api->tensor_numel(params[i]);
      int first = a.momentum != 0 && args[3].v.ints.data[i] != 0;
      void *p = api->tensor_data_ptr(params[i]);
      void *g = api->tensor_data_ptr(grads[i]);
      void *b = bufs.empty() ? nullptr : api->tensor_data_ptr(bufs[i]);
      if (device_type == TP_DEVICE_CUDA) {
        void *kargs[] = {&n, &p, &g, &b, &first, &sc};
        launch_elementwise(kSgdName, params[i], "sgd_step", n, kargs);
      } else if (api->tensor_dtype(params[i]) == TP_FLOAT32) {
        sgd_loop<float>(p, g, b, first, n, sc);
      } else {
        sgd_loop<double>(p, g, b, first, n, sc);
      }
      api->tensor_bump_version(params[i]);
      if (!bufs.empty()) api->tensor_bump_version(bufs[i]);
    }
  });
}

int fused_sgd_cpu(void *, const TP_Op *, const TP_Value *args, int64_t num_args, TP_Value *, int64_t) noexcept {
  return fused_sgd(args, num_args, TP_DEVICE_CPU);
}
int fused_sgd_cuda(void *, const TP_Op *, const TP_Value *args, int64_t num_args, TP_Value *, int64_t) noexcept {
  return fused_sgd(args, num_args, TP_DEVICE_CUDA);
}

// ---- Adam / AdamW ----

constexpr const char *kAdamName = "nn::_fused_adam_";
constexpr const char *kAdamSchema =
    "nn::_fused_adam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, "
    "Tensor(d!)[] max_exp_avg_sqs, Tensor(e!)[] state_steps, float lr, float beta1, float beta2, "
    "float weight_decay, float eps, bool amsgrad, bool maximize, bool decoupled_weight_decay) -> ()";

struct AdamArgs {
  double lr, beta1, beta2, weight_decay, eps;
  bool amsgrad, maximize, decoupled;
};

// One parameter on the CPU, as adam.py's `_adam_single` (fused_optim_step.h): vmax is null unless amsgrad.
template <typename T>
void adam_loop(void *p, const void *grad, void *m, void *v, void *vmax, int64_t n, const AdamScalars &s) {
  const AdamStep<T> step(s);
  for (int64_t i = 0; i < n; ++i)
    step(i, static_cast<T *>(p), static_cast<const T *>(grad), static_cast<T *>(m), static_cast<T *>(v),
         static_cast<T *>(vmax));
}

int fused_adam(const TP_Value *args, int64_t num_args, int device_type) noexcept {
  return guarded(kAdamName, [&] {
    if (num_args != 14) throw KernelError{TP_ERR_RUNTIME, std::string(kAdamName) + ": expected 14 arguments"};
    const auto params = tensor_list(kAdamName, args[0], "params", nullptr, device_type);
    const auto grads = tensor_list(kAdamName, args[1], "grads", &params, device_type);
    const auto exp_avgs = tensor_list(kAdamName, args[2], "exp_avgs", &params, device_type);
    const auto exp_avg_sqs = tensor_list(kAdamName, args[3], "exp_avg_sqs", &params, device_type);
    const AdamArgs a{number(args[6]),   number(args[7]),   number(args[8]),   number(args[9]),
                     number(args[10]),  args[11].v.i != 0, args[12].v.i != 0, args[13].v.i != 0};
    std::vector<TP_Tensor *> max_sqs;
    if (a.amsgrad) max_sqs = tensor_list(kAdamName, args[4], "max_exp_avg_sqs", &params, device_type);
    const auto steps = tensor_list(kAdamName, args[5], "state_steps", nullptr, TP_DEVICE_CPU);
    if (steps.size() != params.size())
      throw KernelError{TP_ERR_VALUE, std::string(kAdamName) + ": 'state_steps' needs one tensor per parameter"};
    for (size_t i = 0; i < steps.size(); ++i)
      if (api->tensor_dtype(steps[i]) != TP_FLOAT32 || api->tensor_numel(steps[i]) != 1)
        throw KernelError{TP_ERR_TYPE, std::string(kAdamName) + ": state_steps[" + std::to_string(i) +
                                           "] must be a one-element float32 tensor"};
    for (size_t i = 0; i < params.size(); ++i) {
      // The step counter is a float32 CPU tensor (PyTorch's format); the bias corrections are computed in
      // double from its value, as the Python path computes them from `step_t.item()`.
      float *step_t = static_cast<float *>(api->tensor_data_ptr(steps[i]));
      *step_t += 1.0f;
      api->tensor_bump_version(steps[i]);
      const double step = *step_t;
      // not const: the launch takes its address as a void *
      AdamScalars sc{1 - a.lr * a.weight_decay, a.weight_decay, 1 - a.beta1, a.beta2, 1 - a.beta2,
                     std::sqrt(1 - std::pow(a.beta2, step)), a.eps, -a.lr / (1 - std::pow(a.beta1, step)),
                     (a.maximize ? kMaximize : 0) | (a.decoupled ? kDecoupled : 0) |
                         (a.weight_decay != 0 ? kWeightDecay : 0)};
      int64_t n = api->tensor_numel(params[i]);
      void *p = api->tensor_data_ptr(params[i]), *g = api->tensor_data_ptr(grads[i]);
      void *m = api->tensor_data_ptr(exp_avgs[i]), *v = api->tensor_data_ptr(exp_avg_sqs[i]);
      void *vmax = max_sqs.empty() ? nullptr : api->tensor_data_ptr(max_sqs[i]);
      if (device_type == TP_DEVICE_CUDA) {
        void *kargs[] = {&n, &p, &g, &m, &v, &vmax, &sc};
        launch_elementwise(kAdamName, params[i], "adam_step", n, kargs);
      } else if (api->tensor_dtype(params[i]) == TP_FLOAT32) {
        adam_loop<float>(p, g, m, v, vmax, n, sc);
      } else {
        adam_loop<double>(p, g, m, v, vmax, n, sc);
      }
      api->tensor_bump_version(params[i]);
      api->tensor_bump_version(exp_avgs[i]);
      api->tensor_bump_version(exp_avg_sqs[i]);
      if (vmax) api->tensor_bump_version(max_sqs[i]);
    }
  });
}

int fused_adam_cpu(void *, const TP_Op *, const TP_Value *args, int64_t num_args, TP_Value *, int64_t) noexcept {
  return fused_adam(args, num_args, TP_DEVICE_CPU);
}
int fused_adam_cuda(void *, const TP_Op *, const TP_Value *args, int64_t num_args, TP_Value *, int64_t) noexcept {
  return fused_adam(args, num_args, TP_DEVICE_CUDA);
}

// Define `name` from `schema` (unless an earlier call did) and register its CPU and CUDA kernels. 0 ok, 1 + error.
int define_with_kernels(const char *name, const char *schema, TP_BoxedKernel cpu, TP_BoxedKernel cuda, int line) {
  const TP_Op *op = api->op_find(name);
  if (op) return 0;  // defined (and its kernels registered) by an earlier import in this process
  op = api->op_define(schema);
  if (!op) return 1;
  if (api->op_register_kernel(op, TP_KEY_CPU, cpu, nullptr, __FILE__, line) != 0) return 1;
  return api->op_register_kernel(op, TP_KEY_CUDA, cuda, nullptr, __FILE__, line);
}

}  // namespace

// Called once at module init (module.cpp): define both ops and register their kernels.
int register_fused_optim_ops() {
  if (define_with_kernels(kSgdName, kSgdSchema, fused_sgd_cpu, fused_sgd_cuda, __LINE__) != 0) return 1;
  return define_with_kernels(kAdamName, kAdamSchema, fused_adam_cpu, fused_adam_cuda, __LINE__);
}

// Where fused_optim.cu lives (tensorplay_nn/cuda_kernels, told by Python at import).
void set_cuda_kernel_dir(const std::string &dir) { g_kernels = dir + "/fused_optim.cu"; }

}  // namespace tp::nn
