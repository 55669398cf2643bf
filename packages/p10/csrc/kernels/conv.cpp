// conv.cpp — convolution: the generic op `convolution` (aten's, plain and transposed, 1-3 spatial dims) and
// the named ops that call it: conv1d/2d/3d (padding as numbers or 'same'/'valid') and conv_transpose1d/2d/3d.
//
// Where it sits: the one kernel with real work is `convolution` (CPU and Meta). Per sample it is one im2col
// (kernels/im2col.h) and one GEMM per group through OpenBLAS or the reference GEMM (kernels/blas.h): Note
// [Convolution as GEMM]. The named ops are Composites (STYLE.md rule 2): they add and remove the batch dim of
// unbatched inputs and turn 'same' into numbers, so autograd will only ever need a formula for `convolution`.
#include <cblas.h>

#include <algorithm>
#include <memory>

#include "dispatch/kernel_box.h"
#include "kernels/blas.h"
#include "kernels/im2col.h"
#include "loop/parallel.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Note [Convolution as GEMM]
//   A convolution of input [N, C, in...] with weight [O, C / G, k...] in G groups is, for one sample, the
//   product  out[g] (O/G x L) = weight[g] (O/G x (C/G * K)) @ col[g] ((C/G * K) x L)  for each group g, where
//   col = im2col(input[n]) (Note [Window geometry]), K = prod(k) and L the number of output positions. The
//   groups' rows of col, and their weights and outputs, are consecutive blocks: each product reads and writes
//   its block in place, without copies.
//   A transposed convolution is the adjoint: col[g] = weight[g]^T @ input[n][g], then col2im adds the columns
//   onto the output (weight [C, O / G, k...] is read transposed in place; BLAS takes the flag).
//   Where the window is the identity (1x1 kernel, stride 1, no padding) im2col and col2im are skipped and the
//   GEMM reads and writes the tensors directly. The bias, when given, is written into the output first and the
//   GEMM adds onto it (beta = 1). Half and bfloat16 convolve in float32 (opmath) and round once at the end.
//   float32/64 and complex products run in OpenBLAS; integer dtypes (which PyTorch's CPU convolution also
//   accepts) in the reference GEMM, accumulating in int64.

