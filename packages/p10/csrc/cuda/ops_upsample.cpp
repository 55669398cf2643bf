// ops_upsample.cpp — the CUDA kernels of the resampling ops: upsample_nearest1d/2d/3d,
// _upsample_nearest_exact1d/2d/3d, upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d and
// upsample_trilinear3d, with their .out forms (F.interpolate picks one of them).
//
// Where it sits: the CUDA twin of kernels/upsample.cpp; the arithmetic is tensorplay_p10/cuda_kernels/
// upsample.cu. The CPU op, asked on a meta tensor (cuda/ops_meta.h), checks the call and the dtype (floating,
// and uint8 for the nearest modes) and gives the output shape. The taps of each dim are computed here by the
// CPU's own code (Note [Interpolation taps] in kernels/upsample_taps.h) and uploaded as small tables (output
// size x taps per dim), so both devices read the same indices and weights. The out= forms copy with the CPU's
// pool_copy_out. Backward (tpx formulas/upsample.py) is a product with weight matrices read off the forward op.
#include <cstring>

#include "cuda/ops_meta.h"
#include "cuda/pool.h"
#include "kernels/upsample_taps.h"

namespace tp::p10::cuda {

namespace {

using Ints = std::vector<int64_t>;
using Opt = std::optional<double>;
using interp::Mode;

// upsample.cu's UpsampleDims: D, H, W of the input plane and of the output.
struct UpsampleDims {
  int64_t in[3], out[3];
};
static_assert(sizeof(UpsampleDims) == 6 * 8, "UpsampleDims must match upsample.cu");

// `values` as a CUDA tensor of dtype `t` (elements of type V) on `device`: one host-to-device copy.
template <typename V> Tensor upload(const std::vector<V> &values, ScalarType t, Device device) {
  Tensor host = empty_tensor({int64_t(values.size())}, t, Device{});
  if (!values.empty()) std::memcpy(host.data_ptr(), values.data(), values.size() * sizeof(V));
  Tensor dev = empty_tensor({int64_t(values.size())}, t, device);
  call_op<Tensor>(TP_OP("copy_"), dev, host, false);
  return dev;
}

// Resample `self` into the meta result's shape with the taps of `mode` (S: the weights' type, float or double).
template <typename S>
void resample(int dev, Mode mode, const Tensor &x, const Tensor &out, int nsp, bool align_corners,
              const std::array<Opt, 3> &scales) {
  const PoolWindow w = plane_window(x, out, nsp);
  UpsampleDims g;
  for (int i = 0; i < 3; ++i) g.in[i] = w.in[i], g.out[i] = w.out[i];
  interp::Taps<S> t[3];
  for (int i = 0; i < 3; ++i)  // a dim the op lacks: one tap, weight 1 (as the CPU)
    t[i] = i < 3 - nsp ? interp::make_taps<S>(Mode::Nearest, 1, 1, false, std::nullopt)
                       : interp::make_taps<S>(mode, g.in[i], g.out[i], align_corners, scales[size_t(i)]);
  std::vector<int64_t> idx;
  std::vector<S> wt;
  int64_t at[3];  // where each dim's table starts
  for (int i = 0; i < 3; ++i) {
    at[i] = int64_t(idx.size());
    idx.insert(idx.end(), t[i].idx.begin(), t[i].idx.end());
    wt.insert(wt.end(), t[i].wt.begin(), t[i].wt.end());
  }
  const Device device = x.device();
  const Tensor didx = upload(idx, ScalarType::Int64, device);
  const int64_t *pi = static_cast<const int64_t *>(didx.data_ptr());
  const int64_t total = out.numel();
  const LaunchConfig c = elementwise_config(dev, total);
  const bool nearest = mode == Mode::Nearest || mode == Mode::Nearest2d || mode == Mode::NearestExact;
  if (nearest) {
    launch(kernel(dev, "upsample.cu", kname("upsample_nearest", x.dtype())), c, stream_for(dev), total, g,
           pi + at[0], pi + at[1], pi + at[2], out.data_ptr(), x.data_ptr());
    return;
  }
  const Tensor dwt = upload(wt, std::is_same_v<S, double> ? ScalarType::Float64 : ScalarType::Float32, device);
  const S *pw = static_cast<const S *>(dwt.data_ptr());
  const char *name = mode == Mode::Cubic ? "upsample_bicubic"
                     : nsp == 1          ? "upsample_linear"
                     : nsp == 2          ? "upsample_bilinear"
                                         : "upsample_trilinear";
  launch(kernel(dev, "upsample.cu", kname(name, x.dtype())), c, stream_for(dev), total, g, pi + at[0], pi + at[1],
         pi + at[2], pw + at[0], pw + at[1], pw + at[2], out.data_ptr(), x.data_ptr());
}

Tensor upsample(const char *op, const Tensor &meta, Mode mode, const Tensor &self, int nsp, bool align_corners,
                std::array<Opt, 3> scales) {
  const int dev = pool_device(op, self);
  DeviceGuard guard(dev);
  Tensor out = empty_as_meta(meta, self.device());  // the meta call refused the dtypes the mode does not take
  if (out.numel() == 0) return out;
  const Tensor x = contiguous_planes(self);
  if (self.dtype() == ScalarType::Float64) resample<double>(dev, mode, x, out, nsp, align_corners, scales);
  else resample<float>(dev, mode, x, out, nsp, align_corners, scales);  // uint8 (nearest) takes float scales too
  return out;
}

}  // namespace

// ---- the registered ops: each asks its own CPU op on meta first ---------------------------------------------
// fn(self, size, <args>) and fn_out(self, size, <args>, out); `params` names the parameter lists (P1 ... L3).
#define TP_UPSAMPLE(fn, name, mode, nsp, params, align, scales, ...)                                          \
  static Tensor fn params {                                                                                     \
    const Tensor m = call_op<Tensor>(TP_OP(name), meta_like(self), size, __VA_ARGS__);                         \
    return upsample(name, m, mode, self, nsp, align, std::array<Opt, 3> scales);                               \
  }                                                                                                             \
  static Tensor fn##_out params##_OUT {                                                                         \
    pool_device(name ".out", self, out);                                                                        \
    return pool_copy_out(name ".out", fn(self, size, __VA_ARGS__), out);                                        \
  }
