// pool_adaptive.cpp — adaptive pooling: adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d.
//
// Where it sits: the kernels behind nn.functional's adaptive_*_pool* (and interpolate's mode='area'). The caller
// names the output size; the windows follow from it. Sliding-window pooling is in pool.cpp; both see their
// input as planes (Note [Pooling planes] in pool.h).
//
// Note [Adaptive windows]
//   Output position o of `out` along a dim of size `in` reads input [floor(o * in / out), ceil((o + 1) * in / out)):
//   the windows cover the input, neighbours overlap by at most one element, and out == in reads one element
//   each. The average divides by the window's size; the max also returns the flat index of the maximum inside
//   its plane (d * H * W + h * W + w), a NaN winning as in max_pool (Note [Pooling windows] in pool.cpp).
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/pool.h"

namespace tp::p10 {

namespace {

// floor(o * in / out) and ceil((o + 1) * in / out), written as PyTorch does so that o * in cannot overflow.
inline int64_t window_start(int64_t o, int64_t out, int64_t in) { return (o / out) * in + ((o % out) * in) / out; }
inline int64_t window_end(int64_t o, int64_t out, int64_t in) { return 1 + ((o + 1) * in - 1) / out; }

struct AdaptiveCall {
  PoolPlanes pp;
  int64_t out[3] = {1, 1, 1};
  Shape shape;
};

// PyTorch's checks for adaptive_{avg,max}_poolNd, with `op` naming the op. The 1-d ops check their rank and
// list first (checkDimRange, check1d in PyTorch).
AdaptiveCall prepare(const char *op, const Tensor &input, int nsp, const std::vector<int64_t> &output_size,
                     bool is_max) {
  const int64_t ndim = input.dim();
  if (nsp == 1) {
    TP_CHECK(ndim == 2 || ndim == 3, Runtime, "Expected 2 to 3 dimensions, but got ", ndim, "-dimensional tensor "
             "for argument #1 'self' (while checking arguments for ", op, ")");
    TP_CHECK(output_size.size() == 1, Runtime, op, "() argument 'output_size' should contain one int (got ",
             output_size.size(), ")");
  }
  TP_CHECK(int(output_size.size()) == nsp, Runtime, op, ": output_size must be ", nsp);
  TP_CHECK(ndim == nsp + 1 || ndim == nsp + 2, Runtime, op, "(): Expected ", nsp + 1, "D or ", nsp + 2,
           "D tensor, but got ", shape_str(input.sizes()));
  // The average checks the spatial dims, the max every dim but the first (PyTorch's checks differ so).
  for (int64_t i = is_max ? 1 : ndim - nsp; i < ndim; ++i)
    TP_CHECK(input.size(i) > 0, Runtime, op, "(): Expected input to have non-zero size for non-batch dimensions, but "
             "input has sizes ", shape_str(input.sizes()), " with dimension ", i, " being empty");
  for (int64_t o : output_size) {
    if (o >= 0) continue;
    std::string list = ints_str(output_size);
    list.front() = '{', list.back() = '}';
    fail(ErrorKind::Runtime, op, ": elements of output_size must be greater than or equal to 0 but received ", list);
  }
  AdaptiveCall c;
  c.pp = pool_planes(input, nsp);
  for (int i = 0; i < nsp; ++i) c.out[3 - nsp + i] = output_size[size_t(i)];
  c.shape = pool_shape(c.pp, nsp, c.out);
  return c;
}

// Both kernels walk rows of output (plane, od, oh), computing the D and H windows once per row.
template <typename T, bool Max> void adaptive_kernel(const AdaptiveCall &c, T *y, int64_t *ind) {
  using M = opmath_t<T>;
  const T *x = c.pp.x.data<T>();
  const int64_t D = c.pp.in[0], H = c.pp.in[1], W = c.pp.in[2];
  const int64_t oD = c.out[0], oH = c.out[1], oW = c.out[2];
  // The largest window is about (in / out + 1) taps per dim.
  const int64_t taps = (D / oD + 1) * (H / oH + 1) * (W / oW + 1);
  // The windows of each dim, computed once: the divisions would otherwise cost more than a small window's sum.
  std::vector<int64_t> lo[3], hi[3];
  for (int i = 0; i < 3; ++i)
    for (int64_t o = 0; o < c.out[i]; ++o)
      lo[i].push_back(window_start(o, c.out[i], c.pp.in[i])), hi[i].push_back(window_end(o, c.out[i], c.pp.in[i]));
  parallel_for(0, c.pp.planes * oD * oH, pool_grain(oW * taps), [&](int64_t b, int64_t e) {
    RowCursor cur(b, oD, oH);
    for (int64_t r = b; r < e; ++r, cur.next()) {
      const int64_t oh = cur.oh, od = cur.od;
      const T *plane = x + cur.plane * D * H * W;
      const int64_t d0 = lo[0][size_t(od)], d1 = hi[0][size_t(od)], h0 = lo[1][size_t(oh)], h1 = hi[1][size_t(oh)];
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t w0 = lo[2][size_t(ow)], w1 = hi[2][size_t(ow)];
        if constexpr (Max) {
          M best = -std::numeric_limits<M>::infinity();
          int64_t at = (d0 * H + h0) * W + w0;
          for (int64_t id = d0; id < d1; ++id)
            for (int64_t ih = h0; ih < h1; ++ih)
              for (int64_t iw = w0; iw < w1; ++iw) {
                const int64_t i = (id * H + ih) * W + iw;
                const M v = M(plane[i]);
                if (v > best || v != v) best = v, at = i;
              }
          y[r * oW + ow] = T(best);
          ind[r * oW + ow] = at;
        } else {
          const M sum = box_sum<M>(plane, H, W, d0, d1, h0, h1, w0, w1);
          y[r * oW + ow] = T(sum / M((d1 - d0) * (h1 - h0) * (w1 - w0)));
        }
      }
    }
  });
}

Tensor adaptive_avg(const char *op, const Tensor &self, int nsp, const std::vector<int64_t> &output_size) {
  AdaptiveCall c = prepare(op, self, nsp, output_size, false);
  Tensor out = empty_tensor(c.shape, self.dtype(), self.device());
  TP_DISPATCH_FLOATING(self.dtype(), op, [&]<typename T>() {
    if (!self.device().is_meta() && out.numel() > 0) adaptive_kernel<T, false>(c, out.data<T>(), nullptr);
  });
  return out;
}

std::tuple<Tensor, Tensor> adaptive_max(const char *op, const Tensor &self, int nsp,
                                        const std::vector<int64_t> &output_size) {
  AdaptiveCall c = prepare(op, self, nsp, output_size, true);
  Tensor out = empty_tensor(c.shape, self.dtype(), self.device());
  Tensor ind = empty_tensor(c.shape, ScalarType::Int64, self.device());
  TP_DISPATCH_FLOATING(self.dtype(), op, [&]<typename T>() {
    if (!self.device().is_meta() && out.numel() > 0)
      adaptive_kernel<T, true>(c, out.data<T>(), ind.data<int64_t>());
  });
  return {out, ind};
}

}  // namespace

