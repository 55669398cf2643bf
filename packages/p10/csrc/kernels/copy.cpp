// copy.cpp — copy_ (with broadcasting and dtype conversion), clone, contiguous, and `.to(dtype|device)`.
//
// Where it sits: the one place elements move between tensors of different dtypes or layouts. The loop helper
// (loop/tensor_iterator.cpp) calls cast_to() to bring inputs to an op's computation dtype.
#include <algorithm>
#include <utility>

#include "dispatch/kernel_box.h"
#include "kernels/cast.h"
#include "loop/tensor_iterator.h"

namespace tp::p10 {

// Note [Transposed copies]
//   Copying a transposed matrix into row-major memory (x.t().contiguous()) walks the source down its columns:
//   in a 1024-wide float32 matrix each step lands on another 4 KiB page, so the element-by-element walk misses
//   the cache and the TLB nearly every time. When both tensors are matrices of the same shape and one has unit
//   stride along dim 1 while the other has it along dim 0, the copy goes tile by tile instead. A tile is
//   kTileRows destination rows by kTileCols columns, and narrow on purpose: the kTileCols source columns it
//   reads lie a power of two apart (4 KiB) and so share one set of the 8-way L1 cache; with 8 columns all of
//   them stay cached while the tile's rows are written (square 32 x 32 tiles thrash that set and were no
//   faster than the plain walk). The tiles run on the calling thread, as PyTorch's transposed copy does:
//   split over the two threads of the 2-core benchmark machine they measured ~10x slower than on one (why is
//   not settled: the vCPUs may share a core's cache), and one thread already beats PyTorch there. The values
//   copied are those of the plain walk.
template <typename D, typename S> static void copy_tiles(const Tensor &dst, const Tensor &src) {
  constexpr int64_t kTileRows = 128, kTileCols = 8;
  int64_t rows = dst.size(0), cols = dst.size(1);
  int64_t d0 = dst.stride(0), d1 = dst.stride(1), s0 = src.stride(0), s1 = src.stride(1);
  if (d1 != 1) {  // name the dims so that dst has unit stride along dim 1 and src along dim 0
    std::swap(rows, cols);
    std::swap(d0, d1);
    std::swap(s0, s1);
  }
  D *out = dst.data<D>();
  const S *in = src.data<S>();
  const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows, col_tiles = (cols + kTileCols - 1) / kTileCols;
  for (int64_t t = 0; t < row_tiles * col_tiles; ++t) {
    const int64_t r0 = (t / col_tiles) * kTileRows, c0 = (t % col_tiles) * kTileCols;
    const int64_t r1 = std::min(rows, r0 + kTileRows), c1 = std::min(cols, c0 + kTileCols);
    for (int64_t r = r0; r < r1; ++r) {
      D *o = out + r * d0;  // a contiguous run of dst; its source is a column of src (step s1)
      const S *x = in + r;
      for (int64_t c = c0; c < c1; ++c) o[c] = cast_value<D>(x[c * s1]);
    }
  }
}

// Whether copy_tiles applies: same-shape matrices (no broadcast), at least a tile each way, crossed unit strides.
static bool wants_tiles(const Tensor &dst, const Tensor &src) {
  if (dst.dim() != 2 || src.sizes() != dst.sizes() || dst.size(0) < 32 || dst.size(1) < 32) return false;
  return (dst.stride(1) == 1 && src.stride(0) == 1 && src.stride(1) != 1) ||
         (dst.stride(0) == 1 && src.stride(1) == 1 && dst.stride(1) != 1);
}

// dst[i] = cast(src[i]) over an iterator whose operand 0 is dst and operand 1 is src.
static void copy_loop(const TensorIterator &it, ScalarType dst_t, ScalarType src_t) {
  TP_DISPATCH_ALL(dst_t, "copy_", [&]<typename D>() {
    TP_DISPATCH_ALL(src_t, "copy_", [&]<typename S>() {
      it.for_each([](char **data, const int64_t *s, int64_t n) {
        if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
          D *d = reinterpret_cast<D *>(data[0]);
          const S *src = reinterpret_cast<const S *>(data[1]);
          for (int64_t i = 0; i < n; ++i) d[i] = cast_value<D>(src[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<D *>(data[0] + i * s[0]) = cast_value<D>(*reinterpret_cast<const S *>(data[1] + i * s[1]));
        }
      });
    });
  });
}

Tensor cast_to(const Tensor &t, ScalarType dtype) {
  // A Composite (a kernel every backend shares) may hand a CUDA tensor to this CPU helper: the cast then goes
  // through the dispatcher to that device's `to` instead of the host loop below (Note [No host reads of device
  // memory] in core/tensor.cpp).
  if (t.device().type == DeviceType::CUDA) {
    Tensor out = call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(dtype), std::optional<Device>(), true);
    out->is_wrapped_number = t->is_wrapped_number;
    return out;
  }
  Tensor out = empty_like_layout(t, dtype, t.device());
  out->is_wrapped_number = t->is_wrapped_number;
  if (t.device().is_meta() || t.numel() == 0) return out;
  TensorIterator it({.op = "to", .promote_inputs = false, .out_dtype = dtype, .compute_dtype = t.dtype()}, out, {t});
  copy_loop(it, dtype, t.dtype());
  return out;
}

// self.copy_(src): broadcast src to self's shape, convert to self's dtype. Bumps self's version.
static Tensor copy_(const Tensor &self, const Tensor &src, bool non_blocking) {
  (void)non_blocking;  // CPU copies are synchronous
  TP_CHECK(is_expandable_to(src.sizes(), self.sizes()), Runtime, "copy_: the source of shape ", shape_str(src.sizes()),
           " cannot be broadcast to the destination of shape ", shape_str(self.sizes()));
  TP_CHECK(self.device() == src.device() || src.device().is_cpu() || self.device().is_meta(), Runtime,
           "copy_: copying from ", device_str(src.device()), " to ", device_str(self.device()),
           " needs that device's backend");
  self.bump_version();
  if (self.device().is_meta() || self.numel() == 0) return self;
  if (wants_tiles(self, src)) {
    TP_DISPATCH_ALL(self.dtype(), "copy_", [&]<typename D>() {
      TP_DISPATCH_ALL(src.dtype(), "copy_", [&]<typename S>() { copy_tiles<D, S>(self, src); });
    });
    return self;
  }
  TensorIterator it({.op = "copy_", .promote_inputs = false, .out_dtype = self.dtype(), .compute_dtype = src.dtype(),
                     .resize_out = false},
                    self, {src});
  copy_loop(it, self.dtype(), src.dtype());
  return self;
}

// clone keeps a dense layout (Note [Layout preservation]); contiguous always makes row-major memory.
static Tensor clone(const Tensor &self) { return copy_(empty_like_layout(self, self.dtype(), self.device()), self, false); }

static Tensor contiguous(const Tensor &self) {
  return self.is_contiguous() ? self : copy_(empty_tensor(self.sizes(), self.dtype(), self.device()), self, false);
}

// .to(dtype=, device=, copy=, non_blocking=): returns self when nothing changes and copy is False (PyTorch's
// aliasing rule). non_blocking only matters to a copy between devices (csrc/cuda/ops_copy.cpp).
static Tensor to_impl(const Tensor &self, std::optional<ScalarType> dtype, std::optional<Device> device, bool copy,
                      bool non_blocking) {
  ScalarType dt = dtype.value_or(self.dtype());
  Device dev = canonical_device(device.value_or(self.device()));  // `cuda` means cuda:<current>
  if (dev.type == DeviceType::CPU) dev.index = -1;
  if (!copy && dt == self.dtype() && dev == self.device()) return self;
  Tensor out = empty_like_layout(self, dt, dev);
  if (self.numel() == 0) return out;
  TP_CHECK(!self.device().is_meta() || dev.is_meta(), NotImplemented,
           "Cannot copy out of meta tensor; no data! (to ", device_str(dev), ")");
  if (dev.is_meta()) return out;
  // To another backend (cpu -> cuda): the dispatched copy_ reaches that backend's kernel, which moves the bytes.
  if (dev.type != self.device().type) return call_op<Tensor>(TP_OP("copy_"), out, self, non_blocking);
  return copy_(out, self, false);
}

TP_LIBRARY(copy) {
  lib.def("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)");
  lib.def("clone(Tensor self) -> Tensor");
  lib.def("contiguous(Tensor self) -> Tensor");
  lib.def("to(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool copy=False, "
          "bool non_blocking=False) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<copy_>(lib, "copy_", key, __LINE__);
    impl_typed<clone>(lib, "clone", key, __LINE__);
    impl_typed<contiguous>(lib, "contiguous", key, __LINE__);
    impl_typed<to_impl>(lib, "to", key, __LINE__);
  }
}

}  // namespace tp::p10
