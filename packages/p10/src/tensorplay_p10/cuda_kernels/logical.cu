// logical.cu — truth-value and bit operations: logical_and/or/xor/not (bool results from any real dtype),
// bitwise_and/or/xor/not (bool and integers), bitwise_left_shift and bitwise_right_shift (integers).
//
// Where it sits: launched by csrc/cuda/ops_logical.cpp through csrc/cuda/elementwise.cpp (loops and entry
// points: elementwise.cuh). The logical ops compute in the operands' common dtype T and store bool; the
// bitwise ops store T. Each functor is the CPU's (kernels/logical.cpp).
#include "elementwise.cuh"

template <typename T> struct UnsignedOf { typedef T type; };
template <> struct UnsignedOf<int8> { typedef unsigned char type; };
template <> struct UnsignedOf<int16> { typedef unsigned short type; };
template <> struct UnsignedOf<int32> { typedef unsigned int type; };
template <> struct UnsignedOf<int64> { typedef unsigned long long type; };
template <typename T> struct SignedOf { typedef T type; };
template <> struct SignedOf<uint8> { typedef signed char type; };
template <typename A> struct IsSigned { static constexpr bool value = A(-1) < A(0); };

// A value's truth: nonzero in the math type (NaN is true).
#define TP_LOGICAL(Name, expr)                                                                              \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ bool operator()(A x, A y, const P3 &) const {          \
      const bool a = x != A(0), b = y != A(0);                                                              \
      return expr;                                                                                          \
    }                                                                                                       \
  };
TP_LOGICAL(LogicalAnd, a && b)
TP_LOGICAL(LogicalOr, a || b)
TP_LOGICAL(LogicalXor, a != b)
struct LogicalNot {
  template <typename A> __device__ __forceinline__ bool operator()(A x, const P3 &) const { return x == A(0); }
};

#define TP_BITWISE(Name, expr)                                                                              \
  struct Name {                                                                                             \
    template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const { return A(expr); } \
  };
TP_BITWISE(BitwiseAnd, a & b)
TP_BITWISE(BitwiseOr, a | b)
TP_BITWISE(BitwiseXor, a ^ b)
struct BitwiseNot {
  template <typename A> __device__ __forceinline__ A operator()(A a, const P3 &) const {
    if constexpr (SameType<A, bool>::value) return !a;
    else return A(~a);
  }
};

// PyTorch's rules for shift amounts outside [0, bits): a left shift gives 0; a right shift gives what shifting
// out every bit gives (0, or -1 for negative values). Left shifts work on the unsigned pattern (they wrap).
struct ShiftLeft {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    typedef typename UnsignedOf<A>::type U;
    typedef typename SignedOf<A>::type S;
    if (S(b) < S(0) || (long long)(b) >= (long long)(sizeof(A) * 8)) return A(0);
    return A(U(a) << b);
  }
};
struct ShiftRight {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b, const P3 &) const {
    typedef typename SignedOf<A>::type S;
    constexpr int max_shift = int(sizeof(A) * 8) - (IsSigned<A>::value ? 1 : 0);
    if (S(b) < S(0) || (long long)(b) >= max_shift) return A(a >> max_shift);
    return A(a >> b);
  }
};

TP_FOR_ALL(TP_MAP2, logical_and, LogicalAnd, TP_BOOL_R)
TP_FOR_ALL(TP_MAP2, logical_or, LogicalOr, TP_BOOL_R)
TP_FOR_ALL(TP_MAP2, logical_xor, LogicalXor, TP_BOOL_R)
TP_FOR_ALL(TP_MAP1, logical_not, LogicalNot, TP_BOOL_R)
#define TP_INTS_AND_BOOL(M, name, Op) TP_FOR_INTS(M, name, Op, TP_SAME_R) M(name, Op, bool, bool)
TP_INTS_AND_BOOL(TP_MAP2, bitwise_and, BitwiseAnd)
TP_INTS_AND_BOOL(TP_MAP2, bitwise_or, BitwiseOr)
TP_INTS_AND_BOOL(TP_MAP2, bitwise_xor, BitwiseXor)
TP_INTS_AND_BOOL(TP_MAP1, bitwise_not, BitwiseNot)
TP_FOR_INTS(TP_MAP2, bitwise_left_shift, ShiftLeft, TP_SAME_R)
TP_FOR_INTS(TP_MAP2, bitwise_right_shift, ShiftRight, TP_SAME_R)
