// ternary.cu — lerp (a number weight, or a tensor weight), addcmul and addcdiv.
//
// Where it sits: launched by csrc/cuda/ops_ternary.cpp through csrc/cuda/elementwise.cpp, which has asked the
// CPU op (kernels/ternary.cpp) on meta tensors for the result and cast the operands to its dtype T. Loops and
// entry points: elementwise.cuh; in the three-input strided form the third operand (lerp's weight, addc's
// tensor2) arrives contiguous, of the output's shape. p0 is lerp's number weight or addc's value, converted to
// the math type as the CPU's weight.to<M>() / value.to<M>() (integers through int64: elementwise.cuh as<A>).
#include "elementwise.cuh"

// self + w (end - self), PyTorch's two-sided formula: for |w| >= 0.5 it interpolates from `end`, so that
// lerp(a, b, 1) is exactly b.
template <typename A> __device__ __forceinline__ A lerp_value(A self, A end, A w) {
  return m_fabs(w) < A(0.5) ? A(self + w * (end - self)) : A(end - (end - self) * (A(1) - w));
}
struct LerpScalar {
  template <typename A> __device__ __forceinline__ A operator()(A self, A end, const P3 &p) const {
    return lerp_value(self, end, A(p.p0));
  }
};
struct LerpTensor {
  template <typename A> __device__ __forceinline__ A operator()(A self, A end, A w, const P3 &) const {
    return lerp_value(self, end, w);
  }
};
// self + value t1 t2 and self + value t1 / t2, in the math type (integers wrap as the CPU's).
struct Addcmul {
  template <typename A> __device__ __forceinline__ A operator()(A s, A a, A b, const P3 &p) const {
    return A(s + as<A>(p.p0) * a * b);
  }
};
struct Addcdiv {
  template <typename A> __device__ __forceinline__ A operator()(A s, A a, A b, const P3 &p) const {
    return A(s + A(p.p0) * a / b);
  }
};

TP_FOR_FLOATS(TP_MAP2, lerp_scalar, LerpScalar, TP_SAME_R)
TP_FOR_FLOATS(TP_MAP3, lerp_tensor, LerpTensor, TP_SAME_R)
TP_FOR_REAL(TP_MAP3, addcmul, Addcmul, TP_SAME_R)
TP_FOR_FLOATS(TP_MAP3, addcdiv, Addcdiv, TP_SAME_R)  // integer tensor1 / tensor2 is refused by the CPU op
