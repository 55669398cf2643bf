// index_helpers.cpp — index validation and wrapping for the indexing kernels (see index_helpers.h).
#include "kernels/index_helpers.h"

#include "kernels/cast.h"

namespace tp::p10 {

Tensor cast_to(const Tensor &t, ScalarType dtype);
namespace cuda {  // an index on a GPU is checked there (cuda/index_common.h)
void check_index_range_cuda(const Tensor &index, int64_t size, int64_t dim, const char *op, bool allow_negative);
Tensor wrap_negative_cuda(const Tensor &index, int64_t size, const char *op, int64_t dim);
}  // namespace cuda

void check_index_range(const Tensor &index, int64_t size, int64_t dim, const char *op, bool allow_negative) {
  if (index.numel() == 0 || index.device().is_meta()) return;
  if (index.device().type == DeviceType::CUDA) return cuda::check_index_range_cuda(index, size, dim, op, allow_negative);
  Tensor idx = call_op(TP_OP("contiguous"), index.dtype() == ScalarType::Int64 ? index : cast_to(index, ScalarType::Int64));
  const int64_t *p = idx.data<int64_t>();
  const int64_t lo = allow_negative ? -size : 0;
  for (int64_t i = 0; i < idx.numel(); ++i)
    if (p[i] < lo || p[i] >= size)
      fail(index_error_kind(op), op, "(): index ", p[i], " is out of bounds for dimension ", dim, " with size ", size);
}

Tensor wrap_negative(const Tensor &index, int64_t size, const char *op, int64_t dim) {
  if (index.device().type == DeviceType::CUDA) return cuda::wrap_negative_cuda(index, size, op, dim);
  check_index_range(index, size, dim, op, /*allow_negative=*/true);
  Tensor idx = call_op(TP_OP("clone"), index.dtype() == ScalarType::Int64 ? index : cast_to(index, ScalarType::Int64));
  if (idx.device().is_meta()) return idx;
  TensorIterator it(raw_iter_config(op, ScalarType::Int64), idx, {});
  it.for_each([size](char **p, const int64_t *s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t &v = *reinterpret_cast<int64_t *>(p[0] + i * s[0]);
      if (v < 0) v += size;
    }
  });
  return idx;
}

}  // namespace tp::p10