#define P1 (const Tensor &self, Ints size, Opt s)
#define P1_OUT (const Tensor &self, Ints size, Opt s, const Tensor &out)
#define P2 (const Tensor &self, Ints size, Opt sh, Opt sw)
#define P2_OUT (const Tensor &self, Ints size, Opt sh, Opt sw, const Tensor &out)
#define P3 (const Tensor &self, Ints size, Opt sd, Opt sh, Opt sw)
#define P3_OUT (const Tensor &self, Ints size, Opt sd, Opt sh, Opt sw, const Tensor &out)
#define L1 (const Tensor &self, Ints size, bool ac, Opt s)
#define L1_OUT (const Tensor &self, Ints size, bool ac, Opt s, const Tensor &out)
#define L2 (const Tensor &self, Ints size, bool ac, Opt sh, Opt sw)
#define L2_OUT (const Tensor &self, Ints size, bool ac, Opt sh, Opt sw, const Tensor &out)
#define L3 (const Tensor &self, Ints size, bool ac, Opt sd, Opt sh, Opt sw)
#define L3_OUT (const Tensor &self, Ints size, bool ac, Opt sd, Opt sh, Opt sw, const Tensor &out)
TP_UPSAMPLE(upsample_nearest1d, "upsample_nearest1d", Mode::Nearest, 1, P1, false, ({Opt(), Opt(), s}), s)
TP_UPSAMPLE(upsample_nearest2d, "upsample_nearest2d", Mode::Nearest2d, 2, P2, false, ({Opt(), sh, sw}), sh, sw)
TP_UPSAMPLE(upsample_nearest3d, "upsample_nearest3d", Mode::Nearest, 3, P3, false, ({sd, sh, sw}), sd, sh, sw)
TP_UPSAMPLE(upsample_nearest_exact1d, "_upsample_nearest_exact1d", Mode::NearestExact, 1, P1, false,
            ({Opt(), Opt(), s}), s)