namespace {

struct ConvArgs {
  int64_t dims;  // spatial dims, 1 to 3
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
};

std::string list_str(const std::vector<int64_t> &v) { return shape_str(v); }

// "(3 x 3)": PyTorch's spelling of spatial sizes in the kernel-size error.
std::string cross_str(const std::vector<int64_t> &v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s + ")";
}

// "stride_height: 1 stride_width: 2": PyTorch's spelling of per-dim values in transposed-convolution errors
// (a 1-D convolution runs as 2-D there, so it names a height of 0 padding / 1 stride or dilation too).
std::string per_dim_str(const char *name, const std::vector<int64_t> &v) {
  static const char *dim_names[] = {"depth", "height", "width"};
  std::vector<int64_t> w = v;
  if (w.size() == 1) w.insert(w.begin(), std::string(name) == "output_padding" ? 0 : 1);
  std::string s;
  for (size_t i = 0; i < w.size(); ++i)
    s += (i ? " " : "") + std::string(name) + "_" + dim_names[3 - w.size() + i] + ": " + std::to_string(w[i]);
  return s;
}

// A per-dim argument: one value means the same for every spatial dim (PyTorch's expand_param_if_needed).
std::vector<int64_t> expand_param(const std::vector<int64_t> &v, const char *name, int64_t dims) {
  if (v.size() == 1) return std::vector<int64_t>(size_t(dims), v[0]);
  TP_CHECK(int64_t(v.size()) == dims, Runtime, "expected ", name, " to be a single integer value or a list of ",
           dims, " values to match the convolution dimensions, but got ", name, "=", list_str(v));
  return v;
}

// The checks of PyTorch's convolution (check_shape_forward and friends), in its order and wording.
void check_conv_args(const Tensor &input, const Tensor &weight, const Tensor &bias, const ConvArgs &a) {
  const int64_t k = weight.dim();
  for (int64_t p : a.padding) TP_CHECK(p >= 0, Runtime, "negative padding is not supported");
  for (int64_t p : a.output_padding) TP_CHECK(p >= 0, Runtime, "negative output_padding is not supported");
  for (int64_t s : a.stride) TP_CHECK(s > 0, Runtime, "non-positive stride is not supported");
  for (int64_t d : a.dilation) TP_CHECK(d > 0, Runtime, "non-positive dilation is not supported");
  TP_CHECK(a.groups > 0, Runtime, "non-positive groups is not supported");
  TP_CHECK(input.dim() == k, Runtime, "Expected ", k, "-dimensional input for ", k, "-dimensional weight ",
           shape_str(weight.sizes()), ", but got ", input.dim(), "-dimensional input of size ",
           shape_str(input.sizes()), " instead");
  TP_CHECK(weight.size(0) >= a.groups, Runtime, "Given groups=", a.groups, ", expected weight to be at least ",
           a.groups, " at dimension 0, but got weight of size ", shape_str(weight.sizes()), " instead");
  TP_CHECK(weight.size(0) % a.groups == 0, Runtime, "Given groups=", a.groups, ", expected weight to be divisible "
           "by ", a.groups, " at dimension 0, but got weight of size ", shape_str(weight.sizes()), " instead");
  const int64_t out_channels = a.transposed ? weight.size(1) * a.groups : weight.size(0);
  if (!a.transposed) {
    TP_CHECK(input.size(1) == weight.size(1) * a.groups, Runtime, "Given groups=", a.groups, ", weight of size ",
             shape_str(weight.sizes()), ", expected input", shape_str(input.sizes()), " to have ",
             weight.size(1) * a.groups, " channels, but got ", input.size(1), " channels instead");
  } else {
    TP_CHECK(input.size(1) == weight.size(0), Runtime, "Given transposed=1, weight of size ",
             shape_str(weight.sizes()), ", expected input", shape_str(input.sizes()), " to have ", weight.size(0),
             " channels, but got ", input.size(1), " channels instead");
    bool fits = true;
    for (int64_t i = 0; i < a.dims; ++i)
      fits = fits && (a.output_padding[i] < a.stride[i] || a.output_padding[i] < a.dilation[i]);
    TP_CHECK(fits, Runtime, "output padding must be smaller than either stride or dilation, but got ",
             per_dim_str("output_padding", a.output_padding), " ", per_dim_str("stride", a.stride), " ",
             per_dim_str("dilation", a.dilation));
  }
  TP_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out_channels), Runtime, "Given weight of size ",
           shape_str(weight.sizes()), ", expected bias to be 1-dimensional with ", out_channels,
           " elements, but got bias of size ", bias.defined() ? shape_str(bias.sizes()) : "[]", " instead");
  if (!a.transposed) {
    std::vector<int64_t> padded, kernel;
    bool fits = true;
    for (int64_t i = 0; i < a.dims; ++i) {
      padded.push_back(input.size(2 + i) + 2 * a.padding[i]);
      kernel.push_back(a.dilation[i] * (weight.size(2 + i) - 1) + 1);
      fits = fits && padded.back() >= kernel.back();
    }
    TP_CHECK(fits, Runtime, "Calculated padded input size per channel: ", cross_str(padded), ". Kernel size: ",
             cross_str(kernel), ". Kernel size can't be greater than actual input size");
  }
  TP_CHECK(input.dtype() == weight.dtype(), Runtime, "Input type (", scalar_type_name(input.dtype()),
           ") and weight type (", scalar_type_name(weight.dtype()), ") should be the same");
  TP_CHECK(!bias.defined() || bias.dtype() == input.dtype(), Runtime, "Input type (",
           scalar_type_name(input.dtype()), ") and bias type (", scalar_type_name(bias.dtype()),
           ") should be the same");
  if (input.dtype() == ScalarType::Bool) throw_unsupported_dtype("convolution", ScalarType::Bool);
}

