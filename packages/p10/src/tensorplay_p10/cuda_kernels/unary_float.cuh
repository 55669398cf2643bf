// unary_float.cuh — the formula of each float function of one tensor (exp, log, sin, sigmoid, logit, …), as a
// functor both compilers build: the host compiler for the CPU loop, NVRTC for the CUDA kernels.
//
// Where it sits: the op table csrc/ops/unary_float.h names each functor beside its schemas and dtype rule;
// csrc/kernels/unary_float.cpp runs `F{}(x)` over the CPU loop helper and unary_float.cu instantiates its
// kernel templates with it (unary_contig<Exp, bfloat16>: Note [Template kernels] in csrc/cuda/launch.h).
// A functor computes in its argument's type M, the op's math type: float for float16/bfloat16/float32, double,
// and on the host std::complex (the m_* functions of pointwise_math.cuh have all three). `name` is the op's
// name, from which the host spells the kernel's name expression (Note [Kernel names] in csrc/cuda/ops_unary_float.cpp).
// A functor with parameters (logit's eps) holds them as members; the kernels take the functor by value.
#pragma once
#include "pointwise_math.cuh"

// ---- exponentials and logarithms ----------------------------------------------------------------------------
struct Exp {
  static constexpr const char *name = "exp";
  template <typename M> TP_HD M operator()(M x) const { return m_exp(x); }
};
struct Exp2 {
  static constexpr const char *name = "exp2";
  template <typename M> TP_HD M operator()(M x) const { return m_exp2(x); }
};
struct Expm1 {
  static constexpr const char *name = "expm1";
  template <typename M> TP_HD M operator()(M x) const { return m_expm1(x); }
};
struct Log {
  static constexpr const char *name = "log";
  template <typename M> TP_HD M operator()(M x) const { return m_log(x); }
};
struct Log2 {
  static constexpr const char *name = "log2";
  template <typename M> TP_HD M operator()(M x) const { return m_log2(x); }
};
struct Log10 {
  static constexpr const char *name = "log10";
  template <typename M> TP_HD M operator()(M x) const { return m_log10(x); }
};
struct Log1p {
  static constexpr const char *name = "log1p";
  template <typename M> TP_HD M operator()(M x) const { return m_log1p(x); }
};

// ---- powers -------------------------------------------------------------------------------------------------
struct Sqrt {
  static constexpr const char *name = "sqrt";
  template <typename M> TP_HD M operator()(M x) const { return m_sqrt(x); }
};
// 1 / sqrt(x), correctly rounded twice (CUDA's rsqrtf is faster but a few ulp off the CPU's value).
struct Rsqrt {
  static constexpr const char *name = "rsqrt";
  template <typename M> TP_HD M operator()(M x) const { return M(1) / m_sqrt(x); }
};
struct Reciprocal {
  static constexpr const char *name = "reciprocal";
  template <typename M> TP_HD M operator()(M x) const { return M(1) / x; }
};

// ---- trigonometry -------------------------------------------------------------------------------------------
struct Sin {
  static constexpr const char *name = "sin";
  template <typename M> TP_HD M operator()(M x) const { return m_sin(x); }
};
struct Cos {
  static constexpr const char *name = "cos";
  template <typename M> TP_HD M operator()(M x) const { return m_cos(x); }
};
struct Tan {
  static constexpr const char *name = "tan";
  template <typename M> TP_HD M operator()(M x) const { return m_tan(x); }
};
struct Asin {
  static constexpr const char *name = "asin";
  template <typename M> TP_HD M operator()(M x) const { return m_asin(x); }
};
struct Acos {
  static constexpr const char *name = "acos";
  template <typename M> TP_HD M operator()(M x) const { return m_acos(x); }
};
struct Atan {
  static constexpr const char *name = "atan";
  template <typename M> TP_HD M operator()(M x) const { return m_atan(x); }
};
// PyTorch multiplies by the constant rounded to the math type, so deg2rad(180) is float32(pi).
struct Deg2rad {
  static constexpr const char *name = "deg2rad";
  template <typename M> TP_HD M operator()(M x) const { return x * M(0.017453292519943295); }  // pi / 180
};
struct Rad2deg {
  static constexpr const char *name = "rad2deg";
  template <typename M> TP_HD M operator()(M x) const { return x * M(57.29577951308232); }  // 180 / pi
};

// ---- hyperbolic functions -----------------------------------------------------------------------------------
struct Sinh {
  static constexpr const char *name = "sinh";
  template <typename M> TP_HD M operator()(M x) const { return m_sinh(x); }
};
struct Cosh {
  static constexpr const char *name = "cosh";
  template <typename M> TP_HD M operator()(M x) const { return m_cosh(x); }
};
struct Tanh {
  static constexpr const char *name = "tanh";
  template <typename M> TP_HD M operator()(M x) const { return m_tanh(x); }
};
struct Asinh {
  static constexpr const char *name = "asinh";
  template <typename M> TP_HD M operator()(M x) const { return m_asinh(x); }
};
struct Acosh {
  static constexpr const char *name = "acosh";
  template <typename M> TP_HD M operator()(M x) const { return m_acosh(x); }
};
struct Atanh {
  static constexpr const char *name = "atanh";
  template <typename M> TP_HD M operator()(M x) const { return m_atanh(x); }
};

// ---- sigmoid and its inverse --------------------------------------------------------------------------------
struct Sigmoid {
  static constexpr const char *name = "sigmoid";
  template <typename M> TP_HD M operator()(M x) const { return M(1) / (M(1) + m_exp(-x)); }
};
// logit(x) = log(x / (1 - x)), x first clamped to [lo, hi] = [eps, 1 - eps] when `clamp` (PyTorch ignores a
// negative eps; NaN stays NaN). The bounds are rounded to the math type, as PyTorch does.
struct Logit {
  static constexpr const char *name = "logit";
  bool clamp;
  double lo, hi;
  template <typename M> TP_HD M operator()(M x) const {
    if (clamp) {
      const M l = M(lo), h = M(hi);
      x = x < l ? l : (x > h ? h : x);
    }
    return m_log(x / (M(1) - x));
  }
};
