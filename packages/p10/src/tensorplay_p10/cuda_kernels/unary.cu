// unary.cu — elementwise functions of one tensor on the device: erf, abs, neg, sign, the rounding functions, the
// activations (relu, gelu, silu, softplus, leaky_relu, elu) and the backward ops of three of them.
//
// Where it sits: launched by csrc/cuda/ops_unary.cpp, which has already asked the CPU op (on meta tensors) for
// the result's dtype T and layout, and cast the input to T. Each function `f` has two entry points per dtype:
//   f_contig_<T>(n, out, in, p0, p1, p2):            out and in contiguous, n elements;
//   f_strided_<T>(n, g, out, in, p0, p1, p2):        anything else, through Geometry (Note [Kernel geometry]).
// p0..p2 are the op's numbers (leaky_relu's slope, elu's alpha scale / scale / input_scale, …) in OpMath<T>.
// The backward ops read two tensors: f_contig_<T>(n, out, grad, x, p0) and f_strided_<T>(n, g, out, grad, x, p0).
// Arithmetic runs in OpMath<T>: float32 for float16/bfloat16 (Note [Vectorised loads] in binary.cu for the
// float4 path of contiguous float32).
#include "common.cuh"
#include "pointwise_math.cuh"  // m_exp, m_erf, …: the float and double maths under one name

// ---- the functions: A f(A x, A p0, A p1, A p2) -------------------------------------------------------------
#define TP_FN(Name, expr)                                                                                   \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A x, A p0, A p1, A p2) const { return expr; } \
  };
TP_FN(Erf, m_erf(x))
TP_FN(Floor, m_floor(x))
TP_FN(Ceil, m_ceil(x))
TP_FN(Trunc, m_trunc(x))
TP_FN(Round, m_rint(x))
// round(x, decimals=d): p0 = 10^|d|, p1 = 1 when d < 0 (the CPU's formula, float quirks included).
TP_FN(RoundDecimals, p1 != A(0) ? m_rint(x / p0) * p0 : m_rint(x * p0) / p0)
TP_FN(FAbs, m_fabs(x))  // floats: -0 -> 0 and NaN stays NaN
TP_FN(IAbs, x < A(0) ? A(-x) : x)  // integers: abs(INT_MIN) wraps to itself, as on the CPU
TP_FN(Neg, A(-x))
// (0 < x) - (x < 0): NaN gives 0, as the CPU kernel (kernels/unary.cpp sign_of).
TP_FN(Sign, A(A(A(0) < x) - A(x < A(0))))
// max(x, 0) keeping NaN (x < 0 is false for NaN).
TP_FN(Relu, x < A(0) ? A(0) : x)
TP_FN(LeakyRelu, x > A(0) ? x : x * p0)
// p0 = alpha scale, p1 = scale, p2 = input_scale.
TP_FN(Elu, x > A(0) ? x * p1 : m_expm1(x * p2) * p0)
// x Phi(x) = x erfc(-x / sqrt 2) / 2: no 1 + erf cancellation in the negative tail.
TP_FN(Gelu, A(0.5) * x * m_erfc(-x * A(0.70710678118654752440)))
// x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2.
TP_FN(GeluTanh, A(0.5) * x * (A(1) + m_tanh(A(0.79788456080286535588) * (x + A(0.044715) * x * x * x))))
TP_FN(Silu, x / (A(1) + m_exp(-x)))
// p0 = beta, p1 = threshold: x where beta x > threshold, else log1p(e^(beta x)) / beta.
TP_FN(Softplus, x * p0 > p1 ? x : m_log1p(m_exp(x * p0)) / p0)
// clamp by numbers (p0 = min, p1 = max); NaN in x or a bound gives NaN (kernels/ternary.cpp clamp_value).
TP_FN(Clamp, x != x ? x : (p0 != p0 ? p0 : (p1 != p1 ? p1 : (x < p0 ? (p0 > p1 ? p1 : p0) : (x > p1 ? p1 : x)))))
TP_FN(ClampMin, x != x ? x : (p0 != p0 ? p0 : (x < p0 ? p0 : x)))
TP_FN(ClampMax, x != x ? x : (p1 != p1 ? p1 : (x > p1 ? p1 : x)))