// The window of one sample (Note [Window geometry]): for a plain convolution the input is the image and the
// output the columns; for a transposed one the roles swap (the output is the image col2im writes).
WindowGeometry conv_geometry(const Shape &image, const Shape &columns, const Tensor &weight, const ConvArgs &a,
                             int64_t channels) {
  WindowGeometry g;
  g.channels = channels;
  for (int64_t i = 0; i < a.dims; ++i) {
    const size_t j = size_t(3 - a.dims + i);
    g.in[j] = image[2 + i];
    g.out[j] = columns[2 + i];
    g.kernel[j] = weight.size(2 + i);
    g.stride[j] = a.stride[i];
    g.pad[j] = a.padding[i];
    g.dilation[j] = a.dilation[i];
  }
  return g;
}

// The window that maps every position to itself (then col is the image itself): a single tap, stride 1, no
// padding, and (for transposed convolutions, which may add output_padding) equal sizes.
bool is_identity_window(const WindowGeometry &g) {
  return g.kernel_numel() == 1 && g.stride == std::array<int64_t, 3>{1, 1, 1} &&
         g.pad == std::array<int64_t, 3>{0, 0, 0} && g.in == g.out;
}

// out [N, O, L...] = bias[o] everywhere (the GEMMs then add onto it), or 0 without a bias.
template <typename T> void fill_bias(T *out, const T *bias, int64_t batch, int64_t channels, int64_t length) {
  parallel_for(0, batch * channels, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(length, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r)
                   std::fill(out + r * length, out + (r + 1) * length, bias ? bias[r % channels] : T(0));
               });
}

// C (m x n) = A (m x k) @ B (k x n) + beta * C through OpenBLAS where it takes the dtype, else the reference.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, MatRef<const T> a, MatRef<const T> b, const Scalar &beta, MatRef<T> c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex64> ||
                std::is_same_v<T, complex128>) {
    if (gemm_use_blas() && gemm_blas<T>(m, n, k, Scalar(1), a, b, beta, c)) return;
  }
  gemm_reference<T>(m, n, k, Scalar(1), a, b, beta, c);
}

// The same product with the columns of B and C split over OpenMP threads, each a GEMM on its own thread
// (Note [Convolution threads]); called inside a parallel region, or for small products, one GEMM.
template <typename T>
void gemm_columns(int64_t m, int64_t n, int64_t k, MatRef<const T> a, MatRef<const T> b, const Scalar &beta,
                  MatRef<T> c) {
  const int64_t threads = get_num_threads(), block = (n + threads - 1) / threads;
  if (threads == 1 || in_parallel_region() || m * n * k < kGrainSize * 8) return gemm<T>(m, n, k, a, b, beta, c);
  parallel_for(0, threads, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t j0 = t * block, j1 = std::min(n, j0 + block);
      if (j0 < j1)
        gemm<T>(m, j1 - j0, k, a, {b.data + j0 * b.cs, b.rs, b.cs}, beta, {c.data + j0 * c.cs, c.rs, c.cs});
    }
  });
}

// The shapes of one sample's products (Note [Convolution as GEMM]); per group g, with contiguous operands:
//   plain:      out[g] (og x L_out) += w[g] (og x rows) @ col[g] (rows x L_out),  rows = cg * K
//   transposed: col[g] (rows x L_in) = w[g]^T (rows x cg) @ x[g] (cg x L_in),    rows = og * K
struct ConvPlan {
  WindowGeometry g;
  bool transposed, direct;
  int64_t groups, cg, og, lin, lout, rows;
  int64_t col_numel() const { return direct ? 0 : g.col_rows() * g.out_numel(); }
};

// One sample: x [cin, in...] -> out [cout, out...] (holding the bias), using col as scratch.
template <typename T> void conv_sample(const ConvPlan &p, const T *x, const T *w, T *out, T *col) {
  const int64_t G = p.groups, cg = p.cg, og = p.og, rows = p.rows, lin = p.lin, lout = p.lout;
  if (!p.transposed) {
    const T *cols = p.direct ? x : col;
    if (!p.direct) im2col_loop<T>(x, col, p.g);
    for (int64_t i = 0; i < G; ++i)
      gemm_columns<T>(og, lout, rows, {w + i * og * rows, rows, 1}, {cols + i * rows * lout, lout, 1}, Scalar(1),
              {out + i * og * lout, lout, 1});
  } else {
    T *cols = p.direct ? out : col;  // the identity window adds the product straight onto the output
    for (int64_t i = 0; i < G; ++i)
      gemm_columns<T>(rows, lin, cg, {w + i * cg * rows, 1, rows}, {x + i * cg * lin, lin, 1}, Scalar(p.direct ? 1 : 0),
              {cols + i * rows * lin, lin, 1});
    if (!p.direct) col2im_loop<T>(col, out, p.g);
  }
}

