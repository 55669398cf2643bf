// index_common.h — what the CUDA indexing ops share: the device-side index check's flag, restrided views and
// the gather / scatter / nonzero launches of tensorplay_p10/cuda_kernels/index.cu.
//
// Where it sits: used by ops_index.cpp (gather, scatter, index_select & co.), ops_index_advanced.cpp
// (index.Tensor, index_put_, masked ops, nonzero) and ops_rearrange.cpp (repeat_interleave). The host half of
// Note [Restriding] (kernels/index.cpp) and Note [Device index checks] (index.cu) lives here.
#pragma once
#include <initializer_list>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

// How a kernel checks the indices it reads (index.cu's `check`).
enum IndexCheck : int { kNoCheck = 0, kNonNegative = 1, kWrapNegative = 2 };

// Note [Check first]
//   A checked index op must read its flag before it returns (Note [Device index checks] in index.cu): one wait
//   per call, after which the GPU idles while the host prepares the next call (Python, the meta checks,
//   allocation, the launch: some microseconds) — unless the wait is not for the main kernel. So when the main
//   kernel is long (it moves at least kCheckFirstBytes), gather, index_select and x[idx] launch a short kernel
//   that checks the indices into the flag (launch_index_check), fence the flag there (an event), launch the
//   main kernel, and only then wait — for the fence, not for the main kernel — and raise if the flag is set.
//   The main kernel still tests each index but records nothing (err null): a bad one is skipped, never read
//   through; its result is dropped with the IndexError. The wait covers the previous call's main kernel and
//   this call's check; this call's main kernel runs while the host returns and prepares the next call, and the
//   GPU never idles between calls. A short main kernel keeps its check inside and waits for it (one launch:
//   the extra launch would cost more than it hides). Either way: the CPU's IndexError before the op returns,
//   nothing written but a new tensor, and no flag slot written after it was read.
constexpr int64_t kCheckFirstBytes = int64_t(8) << 20;
// index.cu's reductions for scatter: a plain write, or an atomic combine.
enum class ScatterReduce : int { None = 0, Sum = 1, Prod = 2, Max = 3, Min = 4 };

// Note [Device index checks], host side: `slots` (flag, value) pairs in mapped pinned host memory (taken from a
// process-wide pool, zeroed by the host: no memset on the stream). The kernels record a bad index of slot k at
// ptr(k), a device pointer to the same memory; raise_if_set waits for the stream (or, after fence(), for the
// work launched before the fence only), reads every slot (no copy) and throws the CPU's IndexError for the
// first slot that is set. A flag destroyed without being read (an exception between launch and read) waits
// before its slots go back to the pool, so a late write can never land in another op's flag.
//
// Note [Single-slot raise_if_set]
//   The one-slot overload used to forward as `raise_if_set(op, {dim}, {size})`. A braced list of one int64_t
//   converts to `int64_t` by identity but to `std::vector<int64_t>` only through a constructor, so overload
//   resolution picked the one-slot overload again: it called itself forever. With -O2/-O3 GCC turns that
//   tail call into `jmp .`, so every op that checks one slot (gather, scatter*, index_select, index_add_,
//   take, put_, check_index_range / wrap_negative on a GPU index, and the backward formulas built on them)
//   launched its kernel and then spun at 100% CPU, never reaching the read-back. Infinite recursion without
//   side effects is undefined behaviour, so other compilers or inlining contexts may do something else
//   (skip the check, fall into the next function): that is why only some tests hung on the GPU runs. The
//   vectors are built explicitly; test_cuda_host_paths.py runs these ops against a stand-in driver on the CPU.
class IndexErrorFlag {
 public:
  IndexErrorFlag(int device, int slots = 1);
  ~IndexErrorFlag();
  IndexErrorFlag(const IndexErrorFlag &) = delete;
  IndexErrorFlag &operator=(const IndexErrorFlag &) = delete;
  void *ptr(int slot = 0) const;
  // Note [Check first]: every launch that writes the slots is behind; later reads wait for it, not the stream.
  void fence();
  // IndexError "<op>(): index <v> is out of bounds for dimension <dims[k]> with size <sizes[k]>".
  void raise_if_set(const char *op, const std::vector<int64_t> &dims, const std::vector<int64_t> &sizes) const;
  // One slot (Note [Single-slot raise_if_set]: the vectors are spelled out, never `{dim}`).
  void raise_if_set(const char *op, int64_t dim, int64_t size) const {
    raise_if_set(op, std::vector<int64_t>{dim}, std::vector<int64_t>{size});
  }
  // Whether any slot is set (reads them back).
  bool any_set() const;
  // The recorded value of slot 0, if any (for errors other than IndexError).
  std::optional<int64_t> value() const;

