// ops_conv.cpp — the CUDA kernel of `convolution` (aten's generic op: 1-3 spatial dims, stride, padding,
// dilation, groups, bias, plain and transposed with output_padding). conv1d/2d/3d and conv_transpose1d/2d/3d
// are Composites over it (kernels/conv.cpp), and so is its backward (tpx formulas/conv.py): every one of them
// runs here on CUDA.
//
// Where it sits: the CUDA twin of kernels/conv.cpp. The CPU op, asked on meta tensors (cuda/ops_meta.h), checks
// the call with PyTorch's messages and gives the output shape; the data movement is im2col.cu (cuda/im2col.h)
// and the products are the dispatched bmm.out / baddbmm.out, i.e. cuBLAS (ops_matmul.cpp).
//
// Note [CUDA convolution as batched GEMM]
//   The CPU's Note [Convolution as GEMM] runs one sample at a time. Here a chunk of `nb` samples is one
//   product per group, batched over the groups in one cuBLAS call:
//     plain:      col = im2col(x[chunk])                      [G, cg*K, nb*L_out]  (rows (c, k), cols (n, l))
//                 y   = bias + w (G x og x cg*K) @ col         [G, og, nb*L_out] = [O, nb, L_out]
//                 out[chunk] = y with its first two dims swapped (one strided copy)
//     transposed (stride above 1; stride 1 runs as plain, Note [Stride-1 transposed convolution as a plain one]):
//                 xt  = x[chunk] with n and c swapped          [G, cg, nb*L_in]
//                 col = w^T (G x og*K x cg) @ xt               [G, og*K, nb*L_in]
//                 out[chunk] = bias + col2im(col)              (the gather adds onto the bias)
//   The column buffer is bounded by kColBytes, which sets nb; a chunk of one sample skips the swaps (its
//   matrices are the tensors themselves). A window that maps every position to itself (1x1 kernel, stride 1,
//   no padding, same sizes) needs no im2col/col2im at all: one GEMM per sample straight on the tensors.
//   The bias enters as baddbmm's `self`, broadcast over the columns (beta = 1). float16 / bfloat16 multiply
//   in cuBLAS with float32 accumulation, one rounding per product; the transposed form rounds the columns
//   before col2im sums them (the CPU converts to float32 first, so results differ by 16-bit rounding only).
//   float32 follows tp.backends.cuda.matmul.allow_tf32 like every CUDA GEMM. Integer convolutions, which the
//   CPU computes, raise NotImplementedError on CUDA, as PyTorch's do.
#include <algorithm>

#include "cuda/im2col.h"
#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

namespace {

constexpr int64_t kColBytes = int64_t(256) << 20;  // the most a chunk's column buffer may take

Tensor view3(const Tensor &t, int64_t offset, Shape sizes, Shape strides) {
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset() + offset);
}

// c = w @ b (+ bias when given), all [G, m, n]-shaped views; `bias3` is [G, m, 1]-broadcast or undefined.
void gemm(const Tensor &a, const Tensor &b, const Tensor &bias3, const Tensor &c) {
  if (bias3.defined())
    call_op<Tensor>(TP_OP("baddbmm.out"), bias3, a, b, Scalar(int64_t(1)), Scalar(int64_t(1)), c);
  else
    call_op<Tensor>(TP_OP("bmm.out"), a, b, c);
}

// One value per spatial dim (PyTorch's expand_param_if_needed; the meta call has checked the lengths).
std::array<int64_t, 3> spread(const std::vector<int64_t> &v, int64_t dims, int64_t fill) {
  std::array<int64_t, 3> r{fill, fill, fill};
  for (int64_t i = 0; i < dims; ++i) r[size_t(3 - dims + i)] = v.size() == 1 ? v[0] : v[size_t(i)];
  return r;
}

