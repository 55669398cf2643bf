// pool.cpp — sliding-window pooling: max_pool1d/2d/3d (with and without indices) and avg_pool1d/2d/3d.
//
// Where it sits: the kernels behind nn.functional's max_pool*/avg_pool* (and nn.MaxPool*/AvgPool*). Adaptive
// pooling, whose windows follow from the output size instead, is in pool_adaptive.cpp. Both see their input
// as planes (Note [Pooling planes] in pool.h), so one kernel body serves 1, 2 and 3 spatial dims.
//
// Note [Pooling windows]
//   Output position o along a dim of size `in` reads the window that starts at o * stride - padding and takes
//   k taps `dilation` apart; taps in the padding are skipped (max) or counted as zeros (avg with
//   count_include_pad). The output size is PyTorch's pooling_output_size (pool.h). Max pooling returns, with
//   indices, the flat position of the maximum inside its input plane (d * H * W + h * W + w, without padding),
//   as PyTorch does; a NaN in the window wins (the last NaN, as PyTorch's `val > max || isnan(val)` scan). An
//   average divides the window's sum by divisor_override, or by the window size clipped to input + padding
//   (count_include_pad) or to the input alone; a window wholly in the padding gives 0.
#include <cmath>
#include <limits>
#include <optional>

#include "kernels/pool.h"