// Note [Convolution threads]
//   OpenBLAS keeps its own thread pool beside our OpenMP one (Note [GEMM threads] in blas.cpp). Alternating
//   them — an OpenMP im2col, then a threaded GEMM, per sample — leaves each pool's idle threads spinning while
//   the other works, which on a busy machine costs far more than the work (we measured 5-10x). So a
//   convolution uses OpenMP threads only: OpenBLAS is held at one thread (blas_hold_one_thread), so every GEMM
//   runs on the thread that calls it. With at least as many samples as threads, the batch is split and each thread
//   runs whole samples (im2col, GEMM, col2im) with its own scratch; otherwise samples run one after another,
//   with im2col / col2im split over threads by rows / channels and each GEMM by output columns.

// The computation of Note [Convolution as GEMM] on contiguous tensors of one dtype T (not bool or 16-bit).
template <typename T>
void conv_compute(const Tensor &x, const Tensor &w, const Tensor &b, const Tensor &out, const ConvArgs &a) {
  const int64_t n = x.size(0), cin = x.size(1), cout = out.size(1);
  ConvPlan p;
  p.g = a.transposed ? conv_geometry(out.sizes(), x.sizes(), w, a, cout) : conv_geometry(x.sizes(), out.sizes(), w, a, cin);
  p.transposed = a.transposed;
  p.direct = is_identity_window(p.g);
  p.groups = a.groups;
  p.cg = cin / a.groups;
  p.og = cout / a.groups;
  p.lin = x.numel() / std::max<int64_t>(n * cin, 1);
  p.lout = out.numel() / std::max<int64_t>(n * cout, 1);
  p.rows = p.g.col_rows() / a.groups;
  fill_bias<T>(out.data<T>(), b.defined() ? b.data<T>() : nullptr, n, cout, p.lout);
  const T *px = x.data<T>(), *pw = w.data<T>();
  T *po = out.data<T>();
  auto run = [&](int64_t i0, int64_t i1) {
    std::unique_ptr<T[]> col(new T[size_t(p.col_numel())]);
    for (int64_t i = i0; i < i1; ++i) conv_sample<T>(p, px + i * cin * p.lin, pw, po + i * cout * p.lout, col.get());
  };
  if (get_num_threads() == 1 || in_parallel_region()) return run(0, n);
  blas_hold_one_thread();
  if (n >= get_num_threads()) parallel_for(0, n, 1, run);
  else run(0, n);
}

Tensor contiguous_as(const Tensor &t, ScalarType dtype) {
  if (!t.defined()) return t;
  Tensor r = t.dtype() == dtype ? t : cast_to(t, dtype);
  return call_op<Tensor>(TP_OP("contiguous"), r);
}

}  // namespace

