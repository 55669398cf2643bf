// activation.cu — the activations beyond unary.cu's: mish, threshold, hardtanh, hardsigmoid, hardswish,
// softshrink, hardshrink, log_sigmoid, heaviside; and the backward ops leaky_relu_backward, elu_backward,
// mish_backward, softplus_backward, hardtanh_backward (grad * f'(x) in one pass).
//
// Where it sits: launched by csrc/cuda/ops_activation.cpp through csrc/cuda/elementwise.cpp, which has asked
// the CPU op (kernels/activation.cpp, activation_backward.cpp) on meta tensors for the result and cast the
// inputs to its dtype T. Loops and entry points: elementwise.cuh. p0..p2 are the op's numbers (slopes,
// bounds, lambd), converted to the math type as the CPU's M(double) does.
#include "elementwise.cuh"

template <typename A> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };
template <> struct IsFloat<double> { static constexpr bool value = true; };

#define TP_ACT(Name, expr)                                                                                  \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A x, const P3 &p) const { return expr; }  \
  };
TP_ACT(Mish, x * m_tanh(m_log1p(m_exp(x))))
// x <= threshold: value, else x; integers: both numbers truncated to the dtype first (the CPU's M(double)).
TP_ACT(Threshold, x <= as<A>(p.p0) ? as<A>(p.p1) : x)
// x - lambd above lambd, x + lambd below -lambd, else x * 0 (NaN stays NaN).
TP_ACT(Softshrink, x > A(p.p0) ? A(x - A(p.p0)) : (x < -A(p.p0) ? A(x + A(p.p0)) : A(x * A(0))))
TP_ACT(Hardshrink, x >= -A(p.p0) && x <= A(p.p0) ? A(0) : x)
// log(sigmoid x) = min(x, 0) - log1p(e^-|x|): finite for every finite x.
TP_ACT(LogSigmoid, (x < A(0) ? x : A(0)) - m_log1p(m_exp(-m_fabs(x))))

// relu6(x + 3) / 6; NaN propagates.
template <typename A> __device__ __forceinline__ A hardsigmoid_value(A x) {
  A y = x + A(3);
  y = y < A(0) ? A(0) : y;
  return (y > A(6) ? A(6) : y) / A(6);
}
TP_ACT(Hardsigmoid, hardsigmoid_value(x))
TP_ACT(Hardswish, x * hardsigmoid_value(x))

// clamp(x, min_val = p0, max_val = p1); integers compare in double so that a bound like -1 cannot wrap.
struct Hardtanh {
  template <typename A> __device__ __forceinline__ A operator()(A x, const P3 &p) const {
    if constexpr (IsFloat<A>::value) {
      const A y = x < A(p.p0) ? A(p.p0) : x;
      return y > A(p.p1) ? A(p.p1) : y;
    } else {
      const double y = double(x) < p.p0 ? p.p0 : double(x);
      return as<A>(y > p.p1 ? p.p1 : y);
    }
  }
};

// heaviside(x, values): 0 below 0, values at 0, 1 above (NaN gives 0).
struct Heaviside {
  template <typename A> __device__ __forceinline__ A operator()(A x, A v, const P3 &) const {
    return x == A(0) ? v : A(x > A(0));
  }
};

// ---- backward ops: f(grad, x) ------------------------------------------------------------------------------
#define TP_BACK(Name, expr)                                                                                 \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A g, A x, const P3 &p) const { return expr; } \
  };
TP_BACK(LeakyReluBackward, x > A(0) ? g : g * A(p.p0))
// From the input x (p0 = alpha scale, p1 = scale, p2 = input_scale): x <= 0 gives grad is neg e^(is x).
TP_BACK(EluBackward, x <= A(0) ? g * A(p.p2) * A(p.p0) * m_exp(x * A(p.p2)) : g * A(p.p1))  // NaN: g p1, as PyTorch
// From the result y (in-place elu): x <= 0 gives grad is (y + neg).
TP_BACK(EluBackwardResult, x <= A(0) ? g * A(p.p2) * (x + A(p.p0)) : g * A(p.p1))
// p0 = beta, p1 = threshold: grad where beta x > threshold, else grad sigmoid(beta x).
TP_BACK(SoftplusBackward, x * A(p.p0) > A(p.p1) ? g : g / (A(1) + m_exp(-(x * A(p.p0)))))
// Zero where the clamp to [p0, p1] is active.
TP_BACK(HardtanhBackward, x <= A(p.p0) || x >= A(p.p1) ? A(0) : g)
// d/dx x tanh(sp(x)) = tanh(sp) + x sigmoid(x) (1 - tanh^2(sp)), sp = log(1 + e^x).
struct MishBackward {
  template <typename A> __device__ __forceinline__ A operator()(A g, A x, const P3 &) const {
    const A t = m_tanh(m_log1p(m_exp(x)));
    const A s = A(1) / (A(1) + m_exp(-x));
    return g * (t + x * s * (A(1) - t * t));
  }
};

#define TP_FLOAT1(name, Op) TP_FOR_FLOATS(TP_MAP1, name, Op, TP_SAME_R)
#define TP_FLOAT2(name, Op) TP_FOR_FLOATS(TP_MAP2, name, Op, TP_SAME_R)
TP_FLOAT1(mish, Mish)
TP_FOR_REAL(TP_MAP1, threshold, Threshold, TP_SAME_R)
TP_FOR_REAL(TP_MAP1, hardtanh, Hardtanh, TP_SAME_R)
TP_FLOAT1(hardsigmoid, Hardsigmoid)
TP_FLOAT1(hardswish, Hardswish)
TP_FLOAT1(softshrink, Softshrink)
TP_FLOAT1(hardshrink, Hardshrink)
TP_FLOAT1(log_sigmoid, LogSigmoid)
TP_FOR_ALL(TP_MAP2, heaviside, Heaviside, TP_SAME_R)
TP_FLOAT2(leaky_relu_backward, LeakyReluBackward)
TP_FLOAT2(elu_backward, EluBackward)
TP_FLOAT2(elu_backward_result, EluBackwardResult)
TP_FLOAT2(mish_backward, MishBackward)
TP_FLOAT2(softplus_backward, SoftplusBackward)
TP_FLOAT2(hardtanh_backward, HardtanhBackward)