// ---- the registered ops -------------------------------------------------------------------------------------
using Ints = std::vector<int64_t>;

static Tensor adaptive_avg_pool1d(const Tensor &self, Ints size) { return adaptive_avg("adaptive_avg_pool1d", self, 1, size); }
static Tensor adaptive_avg_pool2d(const Tensor &self, Ints size) { return adaptive_avg("adaptive_avg_pool2d", self, 2, size); }
static Tensor adaptive_avg_pool3d(const Tensor &self, Ints size) { return adaptive_avg("adaptive_avg_pool3d", self, 3, size); }
static Tensor adaptive_avg_pool2d_out(const Tensor &self, Ints size, const Tensor &out) {
  return pool_copy_out("adaptive_avg_pool2d.out", adaptive_avg_pool2d(self, size), out);
}
static Tensor adaptive_avg_pool3d_out(const Tensor &self, Ints size, const Tensor &out) {
  return pool_copy_out("adaptive_avg_pool3d.out", adaptive_avg_pool3d(self, size), out);
}
static std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor &self, Ints size) {
  return adaptive_max("adaptive_max_pool1d", self, 1, size);
}
static std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor &self, Ints size) {
  return adaptive_max("adaptive_max_pool2d", self, 2, size);
}
static std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor &self, Ints size) {
  return adaptive_max("adaptive_max_pool3d", self, 3, size);
}
static std::tuple<Tensor, Tensor> adaptive_max_pool2d_out(const Tensor &self, Ints size, const Tensor &out,
                                                          const Tensor &ind) {
  auto [v, i] = adaptive_max_pool2d(self, size);
  return {pool_copy_out("adaptive_max_pool2d.out", v, out), pool_copy_out("adaptive_max_pool2d.out", i, ind)};
}
static std::tuple<Tensor, Tensor> adaptive_max_pool3d_out(const Tensor &self, Ints size, const Tensor &out,
                                                          const Tensor &ind) {
  auto [v, i] = adaptive_max_pool3d(self, size);
  return {pool_copy_out("adaptive_max_pool3d.out", v, out), pool_copy_out("adaptive_max_pool3d.out", i, ind)};
}

TP_LIBRARY(pool_adaptive) {
  lib.def("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor");
  lib.def("adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor");
  lib.def("adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor");
  lib.def("adaptive_avg_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("adaptive_avg_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)");
  lib.def("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)");
  lib.def("adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)");
  lib.def("adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> "
          "(Tensor(a!), Tensor(b!))");
  lib.def("adaptive_max_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> "
          "(Tensor(a!), Tensor(b!))");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<adaptive_avg_pool1d>(lib, "adaptive_avg_pool1d", key, __LINE__);
    impl_typed<adaptive_avg_pool2d>(lib, "adaptive_avg_pool2d", key, __LINE__);
    impl_typed<adaptive_avg_pool3d>(lib, "adaptive_avg_pool3d", key, __LINE__);
    impl_typed<adaptive_avg_pool2d_out>(lib, "adaptive_avg_pool2d.out", key, __LINE__);
    impl_typed<adaptive_avg_pool3d_out>(lib, "adaptive_avg_pool3d.out", key, __LINE__);
    impl_typed<adaptive_max_pool1d>(lib, "adaptive_max_pool1d", key, __LINE__);
    impl_typed<adaptive_max_pool2d>(lib, "adaptive_max_pool2d", key, __LINE__);
    impl_typed<adaptive_max_pool3d>(lib, "adaptive_max_pool3d", key, __LINE__);
    impl_typed<adaptive_max_pool2d_out>(lib, "adaptive_max_pool2d.out", key, __LINE__);
    impl_typed<adaptive_max_pool3d_out>(lib, "adaptive_max_pool3d.out", key, __LINE__);
  }
}

}  // namespace tp::p10
