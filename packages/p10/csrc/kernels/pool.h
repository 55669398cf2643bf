// pool.h — what the pooling and upsampling kernels share: the input seen as planes, parameter lists, the
// output-size formula and the out= helper.
//
// Where it sits: included by kernels/pool.cpp (max/avg pooling), pool_adaptive.cpp (adaptive pooling) and
// upsample.cpp (interpolation). Each of those ops works on the last 1, 2 or 3 (spatial) dims of its input and
// treats every leading index (N, C) alike.
//
// Note [Pooling planes]
//   An input of shape [N, C, *spatial] (or [C, *spatial] unbatched) is made contiguous and seen as
//   [planes, D, H, W] with planes = N * C; an op with fewer spatial dims gets size-1 leading spatial dims (a
//   1-d op sees D = H = 1). One kernel body per op family then serves 1, 2 and 3 spatial dims, and every
//   plane is a dense D*H*W block, so the kernels index it with plain row-major arithmetic (the only stride maths
//   they do, on a layout they made themselves). Work is split over planes * output rows, so a single large
//   image still uses every thread.
#pragma once
#include <string>
#include <vector>

#include "dispatch/kernel_box.h"
#include "loop/parallel.h"

namespace tp::p10 {

struct PoolPlanes {
  Tensor x;             // the input, contiguous (Note [Pooling planes])
  Shape batch;          // the leading dims: [N, C] or [C]
  int64_t planes = 1;   // their product
  int64_t in[3] = {1, 1, 1};  // spatial sizes D, H, W; 1 for dims the op lacks
};

// The input as planes. `nsp` is the number of spatial dims; the input must have nsp + 1 (unbatched) or
// nsp + 2 dims. Size checks (empty dims) are the caller's: PyTorch words them differently per op.
inline PoolPlanes pool_planes(const Tensor &input, int nsp) {
  PoolPlanes p;
  const int64_t lead = input.dim() - nsp;
  p.x = input.is_contiguous() ? input : call_op<Tensor>(TP_OP("contiguous"), input);
  for (int64_t i = 0; i < lead; ++i) p.batch.push_back(input.size(i)), p.planes *= input.size(i);
  for (int i = 0; i < nsp; ++i) p.in[3 - nsp + i] = input.size(lead + i);
  return p;
}

// The output shape: the batch dims followed by the last `nsp` of `out` (D, H, W).
inline Shape pool_shape(const PoolPlanes &p, int nsp, const int64_t out[3]) {
  Shape s = p.batch;
  for (int i = 3 - nsp; i < 3; ++i) s.push_back(out[i]);
  return s;
}

inline std::string ints_str(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A kernel_size/stride/padding/dilation list spread over (D, H, W): one int means the same for every spatial
// dim, `nsp` ints one per dim; the dims the op lacks get `fill`. `what` is the PyTorch error text for a wrong
// length ("kernel_size must either be a single int, or a tuple of two ints").
inline void pool_param(const char *op, const char *what, const std::vector<int64_t> &v, int nsp, int64_t fill,
                       int64_t out[3]) {
  TP_CHECK(v.size() == 1 || int(v.size()) == nsp, Runtime, op, ": ", what);
  for (int i = 0; i < 3; ++i) out[i] = fill;
  for (int i = 0; i < nsp; ++i) out[3 - nsp + i] = v.size() == 1 ? v[0] : v[size_t(i)];
}

// PyTorch's pooling_output_shape: floor((in + 2 pad - dilation (k - 1) - 1) / stride) + 1, rounded up instead
// with ceil_mode, but the last window must start inside the input or the left padding (else it is dropped).
inline int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                                   bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;  // floor division
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// The out= form: check out's dtype, resize it when its shape differs (PyTorch's out= rules), copy `r` in.
inline Tensor pool_copy_out(const char *op, const Tensor &r, const Tensor &out) {
  TP_CHECK(out.dtype() == r.dtype(), Runtime, op, ": Expected out tensor to have dtype ", scalar_type_name(r.dtype()),
           ", but got ", scalar_type_name(out.dtype()), " instead");
  if (out.sizes() != r.sizes()) {
    TP_CHECK(out.numel() == 0 || out.is_contiguous(), Runtime, op, ": cannot resize a non-contiguous out= tensor from ",
             shape_str(out.sizes()), " to ", shape_str(r.sizes()));
    Tensor fresh = empty_tensor(r.sizes(), out.dtype(), out.device());
    out->storage = fresh->storage;
    out->set_geometry(r.sizes(), contiguous_strides(r.sizes()), 0);
  }
  out.bump_version();
  if (!out.device().is_meta() && r.numel() > 0) call_op<Tensor>(TP_OP("copy_"), out, r, false);
  return out;
}

// Output rows (plane, od, oh) in order, starting at flat row `row`: kernels step through their share of rows
// with next() instead of dividing per row (integer divisions cost more than a small window's arithmetic).
struct RowCursor {
  int64_t plane, od, oh;
  const int64_t oD, oH;
  RowCursor(int64_t row, int64_t oD_, int64_t oH_)
      : plane(row / (oD_ * oH_)), od((row / oH_) % oD_), oh(row % oH_), oD(oD_), oH(oH_) {}
  void next() {
    if (++oh < oH) return;
    oh = 0;
    if (++od < oD) return;
    od = 0, ++plane;
  }
};

// The sum, in M, of the box [d0, d1) x [h0, h1) x [w0, w1) of a dense D x H x W plane (H and W given). Each run
// of contiguous elements (a box row, or several whole rows at once when the box spans the width) is summed
// into 8 partial sums, which the compiler vectorises; a plain loop would be one long chain of dependent adds.
template <typename M, typename T>
inline M box_sum(const T *plane, int64_t H, int64_t W, int64_t d0, int64_t d1, int64_t h0, int64_t h1, int64_t w0,
                 int64_t w1) {
  auto run = [](const T *p, int64_t n) {
    M lane[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) lane[j] += M(p[i + j]);
    M s = 0;
    for (; i < n; ++i) s += M(p[i]);
    for (M l : lane) s += l;
    return s;
  };
  M sum = 0;
  if (w1 - w0 < 16 && !(w0 == 0 && w1 == W)) {  // short rows: the plain loop, no lanes to fill and merge
    for (int64_t d = d0; d < d1; ++d)
      for (int64_t h = h0; h < h1; ++h)
        for (const T *p = plane + (d * H + h) * W + w0, *end = p + (w1 - w0); p < end; ++p) sum += M(*p);
    return sum;
  }
  for (int64_t d = d0; d < d1; ++d) {
    if (w0 == 0 && w1 == W) {
      sum += run(plane + (d * H + h0) * W, (h1 - h0) * W);
      continue;
    }
    for (int64_t h = h0; h < h1; ++h) sum += run(plane + (d * H + h) * W + w0, w1 - w0);
  }
  return sum;
}

// The grain for parallel_for over output rows that each cost `work` element reads.
inline int64_t pool_grain(int64_t work) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work)); }

}  // namespace tp::p10
