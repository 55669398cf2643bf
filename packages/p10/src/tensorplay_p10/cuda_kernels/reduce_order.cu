// reduce_order.cu — max/min by value (amax, amin, max(), min(), aminmax) and with indices (max.dim, min.dim,
// argmax, argmin) on the device.
//
// Where it sits: launched by csrc/cuda/ops_reduce_order.cpp through the plan of csrc/cuda/reduce.h; the loops are
// reduce_common.cuh's. Values compare in OpMath<T> (float32 for 16-bit floats) and are stored back as T, so the
// result is exactly one of the inputs.
//
// Note [NaN and first index on the device]
//   As on the CPU (kernels/reduce_order.cpp, Note [NaN in max and min]) a NaN beats every number and the result
//   is the FIRST extreme. Threads see strided elements and merge in no fixed order (Note [Merge order]), so the
//   state carries its index and merge orders (value, index) totally: NaN first, then the larger (smaller)
//   value, then the smaller index. Every order of merges then picks the same element: the first NaN if there is
//   one, else the first maximum. The identity is (lowest, index INT64_MAX); in merge() any element beats it,
//   even one equal to the lowest value (-inf).
//   step() is cheaper (Note [Steps in index order]: x comes after everything in the state): x replaces the state
//   when the state is not NaN and x is NaN or strictly beyond it, `!(x <= v) && v == v` for max, two compares
//   and no index comparison. An element equal to the lowest value (-inf, INT64_MIN, false) therefore never
//   replaces the identity: a state, and after every merge the result, keeps index INT64_MAX exactly when all
//   its elements equal the lowest value. Then the first of them, index 0 of the reduced range, is the answer,
//   and finish() writes that.
#include "reduce_common.cuh"

template <typename M> struct Limits {  // integers: two's complement
  __device__ __forceinline__ static M highest() { return M(~0ull >> (65 - sizeof(M) * 8)); }
  __device__ __forceinline__ static M lowest() { return M(-highest() - 1); }
};
template <> struct Limits<bool> {
  __device__ __forceinline__ static bool lowest() { return false; }
  __device__ __forceinline__ static bool highest() { return true; }
};
template <> struct Limits<uint8> {
  __device__ __forceinline__ static uint8 lowest() { return 0; }
  __device__ __forceinline__ static uint8 highest() { return 255; }
};
template <> struct Limits<float> {
  __device__ __forceinline__ static float lowest() { return -inf_of(0.f); }
  __device__ __forceinline__ static float highest() { return inf_of(0.f); }
};
template <> struct Limits<double> {
  __device__ __forceinline__ static double lowest() { return -inf_of(0.0); }
  __device__ __forceinline__ static double highest() { return inf_of(0.0); }
};

// Values only: NaN sticks (max of NaN and anything is NaN); no index, so no tie rule is needed.
template <typename T, bool IsMax> struct ValueOp {
  typedef typename OpMath<T>::type M;
  struct __align__(4) S {  // whole words for the shuffles, also for 1- and 2-byte types
    M v;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{IsMax ? Limits<M>::lowest() : Limits<M>::highest()}; }
  __device__ __forceinline__ S merge(S a, S b) const {
    if (is_nan(a.v)) return a;
    if (is_nan(b.v)) return b;
    return (IsMax ? b.v > a.v : b.v < a.v) ? b : a;
  }
  __device__ __forceinline__ S step(S a, T x, int64) const {  // NaN sticks; a NaN x wins
    const M v = load(x);
    if (!(IsMax ? v <= a.v : v >= a.v) && !is_nan(a.v)) a.v = v;
    return a;
  }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<T *>(out0)[o] = store<T>(a.v);
  }
};
template <typename T> using AmaxOp = ValueOp<T, true>;
template <typename T> using AminOp = ValueOp<T, false>;

// (value, index): out0 gets the values when given (max.dim), out1 the int64 indices.
template <typename T, bool IsMax> struct ArgOp {
  typedef typename OpMath<T>::type M;
  struct S {
    M v;
    int64 i;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const {
    return S{IsMax ? Limits<M>::lowest() : Limits<M>::highest(), int64(0x7fffffffffffffffll)};
  }
  __device__ __forceinline__ S merge(S a, S b) const {  // Note [NaN and first index on the device]
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) {
      if (an && bn) return b.i < a.i ? b : a;
      return an ? a : b;
    }
    if (IsMax ? b.v > a.v : b.v < a.v) return b;
    if (IsMax ? a.v > b.v : a.v < b.v) return a;
    return b.i < a.i ? b : a;
  }
  // Note [Steps in index order]: idx is larger than every index in `a`, so a tie keeps `a`.
  __device__ __forceinline__ S step(S a, T x, int64 idx) const {
    const M v = load(x);
    if (!(IsMax ? v <= a.v : v >= a.v) && !is_nan(a.v)) {
      a.v = v;
      a.i = idx;
    }
    return a;
  }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *out1) const {
    if (out0) reinterpret_cast<T *>(out0)[o] = store<T>(a.v);
    // Still the identity's index: every element equals the lowest value (Note [NaN and first index on the device]).
    reinterpret_cast<int64 *>(out1)[o] = a.i == int64(0x7fffffffffffffffll) ? 0 : a.i;
  }
};
template <typename T> using ArgmaxOp = ArgOp<T, true>;
template <typename T> using ArgminOp = ArgOp<T, false>;

TP_REDUCE_ALL(amax, AmaxOp)
TP_REDUCE_ALL(amin, AminOp)
TP_REDUCE_ALL(argmax, ArgmaxOp)
TP_REDUCE_ALL(argmin, ArgminOp)
