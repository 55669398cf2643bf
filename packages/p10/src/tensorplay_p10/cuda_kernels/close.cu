// close.cu — isclose, and any_false: the device half of allclose and equal.
//
// Where it sits: launched by csrc/cuda/ops_ternary.cpp (isclose, through csrc/cuda/elementwise.cpp; loops in
// elementwise.cuh) and csrc/cuda/elementwise.cpp (all_true, which allclose and equal end in: one pass over a
// bool tensor, then one int read back on the host).
#include "elementwise.cuh"

// |a - b| <= atol + |rtol b|, or exactly equal (equal infinities), or both NaN when equal_nan (p0 = rtol,
// p1 = atol, p2 = equal_nan): kernels/compare.cpp's isclose, in the math type.
struct IsClose {
  template <typename A> __device__ __forceinline__ bool operator()(A a, A b, const P3 &p) const {
    if (a == b) return true;
    if (p.p2 != 0.0 && a != a && b != b) return true;
    const A err = m_fabs(a - b);
    const bool finite = err == err && err != A(1) / A(0);
    return finite && err <= A(p.p1) + m_fabs(A(p.p0) * b);
  }
};
TP_FOR_FLOATS(TP_MAP2, isclose, IsClose, TP_BOOL_R)

// any_false(n, x, flag): *flag = 1 when some element of the contiguous bool tensor x is false. Bools are bytes
// 0 or 1, so 16 of them are all true exactly when each 32-bit word of a 16-byte load is 0x01010101. Every
// thread that finds a false stores the same 1 (no atomics); the host zeroes flag first and reads it once.
extern "C" __global__ void any_false(int64 n, const bool *x, int *flag) {
  int64 done = 0;
  if (aligned_to(x, 16)) {
    const int64 packs = n / 16;
    const uint4 *x16 = reinterpret_cast<const uint4 *>(x);
    TP_GRID_STRIDE(i, packs) {
      const uint4 v = x16[i];
      if ((v.x & v.y & v.z & v.w) != 0x01010101u) *flag = 1;
    }
    done = packs * 16;
  }
  TP_GRID_STRIDE(j, n - done) {
    if (!x[done + j]) *flag = 1;
  }
}