// Note [Per-sample GEMMs straight into NCHW]
//   The batched-over-groups GEMM of Note [CUDA convolution as batched GEMM] gives [O, nb, L_out], which one more
//   pass (reading and writing the whole output) turns into out's [nb, O, L_out]. With one group the product
//   can instead be batched over the samples: out[n] = w @ col[n], a strided-batched GEMM that writes each
//   sample's [O, L_out] where it belongs, with col in the ops' layout [nb, cg*K, L_out]. cuBLAS wants a real
//   matrix per batch entry (ops_matmul.cpp copies a stride-0 batch), so the weight is repeated nb times once
//   per call: nb * O * cg*K elements written. That beats the output pass (2 * nb * O * L_out) when cg*K is
//   small next to L_out; it is taken when cg*K <= L_out / 4 (a ResNet 3x3 layer on 56x56: 576 vs 3136) and
//   a sample's L_out elements are a multiple of 16 bytes (every matrix aligned for tensor-core GEMMs). The
//   weight gradient's form (L_out = 9 and a huge cg*K) keeps the batched-over-groups GEMM, whose wide
//   columns (all samples side by side) suit it. The 1x1 stride-1 path uses the same batching: one GEMM for
//   the batch instead of one per sample.

// The single group [1, og, rows] of `wg` repeated n times, contiguous [n, og, rows] (any strides in wg).
Tensor repeat_weight(const Tensor &wg, int64_t n) {
  Tensor r = empty_tensor({n, wg.size(1), wg.size(2)}, wg.dtype(), wg.device());
  device_copy(r, make_view(wg, {n, wg.size(1), wg.size(2)}, {0, wg.stride(1), wg.stride(2)}, wg.storage_offset()));
  return r;
}

// The bias as baddbmm's `self` for n samples of one group: [n, og, 1] broadcast; undefined without a bias.
Tensor bias_rows(const Tensor &bias, int64_t n, int64_t og) {
  return bias.defined() ? make_view(bias, {n, og, 1}, {0, bias.stride(0), 0}, bias.storage_offset()) : Tensor();
}

// Note [Stride-1 transposed convolution as a plain one]
//   A transposed convolution scatters: out[n, g og + o, i] sums x[n, g cg + c, j] w[g cg + c, o, k] over the
//   taps k with i = j s - p + k d. With s = 1 that is j = i + p - k d, and writing k' = K-1-k (every spatial
//   dim reversed), j = i - P + k' d with P = d (K-1) - p: a plain convolution of the same input with
//   padding P, dilation d and the weight
//       w'[g og + o, c, k'] = w[g cg + c, o, K-1-k']        (channels swapped within each group, taps reversed)
//   (reversing every dim of a row-major tap index reverses its flat index). Only the left padding is a
//   number: the output size is the transposed op's, and im2col reads 0 wherever a tap leaves the input, so
//   output_padding needs nothing. P may be negative (p > d (K-1)); im2col's window arithmetic is signed.
//   Why: the transposed form writes a column matrix K times the output's size from its GEMM and reads it
//   back in col2im; the plain form writes K times the input's size in im2col and its GEMM writes the output
//   directly, with float32 accumulation over every (c, k) (one rounding per output in float16/bfloat16).
//   The input gradient of a stride-1 convolution (a ResNet's 3x3 layers) is this transposed convolution.
//   Strides above 1 keep GEMM + col2im.

// w' of the Note: [cout, cg, K] from the contiguous transposed weight w [G * cg, og, K], by one strided copy
// that reads the taps backwards (a stride of -1).
Tensor plain_weight(const Tensor &w, int64_t G, int64_t cg, int64_t og, int64_t K) {
  Tensor r = empty_tensor({G * og, cg, K}, w.dtype(), w.device());
  // Both as [G, og, cg, K]: r is contiguous; w's element (g, c, o, k) sits at ((g cg + c) og + o) K + k, and
  // its tap K-1-k at that minus k from the offset K-1.
  device_copy(make_view(r, {G, og, cg, K}, {og * cg * K, cg * K, K, 1}, r.storage_offset()),
              make_view(w, {G, og, cg, K}, {cg * og * K, K, og * K, -1}, w.storage_offset() + K - 1));
  return r;
}

}  // namespace