// The backward ops: A f(A grad, A x, A p0).
#define TP_BWD(Name, expr)                                                                                  \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A g, A x, A p0) const { return expr; }   \
  };
TP_BWD(ThresholdBackward, x <= p0 ? A(0) : g)
// d/dx x sigmoid(x) = s (1 + x (1 - s)).
TP_BWD(SiluBackward, g * (A(1) / (A(1) + m_exp(-x))) * (A(1) + x * (A(1) - A(1) / (A(1) + m_exp(-x)))))
// d/dx x Phi(x) = Phi(x) + x phi(x).
TP_BWD(GeluBackward, g * (A(0.5) * m_erfc(-x * A(0.70710678118654752440)) +
                          x * A(0.39894228040143267794) * m_exp(A(-0.5) * x * x)))
// u = k (x + c x^3), t = tanh u: d/dx x (1 + t) / 2 = (1 + t) / 2 + x (1 - t^2) k (1 + 3 c x^2) / 2.
struct GeluTanhBackward {
  template <typename A> __device__ __forceinline__ A operator()(A g, A x, A) const {
    const A k = A(0.79788456080286535588), c = A(0.044715);
    const A t = m_tanh(k * (x + c * x * x * x));
    return g * (A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * k * (A(1) + A(3) * c * x * x));
  }
};

// ---- loops -------------------------------------------------------------------------------------------------
template <typename T, typename Op, typename A>
__device__ void unary_contig(int64 n, T *out, const T *in, A p0, A p1, A p2) {
  const Op op;
  TP_GRID_STRIDE(i, n) out[i] = store<T>(op(load(in[i]), p0, p1, p2));
}

template <typename T, typename Op, typename A>
__device__ void unary_strided(int64 n, const Geometry &g, T *out, const T *in, A p0, A p1, A p2) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = store<T>(op(load(in[off.o[1]]), p0, p1, p2));
  }
}

// Note [Vectorised loads] (binary.cu): float32 walks float4s when both pointers are 16-byte aligned.
template <typename Op>
__device__ void unary_contig_f32(int64 n, float *out, const float *in, float p0, float p1, float p2) {
  if ((reinterpret_cast<unsigned long long>(out) | reinterpret_cast<unsigned long long>(in)) & 15)
    return unary_contig<float, Op>(n, out, in, p0, p1, p2);
  const Op op;
  const int64 n4 = n / 4;
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float4 *o4 = reinterpret_cast<float4 *>(out);
  TP_GRID_STRIDE(i, n4) {
    const float4 v = in4[i];
    o4[i] = make_float4(op(v.x, p0, p1, p2), op(v.y, p0, p1, p2), op(v.z, p0, p1, p2), op(v.w, p0, p1, p2));
  }
  TP_GRID_STRIDE(j, n - 4 * n4) out[4 * n4 + j] = op(in[4 * n4 + j], p0, p1, p2);
}

template <typename T, typename Op, typename A>
__device__ void grad_contig(int64 n, T *out, const T *grad, const T *x, A p0) {
  const Op op;
  TP_GRID_STRIDE(i, n) out[i] = store<T>(op(load(grad[i]), load(x[i]), p0));
}

template <typename T, typename Op, typename A>
__device__ void grad_strided(int64 n, const Geometry &g, T *out, const T *grad, const T *x, A p0) {
  const Op op;
  TP_GRID_STRIDE(i, n) {
    const Offsets off = offsets(g, i);
    out[off.o[0]] = store<T>(op(load(grad[off.o[1]]), load(x[off.o[2]]), p0));
  }
}

// ---- entry points ------------------------------------------------------------------------------------------
#define TP_UNARY_STRIDED(name, Op, T)                                                                       \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, T *out, const T *in, OpMath<T>::type p0, \
                                                 OpMath<T>::type p1, OpMath<T>::type p2) {                  \
    unary_strided<T, Op>(n, g, out, in, p0, p1, p2);                                                        \
  }
