// upsample_taps.h — which input positions (taps) each output position of an upsample op reads, and with what
// weights: Note [Interpolation taps], computed once per call on the host.
//
// Where it sits: used by kernels/upsample.cpp (the CPU loops) and csrc/cuda/ops_upsample.cpp (which uploads the
// tables for upsample.cu), so the index and weight rules, and their float32/float64 rounding, live in one place
// and both devices read the same taps.
//
// Note [Interpolation taps]
//   Every mode is separable: output position o along a dim reads a few input positions (taps) with weights,
//   and an output element is the weighted sum over the taps of every dim, the outer dim's weights applied last
//   (PyTorch's order, so rounding matches). The taps of each dim are computed once per call, in PyTorch's
//   arithmetic and precision (opmath_t: float32 for float32/16-bit inputs, float64 for float64):
//     scale      = (in - 1) / (out - 1) with align_corners (0 when out == 1), else 1 / scale_factor when one
//                  was given, else in / out;
//     nearest    : floor(o * scale), at most in - 1 (PyTorch's legacy rule, not pixel centres); the 2-d op
//                  takes it from PyTorch's nearest_idx instead: o when out == in and o / 2 when out == 2 in,
//                  whatever the scale, and the scale always in float32;
//     nearest-exact: floor(src + 0.5) with src = max(scale * (o + 0.5) - 0.5, 0), at most in - 1;
//     linear     : src = scale * o (align_corners) or max(scale * (o + 0.5) - 0.5, 0); taps floor(src) and the
//                  next one (clamped), weights 1 - l and l; out == in copies;
//     cubic      : src as linear but not clamped at 0; taps floor(src) - 1 .. + 2 clamped into the input,
//                  Keys' cubic convolution weights with A = -0.75.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace tp::p10::interp {

enum class Mode { Nearest, Nearest2d, NearestExact, Linear, Cubic };  // Nearest2d: see the Note

template <typename S> struct Taps {
  int n = 1;                 // taps per output position
  std::vector<int64_t> idx;  // out * n input positions
  std::vector<S> wt;         // out * n weights
};

template <typename S> S area_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? S(in - 1) / S(out - 1) : S(0);
  return scale && *scale > 0 ? S(1.0 / *scale) : S(in) / S(out);
}

template <typename S> S source_index(S scale, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return scale * S(o);
  const S src = scale * (S(o) + S(0.5)) - S(0.5);
  return (!cubic && src < 0) ? S(0) : src;
}

// PyTorch's guard_index_and_lambda: the tap left of `src` (at most in - 1, through float as PyTorch's floorf)
// and the fraction past it, clamped to [0, 1].
template <typename S> void guard(S src, int64_t in, int64_t &i, S &l) {
  i = std::min(int64_t(std::floor(float(src))), in - 1);
  l = std::min(std::max(src - S(i), S(0)), S(1));
}

template <typename S> Taps<S> make_taps(Mode m, int64_t in, int64_t out, bool align_corners,
                                        std::optional<double> scale_factor) {
  Taps<S> t;
  t.n = m == Mode::Cubic ? 4 : m == Mode::Linear ? 2 : 1;
  t.idx.resize(size_t(out * t.n));
  t.wt.resize(size_t(out * t.n));
  const S scale = area_scale<S>(in, out, m == Mode::Linear || m == Mode::Cubic ? align_corners : false, scale_factor);
  for (int64_t o = 0; o < out; ++o) {
    int64_t *idx = &t.idx[size_t(o * t.n)];
    S *wt = &t.wt[size_t(o * t.n)];
    if (m == Mode::Nearest2d) {
      const float sc = area_scale<float>(in, out, false, scale_factor);
      idx[0] = out == in ? o : out == 2 * in ? o >> 1 : std::min(int64_t(std::floor(float(o) * sc)), in - 1);
      wt[0] = 1;
    } else if (m == Mode::Nearest) {
      idx[0] = std::min(int64_t(std::floor(float(source_index<S>(scale, o, true, false)))), in - 1), wt[0] = 1;
    } else if (m == Mode::NearestExact) {
      const double src = double(source_index<S>(scale, o, false, false)) + 0.5;
      idx[0] = std::min(int64_t(std::floor(float(src))), in - 1), wt[0] = 1;
    } else if (m == Mode::Linear) {
      if (in == out) {
        idx[0] = idx[1] = o, wt[0] = 1, wt[1] = 0;
        continue;
      }
      S l;
      guard<S>(source_index<S>(scale, o, align_corners, false), in, idx[0], l);
      idx[1] = idx[0] + (idx[0] < in - 1 ? 1 : 0);
      wt[0] = S(1) - l, wt[1] = l;
    } else {
      S l;
      int64_t i;
      guard<S>(source_index<S>(scale, o, align_corners, true), in, i, l);
      // Keys' cubic convolution, A = -0.75: k(x) for |x| <= 1 and for 1 < |x| < 2.
      const S A = S(-0.75);
      auto near = [&](S x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
      auto far = [&](S x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
      wt[0] = far(l + 1), wt[1] = near(l), wt[2] = near(1 - l), wt[3] = far(2 - l);
      for (int j = 0; j < 4; ++j) idx[j] = std::max<int64_t>(std::min<int64_t>(i - 1 + j, in - 1), 0);
    }
  }
  return t;
}

}  // namespace tp::p10::interp
