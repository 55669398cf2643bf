// linalg.cpp — the shared helpers of the CUDA linear-algebra ops declared in linalg.h: the solver context, info
// arrays and their host read, and the launches of cuda_kernels/linalg.cu.
//
// Where it sits: under ops_linalg_*.cpp; the routines themselves are the inline overloads in linalg.h.
#include "cuda/linalg.h"

#include <climits>

namespace tp::p10::cuda {

Solver solver_on(int dev) {
  const Stream stream = stream_for(dev);
  const CusolverApi &api = cusolver();
  return Solver{dev, stream, &api, cusolver_handle(dev, stream.handle)};
}

int linalg_device(const char *op, const std::vector<Tensor> &tensors) {
  const int dev = common_device(op, tensors, false);
  for (const Tensor &t : tensors)
    if (t.defined()) check_real(op, t.dtype());
  return dev;
}

std::vector<int> read_infos(int dev, const Tensor &info, int64_t n) {
  if (n == 0) return {};
  std::vector<int> host(size_t(n), 0);
  const CUstream stream = stream_for(dev).handle;
  TP_CU(cuMemcpyDtoHAsync, host.data(), reinterpret_cast<CUdeviceptr>(info.data_ptr()), size_t(n) * sizeof(int),
        stream);
  TP_CU(cuStreamSynchronize, stream);
  return host;
}

int solver_int(const char *op, int64_t v) {
  TP_CHECK(v <= INT_MAX, NotImplemented, op, ": a matrix dimension of ", v, " exceeds cuSOLVER's 32-bit indexing");
  return int(v);
}

// ---- linalg.cu ----------------------------------------------------------------------------------------------
void mirror_triangle(int dev, const Tensor &a, int64_t n, bool from_upper) {
  const int64_t total = a.numel();
  if (total == 0) return;
  launch(kernel(dev, "linalg.cu", kname("mirror_triangle", a.dtype())), elementwise_config(dev, total), stream_for(dev),
         total, n, a.data_ptr(), int(from_upper));
}

void det_from_lu(int dev, const Tensor &lu, const Tensor &piv, int64_t batch, int64_t n, const Tensor &out,
                 const Tensor &logabs, int kind) {
  if (batch == 0) return;
  launch(kernel(dev, "linalg.cu", kname("det_from_lu", out.dtype())), elementwise_config(dev, batch), stream_for(dev),
         batch, n, lu.data_ptr(), piv.data_ptr(), out.data_ptr(),
         logabs.defined() ? logabs.data_ptr() : static_cast<void *>(nullptr), kind);
}

void zero_diagonal_info(int dev, const Tensor &a, int64_t batch, int64_t k, int64_t ld, int64_t stride,
                        const Tensor &info) {
  if (batch == 0) return;
  launch(kernel(dev, "linalg.cu", kname("zero_diagonal_info", a.dtype())), elementwise_config(dev, batch),
         stream_for(dev), batch, k, ld, stride, a.data_ptr(), info.data_ptr());
}

void nan_flags(int dev, const Tensor &a, int64_t per, const Tensor &flag) {
  const int64_t total = a.numel();
  if (total == 0) return;
  launch(kernel(dev, "linalg.cu", kname("nan_flags", a.dtype())), elementwise_config(dev, total), stream_for(dev),
         total, per, a.data_ptr(), flag.data_ptr());
}

}  // namespace tp::p10::cuda