namespace tp::p10 {

namespace {

struct Window {
  int64_t k[3], s[3], p[3], d[3];
};

// Everything a pooling call needs after its arguments were checked.
struct PoolCall {
  PoolPlanes pp;
  Window w;
  int64_t out[3] = {1, 1, 1};
  Shape shape;  // of the output
};

const char *const kDimWords[] = {"", "one", "two", "three"};

// "kT: 3 kH: 2 kW: 2" — PyTorch's way of quoting a per-dim parameter (T, H, W for 3-d; H, W for 1-d and 2-d).
std::string per_dim(const char *name, const int64_t v[3], int nd) {
  static const char *const kLetters[] = {"T", "H", "W"};
  std::string s;
  for (int i = 3 - nd; i < 3; ++i) {
    if (!s.empty()) s += " ";
    s += name + std::string(kLetters[i]) + ": " + std::to_string(v[i]);
  }
  return s;
}

// PyTorch's check1d: a 1-d op's list argument holds one int.
void check1d(const char *op, const char *arg, const std::vector<int64_t> &v, bool allow_empty) {
  TP_CHECK(v.size() == 1 || (allow_empty && v.empty()), Runtime, op, "() argument '", arg,
           "' should contain one int (got ", v.size(), ")");
}

// PyTorch's argument and shape checks for max_poolNd / avg_poolNd (nsp = N), in PyTorch's order and words.
// `dilation` is empty for avg pooling. The 1-d ops check their own way first (check_max_pool1d and
// avg_pool1d's checkDimRange in PyTorch), then share the 2-d checks.
PoolCall prepare(const char *op, const Tensor &input, int nsp, const std::vector<int64_t> &kernel_size,
                 const std::vector<int64_t> &stride, const std::vector<int64_t> &padding,
                 const std::vector<int64_t> &dilation, bool is_max, bool ceil_mode) {
  const int64_t ndim = input.dim();
  const std::string tuple = std::string(nsp == 1 ? "a single int" : "a tuple of ") + (nsp == 1 ? "" : kDimWords[nsp]) +
                            (nsp == 1 ? "" : " ints");
  if (nsp == 1) {
    if (is_max) {
      TP_CHECK((ndim == 2 || ndim == 3) && input.size(-1) != 0 && input.size(-2) != 0, Runtime, "max_pool1d: "
               "Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:",
               shape_str(input.sizes()));
    } else {
      TP_CHECK(ndim == 2 || ndim == 3, Runtime, "Expected 2 to 3 dimensions, but got ", ndim, "-dimensional tensor "
               "for argument #1 'self' (while checking arguments for ", op, ")");
    }
    check1d(op, "kernel_size", kernel_size, false);
    check1d(op, "stride", stride, true);
    check1d(op, "padding", padding, false);
    if (is_max) check1d(op, "dilation", dilation, false);
  }
  PoolCall c;
  Window &w = c.w;
  pool_param(op, ("kernel_size must either be a single int, or " + tuple).c_str(), kernel_size, nsp, 1, w.k);
  TP_CHECK(stride.size() <= 1 || int(stride.size()) == nsp, Runtime, op,
           ": stride must either be omitted, a single int, or ", tuple);
  pool_param(op, "", stride.empty() ? kernel_size : stride, nsp, 1, w.s);
  pool_param(op, ("padding must either be a single int, or " + tuple).c_str(), padding, nsp, 0, w.p);
  if (is_max) pool_param(op, ("dilation must be either a single int, or " + tuple).c_str(), dilation, nsp, 1, w.d);
  else for (int64_t &d : w.d) d = 1;
  if (is_max && nsp == 1) {
    TP_CHECK(w.p[2] <= w.k[2] / 2, Runtime, "max_pool1d() padding should be at most half of kernel size, but got "
             "padding=", w.p[2], " and kernel_size=", w.k[2]);
  }

  TP_CHECK(ndim == nsp + 1 || ndim == nsp + 2, Runtime, "non-empty ", nsp + 1, "D or ", nsp + 2,
           "D (batch mode) tensor expected for input");
  for (int i = 3 - nsp; i < 3; ++i) {
    TP_CHECK(w.s[i] != 0, Runtime, "stride should not be zero");
    TP_CHECK(w.p[i] >= 0, Runtime, "pad must be non-negative, but got pad: ", w.p[i]);
    TP_CHECK(w.p[i] <= ((w.k[i] - 1) * w.d[i] + 1) / 2, Runtime, "pad should be at most half of effective "
             "kernel size, but got pad=", w.p[i], ", kernel_size=", w.k[i], " and dilation=", w.d[i]);
  }
  const int nd = std::max(nsp, 2);  // the 1-d ops report as the 2-d ones they are in PyTorch
  bool ok = true;
  for (int i = 3 - nd; i < 3; ++i) ok = ok && w.k[i] > 0;
  TP_CHECK(ok, Runtime, "kernel size should be greater than zero, but got ", per_dim("k", w.k, nd));
  for (int i = 3 - nd; i < 3; ++i) ok = ok && w.s[i] > 0;
  TP_CHECK(ok, Runtime, "stride should be greater than zero, but got ", per_dim("d", w.s, nd));
  for (int i = 3 - nd; i < 3; ++i) ok = ok && w.d[i] > 0;
  TP_CHECK(ok, Runtime, "dilation should be greater than zero, but got ", per_dim("dilation", w.d, nd));
  // Every dim but a batch dim must be non-empty (an unbatched input has none).
  for (int64_t i = ndim == nsp + 2 ? 1 : 0; i < ndim; ++i) {
    if (input.size(i) != 0) continue;
    if (nsp == 3)
      fail(ErrorKind::Runtime, op, "(): Expected input's non-batch dimensions to have positive length, but input "
           "has a shape of ", shape_str(input.sizes()), " and non-batch dimension ", i, " has length zero!");
    fail(ErrorKind::Runtime, "Expected ", nsp + 1, "D or ", nsp + 2, "D (batch mode) tensor with optional 0 dim "
         "batch size for input, but got:", shape_str(input.sizes()));
  }
  if (nsp == 3 && !is_max) {  // avg_pool3d alone wants the unpadded input to hold a whole window
    const int64_t T = input.size(-3), H = input.size(-2), W = input.size(-1);
    TP_CHECK(T >= w.k[0] && H >= w.k[1] && W >= w.k[2], Runtime, "input image (T: ", T, " H: ", H, " W: ", W,
             ") smaller than kernel size (kT: ", w.k[0], " kH: ", w.k[1], " kW: ", w.k[2], ")");
  }
  for (int i = 3 - nd; i < 3; ++i) ok = ok && w.k[i] / 2 >= w.p[i];
  if (!ok && nd == 3)
    fail(ErrorKind::Runtime, "pad should be smaller than or equal to half of kernel size, but got kT: ", w.k[0],
         " kW: ", w.k[2], " kH: ", w.k[1], " padT: ", w.p[0], " padW: ", w.p[2], " padH: ", w.p[1]);
  TP_CHECK(ok, Runtime, "pad should be smaller than or equal to half of kernel size, but got padW = ", w.p[2],
           ", padH = ", w.p[1], ", kW = ", w.k[2], ", kH = ", w.k[1]);

  c.pp = pool_planes(input, nsp);
  for (int i = 3 - nsp; i < 3; ++i) {
    c.out[i] = pooling_output_size(c.pp.in[i], w.k[i], w.p[i], w.s[i], w.d[i], ceil_mode);
    ok = ok && c.out[i] >= 1;
  }
  if (is_max && nsp == 1) {
    TP_CHECK(ok, Runtime, "max_pool1d() Invalid computed output size: ", c.out[2]);
  } else if (!ok) {
    std::string in = std::to_string(ndim == nsp + 2 ? input.size(1) : input.size(0)), o = in;
    for (int i = 3 - nd; i < 3; ++i) in += "x" + std::to_string(c.pp.in[i]), o += "x" + std::to_string(c.out[i]);
    fail(ErrorKind::Runtime, "Given input size: (", in, "). Calculated output size: (", o,
         "). Output size is too small");
  }
  c.shape = pool_shape(c.pp, nsp, c.out);
  return c;
}

// The first tap at or after `start` that lies inside [0, in), for steps of `dil`; the end is exclusive.
inline void max_range(int64_t o, int64_t k, int64_t s, int64_t p, int64_t dil, int64_t in, int64_t &b, int64_t &e) {
  b = o * s - p;
  e = std::min(b + (k - 1) * dil + 1, in);
  while (b < 0) b += dil;
}

template <typename T> inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// Max pooling over rows of output (plane, od, oh); `ind` may be null (no indices wanted).
template <typename T> void max_pool_kernel(const PoolCall &c, T *y, int64_t *ind) {
  using M = opmath_t<T>;
  const T *x = c.pp.x.data<T>();
  const Window &w = c.w;
  const int64_t D = c.pp.in[0], H = c.pp.in[1], W = c.pp.in[2];
  const int64_t oD = c.out[0], oH = c.out[1], oW = c.out[2];
  const M lowest = std::numeric_limits<M>::has_infinity ? -std::numeric_limits<M>::infinity()
                                                        : std::numeric_limits<M>::lowest();
  parallel_for(0, c.pp.planes * oD * oH, pool_grain(oW * w.k[0] * w.k[1] * w.k[2]), [&](int64_t b, int64_t e) {
    RowCursor cur(b, oD, oH);
    for (int64_t r = b; r < e; ++r, cur.next()) {
      const int64_t oh = cur.oh, od = cur.od;
      const T *plane = x + cur.plane * D * H * W;
      int64_t d0, d1, h0, h1;
      max_range(od, w.k[0], w.s[0], w.p[0], w.d[0], D, d0, d1);
      max_range(oh, w.k[1], w.s[1], w.p[1], w.d[1], H, h0, h1);
      for (int64_t ow = 0; ow < oW; ++ow) {
        int64_t w0, w1;
        max_range(ow, w.k[2], w.s[2], w.p[2], w.d[2], W, w0, w1);
        M best = lowest;
        int64_t at = (d0 * H + h0) * W + w0;
        for (int64_t id = d0; id < d1; id += w.d[0])
          for (int64_t ih = h0; ih < h1; ih += w.d[1])
            for (int64_t iw = w0; iw < w1; iw += w.d[2]) {
              const int64_t i = (id * H + ih) * W + iw;
              const M v = M(plane[i]);
              if (v > best || is_nan(v)) best = v, at = i;
            }
        y[r * oW + ow] = T(best);
        if (ind) ind[r * oW + ow] = at;
      }
    }
  });
}

std::tuple<Tensor, Tensor> max_pool(const char *op, const Tensor &self, int nsp, const std::vector<int64_t> &k,
                                    const std::vector<int64_t> &s, const std::vector<int64_t> &p,
                                    const std::vector<int64_t> &d, bool ceil_mode, bool want_indices) {
  PoolCall c = prepare(op, self, nsp, k, s, p, d, true, ceil_mode);
  Tensor out = empty_tensor(c.shape, self.dtype(), self.device());
  Tensor ind = want_indices ? empty_tensor(c.shape, ScalarType::Int64, self.device()) : Tensor();
  if (self.device().is_meta() || out.numel() == 0) return {out, ind};
  TP_DISPATCH_REAL(self.dtype(), op, [&]<typename T>() {
    max_pool_kernel<T>(c, out.data<T>(), want_indices ? ind.data<int64_t>() : nullptr);
  });
  return {out, ind};
}

// Average pooling over rows of output (plane, od, oh).
template <typename T> void avg_pool_kernel(const PoolCall &c, bool count_include_pad, std::optional<int64_t> divisor,
                                           T *y) {
  using M = opmath_t<T>;
  const T *x = c.pp.x.data<T>();
  const Window &w = c.w;
  const int64_t D = c.pp.in[0], H = c.pp.in[1], W = c.pp.in[2];
  const int64_t oD = c.out[0], oH = c.out[1], oW = c.out[2];
  // Window [b, e) along one dim, and the size it has when the padding counts.
  auto range = [](int64_t o, int64_t k, int64_t s, int64_t p, int64_t in, int64_t &b, int64_t &e) {
    b = o * s - p;
    e = std::min(b + k, in + p);
    const int64_t padded = e - b;
    b = std::max<int64_t>(b, 0), e = std::min(e, in);
    return padded;
  };
  parallel_for(0, c.pp.planes * oD * oH, pool_grain(oW * w.k[0] * w.k[1] * w.k[2]), [&](int64_t b, int64_t e) {
    RowCursor cur(b, oD, oH);
    for (int64_t r = b; r < e; ++r, cur.next()) {
      const int64_t oh = cur.oh, od = cur.od;
      const T *plane = x + cur.plane * D * H * W;
      int64_t d0, d1, h0, h1;
      const int64_t pd = range(od, w.k[0], w.s[0], w.p[0], D, d0, d1);
      const int64_t ph = range(oh, w.k[1], w.s[1], w.p[1], H, h0, h1);
      for (int64_t ow = 0; ow < oW; ++ow) {
        int64_t w0, w1;
        const int64_t pw = range(ow, w.k[2], w.s[2], w.p[2], W, w0, w1);
        if (d0 >= d1 || h0 >= h1 || w0 >= w1) {
          y[r * oW + ow] = T(0);
          continue;
        }
        const M sum = box_sum<M>(plane, H, W, d0, d1, h0, h1, w0, w1);
        const int64_t n = divisor ? *divisor : count_include_pad ? pd * ph * pw : (d1 - d0) * (h1 - h0) * (w1 - w0);
        y[r * oW + ow] = T(sum / M(n));
      }
    }
  });
}

Tensor avg_pool(const char *op, const Tensor &self, int nsp, const std::vector<int64_t> &k,
                const std::vector<int64_t> &s, const std::vector<int64_t> &p, bool ceil_mode, bool count_include_pad,
                std::optional<int64_t> divisor) {
  TP_CHECK(!divisor || *divisor != 0, Runtime, "divisor must be not zero");
  PoolCall c = prepare(op, self, nsp, k, s, p, {}, false, ceil_mode);
  Tensor out = empty_tensor(c.shape, self.dtype(), self.device());
  const auto run = [&]<typename T>() {
    if (!self.device().is_meta() && out.numel() > 0)
      avg_pool_kernel<T>(c, count_include_pad, divisor, out.data<T>());
  };
  // PyTorch averages the floating dtypes and int64 (an integer division, truncating).
  if (self.dtype() == ScalarType::Int64) run.operator()<int64_t>();
  else TP_DISPATCH_FLOATING(self.dtype(), op, run);
  return out;
}

}  // namespace

// ---- the registered ops -------------------------------------------------------------------------------------
using Ints = std::vector<int64_t>;

static Tensor max_pool1d(const Tensor &self, Ints k, Ints s, Ints p, Ints d, bool ceil_mode) {
  return std::get<0>(max_pool("max_pool1d", self, 1, k, s, p, d, ceil_mode, false));
}
static Tensor max_pool2d(const Tensor &self, Ints k, Ints s, Ints p, Ints d, bool ceil_mode) {
  return std::get<0>(max_pool("max_pool2d", self, 2, k, s, p, d, ceil_mode, false));
}
static Tensor max_pool3d(const Tensor &self, Ints k, Ints s, Ints p, Ints d, bool ceil_mode) {
  return std::get<0>(max_pool("max_pool3d", self, 3, k, s, p, d, ceil_mode, false));
}
static std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor &self, Ints k, Ints s, Ints p, Ints d,
                                                          bool ceil_mode) {
  return max_pool("max_pool1d", self, 1, k, s, p, d, ceil_mode, true);
}
static std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor &self, Ints k, Ints s, Ints p, Ints d,
                                                          bool ceil_mode) {
  return max_pool("max_pool2d", self, 2, k, s, p, d, ceil_mode, true);
}
static std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor &self, Ints k, Ints s, Ints p, Ints d,
                                                          bool ceil_mode) {
  return max_pool("max_pool3d", self, 3, k, s, p, d, ceil_mode, true);
}
static std::tuple<Tensor, Tensor> max_pool2d_with_indices_out(const Tensor &self, Ints k, Ints s, Ints p, Ints d,
                                                              bool ceil_mode, const Tensor &out, const Tensor &ind) {
  auto [v, i] = max_pool("max_pool2d", self, 2, k, s, p, d, ceil_mode, true);
  return {pool_copy_out("max_pool2d_with_indices.out", v, out), pool_copy_out("max_pool2d_with_indices.out", i, ind)};
}
static std::tuple<Tensor, Tensor> max_pool3d_with_indices_out(const Tensor &self, Ints k, Ints s, Ints p, Ints d,
                                                              bool ceil_mode, const Tensor &out, const Tensor &ind) {
  auto [v, i] = max_pool("max_pool3d", self, 3, k, s, p, d, ceil_mode, true);
  return {pool_copy_out("max_pool3d_with_indices.out", v, out), pool_copy_out("max_pool3d_with_indices.out", i, ind)};
}

