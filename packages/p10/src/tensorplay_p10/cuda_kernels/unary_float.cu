// unary_float.cu — the CUDA kernels of the unary float family (exp, log, sin, sigmoid, logit, …): one template
// per form, instantiated for each op's functor and dtype by name (Note [Template kernels] in csrc/cuda/launch.h).
//
// Where it sits: csrc/cuda/ops_unary_float.cpp launches them, after the family's meta rule (csrc/ops/
// unary_float.cpp) has checked the call and chosen the result, and the input is cast to the result dtype T.
// The functor F (unary_float.cuh, the same formula the CPU loop runs) computes in OpMath<T>: float32 for
// float16/bfloat16. The functor travels by value (logit's bounds; an empty struct for the others).
//   unary_contig<F, T>(n, out, in, f):      out and in contiguous, n elements, 16-byte packs;
//   unary_strided<F, T>(n, g, out, in, f):  anything else, through Geometry (Note [Kernel geometry]).
#include "elementwise.cuh"
#include "unary_float.cuh"

// Note [16-byte packs] (elementwise.cuh): 16 / sizeof(T) elements per load and store, so 8 for float16 and
// bfloat16, 4 for float32 and 2 for double; the tail (and unaligned views) takes the plain loop.
template <typename F, typename T> __global__ void unary_contig(int64 n, T *out, const T *in, F f) {
  constexpr int N = 16 / sizeof(T);
  int64 done = 0;
  if (aligned_to(out, 16) && aligned_to(in, 16)) {
    const int64 packs = n / N;
    TP_GRID_STRIDE(i, packs) {
      const Pack<T, N> x = reinterpret_cast<const Pack<T, N> *>(in)[i];
      Pack<T, N> y;
#pragma unroll
      for (int k = 0; k < N; ++k) y.v[k] = store<T>(f(load(x.v[k])));
      reinterpret_cast<Pack<T, N> *>(out)[i] = y;
    }
    done = packs * N;
  }
  TP_GRID_STRIDE(j, n - done) out[done + j] = store<T>(f(load(in[done + j])));
}

template <typename F, typename T> __global__ void unary_strided(int64 n, Geometry g, T *out, const T *in, F f) {
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = store<T>(f(load(in[off.o[1]])));
  }
}
