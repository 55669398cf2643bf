// upsample.cpp — resampling the spatial dims: upsample_nearest1d/2d/3d, _upsample_nearest_exact1d/2d/3d,
// upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d and upsample_trilinear3d (PyTorch's aten ops).
//
// Where it sits: the kernels behind interpolate (src/tensorplay_p10/_interpolate.py), which turns size /
// scale_factor / mode into one of these calls; mode='area' goes to adaptive_avg_pool (pool_adaptive.cpp). The
// input is seen as planes (Note [Pooling planes] in pool.h); each op takes [N, C, *spatial] as PyTorch's do.
//
// Note [Interpolation taps] (the index and weight rules of every mode) is in kernels/upsample_taps.h.
#include <array>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/pool.h"
#include "kernels/upsample_taps.h"

namespace tp::p10 {

namespace {

using interp::Mode;
using interp::Taps;
using interp::make_taps;

// An upsample call after its checks: the planes, the output size and the taps of each of D, H, W.
template <typename S> struct Resample {
  const PoolPlanes *pp;
  int64_t out[3];
  Taps<S> t[3];
};

// Nearest modes: a gather, exact for every dtype.
template <typename T, typename S> void nearest_kernel(const Resample<S> &r, T *y) {
  const PoolPlanes &pp = *r.pp;
  const T *x = pp.x.data<T>();
  const int64_t D = pp.in[0], H = pp.in[1], W = pp.in[2], oD = r.out[0], oH = r.out[1], oW = r.out[2];
  parallel_for(0, pp.planes * oD * oH, pool_grain(oW), [&](int64_t b, int64_t e) {
    RowCursor cur(b, oD, oH);
    for (int64_t row = b; row < e; ++row, cur.next()) {
      const int64_t oh = cur.oh, od = cur.od;
      const T *src = x + cur.plane * D * H * W + (r.t[0].idx[size_t(od)] * H + r.t[1].idx[size_t(oh)]) * W;
      T *dst = y + row * oW;
      const int64_t *iw = r.t[2].idx.data();
      for (int64_t ow = 0; ow < oW; ++ow) dst[ow] = src[iw[ow]];
    }
  });
}

// Linear and cubic modes: the weighted sum of Note [Interpolation taps], accumulated in S. The tap counts are
// template arguments (1 for a dim the op lacks, 2 linear, 4 cubic) so the tap loops unroll; per output row the
// source rows and their D/H weights are looked up once, and the W taps come from flat tables.
//
// Note [Resampled row cache]
//   The W pass of a source row (its ND * NH * NW-tap sums for one output row) is the same for every output row
//   that reads that source row: neighbouring output rows share most of theirs when upsampling. With more than
//   one source row per output row (2-d and 3-d), each thread keeps the W pass of the last 2 * ND * NH source
//   rows it computed, keyed by the row's offset in the input, and an output row only combines cached rows with
//   its D and H weights: a contiguous loop. The sums are the same ones in the same order as the direct form
//   (Note [Interpolation taps]), so the results are identical; only the repeated work goes.
template <typename T, typename S, int NW> void resample_row(const T *line, const int64_t *iw, const S *ww, int64_t oW,
                                                             S *dst) {
  for (int64_t ow = 0; ow < oW; ++ow) {
    S acc_w = 0;
    for (int c = 0; c < NW; ++c) acc_w += ww[ow * NW + c] * S(line[iw[ow * NW + c]]);
    dst[ow] = acc_w;
  }
}

template <typename T, typename S, int ND, int NH, int NW> void weighted_kernel(const Resample<S> &r, T *y) {
  const PoolPlanes &pp = *r.pp;
  const T *x = pp.x.data<T>();
  const int64_t D = pp.in[0], H = pp.in[1], W = pp.in[2], oD = r.out[0], oH = r.out[1], oW = r.out[2];
  const int64_t *iw = r.t[2].idx.data();
  const S *ww = r.t[2].wt.data();
  constexpr int kRows = ND * NH, kSlots = 2 * kRows;
  parallel_for(0, pp.planes * oD * oH, pool_grain(oW * ND * NH * NW), [&](int64_t b, int64_t e) {
    std::vector<S> cache(kRows > 1 ? size_t(kSlots * oW) : 0);  // Note [Resampled row cache]
    int64_t key[kSlots];
    for (int64_t &k : key) k = -1;
    int victim = 0;
    if constexpr (kRows == 1) {  // 1-d: one source row per output row, nothing to share
      for (int64_t row = b; row < e; ++row) {
        const T *line = x + row * W;
        T *out = y + row * oW;
        for (int64_t ow = 0; ow < oW; ++ow) {
          S acc_w = 0;
          for (int c = 0; c < NW; ++c) acc_w += ww[ow * NW + c] * S(line[iw[ow * NW + c]]);
          out[ow] = T(acc_w);  // the D and H weights are exactly 1
        }
      }
      return;
    }
    RowCursor cur(b, oD, oH);
    for (int64_t row = b; row < e; ++row, cur.next()) {
      const int64_t oh = cur.oh, od = cur.od;
      const S *src[kRows];  // the W pass of each source row, (a, bh) row-major
      S wd[ND], wh[NH];
      bool pinned[kSlots] = {};
      for (int a = 0; a < ND; ++a) wd[a] = r.t[0].wt[size_t(od * ND + a)];
      for (int bh = 0; bh < NH; ++bh) wh[bh] = r.t[1].wt[size_t(oh * NH + bh)];
      // Hits first and pinned, so that filling a miss never evicts a row this output row uses.
      int64_t want[kRows];
      for (int a = 0; a < ND; ++a)
        for (int bh = 0; bh < NH; ++bh) {
          const int j = a * NH + bh;
          want[j] = (cur.plane * D + r.t[0].idx[size_t(od * ND + a)]) * H * W + r.t[1].idx[size_t(oh * NH + bh)] * W;
          src[j] = nullptr;
          for (int slot = 0; slot < kSlots; ++slot)
            if (key[slot] == want[j]) src[j] = &cache[size_t(slot * oW)], pinned[slot] = true;
        }
      for (int j = 0; j < kRows; ++j) {
        if (src[j]) continue;
        int slot = -1;
        for (int s2 = 0; s2 < kSlots && slot < 0; ++s2)
          if (key[s2] == want[j]) slot = s2;  // filled a moment ago for a repeated (clamped) tap
        if (slot < 0) {
          while (pinned[victim]) victim = (victim + 1) % kSlots;
          slot = victim, victim = (victim + 1) % kSlots;
          key[slot] = want[j];
          resample_row<T, S, NW>(x + want[j], iw, ww, oW, &cache[size_t(slot * oW)]);
        }
        pinned[slot] = true;
        src[j] = &cache[size_t(slot * oW)];
      }
      T *out = y + row * oW;
      for (int64_t ow = 0; ow < oW; ++ow) {
        S acc = 0;
        for (int a = 0; a < ND; ++a) {
          S acc_h = 0;
          for (int bh = 0; bh < NH; ++bh) acc_h += wh[bh] * src[a * NH + bh][ow];
          acc += wd[a] * acc_h;
        }
        out[ow] = T(acc);
      }
    }
  });
}

const char *const kSizeNames[] = {"D", "H", "W"};

// PyTorch's upsample_Nd_common_check, then the resampling. `scales` are the per-dim scale factors (D, H, W
// order, the last `nsp` used); `align_corners` only matters for the linear and cubic modes.
Tensor upsample(const char *op, Mode mode, const Tensor &self, int nsp, const std::vector<int64_t> &output_size,
                bool align_corners, std::array<std::optional<double>, 3> scales) {
  TP_CHECK(int(output_size.size()) == nsp, Runtime, op, ": It is expected output_size equals to ", nsp,
           ", but got size ", output_size.size());
  TP_CHECK(self.dim() == nsp + 2, Runtime, op, ": It is expected input_size equals to ", nsp + 2, ", but got size ",
           self.dim());
  bool positive = true;
  std::string in_s, out_s;
  for (int i = 0; i < nsp; ++i) {
    const int64_t in = self.size(2 + i), out = output_size[size_t(i)];
    positive = positive && in > 0 && out > 0;
    const std::string sep = i ? ", " : "";
    in_s += sep + kSizeNames[3 - nsp + i] + ": " + std::to_string(in);
    out_s += sep + kSizeNames[3 - nsp + i] + ": " + std::to_string(out);
  }
  TP_CHECK(positive, Runtime, op, ": Input and output sizes should be greater than 0, but got input (", in_s,
           nsp == 1 ? ") and output (" : ") output (", out_s, ")");
  TP_CHECK(self.size(1) > 0 || self.numel() > 0, Runtime, op, ": Non-empty ", nsp + 2,
           "D data tensor expected but got a tensor with sizes ", shape_str(self.sizes()));
  // PyTorch resamples the floating dtypes, and uint8 images with the nearest modes.
  const bool nearest = mode == Mode::Nearest || mode == Mode::Nearest2d || mode == Mode::NearestExact;
  if (!is_floating(self.dtype()) && !(nearest && self.dtype() == ScalarType::UInt8))
    throw_unsupported_dtype(op, self.dtype());

  PoolPlanes pp = pool_planes(self, nsp);
  int64_t out[3] = {1, 1, 1};
  for (int i = 0; i < nsp; ++i) out[3 - nsp + i] = output_size[size_t(i)];
  Tensor y = empty_tensor(pool_shape(pp, nsp, out), self.dtype(), self.device());
  if (self.device().is_meta() || y.numel() == 0) return y;

  auto run = [&]<typename T>() {
    using S = std::conditional_t<std::is_same_v<T, uint8_t>, float, opmath_t<T>>;
    Resample<S> r{&pp, {out[0], out[1], out[2]}, {}};
    for (int i = 0; i < 3; ++i)
      r.t[i] = i < 3 - nsp ? make_taps<S>(Mode::Nearest, 1, 1, false, std::nullopt)  // a dim the op lacks
                           : make_taps<S>(mode, pp.in[i], out[i], align_corners, scales[size_t(i)]);
    if (nearest) nearest_kernel<T, S>(r, y.data<T>());
    else if constexpr (!std::is_same_v<T, uint8_t>) {
      // The tap counts (D, H, W) of the four ops: linear1d, bilinear2d, bicubic2d, trilinear3d.
      const int taps = r.t[0].n * 100 + r.t[1].n * 10 + r.t[2].n;
      if (taps == 112) weighted_kernel<T, S, 1, 1, 2>(r, y.data<T>());
      else if (taps == 122) weighted_kernel<T, S, 1, 2, 2>(r, y.data<T>());
      else if (taps == 144) weighted_kernel<T, S, 1, 4, 4>(r, y.data<T>());
      else weighted_kernel<T, S, 2, 2, 2>(r, y.data<T>());
    }
  };
  if (self.dtype() == ScalarType::UInt8) run.operator()<uint8_t>();
  else TP_DISPATCH_FLOATING(self.dtype(), op, run);
  return y;
}

}  // namespace

// ---- the registered ops -------------------------------------------------------------------------------------
using Ints = std::vector<int64_t>;
using Opt = std::optional<double>;

static Tensor upsample_nearest1d(const Tensor &self, Ints size, Opt s) {
  return upsample("upsample_nearest1d", Mode::Nearest, self, 1, size, false, {Opt(), Opt(), s});
}
static Tensor upsample_nearest2d(const Tensor &self, Ints size, Opt sh, Opt sw) {
  return upsample("upsample_nearest2d", Mode::Nearest2d, self, 2, size, false, {Opt(), sh, sw});
}
static Tensor upsample_nearest3d(const Tensor &self, Ints size, Opt sd, Opt sh, Opt sw) {
  return upsample("upsample_nearest3d", Mode::Nearest, self, 3, size, false, {sd, sh, sw});
}
static Tensor upsample_nearest_exact1d(const Tensor &self, Ints size, Opt s) {
  return upsample("_upsample_nearest_exact1d", Mode::NearestExact, self, 1, size, false, {Opt(), Opt(), s});
}
static Tensor upsample_nearest_exact2d(const Tensor &self, Ints size, Opt sh, Opt sw) {
  return upsample("_upsample_nearest_exact2d", Mode::NearestExact, self, 2, size, false, {Opt(), sh, sw});
}
static Tensor upsample_nearest_exact3d(const Tensor &self, Ints size, Opt sd, Opt sh, Opt sw) {
  return upsample("_upsample_nearest_exact3d", Mode::NearestExact, self, 3, size, false, {sd, sh, sw});
}
static Tensor upsample_linear1d(const Tensor &self, Ints size, bool align_corners, Opt s) {
  return upsample("upsample_linear1d", Mode::Linear, self, 1, size, align_corners, {Opt(), Opt(), s});
}
static Tensor upsample_bilinear2d(const Tensor &self, Ints size, bool align_corners, Opt sh, Opt sw) {
  return upsample("upsample_bilinear2d", Mode::Linear, self, 2, size, align_corners, {Opt(), sh, sw});
}
static Tensor upsample_trilinear3d(const Tensor &self, Ints size, bool align_corners, Opt sd, Opt sh, Opt sw) {
  return upsample("upsample_trilinear3d", Mode::Linear, self, 3, size, align_corners, {sd, sh, sw});
}
static Tensor upsample_bicubic2d(const Tensor &self, Ints size, bool align_corners, Opt sh, Opt sw) {
  return upsample("upsample_bicubic2d", Mode::Cubic, self, 2, size, align_corners, {Opt(), sh, sw});
}

// The out= forms: compute, then copy into the checked and resized `out` (pool.h).
#define TP_UPSAMPLE_OUT(name, op, params, args) \
  static Tensor name##_out params { return pool_copy_out(op ".out", name args, out); }
TP_UPSAMPLE_OUT(upsample_nearest1d, "upsample_nearest1d", (const Tensor &self, Ints n, Opt s, const Tensor &out),
                (self, n, s))
TP_UPSAMPLE_OUT(upsample_nearest2d, "upsample_nearest2d",
                (const Tensor &self, Ints n, Opt sh, Opt sw, const Tensor &out), (self, n, sh, sw))
TP_UPSAMPLE_OUT(upsample_nearest3d, "upsample_nearest3d",
                (const Tensor &self, Ints n, Opt sd, Opt sh, Opt sw, const Tensor &out), (self, n, sd, sh, sw))
TP_UPSAMPLE_OUT(upsample_nearest_exact1d, "_upsample_nearest_exact1d",
                (const Tensor &self, Ints n, Opt s, const Tensor &out), (self, n, s))
TP_UPSAMPLE_OUT(upsample_nearest_exact2d, "_upsample_nearest_exact2d",
                (const Tensor &self, Ints n, Opt sh, Opt sw, const Tensor &out), (self, n, sh, sw))
TP_UPSAMPLE_OUT(upsample_nearest_exact3d, "_upsample_nearest_exact3d",
                (const Tensor &self, Ints n, Opt sd, Opt sh, Opt sw, const Tensor &out), (self, n, sd, sh, sw))
TP_UPSAMPLE_OUT(upsample_linear1d, "upsample_linear1d", (const Tensor &self, Ints n, bool ac, Opt s, const Tensor &out),
                (self, n, ac, s))
TP_UPSAMPLE_OUT(upsample_bilinear2d, "upsample_bilinear2d",
                (const Tensor &self, Ints n, bool ac, Opt sh, Opt sw, const Tensor &out), (self, n, ac, sh, sw))
TP_UPSAMPLE_OUT(upsample_bicubic2d, "upsample_bicubic2d",
                (const Tensor &self, Ints n, bool ac, Opt sh, Opt sw, const Tensor &out), (self, n, ac, sh, sw))
TP_UPSAMPLE_OUT(upsample_trilinear3d, "upsample_trilinear3d",
                (const Tensor &self, Ints n, bool ac, Opt sd, Opt sh, Opt sw, const Tensor &out),
                (self, n, ac, sd, sh, sw))
#undef TP_UPSAMPLE_OUT

TP_LIBRARY(upsample) {
  // PyTorch's schemas: the arguments after `Tensor self`, shared by the op and its out= overload.
  const std::pair<const char *, const char *> ops[] = {
      {"upsample_nearest1d", "int[1] output_size, float? scales=None"},
      {"upsample_nearest2d", "int[2] output_size, float? scales_h=None, float? scales_w=None"},
      {"upsample_nearest3d", "int[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None"},
      {"_upsample_nearest_exact1d", "int[1] output_size, float? scales=None"},
      {"_upsample_nearest_exact2d", "int[2] output_size, float? scales_h=None, float? scales_w=None"},
      {"_upsample_nearest_exact3d",
       "int[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None"},
      {"upsample_linear1d", "int[1] output_size, bool align_corners, float? scales=None"},
      {"upsample_bilinear2d", "int[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None"},
      {"upsample_bicubic2d", "int[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None"},
      {"upsample_trilinear3d", "int[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, "
                               "float? scales_w=None"},
  };
  for (const auto &[name, args] : ops) {
    lib.def(std::string(name) + "(Tensor self, " + args + ") -> Tensor");
    lib.def(std::string(name) + ".out(Tensor self, " + args + ", *, Tensor(a!) out) -> Tensor(a!)");
  }
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<upsample_nearest1d>(lib, "upsample_nearest1d", key, __LINE__);
    impl_typed<upsample_nearest2d>(lib, "upsample_nearest2d", key, __LINE__);
    impl_typed<upsample_nearest3d>(lib, "upsample_nearest3d", key, __LINE__);
    impl_typed<upsample_nearest_exact1d>(lib, "_upsample_nearest_exact1d", key, __LINE__);
    impl_typed<upsample_nearest_exact2d>(lib, "_upsample_nearest_exact2d", key, __LINE__);
    impl_typed<upsample_nearest_exact3d>(lib, "_upsample_nearest_exact3d", key, __LINE__);
    impl_typed<upsample_linear1d>(lib, "upsample_linear1d", key, __LINE__);
    impl_typed<upsample_bilinear2d>(lib, "upsample_bilinear2d", key, __LINE__);
    impl_typed<upsample_trilinear3d>(lib, "upsample_trilinear3d", key, __LINE__);
    impl_typed<upsample_bicubic2d>(lib, "upsample_bicubic2d", key, __LINE__);
    impl_typed<upsample_nearest1d_out>(lib, "upsample_nearest1d.out", key, __LINE__);
    impl_typed<upsample_nearest2d_out>(lib, "upsample_nearest2d.out", key, __LINE__);
    impl_typed<upsample_nearest3d_out>(lib, "upsample_nearest3d.out", key, __LINE__);
    impl_typed<upsample_nearest_exact1d_out>(lib, "_upsample_nearest_exact1d.out", key, __LINE__);
    impl_typed<upsample_nearest_exact2d_out>(lib, "_upsample_nearest_exact2d.out", key, __LINE__);
    impl_typed<upsample_nearest_exact3d_out>(lib, "_upsample_nearest_exact3d.out", key, __LINE__);
    impl_typed<upsample_linear1d_out>(lib, "upsample_linear1d.out", key, __LINE__);
    impl_typed<upsample_bilinear2d_out>(lib, "upsample_bilinear2d.out", key, __LINE__);
    impl_typed<upsample_trilinear3d_out>(lib, "upsample_trilinear3d.out", key, __LINE__);
    impl_typed<upsample_bicubic2d_out>(lib, "upsample_bicubic2d.out", key, __LINE__);
  }
}

}  // namespace tp::p10
