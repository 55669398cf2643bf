// fused_optim.cu — the CUDA side of NN's fused optimizer ops: one Adam/AdamW or SGD step of one parameter,
// elementwise, in a grid-stride loop.
//
// Where it sits: packages/nn/csrc/fused_optim.cpp launches these through the C ABI's `cuda_launch`; P10
// compiles this file with NVRTC on first use (Note [Kernels of other pillars] in tensorplay_p10/cuda/
// _compiler.py). The arithmetic of an element is fused_optim_step.h's, shared with the CPU loops.
#include "fused_optim_step.h"

typedef long long int64;

#define TP_GRID_STRIDE(i, n) \
  for (int64 i = int64(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64(gridDim.x) * blockDim.x)

#define TP_FUSED_OPTIM(T)                                                                                     \
  extern "C" __global__ void adam_step_##T(int64 n, T *p, const T *g, T *m, T *v, T *vmax, AdamScalars s) {  \
    const AdamStep<T> step(s);                                                                                \
    TP_GRID_STRIDE(i, n) step(i, p, g, m, v, vmax);                                                           \
  }                                                                                                           \
  extern "C" __global__ void sgd_step_##T(int64 n, T *p, const T *g, T *buf, int first, SgdScalars s) {       \
    const SgdStep<T> step(s);                                                                                 \
    TP_GRID_STRIDE(i, n) step(i, p, g, buf, first != 0);                                                      \
  }
typedef float float32;
typedef double float64;
TP_FUSED_OPTIM(float32)
TP_FUSED_OPTIM(float64)