 private:
  // Waits for the stream (once), then the slots' words, host side.
  const volatile int64_t *settled() const;
  int device_, slots_;
  int64_t *host_;                  // 2 * slots_ words of mapped pinned memory
  unsigned long long device_ptr_;  // the same words as the device sees them
  CUevent event_ = nullptr;        // fence()'s, from a per-device pool
  mutable bool waited_ = false;
};

// Note [Check first]: the check of a kernel of its own (index.cu index_check_flat, or index_wrap for other
// layouts) of the int64 `index` against `size` (kNonNegative or kWrapNegative) into slot 0 of `err`, fenced.
void launch_index_check(int dev, const Tensor &index, int64_t size, IndexCheck check, IndexErrorFlag &err);
// Note [Check first]: the flag a main kernel moving `bytes` should record bad indices in. A long one (at least
// kCheckFirstBytes) or none at all (0 bytes: nothing else would look at the indices) gets null, after
// launch_index_check has run; a short one gets err.ptr() and checks the indices itself.
void *check_first(int dev, int64_t bytes, const Tensor &index, int64_t size, IndexCheck check, IndexErrorFlag &err);

// A CUDA int64 tensor read back to the host (synchronises the current stream). `t` holds `n` values.
std::vector<int64_t> read_int64(const Tensor &t, int64_t n);

// `t` viewed with `sizes` and stride 0 along dim `d`; its other strides kept (Note [Restriding]).
Tensor restride(const Tensor &t, const Shape &sizes, int64_t d);
// An integer index tensor as int64 (cast on the device when it is not).
Tensor as_int64(const Tensor &t);
// A CPU index tensor moved to `device` (PyTorch accepts CPU indices for CUDA tensors); device ones unchanged.
Tensor index_on(const Tensor &t, Device device);

// out[p] = src[p + index[p] * step] with `src` restrided over out's shape (index.cu gather_b<N>).
void launch_gather(int dev, const Tensor &out, const Tensor &src, const Tensor &index, int64_t size, int64_t step,
                   IndexCheck check, void *err, const char *op);
// Note [Row gathers] (index.cu), host side: the widest unit of 16, 8, 4, 2, 1 bytes (at least `item`) that
// divides a row of `row_bytes`, every row step (`step_bytes`, 0 for none) and aligns every pointer.
int64_t row_unit(int64_t row_bytes, int64_t item, std::initializer_list<const void *> pointers, int64_t step_bytes);
// The launch of a row kernel over `rows` rows of `units` units: a team of `lanes` threads per row. A row of
// fewer than 32 units gets the next power of two; a longer one a team of at least a warp, widened (up to 256)
// only until each thread has at most `per_thread` units (1: one unit per thread, as tril's kernel wants; the
// row gathers pass 8, Note [Row gathers] in index.cu).
struct RowLaunch {
  LaunchConfig config;
  int lanes = 1;
};
RowLaunch row_launch(int dev, int64_t rows, int64_t units, int per_thread = 1);

// out = the rows of a contiguous `self` along dim d picked by `index` (int64, 1-D or 0-d, index[j * index_stride])
// with a team of threads per row (index.cu select_rows_b<U>, Note [Row gathers]); out contiguous and not empty.
// `check`: kNonNegative or kWrapNegative; `err` null after launch_index_check (Note [Check first]).
void launch_select_rows(int dev, const Tensor &out, const Tensor &self, int64_t d, const Tensor &index,
                        int64_t index_stride, IndexCheck check, void *err);

// dst[p + index[p] * step] (reduce)= src[p] with `dst` restrided and `src` viewed over index's shape.
void launch_scatter(int dev, const Tensor &dst, const Tensor &index, const Tensor &src, int64_t size, int64_t step,
                    IndexCheck check, ScatterReduce reduce, void *err, const char *op);

// The exclusive scan of `n` int64 values in place (one block); returns the total. A negative value is
// recorded in `err` when given.
int64_t exclusive_scan_int64(int dev, const Tensor &data, int64_t n, void *err);
// kernels/index_helpers.h's check_index_range and wrap_negative for an index on a GPU (index.cu index_wrap):
// the same IndexError; the wrapped index is a new contiguous int64 tensor.
void check_index_range_cuda(const Tensor &index, int64_t size, int64_t dim, const char *op, bool allow_negative);
Tensor wrap_negative_cuda(const Tensor &index, int64_t size, const char *op, int64_t dim);

// nonzero(self) on the device: [count, ndim] int64 (Note [Nonzero passes] in ops_index_advanced.cpp).
Tensor nonzero_cuda(const Tensor &self);

}  // namespace tp::p10::cuda