// convolution: aten's generic op (batched input [N, C, in...]); the named ops below call it.
static Tensor convolution(const Tensor &input, const Tensor &weight, const Tensor &bias, std::vector<int64_t> stride,
                          std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
                          std::vector<int64_t> output_padding, int64_t groups) {
  const int64_t dims = weight.dim() - 2;
  TP_CHECK(dims >= 1 && dims <= 3, Runtime, "convolution: expected a weight with 1 to 3 spatial dims (3-D to 5-D), "
           "but got weight of size ", shape_str(weight.sizes()));
  const ConvArgs a{dims,
                   expand_param(stride, "stride", dims),
                   expand_param(padding, "padding", dims),
                   expand_param(dilation, "dilation", dims),
                   expand_param(output_padding, "output_padding", dims),
                   transposed,
                   groups};
  check_conv_args(input, weight, bias, a);
  Shape shape{input.size(0), transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t in = input.size(2 + i), k = weight.size(2 + i), s = a.stride[i], p = a.padding[i],
                  d = a.dilation[i];
    shape.push_back(transposed ? (in - 1) * s - 2 * p + d * (k - 1) + a.output_padding[i] + 1
                               : window_count(in, p, p, k, d, s));
  }
  const Shape spatial_in(input.sizes().begin() + 2, input.sizes().end()), spatial_out(shape.begin() + 2, shape.end());
  TP_CHECK(std::all_of(spatial_out.begin(), spatial_out.end(), [](int64_t v) { return v >= 1; }), Runtime,
           "Given input size per channel: ", cross_str(spatial_in), ". Calculated output size per channel: ",
           cross_str(spatial_out), ". Output size is too small");
  Tensor out = empty_tensor(shape, input.dtype(), input.device());
  if (input.device().is_meta() || out.numel() == 0) return out;
  const ScalarType dt = input.dtype();
  const ScalarType ct = dt == ScalarType::Float16 || dt == ScalarType::BFloat16 ? ScalarType::Float32 : dt;
  Tensor x = contiguous_as(input, ct), w = contiguous_as(weight, ct), b = contiguous_as(bias, ct);
  Tensor o = ct == dt ? out : empty_tensor(shape, ct, input.device());
  TP_DISPATCH_ALL(ct, "convolution", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>)
      conv_compute<T>(x, w, b, o, a);
  });
  if (o.impl() != out.impl()) call_op<Tensor>(TP_OP("copy_"), out, o, false);
  return out;
}

// ---- the named ops ------------------------------------------------------------------------------------------
namespace {

// Run `convolution` on an input that may lack the batch dim (PyTorch's unbatched inputs), after checking its
// rank against the op's: `dims` spatial dims, so dims + 1 (unbatched) or dims + 2 (batched) dims.
Tensor batchify(const char *op, int64_t dims, const Tensor &input, const Tensor &weight, const Tensor &bias,
                const std::vector<int64_t> &stride, const std::vector<int64_t> &padding,
                const std::vector<int64_t> &dilation, bool transposed, const std::vector<int64_t> &output_padding,
                int64_t groups) {
  TP_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2, Runtime, "Expected ", dims + 1, "D (unbatched) or ",
           dims + 2, "D (batched) input to ", op, ", but got input of size: ", shape_str(input.sizes()));
  const bool batched = input.dim() == dims + 2;
  Tensor x = batched ? input : call_op<Tensor>(TP_OP("unsqueeze"), input, int64_t(0));
  Tensor r = call_op<Tensor>(TP_OP("convolution"), x, weight, bias, stride, padding, dilation, transposed,
                             output_padding, groups);
  return batched ? r : call_op<Tensor>(TP_OP("squeeze"), r, std::vector<int64_t>{0});
}

// padding='valid' is no padding; padding='same' pads so that the output has the input's size (stride 1 only).
// The total padding of a dim, dilation * (kernel - 1), is split evenly; when it is odd (an even kernel) the
// extra element goes after the input, through `pad`, as PyTorch does (_convolution_mode).
Tensor conv_padding_str(const char *op, int64_t dims, const Tensor &input, const Tensor &weight, const Tensor &bias,
                        const std::vector<int64_t> &stride, const std::string &padding,
                        const std::vector<int64_t> &dilation, int64_t groups) {
  const std::vector<int64_t> no_pad(size_t(dims), 0);
  if (padding == "valid") return batchify(op, dims, input, weight, bias, stride, no_pad, dilation, false, {0}, groups);
  TP_CHECK(padding == "same", Runtime, "Invalid padding string: '", padding, "'");
  for (int64_t s : expand_param(stride, "stride", dims))
    TP_CHECK(s == 1, Runtime, "padding='same' is not supported for strided convolutions");
  const std::vector<int64_t> dil = expand_param(dilation, "dilation", dims);
  TP_CHECK(weight.dim() == dims + 2, Runtime, op, ": expected weight to be ", dims + 2, "-D, but got weight of size ",
           shape_str(weight.sizes()));
  std::vector<int64_t> sym(static_cast<size_t>(dims)), extra;  // extra: `pad`'s (before, after) pairs, last dim first
  bool asymmetric = false;
  for (int64_t i = dims - 1; i >= 0; --i) {
    const int64_t total = dil[size_t(i)] * (weight.size(2 + i) - 1);
    sym[size_t(i)] = total / 2;
    extra.insert(extra.end(), {0, total - 2 * (total / 2)});
    asymmetric = asymmetric || total % 2;
  }
  Tensor x = input;
  if (asymmetric) {
    TP_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2, Runtime, "Expected ", dims + 1, "D (unbatched) or ",
             dims + 2, "D (batched) input to ", op, ", but got input of size: ", shape_str(input.sizes()));
    x = call_op<Tensor>(TP_OP("pad"), input, extra, std::string("constant"), std::optional<double>(0.0));
  }
  return batchify(op, dims, x, weight, bias, stride, sym, dilation, false, {0}, groups);
}

}  // namespace

