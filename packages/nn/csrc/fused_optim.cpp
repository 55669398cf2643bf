// fused_optim.cpp — multi-tensor SGD and Adam/AdamW steps: one native call updates a whole param group.
//
// Where it sits: NN's native module (module.cpp) defines two ops through P10's C ABI (tp_abi.h) and registers
// the CPU kernels below; tensorplay_nn/optim/_fused.py calls them when an optimizer is built with
// `foreach=True` or `fused=True`. The reference they are tested against is each optimizer's for-loop path
// (sgd.py `_sgd_single`, adam.py `_adam_single`): the element loops here perform the same arithmetic in the
// same order and precision (scalars cast to the tensor's dtype as PyTorch's tensor-scalar ops do), so the
// result agrees to float rounding while reading and writing each element once instead of once per op.
//
// Scope: float32/float64, contiguous, CPU tensors whose dtype matches the parameter's; the Python side checks
// that first and keeps the for-loop path for anything else, but the kernels check again and raise clear errors.
#include <tensorplay/tp_abi.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace tp::nn {

extern const TP_Api *api;  // module.cpp owns it

namespace {

// A failed check: the message goes to P10's error channel, the kernel returns 1.
struct KernelError {
  int kind;
  std::string message;
};

bool contiguous(const TP_Tensor *t) {
  const int64_t ndim = api->tensor_dim(t);
  const int64_t *sizes = api->tensor_sizes(t);
  const int64_t *strides = api->tensor_strides(t);
  int64_t expected = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// The tensors of list argument `arg`, checked to match `params` one for one (same count, numel, dtype).
std::vector<TP_Tensor *> tensor_list(const char *op, const TP_Value &v, const char *arg,
                                     const std::vector<TP_Tensor *> *params) {
  if (v.tag != TP_VALUE_TENSOR_LIST) throw KernelError{TP_ERR_TYPE, std::string(op) + ": '" + arg + "' must be a list of tensors"};
  std::vector<TP_Tensor *> out(v.v.tensors.data, v.v.tensors.data + v.v.tensors.len);
  if (params && out.size() != params->size())
    throw KernelError{TP_ERR_VALUE, std::string(op) + ": '" + arg + "' has " + std::to_string(out.size()) +
                                        " tensors but 'params' has " + std::to_string(params->size())};
  for (size_t i = 0; i < out.size(); ++i) {
    const TP_Tensor *t = out[i];
    const std::string where = std::string(op) + ": " + arg + "[" + std::to_string(i) + "]";
    if (!t) throw KernelError{TP_ERR_VALUE, where + " is None"};
    if (api->tensor_device_type(t) != TP_DEVICE_CPU) throw KernelError{TP_ERR_NOT_IMPLEMENTED, where + " must be a CPU tensor"};
    const int dtype = api->tensor_dtype(t);
    if (dtype != TP_FLOAT32 && dtype != TP_FLOAT64)
      throw KernelError{TP_ERR_TYPE, where + " must be float32 or float64, got dtype code " + std::to_string(dtype)};
    if (!contiguous(t)) throw KernelError{TP_ERR_NOT_IMPLEMENTED, where + " must be contiguous"};
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

double number(const TP_Value &v) { return v.tag == TP_VALUE_DOUBLE ? v.v.d : static_cast<double>(v.v.i); }

// PyTorch's lerp: self + w (end - self) for |w| < 0.5, else end - (end - self)(1 - w) (exact at w = 1).
template <typename T>
inline T lerp(T self, T end, T w) {
  return std::abs(w) < T(0.5) ? self + w * (end - self) : end - (end - self) * (T(1) - w);
}

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

// One parameter, as sgd.py's `_sgd_single`: buf is null without momentum; `first` means buf = grad.
template <typename T>
void sgd_loop(T *p, const T *grad, T *buf, bool first, int64_t n, const SgdArgs &a) {
  const T wd = T(a.weight_decay), mom = T(a.momentum), damp = T(1 - a.dampening), neg_lr = T(-a.lr);
  for (int64_t i = 0; i < n; ++i) {
    T g = a.maximize ? -grad[i] : grad[i];
    if (a.weight_decay != 0) g = g + wd * p[i];
    if (buf) {
      const T b = first ? g : buf[i] * mom + damp * g;
      buf[i] = b;
      g = a.nesterov ? g + mom * b : b;
    }
    p[i] = p[i] + neg_lr * g;
  }
}

int fused_sgd_cpu(void *, const TP_Op *, const TP_Value *args, int64_t num_args, TP_Value *, int64_t) noexcept {
  return guarded(kSgdName, [&] {
    if (num_args != 10) throw KernelError{TP_ERR_RUNTIME, std::string(kSgdName) + ": expected 10 arguments"};
    const auto params = tensor_list(kSgdName, args[0], "params", nullptr);
    const auto grads = tensor_list(kSgdName, args[1], "grads", &params);
    const SgdArgs a{number(args[4]), number(args[5]), number(args[6]), number(args[7]), args[8].v.i != 0,
                    args[9].v.i != 0};
    std::vector<TP_Tensor *> bufs;
    if (a.momentum != 0) bufs = tensor_list(kSgdName, args[2], "momentum_buffers", &params);
    if (args[3].tag != TP_VALUE_INT_LIST || (a.momentum != 0 && args[3].v.ints.len != (int64_t)params.size()))
      throw KernelError{TP_ERR_VALUE, std::string(kSgdName) + ": 'is_first' needs one entry per parameter"};
    for (size_t i = 0; i < params.size(); ++i) {
      const int64_t n = api->tensor_numel(params[i]);
      const bool first = a.momentum != 0 && args[3].v.ints.data[i] != 0;
      void *p = api->tensor_data_ptr(params[i]);
      const void *g = api->tensor_data_ptr(grads[i]);
      void *b = bufs.empty() ? nullptr : api->tensor_data_ptr(bufs[i]);
      if (api->tensor_dtype(params[i]) == TP_FLOAT32)
        sgd_loop(static_cast<float *>(p), static_cast<const float *>(g), static_cast<float *>(b), first, n, a);
      else
        sgd_loop(static_cast<double *>(p), static_cast<const double *>(g), static_cast<double *>(b), first, n, a);
      api->tensor_bump_version(params[i]);
      if (!bufs.empty()) api->tensor_bump_version(bufs[i]);
    }
  });
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

// One parameter, as adam.py's `_adam_single`, with the step's bias corrections already computed.
template <typename T>
void adam_loop(T *p, const T *grad, T *m, T *v, T *vmax, int64_t n, const AdamArgs &a, double step_size,
               double bias_correction2_sqrt) {
  const T decay = T(1 - a.lr * a.weight_decay), wd = T(a.weight_decay), w1 = T(1 - a.beta1), b2 = T(a.beta2),
          w2 = T(1 - a.beta2), bc2 = T(bias_correction2_sqrt), eps = T(a.eps), neg_step = T(-step_size);
  for (int64_t i = 0; i < n; ++i) {
    T g = a.maximize ? -grad[i] : grad[i];
    T param = p[i];
    if (a.weight_decay != 0) {
      if (a.decoupled) param = param * decay;
      else g = g + wd * param;
    }
    const T mi = lerp(m[i], g, w1);
    const T vi = v[i] * b2 + w2 * g * g;
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if (vmax) {
      second = vmax[i] > vi ? vmax[i] : vi;
      vmax[i] = second;
    }
    const T denom = std::sqrt(second) / bc2 + eps;
    p[i] = param + neg_step * (mi / denom);
  }
}

int fused_adam_cpu(void *, const TP_Op *, const TP_Value *args, int64_t num_args, TP_Value *, int64_t) noexcept {
  return guarded(kAdamName, [&] {
    if (num_args != 14) throw KernelError{TP_ERR_RUNTIME, std::string(kAdamName) + ": expected 14 arguments"};
    const auto params = tensor_list(kAdamName, args[0], "params", nullptr);
    const auto grads = tensor_list(kAdamName, args[1], "grads", &params);
    const auto exp_avgs = tensor_list(kAdamName, args[2], "exp_avgs", &params);
    const auto exp_avg_sqs = tensor_list(kAdamName, args[3], "exp_avg_sqs", &params);
    const AdamArgs a{number(args[6]),   number(args[7]),   number(args[8]),   number(args[9]),
                     number(args[10]),  args[11].v.i != 0, args[12].v.i != 0, args[13].v.i != 0};
    std::vector<TP_Tensor *> max_sqs;
    if (a.amsgrad) max_sqs = tensor_list(kAdamName, args[4], "max_exp_avg_sqs", &params);
    const auto steps = tensor_list(kAdamName, args[5], "state_steps", nullptr);
    if (steps.size() != params.size())
      throw KernelError{TP_ERR_VALUE, std::string(kAdamName) + ": 'state_steps' needs one tensor per parameter"};
    for (size_t i = 0; i < steps.size(); ++i)
      if (api->tensor_dtype(steps[i]) != TP_FLOAT32 || api->tensor_numel(steps[i]) != 1)
        throw KernelError{TP_ERR_TYPE, std::string(kAdamName) + ": state_steps[" + std::to_string(i) +
                                           "] must be a one-element float32 tensor"};
    for (size_t i = 0; i < params.size(); ++i) {
      // The step counter is a float32 tensor (PyTorch's format); the bias corrections are computed in double
      // from its value, as the Python path computes them from `step_t.item()`.
      float *step_t = static_cast<float *>(api->tensor_data_ptr(steps[i]));
      *step_t += 1.0f;
      api->tensor_bump_version(steps[i]);
      const double step = *step_t;
      const double step_size = a.lr / (1 - std::pow(a.beta1, step));
      const double bc2_sqrt = std::sqrt(1 - std::pow(a.beta2, step));
      const int64_t n = api->tensor_numel(params[i]);
      void *vmax = max_sqs.empty() ? nullptr : api->tensor_data_ptr(max_sqs[i]);
      if (api->tensor_dtype(params[i]) == TP_FLOAT32)
        adam_loop(static_cast<float *>(api->tensor_data_ptr(params[i])),
                  static_cast<const float *>(api->tensor_data_ptr(grads[i])),
                  static_cast<float *>(api->tensor_data_ptr(exp_avgs[i])),
                  static_cast<float *>(api->tensor_data_ptr(exp_avg_sqs[i])), static_cast<float *>(vmax), n, a,
                  step_size, bc2_sqrt);
      else
        adam_loop(static_cast<double *>(api->tensor_data_ptr(params[i])),
                  static_cast<const double *>(api->tensor_data_ptr(grads[i])),
                  static_cast<double *>(api->tensor_data_ptr(exp_avgs[i])),
                  static_cast<double *>(api->tensor_data_ptr(exp_avg_sqs[i])), static_cast<double *>(vmax), n, a,
                  step_size, bc2_sqrt);
      api->tensor_bump_version(params[i]);
      api->tensor_bump_version(exp_avgs[i]);
      api->tensor_bump_version(exp_avg_sqs[i]);
      if (vmax) api->tensor_bump_version(max_sqs[i]);
    }
  });
}

// Define `name` from `schema` (unless an earlier call did) and register `kernel` for CPU. 0 ok, 1 + error.
int define_with_cpu_kernel(const char *name, const char *schema, TP_BoxedKernel kernel, int line) {
  const TP_Op *op = api->op_find(name);
  if (op) return 0;  // defined (and its kernel registered) by an earlier import in this process
  op = api->op_define(schema);
  if (!op) return 1;
  return api->op_register_kernel(op, TP_KEY_CPU, kernel, nullptr, __FILE__, line);
}

}  // namespace

// Called once at module init (module.cpp): define both ops and register their CPU kernels.
int register_fused_optim_ops() {
  if (define_with_cpu_kernel(kSgdName, kSgdSchema, fused_sgd_cpu, __LINE__) != 0) return 1;
  return define_with_cpu_kernel(kAdamName, kAdamSchema, fused_adam_cpu, __LINE__);
}

}  // namespace tp::nn