static Tensor convolution(const Tensor &input, const Tensor &weight, const Tensor &bias, std::vector<int64_t> stride,
                          std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
                          std::vector<int64_t> output_padding, int64_t groups) {
  const Tensor m = call_op<Tensor>(TP_OP("convolution"), meta_like(input), meta_like(weight), meta_like(bias), stride,
                                   padding, dilation, transposed, output_padding, groups);
  const int dev = common_device("convolution", {input, weight, bias}, false);
  DeviceGuard guard(dev);
  const Device device = input.device();
  const ScalarType t = input.dtype();
  check_real("convolution", t);
  TP_CHECK(is_floating(t), NotImplemented, "convolution: CUDA convolutions support float16, bfloat16, float32 and "
           "float64, but got ", scalar_type_name(t));
  Tensor out = empty_as_meta(m, device);
  if (out.numel() == 0) return out;

  // Sizes (Note [CUDA convolution as batched GEMM]); the window is the CPU's Note [Window geometry].
  const int64_t dims = weight.dim() - 2, N = input.size(0), cin = input.size(1), cout = out.size(1), G = groups;
  const int64_t cg = cin / G, og = cout / G;
  const auto s3 = spread(stride, dims, 1), p3 = spread(padding, dims, 0), d3 = spread(dilation, dims, 1);
  const int64_t K = shape_numel(Shape(weight.sizes().begin() + 2, weight.sizes().end()));
  const int64_t lin = shape_numel(Shape(input.sizes().begin() + 2, input.sizes().end()));
  const int64_t lout = shape_numel(Shape(out.sizes().begin() + 2, out.sizes().end()));
  const bool unit_stride = s3 == std::array<int64_t, 3>{1, 1, 1};
  const bool identity = K == 1 && unit_stride && p3 == std::array<int64_t, 3>{0, 0, 0} &&
                        Shape(input.sizes().begin() + 2, input.sizes().end()) ==
                            Shape(out.sizes().begin() + 2, out.sizes().end());
  // A stride-1 transposed convolution runs as a plain one: Note [Stride-1 transposed convolution as a plain one].
  const bool flip = transposed && unit_stride && !identity;
  const bool plain = !transposed || flip;

  const Tensor x = input.is_contiguous() ? input : contiguous_as(input, t);
  const Tensor w0 = weight.is_contiguous() ? weight : contiguous_as(weight, t);
  const Tensor w = flip ? plain_weight(w0, G, cg, og, K) : w0;
  const Tensor &image = plain ? input : out, &columns = plain ? out : input;
  WindowGeometry g;
  g.channels = plain ? cin : cout;
  for (int64_t i = 0; i < dims; ++i) {
    const size_t j = size_t(3 - dims + i);
    g.in[j] = image.size(2 + i), g.out[j] = columns.size(2 + i), g.kernel[j] = weight.size(2 + i);
  }
  g.stride = s3, g.pad = p3, g.dilation = d3;
  if (flip)
    for (size_t j = 0; j < 3; ++j) g.pad[j] = d3[j] * (g.kernel[j] - 1) - p3[j];  // may be negative
  const int64_t rows = (plain ? cg : og) * K;  // per group, the column rows
  // The weight as [G, og, cg*K] (plain), or as [G, og*K, cg] read transposed from [Cin, og*K] (transposed).
  const Tensor wg = plain ? view3(w, 0, {G, og, rows}, {og * rows, rows, 1}) : view3(w, 0, {G, rows, cg}, {cg * rows, 1, rows});
  const Tensor bias3 = bias.defined() ? view3(bias, 0, {G, og, 1}, {og * bias.stride(0), bias.stride(0), 0}) : Tensor();
  const int64_t elem = int64_t(out->itemsize());

  // Note [Per-sample GEMMs straight into NCHW]: taken when the repeated weight is small next to the output.
  const bool nchw = G == 1 && N > 1 && (identity ? cg : rows) * 4 <= lout && (plain || identity) &&
                    lout * elem % 16 == 0;  // each sample's matrices 16-byte aligned, as tensor-core GEMMs want
  if (identity) {  // no window: each sample's product reads and writes the tensors themselves
    if (nchw) {
      gemm(repeat_weight(wg, N), view3(x, 0, {N, cin, lin}, {cin * lin, lin, 1}), bias_rows(bias, N, og),
           view3(out, 0, {N, cout, lout}, {cout * lout, lout, 1}));
      return out;
    }
    for (int64_t n = 0; n < N; ++n)
      gemm(wg, view3(x, n * cin * lin, {G, cg, lin}, {cg * lin, lin, 1}), bias3,
           view3(out, n * cout * lout, {G, og, lout}, {og * lout, lout, 1}));
    return out;
  }

  if (!plain && bias.defined())  // col2im adds onto what is there (else it overwrites)
    device_copy(view3(out, 0, {N, cout, lout}, {cout * lout, lout, 1}),
                view3(bias, 0, {N, cout, lout}, {0, bias.stride(0), 0}));
  const int64_t l_col = plain ? lout : lin;  // columns per sample
  const int64_t per_sample = G * rows * l_col * elem;
  const int64_t nb = std::clamp<int64_t>(kColBytes / std::max<int64_t>(per_sample, 1), 1, N);
  Tensor col = empty_tensor({G * rows * nb * l_col}, t, device);
  Tensor tmp = plain && nb > 1 && !nchw ? empty_tensor({cout * nb * lout}, t, device) : Tensor();
  const Tensor wrep = nchw ? repeat_weight(wg, nb) : Tensor();
  Tensor xt = !plain && nb > 1 ? empty_tensor({cin * nb * lin}, t, device) : Tensor();
  for (int64_t n0 = 0; n0 < N; n0 += nb) {
    const int64_t c = std::min(nb, N - n0), L = c * l_col;
    const Tensor colg = view3(col, 0, {G, rows, L}, {rows * L, L, 1});
    if (nchw) {  // col is [c, rows, L_out] (the ops' layout); out[chunk] = w @ col[n] for each n
      launch_im2col(dev, t, col_window(g, c, lout, rows * lout), col.data_ptr(),
                    static_cast<const char *>(x.data_ptr()) + n0 * cin * lin * elem);
      gemm(view3(wrep, 0, {c, og, rows}, {og * rows, rows, 1}), view3(col, 0, {c, rows, lout}, {rows * lout, lout, 1}),
           bias_rows(bias, c, og), view3(out, n0 * cout * lout, {c, cout, lout}, {cout * lout, lout, 1}));
    } else if (plain) {
      launch_im2col(dev, t, col_window(g, c, L, l_col), col.data_ptr(),
                    static_cast<const char *>(x.data_ptr()) + n0 * cin * lin * elem);
      if (c == 1) {
        gemm(wg, colg, bias3, view3(out, n0 * cout * lout, {G, og, lout}, {og * lout, lout, 1}));
        continue;
      }
      gemm(wg, colg, bias3, view3(tmp, 0, {G, og, L}, {og * L, L, 1}));
      // tmp is [O, c, L_out]; out[chunk] is [c, O, L_out]
      device_copy(view3(out, n0 * cout * lout, {c, cout, lout}, {cout * lout, lout, 1}),
                  view3(tmp, 0, {c, cout, lout}, {lout, c * lout, 1}));
    } else {
      Tensor b = view3(x, n0 * cin * lin, {G, cg, lin}, {cg * lin, lin, 1});
      if (c > 1) {  // x[chunk] [c, Cin, L_in] -> xt [Cin, c, L_in]
        device_copy(view3(xt, 0, {c, cin, lin}, {lin, c * lin, 1}), view3(x, n0 * cin * lin, {c, cin, lin}, {cin * lin, lin, 1}));
        b = view3(xt, 0, {G, cg, L}, {cg * L, L, 1});
      }
      gemm(wg, b, Tensor(), colg);
      launch_col2im(dev, t, col_window(g, c, L, l_col), static_cast<char *>(out.data_ptr()) + n0 * cout * lout * elem,
                    col.data_ptr(), bias.defined());
    }
  }
  return out;
}

TP_LIBRARY(cuda_conv) { TP_IMPL(lib, "convolution", CUDA, convolution); }

}  // namespace tp::p10::cuda