#define TP_UNARY_OTHER(name, Op, T)                                                                         \
  extern "C" __global__ void name##_contig_##T(int64 n, T *out, const T *in, OpMath<T>::type p0,            \
                                                OpMath<T>::type p1, OpMath<T>::type p2) {                   \
    unary_contig<T, Op>(n, out, in, p0, p1, p2);                                                            \
  }                                                                                                         \
  TP_UNARY_STRIDED(name, Op, T)
#define TP_UNARY_F32(name, Op)                                                                              \
  extern "C" __global__ void name##_contig_float32(int64 n, float *out, const float *in, float p0, float p1, \
                                                    float p2) {                                             \
    unary_contig_f32<Op>(n, out, in, p0, p1, p2);                                                           \
  }                                                                                                         \
  TP_UNARY_STRIDED(name, Op, float32)
#define TP_UNARY_FLOATS(name, Op)                                                                           \
  TP_UNARY_F32(name, Op) TP_UNARY_OTHER(name, Op, float64) TP_UNARY_OTHER(name, Op, float16)                \
  TP_UNARY_OTHER(name, Op, bfloat16)
#define TP_UNARY_INTS(name, Op)                                                                             \
  TP_UNARY_OTHER(name, Op, uint8) TP_UNARY_OTHER(name, Op, int8) TP_UNARY_OTHER(name, Op, int16)            \
  TP_UNARY_OTHER(name, Op, int32) TP_UNARY_OTHER(name, Op, int64)

TP_UNARY_FLOATS(erf, Erf)
TP_UNARY_FLOATS(floor, Floor)  // integers are whole: the host copies them instead
TP_UNARY_FLOATS(ceil, Ceil)
TP_UNARY_FLOATS(trunc, Trunc)
TP_UNARY_FLOATS(round, Round)
TP_UNARY_FLOATS(round_decimals, RoundDecimals)
TP_UNARY_FLOATS(abs, FAbs)
TP_UNARY_INTS(abs, IAbs)
TP_UNARY_FLOATS(neg, Neg)
TP_UNARY_INTS(neg, Neg)
TP_UNARY_FLOATS(sign, Sign)
TP_UNARY_INTS(sign, Sign)
TP_UNARY_FLOATS(relu, Relu)
TP_UNARY_INTS(relu, Relu)
TP_UNARY_FLOATS(leaky_relu, LeakyRelu)
TP_UNARY_FLOATS(elu, Elu)
TP_UNARY_FLOATS(gelu, Gelu)
TP_UNARY_FLOATS(gelu_tanh, GeluTanh)
TP_UNARY_FLOATS(silu, Silu)
TP_UNARY_FLOATS(softplus, Softplus)
TP_UNARY_FLOATS(clamp, Clamp)
TP_UNARY_INTS(clamp, Clamp)
TP_UNARY_FLOATS(clamp_min, ClampMin)
TP_UNARY_INTS(clamp_min, ClampMin)
TP_UNARY_FLOATS(clamp_max, ClampMax)
TP_UNARY_INTS(clamp_max, ClampMax)

#define TP_GRAD(name, Op, T)                                                                                \
  extern "C" __global__ void name##_contig_##T(int64 n, T *out, const T *grad, const T *x,                  \
                                                OpMath<T>::type p0) {                                       \
    grad_contig<T, Op>(n, out, grad, x, p0);                                                                \
  }                                                                                                         \
  extern "C" __global__ void name##_strided_##T(int64 n, Geometry g, T *out, const T *grad, const T *x,     \
                                                 OpMath<T>::type p0) {                                      \
    grad_strided<T, Op>(n, g, out, grad, x, p0);                                                            \
  }
#define TP_GRAD_FLOATS(name, Op)                                                                            \
  TP_GRAD(name, Op, float32) TP_GRAD(name, Op, float64) TP_GRAD(name, Op, float16) TP_GRAD(name, Op, bfloat16)
TP_GRAD_FLOATS(threshold_backward, ThresholdBackward)
TP_GRAD_FLOATS(silu_backward, SiluBackward)
TP_GRAD_FLOATS(gelu_backward, GeluBackward)
TP_GRAD_FLOATS(gelu_tanh_backward, GeluTanhBackward)
