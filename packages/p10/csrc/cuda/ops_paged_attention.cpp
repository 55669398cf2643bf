// ops_paged_attention.cpp — the CUDA kernel of paged_attention: decoding attention over a key/value cache kept
// in blocks of a shared pool and found through a block table (vLLM's PagedAttention layout).
//
// Where it sits: the CUDA twin of kernels/paged_attention.cpp, with the same checks (check_paged_args in
// kernels/paged_attention.h, which reads block_table and seq_lens back to the host: the lengths decide which
// entries are used, and a bad entry is an IndexError naming it, never a read outside the pools). The arithmetic
// is tensorplay_p10/cuda_kernels/paged_attention.cu (Note [Paged attention on CUDA] there). The gradient goes
// through _paged_attention_reference (tpx formulas/recurrent.py), whose ops run on the GPU too.
#include <climits>
#include <cmath>

#include "cuda/ops_common.h"
#include "kernels/paged_attention.h"

namespace tp::p10::cuda {

namespace {
const char *kOp = "paged_attention";

// paged_attention.cu's PagedParams, byte for byte.
struct PagedParams {
  const void *q = nullptr, *kp = nullptr, *vp = nullptr;
  const int64_t *table = nullptr, *lens = nullptr;
  void *out = nullptr;
  int64_t B = 0, H = 0, T = 0, D = 0, bs = 0, Hkv = 0, Dv = 0, bpr = 0;
  double scale = 1.0;
};
static_assert(sizeof(PagedParams) == 6 * 8 + 8 * 8 + 8, "PagedParams must match paged_attention.cu");
constexpr int64_t kPagedRows = 4;  // paged_attention.cu: warps (query rows) per block

}  // namespace

static Tensor paged_attention(const Tensor &query, const Tensor &key_pool, const Tensor &value_pool,
                              const Tensor &block_table, const Tensor &seq_lens, std::optional<double> scale) {
  // shapes, dtypes, one device for all, and the table's and lengths' values (read back)
  const PagedDims d = check_paged_args(kOp, query, key_pool, value_pool, block_table, seq_lens);
  const int dev = common_device(kOp, {query, key_pool, value_pool, block_table, seq_lens}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor out = empty_tensor({d.B, d.H, d.T, d.Dv}, query.dtype(), device);
  if (out.numel() == 0) return out;
  const Tensor q = dense(query, query.dtype()), kp = dense(key_pool, key_pool.dtype()),
               vp = dense(value_pool, value_pool.dtype()), table = dense(block_table, block_table.dtype()),
               lens = dense(seq_lens, seq_lens.dtype());
  const int64_t grid = (d.B * d.H * d.T + kPagedRows - 1) / kPagedRows;
  TP_CHECK(grid <= INT_MAX, NotImplemented, kOp, ": ", d.B * d.H * d.T,
           " query rows need more CUDA blocks than one launch takes");
  PagedParams p;
  p.q = q.data_ptr(), p.kp = kp.data_ptr(), p.vp = vp.data_ptr();
  p.table = static_cast<const int64_t *>(table.data_ptr()), p.lens = static_cast<const int64_t *>(lens.data_ptr());
  p.out = out.data_ptr();
  p.B = d.B, p.H = d.H, p.T = d.T, p.D = d.D, p.bs = d.bs, p.Hkv = d.Hkv, p.Dv = d.Dv, p.bpr = d.bpr;
  p.scale = scale ? *scale : 1.0 / std::sqrt(double(d.D));
  launch(kernel(dev, "paged_attention.cu", kname("paged_attention", query.dtype())),
         LaunchConfig{unsigned(grid), unsigned(32 * kPagedRows), 0}, stream_for(dev), p);
  return out;
}

TP_LIBRARY(cuda_paged_attention) { TP_IMPL(lib, "paged_attention", CUDA, paged_attention); }

}  // namespace tp::p10::cuda