#define TP_CONV_OPS(D)                                                                                         \
  static Tensor conv##D##d(const Tensor &input, const Tensor &weight, const Tensor &bias,                     \
                           std::vector<int64_t> stride, std::vector<int64_t> padding,                         \
                           std::vector<int64_t> dilation, int64_t groups) {                                   \
    return batchify("conv" #D "d", D, input, weight, bias, stride, padding, dilation, false, {0}, groups);    \
  }                                                                                                           \
  static Tensor conv##D##d_padding(const Tensor &input, const Tensor &weight, const Tensor &bias,             \
                                   std::vector<int64_t> stride, std::string padding,                          \
                                   std::vector<int64_t> dilation, int64_t groups) {                           \
    return conv_padding_str("conv" #D "d", D, input, weight, bias, stride, padding, dilation, groups);        \
  }                                                                                                           \
  static Tensor conv_transpose##D##d(const Tensor &input, const Tensor &weight, const Tensor &bias,           \
                                     std::vector<int64_t> stride, std::vector<int64_t> padding,               \
                                     std::vector<int64_t> output_padding, int64_t groups,                     \
                                     std::vector<int64_t> dilation) {                                         \
    return batchify("conv_transpose" #D "d", D, input, weight, bias, stride, padding, dilation, true,         \
                    output_padding, groups);                                                                  \
  }
TP_CONV_OPS(1)
TP_CONV_OPS(2)
TP_CONV_OPS(3)
#undef TP_CONV_OPS

TP_LIBRARY(conv) {
  lib.def("convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
          "bool transposed, int[] output_padding, int groups) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) impl_typed<convolution>(lib, "convolution", key, __LINE__);
  for (const char *d : {"1", "2", "3"}) {
    const std::string n(d), ints = "int[" + n + "]";
    // aten's schemas; conv_transpose2d/3d carry the overload name `.input` there too.
    const std::string common = "(Tensor input, Tensor weight, Tensor? bias=None, " + ints + " stride=1, ";
    lib.def("conv" + n + "d" + common + ints + " padding=0, " + ints + " dilation=1, int groups=1) -> Tensor");
    lib.def("conv" + n + "d.padding" + common + "str padding=\"valid\", " + ints +
            " dilation=1, int groups=1) -> Tensor");
    lib.def("conv_transpose" + n + "d" + (n == "1" ? "" : ".input") + common + ints + " padding=0, " + ints +
            " output_padding=0, int groups=1, " + ints + " dilation=1) -> Tensor");
  }
  TP_IMPL(lib, "conv1d", Composite, conv1d);
  TP_IMPL(lib, "conv2d", Composite, conv2d);
  TP_IMPL(lib, "conv3d", Composite, conv3d);
  TP_IMPL(lib, "conv1d.padding", Composite, conv1d_padding);
  TP_IMPL(lib, "conv2d.padding", Composite, conv2d_padding);
  TP_IMPL(lib, "conv3d.padding", Composite, conv3d_padding);
  TP_IMPL(lib, "conv_transpose1d", Composite, conv_transpose1d);
  TP_IMPL(lib, "conv_transpose2d.input", Composite, conv_transpose2d);
  TP_IMPL(lib, "conv_transpose3d.input", Composite, conv_transpose3d);
}

}  // namespace tp::p10
