// ops_norm.cpp — CUDA kernels for layer_norm, rms_norm and their fused backward ops (layer_norm_backward,
// rms_norm_backward).
//
// Where it sits: the CUDA twin of kernels/norm.cpp and kernels/norm_backward.cpp; the arithmetic is
// tensorplay_p10/cuda_kernels/norm.cu. The CPU op, asked on meta tensors (cuda/ops_meta.h), checks the call (the
// normalized_shape / weight / bias / grad_out shape errors and their PyTorch messages) and gives each result's
// shape and dtype. Then, as on the CPU, the input is made contiguous as [rows, N] (N = prod(normalized_shape))
// and the weight and bias become contiguous vectors in the input's dtype. Each row is one warp or one block
// with the row in registers (cuda/rows.h, Note [Register rows]); grad_weight and grad_bias are column sums
// over the rows, two stages (Note [Norm column sums] in norm.cu). group_norm, batch_norm and instance_norm
// are Composites over layer_norm, var_mean and elementwise ops, so they run on CUDA through those.
#include <algorithm>
#include <tuple>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "cuda/rows.h"
#include "kernels/norm_common.h"

namespace tp::p10::cuda {

namespace {

// An optional weight or bias as dense(): its own name, since an overload of dense() here would hide the shared one
// in ops_common.h and turn `dense(*t, dtype)` into a call of itself (it once recursed until the stack overflowed).
Tensor dense_optional(const std::optional<Tensor> &t, ScalarType dtype) { return t ? dense(*t, dtype) : Tensor(); }

int norm_device(const char *op, std::initializer_list<Tensor> ts) { return common_device(op, ts, false); }

// Forward of layer_norm (Centered) or rms_norm; `meta` is the CPU op's result on meta tensors.
Tensor norm_forward(const char *name, const Tensor &meta, const Tensor &input, const Shape &normalized_shape,
                    const std::optional<Tensor> &weight, const std::optional<Tensor> &bias, double eps) {
  const int dev = norm_device(name, {input, weight ? *weight : Tensor(), bias ? *bias : Tensor()});
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor out = empty_as_meta(meta, device);
  if (out.numel() == 0) return out;
  const ScalarType t = input.dtype();
  const Tensor x = dense(input, t), w = dense_optional(weight, t), b = dense_optional(bias, t);
  const int64_t cols = shape_numel(normalized_shape), rows = x.numel() / cols;
  const Tensor y = out.is_contiguous() ? out : empty_tensor(x.sizes(), t, device);
  // float16/bfloat16 rows of 1025..4096 take the block32 form (Note [Row kernel registers] in norm.cu).
  const RowForm f = row_form(dev, rows, cols,
                             rows_vec_ok(cols, x->itemsize(), {x.data_ptr(), y.data_ptr(), ptr_or_null(w),
                                                              ptr_or_null(b)}),
                             true, x->itemsize() == 2);
  launch(kernel(dev, "norm.cu", kname((std::string(name) + f.suffix).c_str(), t)), f.config, stream_for(dev), rows,
         cols, y.data_ptr(), x.data_ptr(), ptr_or_null(w), ptr_or_null(b), eps);
  if (y.impl() != out.impl()) device_copy(out, y);
  return out;
}

struct Grads {
  Tensor input, weight, bias;
};

// Note [Fused column sums] in norm.cu: the register form `f` also sums the columns, one [cols] row of sums per
// block, when every block is resident at once. The kernels' __launch_bounds__ guarantee it: warp8 (128
// threads, MB = 8) holds 8 blocks per SM, block16 (512, 1) holds 512 threads. Each block then walks
// rows / grid rows and the parts stay few.
LaunchConfig fused_config(int dev, const RowForm &f, int64_t rows) {
  const int64_t sms = properties(dev).multi_processor_count;
  LaunchConfig c = f.config;
  const bool warp = f.suffix.rfind("_warp", 0) == 0;
  const int64_t per_sm = warp ? 8 : int64_t(kRegisterBlockMax / c.block);
  const int64_t rows_per_block = warp ? int64_t(c.block / 32) : 1;
  c.grid = unsigned(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, sms * per_sm));
  return c;
}

// grad_weight / grad_bias (either may be undefined) from x, dy and each row's (mean, rstd) in `stats`, in two
// kernels (Note [Norm column sums]): chunks of rows so that the partial stage has a few blocks per SM.
void column_sums(int dev, Stream stream, int64_t rows, int64_t cols, const Tensor &x, const Tensor &dy,
                 const Tensor &stats, const Tensor &gw, const Tensor &gb) {
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType t = x.dtype(), acc = stats.dtype();
  const int64_t sms = properties(dev).multi_processor_count, tiles = (cols + 31) / 32;
  int64_t chunks = std::clamp<int64_t>((sms * 8 + tiles - 1) / tiles, 1, (rows + 7) / 8);
  const int64_t chunk_rows = (rows + chunks - 1) / chunks;
  chunks = (rows + chunk_rows - 1) / chunk_rows;
  const Tensor pw = gw.defined() ? empty_tensor({chunks, cols}, acc, device) : Tensor();
  const Tensor pb = gb.defined() ? empty_tensor({chunks, cols}, acc, device) : Tensor();
  launch(kernel(dev, "norm.cu", kname("norm_columns_partial", t)), LaunchConfig{unsigned(tiles * chunks), 256, 0},
         stream, rows, cols, chunk_rows, const_cast<void *>(ptr_or_null(pw)), const_cast<void *>(ptr_or_null(pb)),
         x.data_ptr(), dy.data_ptr(), stats.data_ptr());
  launch(kernel(dev, "norm.cu", kname("norm_columns_final", t)), elementwise_config(dev, cols), stream, cols, chunks,
         const_cast<void *>(ptr_or_null(gw)), const_cast<void *>(ptr_or_null(gb)), ptr_or_null(pw), ptr_or_null(pb));
}

// The gradients of layer_norm (Centered) or rms_norm. `m` holds the meta results (undefined where not wanted).
Grads norm_backward(const char *name, bool centered, const Grads &m, const Tensor &grad_out, const Tensor &input,
                    const Shape &normalized_shape, const std::optional<Tensor> &weight, double eps) {
  const std::string op = std::string(name) + "_backward";
  const int dev = norm_device(op.c_str(), {grad_out, input, weight ? *weight : Tensor()});
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const ScalarType t = input.dtype();
  Grads out;
  for (auto [mt, o] : {std::pair{&m.input, &out.input}, std::pair{&m.weight, &out.weight},
                       std::pair{&m.bias, &out.bias}})
    if (mt->defined()) *o = empty_as_meta(*mt, device);
  const int64_t cols = shape_numel(normalized_shape), rows = cols == 0 ? 0 : input.numel() / cols;
  if (cols == 0) return out;  // every result is empty
  const bool want_params = out.weight.defined() || out.bias.defined();
  // The column sums are taken in `t` and cast to the parameters' dtype after, as on the CPU.
  Tensor gw = out.weight.defined() && out.weight.dtype() != t ? empty_tensor(normalized_shape, t, device) : out.weight;
  Tensor gb = out.bias.defined() && out.bias.dtype() != t ? empty_tensor(normalized_shape, t, device) : out.bias;
  if (rows == 0) {  // sums over no rows
    for (Tensor *g : {&out.weight, &out.bias})
      if (g->defined()) call_op<Tensor>(TP_OP("fill_"), *g, Scalar(int64_t(0)));
    return out;
  }
  if (!out.input.defined() && !want_params) return out;
  const Tensor x = dense(input, t), dy = dense(grad_out, t), w = dense_optional(weight, t);
  const Tensor dx = !out.input.defined() || out.input.is_contiguous() ? out.input : empty_tensor(x.sizes(), t, device);
  const ScalarType acc = t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  const Stream stream = stream_for(dev);
  // Backward holds two rows in registers, so no warp32 form: rows of 257..1024 take a block16 of 64 threads.
  const bool vec = rows_vec_ok(cols, x->itemsize(), {x.data_ptr(), dy.data_ptr(), ptr_or_null(dx), ptr_or_null(w)});
  const RowForm f = row_form(dev, rows, cols, vec, false);
  void *dx_ptr = const_cast<void *>(ptr_or_null(dx));
  const CUfunction row_kernel = kernel(dev, "norm.cu", kname((op + f.suffix).c_str(), t));
  // The 16-byte-pack register forms of float16/bfloat16/float32 sum the columns as they go (Note [Fused
  // column sums]); float64, single elements and long rows leave them to the two kernels below.
  if (want_params && !f.is_long && vec && t != ScalarType::Float64) {
    const LaunchConfig c = fused_config(dev, f, rows);
    const int64_t parts = c.grid;
    const Tensor pw = gw.defined() ? empty_tensor({parts, cols}, acc, device) : Tensor();
    const Tensor pb = gb.defined() ? empty_tensor({parts, cols}, acc, device) : Tensor();
    launch(row_kernel, c, stream, rows, cols, dx_ptr, static_cast<void *>(nullptr), x.data_ptr(), dy.data_ptr(),
           ptr_or_null(w), eps, const_cast<void *>(ptr_or_null(pw)), const_cast<void *>(ptr_or_null(pb)));
    launch(kernel(dev, "norm.cu", kname("norm_columns_reduce", t)), LaunchConfig{unsigned((cols + 31) / 32), 256, 0},
           stream, cols, parts, const_cast<void *>(ptr_or_null(gw)), const_cast<void *>(ptr_or_null(gb)),
           ptr_or_null(pw), ptr_or_null(pb));
  } else {
    const Tensor stats = empty_tensor({rows, 2}, acc, device);
    if (f.is_long)
      launch(row_kernel, f.config, stream, rows, cols, dx_ptr, stats.data_ptr(), x.data_ptr(), dy.data_ptr(),
             ptr_or_null(w), eps);
    else
      launch(row_kernel, f.config, stream, rows, cols, dx_ptr, stats.data_ptr(), x.data_ptr(), dy.data_ptr(),
             ptr_or_null(w), eps, static_cast<void *>(nullptr), static_cast<void *>(nullptr));
    if (want_params) column_sums(dev, stream, rows, cols, x, dy, stats, gw, gb);
  }
  if (dx.defined() && dx.impl() != out.input.impl()) device_copy(out.input, dx);
  if (!want_params) return out;
  if (gw.defined() && gw.impl() != out.weight.impl()) device_copy(out.weight, gw);
  if (gb.defined() && gb.impl() != out.bias.impl()) device_copy(out.bias, gb);
  return out;
}

}  // namespace