static Tensor avg_pool1d(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode, bool count_include_pad) {
  return avg_pool("avg_pool1d", self, 1, k, s, p, ceil_mode, count_include_pad, std::nullopt);
}
static Tensor avg_pool2d(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
  return avg_pool("avg_pool2d", self, 2, k, s, p, ceil_mode, count_include_pad, divisor_override);
}
static Tensor avg_pool3d(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
  return avg_pool("avg_pool3d", self, 3, k, s, p, ceil_mode, count_include_pad, divisor_override);
}
static Tensor avg_pool2d_out(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode, bool count_include_pad,
                             std::optional<int64_t> divisor_override, const Tensor &out) {
  return pool_copy_out("avg_pool2d.out", avg_pool2d(self, k, s, p, ceil_mode, count_include_pad, divisor_override), out);
}
static Tensor avg_pool3d_out(const Tensor &self, Ints k, Ints s, Ints p, bool ceil_mode, bool count_include_pad,
                             std::optional<int64_t> divisor_override, const Tensor &out) {
  return pool_copy_out("avg_pool3d.out", avg_pool3d(self, k, s, p, ceil_mode, count_include_pad, divisor_override), out);
}

TP_LIBRARY(pool) {
  // PyTorch's schemas: stride=[] means stride = kernel_size; one int stands for every spatial dim.
  const std::string max_args = "int[N] kernel_size, int[N] stride=[], int[N] padding=0, int[N] dilation=1, "
                               "bool ceil_mode=False";
  const std::string avg_args = "int[N] kernel_size, int[N] stride=[], int[N] padding=0, bool ceil_mode=False, "
                               "bool count_include_pad=True";
  for (const std::string d : {"1", "2", "3"}) {
    std::string ma = max_args, aa = avg_args;  // int[N] -> int[d]
    for (std::string *a : {&ma, &aa})
      for (size_t at = a->find("[N]"); at != std::string::npos; at = a->find("[N]")) a->replace(at + 1, 1, d);
    lib.def("max_pool" + d + "d(Tensor self, " + ma + ") -> Tensor");
    lib.def("max_pool" + d + "d_with_indices(Tensor self, " + ma + ") -> (Tensor, Tensor)");
    if (d != "1") {
      lib.def("max_pool" + d + "d_with_indices.out(Tensor self, " + ma +
              ", *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))");
      lib.def("avg_pool" + d + "d(Tensor self, " + aa + ", int? divisor_override=None) -> Tensor");
      lib.def("avg_pool" + d + "d.out(Tensor self, " + aa +
              ", int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)");
    } else {
      lib.def("avg_pool1d(Tensor self, " + aa + ") -> Tensor");
    }
  }
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<max_pool1d>(lib, "max_pool1d", key, __LINE__);
    impl_typed<max_pool2d>(lib, "max_pool2d", key, __LINE__);
    impl_typed<max_pool3d>(lib, "max_pool3d", key, __LINE__);
    impl_typed<max_pool1d_with_indices>(lib, "max_pool1d_with_indices", key, __LINE__);
    impl_typed<max_pool2d_with_indices>(lib, "max_pool2d_with_indices", key, __LINE__);
    impl_typed<max_pool3d_with_indices>(lib, "max_pool3d_with_indices", key, __LINE__);
    impl_typed<max_pool2d_with_indices_out>(lib, "max_pool2d_with_indices.out", key, __LINE__);
    impl_typed<max_pool3d_with_indices_out>(lib, "max_pool3d_with_indices.out", key, __LINE__);
    impl_typed<avg_pool1d>(lib, "avg_pool1d", key, __LINE__);
    impl_typed<avg_pool2d>(lib, "avg_pool2d", key, __LINE__);
    impl_typed<avg_pool3d>(lib, "avg_pool3d", key, __LINE__);
    impl_typed<avg_pool2d_out>(lib, "avg_pool2d.out", key, __LINE__);
    impl_typed<avg_pool3d_out>(lib, "avg_pool3d.out", key, __LINE__);
  }
}

}  // namespace tp::p10
