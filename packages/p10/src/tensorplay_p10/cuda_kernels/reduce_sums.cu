// reduce_sums.cu — sum, nansum, nanmean, prod, all, any, count_nonzero on the device.
//
// Where it sits: launched by csrc/cuda/ops_reduce.cpp (sum, and mean through it) and ops_reduce_sums.cpp through
// the plan of csrc/cuda/reduce.h; the loops (rows, columns, split rows and their final pass) are
// reduce_common.cuh's. Each op here is only its state and its four functions. The host casts the input to the
// result dtype first where the CPU op does (nansum, nanmean, prod), so T is also the output type there; sum
// writes T for floats and int64 for integers and bool; all/any write one byte (bool or uint8), count_nonzero an
// int64.
#include "reduce_common.cuh"

// sum: a running total in SumAcc<T> (float32 for 16-bit floats). Integers and bool sum to int64 (PyTorch).
template <typename T> struct SumOp {
  typedef typename SumAcc<T>::type A;
  struct S {
    A v;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{A(0)}; }
  __device__ __forceinline__ S step(S a, T x, int64) const { return S{a.v + A(load(x))}; }
  __device__ __forceinline__ S merge(S a, S b) const { return S{a.v + b.v}; }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<typename SumOut<T>::type *>(out0)[o] = store<typename SumOut<T>::type>(a.v);
  }
};

// nansum (mode 0) and nanmean (mode 1): the sum of the non-NaN elements, and for nanmean their count.
template <typename T> struct NanSumOp {
  typedef typename SumAcc<T>::type A;
  struct S {
    A s;
    A n;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{A(0), A(0)}; }
  __device__ __forceinline__ S step(S a, T x, int64) const {
    const A v = A(load(x));
    if (!is_nan(v)) {
      a.s += v;
      a.n += A(1);
    }
    return a;
  }
  __device__ __forceinline__ S merge(S a, S b) const { return S{a.s + b.s, a.n + b.n}; }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<T *>(out0)[o] = store<T>(mode == 1 ? a.s / a.n : a.s);  // 0/0: NaN for an all-NaN row
  }
};

// prod: a running product in SumAcc<T> (int64 for integers and bool: a product of 0/1 is their AND).
template <typename T> struct ProdOp {
  typedef typename SumAcc<T>::type A;
  struct S {
    A v;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{A(1)}; }
  __device__ __forceinline__ S step(S a, T x, int64) const { return S{a.v * A(load(x))}; }
  __device__ __forceinline__ S merge(S a, S b) const { return S{a.v * b.v}; }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<T *>(out0)[o] = store<T>(a.v);
  }
};

// all (mode 1) / any (mode 0): an element counts as true when it is not zero (NaN is true, as on the CPU).
template <typename T> struct AllAnyOp {
  struct S {
    int v;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{mode}; }
  __device__ __forceinline__ S step(S a, T x, int64) const {
    const int t = load(x) != typename OpMath<T>::type(0);
    return S{mode ? (a.v & t) : (a.v | t)};
  }
  __device__ __forceinline__ S merge(S a, S b) const { return S{mode ? (a.v & b.v) : (a.v | b.v)}; }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<unsigned char *>(out0)[o] = (unsigned char)a.v;
  }
};

template <typename T> struct CountOp {
  struct S {
    int64 v;
  };
  double p;
  int mode;
  __device__ __forceinline__ S init() const { return S{0}; }
  __device__ __forceinline__ S step(S a, T x, int64) const {
    return S{a.v + (load(x) != typename OpMath<T>::type(0))};
  }
  __device__ __forceinline__ S merge(S a, S b) const { return S{a.v + b.v}; }
  __device__ __forceinline__ void finish(S a, int64 o, char *out0, char *) const {
    reinterpret_cast<int64 *>(out0)[o] = a.v;
  }
};

TP_REDUCE_ALL(sum, SumOp)
TP_REDUCE_FLOATS(nansum, NanSumOp)
TP_REDUCE_ALL(prod, ProdOp)
TP_REDUCE_ALL(all_any, AllAnyOp)
TP_REDUCE_ALL(count_nonzero, CountOp)