static Tensor layer_norm(const Tensor &input, Shape normalized_shape, std::optional<Tensor> weight,
                         std::optional<Tensor> bias, double eps, bool cudnn_enable) {
  const Tensor m = call_op<Tensor>(TP_OP("layer_norm"), meta_like(input), normalized_shape, meta_like(weight),
                                   meta_like(bias), eps, cudnn_enable);
  return norm_forward("layer_norm", m, input, normalized_shape, weight, bias, eps);
}

static Tensor rms_norm(const Tensor &input, Shape normalized_shape, std::optional<Tensor> weight,
                       std::optional<double> eps) {
  const Tensor m = call_op<Tensor>(TP_OP("rms_norm"), meta_like(input), normalized_shape, meta_like(weight), eps);
  return norm_forward("rms_norm", m, input, normalized_shape, weight, std::nullopt,
                      eps.value_or(finfo_eps(input.dtype())));
}

static std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor &grad_out, const Tensor &input,
                                                              Shape normalized_shape, std::optional<Tensor> weight,
                                                              double eps, bool input_grad, bool weight_grad,
                                                              bool bias_grad) {
  const auto [mi, mw, mb] = call_op<std::tuple<Tensor, Tensor, Tensor>>(
      TP_OP("layer_norm_backward"), meta_like(grad_out), meta_like(input), normalized_shape, meta_like(weight), eps,
      input_grad, weight_grad, bias_grad);
  const Grads g = norm_backward("layer_norm", true, Grads{mi, mw, mb}, grad_out, input, normalized_shape, weight,
                                eps);
  return {g.input, g.weight, g.bias};
}

static std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor &grad_out, const Tensor &input,
                                                    Shape normalized_shape, std::optional<Tensor> weight,
                                                    std::optional<double> eps, bool input_grad, bool weight_grad) {
  const auto [mi, mw] = call_op<std::tuple<Tensor, Tensor>>(TP_OP("rms_norm_backward"), meta_like(grad_out),
                                                            meta_like(input), normalized_shape, meta_like(weight),
                                                            eps, input_grad, weight_grad);
  const Grads g = norm_backward("rms_norm", false, Grads{mi, mw, Tensor()}, grad_out, input, normalized_shape,
                                weight, eps.value_or(finfo_eps(input.dtype())));
  return {g.input, g.weight};
}

TP_LIBRARY(cuda_norm) {
  TP_IMPL(lib, "layer_norm", CUDA, layer_norm);
  TP_IMPL(lib, "rms_norm", CUDA, rms_norm);
  TP_IMPL(lib, "layer_norm_backward", CUDA, layer_norm_backward);
  TP_IMPL(lib, "rms_norm_backward", CUDA, rms_norm_backward);
}

}  // namespace tp::p10::cuda