TP_UPSAMPLE(upsample_nearest_exact2d, "_upsample_nearest_exact2d", Mode::NearestExact, 2, P2, false,
            ({Opt(), sh, sw}), sh, sw)
TP_UPSAMPLE(upsample_nearest_exact3d, "_upsample_nearest_exact3d", Mode::NearestExact, 3, P3, false,
            ({sd, sh, sw}), sd, sh, sw)
TP_UPSAMPLE(upsample_linear1d, "upsample_linear1d", Mode::Linear, 1, L1, ac, ({Opt(), Opt(), s}), ac, s)
TP_UPSAMPLE(upsample_bilinear2d, "upsample_bilinear2d", Mode::Linear, 2, L2, ac, ({Opt(), sh, sw}), ac, sh, sw)
TP_UPSAMPLE(upsample_bicubic2d, "upsample_bicubic2d", Mode::Cubic, 2, L2, ac, ({Opt(), sh, sw}), ac, sh, sw)
TP_UPSAMPLE(upsample_trilinear3d, "upsample_trilinear3d", Mode::Linear, 3, L3, ac, ({sd, sh, sw}), ac, sd, sh, sw)
#undef TP_UPSAMPLE
#undef P1
#undef P1_OUT
#undef P2
#undef P2_OUT
#undef P3
#undef P3_OUT
#undef L1
#undef L1_OUT
#undef L2
#undef L2_OUT
#undef L3
#undef L3_OUT

TP_LIBRARY(cuda_upsample) {
  TP_IMPL(lib, "upsample_nearest1d", CUDA, upsample_nearest1d);
  TP_IMPL(lib, "upsample_nearest2d", CUDA, upsample_nearest2d);
  TP_IMPL(lib, "upsample_nearest3d", CUDA, upsample_nearest3d);
  TP_IMPL(lib, "_upsample_nearest_exact1d", CUDA, upsample_nearest_exact1d);
  TP_IMPL(lib, "_upsample_nearest_exact2d", CUDA, upsample_nearest_exact2d);
  TP_IMPL(lib, "_upsample_nearest_exact3d", CUDA, upsample_nearest_exact3d);
  TP_IMPL(lib, "upsample_linear1d", CUDA, upsample_linear1d);
  TP_IMPL(lib, "upsample_bilinear2d", CUDA, upsample_bilinear2d);
  TP_IMPL(lib, "upsample_bicubic2d", CUDA, upsample_bicubic2d);
  TP_IMPL(lib, "upsample_trilinear3d", CUDA, upsample_trilinear3d);
  TP_IMPL(lib, "upsample_nearest1d.out", CUDA, upsample_nearest1d_out);
  TP_IMPL(lib, "upsample_nearest2d.out", CUDA, upsample_nearest2d_out);
  TP_IMPL(lib, "upsample_nearest3d.out", CUDA, upsample_nearest3d_out);
  TP_IMPL(lib, "_upsample_nearest_exact1d.out", CUDA, upsample_nearest_exact1d_out);
  TP_IMPL(lib, "_upsample_nearest_exact2d.out", CUDA, upsample_nearest_exact2d_out);
  TP_IMPL(lib, "_upsample_nearest_exact3d.out", CUDA, upsample_nearest_exact3d_out);
  TP_IMPL(lib, "upsample_linear1d.out", CUDA, upsample_linear1d_out);
  TP_IMPL(lib, "upsample_bilinear2d.out", CUDA, upsample_bilinear2d_out);
  TP_IMPL(lib, "upsample_bicubic2d.out", CUDA, upsample_bicubic2d_out);
  TP_IMPL(lib, "upsample_trilinear3d.out", CUDA, upsample_trilinear3d_out);
}

}  // namespace tp::p10::cuda
