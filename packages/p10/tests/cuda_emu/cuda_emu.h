// cuda_emu.h — just enough of CUDA's execution model to run TensorPlay's kernel sources on the CPU (tests only).
//
// Where it sits: force-included before each kernel file that cuda_testing.build_emulated_driver turns into an
// emulator library (emu_module.h), which the stand-in driver (fake_cuda_launch.c) runs launches through, so a
// CUDA op's whole host path runs and its kernels compute, on a machine without a GPU. A block's threads are
// cooperative contexts on one OS thread (emu_runtime.cpp); __syncthreads and the warp collectives are
// barriers that switch contexts, and a barrier some thread never reaches is reported as a deadlock instead of
// hanging. Only what the kernel files use is here: 16-bit floats convert in C (emu_half), the rest of the
// intrinsics are the portable definitions of their documented results. Since threads switch only at
// barriers, a read-modify-write is atomic by construction: the atomics are plain C.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
#pragma GCC visibility push(default)  // defined once, in libtpemu_rt.so; every emu_<module>.so uses them
extern dim3 threadIdx, blockIdx, blockDim, gridDim;

#ifdef TP_EMU_LIST_KERNELS  // cuda_testing.build_emulated_driver finds the kernels by this marker
#define __global__ tp_emu_kernel_marker
#else
#define __global__
#endif
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static  // one block runs at a time: a static is the block's shared memory
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__

constexpr unsigned kEmuSharedBytes = 232448;  // the opt-in maximum the stand-in driver reports
extern unsigned char tp_emu_shared[kEmuSharedBytes];  // a block's dynamic shared memory (emu_runtime.cpp)

namespace emu {
void sync_block();
void sync_warp();
unsigned char (*warp_buffer())[8];  // 32 slots of 8 bytes for the current warp's exchanges
int lane();
unsigned warp_live_mask();  // the lanes of the current warp that have not returned
}  // namespace emu
#pragma GCC visibility pop

inline void __syncthreads() { emu::sync_block(); }
// A shuffle: every lane of the warp posts its value, waits for the others, reads its source lane's value and
// waits again (so no lane overwrites its slot before the others have read it).
template <class T> T emu_exchange(T v, int src) {
  unsigned char(*buf)[8] = emu::warp_buffer();
  memcpy(buf[emu::lane()], &v, sizeof(T));
  emu::sync_warp();
  T r;
  memcpy(&r, buf[src & 31], sizeof(T));
  emu::sync_warp();
  return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int mask) { return emu_exchange(v, emu::lane() ^ mask); }
template <class T> T __shfl_sync(unsigned, T v, int src) { return emu_exchange(v, src); }
template <class T> T __shfl_down_sync(unsigned, T v, int d) {
  const int src = emu::lane() + d;
  return emu_exchange(v, src < 32 ? src : emu::lane());
}
template <class T> T __shfl_up_sync(unsigned, T v, int d) {
  const int src = emu::lane() - d;
  return emu_exchange(v, src >= 0 ? src : emu::lane());
}
// A vote: every lane posts its value and reads all 32 (lanes that returned are masked out by the callers).
template <class T> void emu_gather(T v, T (&all)[32]) {
  unsigned char(*buf)[8] = emu::warp_buffer();
  memcpy(buf[emu::lane()], &v, sizeof(T));
  emu::sync_warp();
  for (int l = 0; l < 32; ++l) memcpy(&all[l], buf[l], sizeof(T));
  emu::sync_warp();
}
inline unsigned __ballot_sync(unsigned, int p) {
  int all[32];
  emu_gather(p, all);
  unsigned bits = 0;
  for (int l = 0; l < 32; ++l) bits |= (all[l] != 0 ? 1u : 0u) << l;
  return bits & emu::warp_live_mask();
}
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned m, int p) { return __ballot_sync(m, p) == emu::warp_live_mask(); }
template <class T> unsigned __match_any_sync(unsigned, T v) {
  T all[32];
  emu_gather(v, all);
  unsigned same = 0;
  for (int l = 0; l < 32; ++l) same |= (all[l] == v ? 1u : 0u) << l;
  return same & emu::warp_live_mask();
}
inline unsigned __activemask() { return emu::warp_live_mask(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::sync_warp(); }
inline void __threadfence() {}
inline void __threadfence_block() {}
template <class T> T atomicAdd(T *p, T v) { const T o = *p; *p = o + v; return o; }
template <class T> T atomicSub(T *p, T v) { const T o = *p; *p = o - v; return o; }
template <class T> T atomicExch(T *p, T v) { const T o = *p; *p = v; return o; }
template <class T> T atomicCAS(T *p, T cmp, T v) { const T o = *p; if (o == cmp) *p = v; return o; }
template <class T> T atomicMin(T *p, T v) { const T o = *p; if (v < o) *p = v; return o; }
template <class T> T atomicMax(T *p, T v) { const T o = *p; if (v > o) *p = v; return o; }
template <class T> T atomicOr(T *p, T v) { const T o = *p; *p = o | v; return o; }
template <class T> T atomicAnd(T *p, T v) { const T o = *p; *p = o & v; return o; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
// Correctly rounded arithmetic: what C does by default.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __saturatef(float x) { return x != x ? 0.0f : x < 0 ? 0.0f : x > 1 ? 1.0f : x; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// erfinv: a first guess (Giles' single-precision approximation) polished by Newton steps on erf in double.
inline double erfinv(double y) {
  if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
  if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
  if (y != y) return y;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      x = c + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      x = c + x * w;
  }
  x *= y;
  for (int i = 0; i < 3; ++i) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
  return x;
}
inline float erfinvf(float y) { return float(erfinv(double(y))); }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((unsigned long long)a * b >> 32); }
template <class T> T min(T a, T b) { return a < b ? a : b; }
template <class T> T max(T a, T b) { return a > b ? a : b; }
struct float4 {
  float x, y, z, w;
};
struct uint4 {
  unsigned x, y, z, w;
};
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }

// IEEE binary16 <-> float, round to nearest even (what common.cuh's cvt instructions do on the device).
inline float emu_half_to_float(unsigned short h) {
  unsigned s = (h >> 15) & 1u, e = (h >> 10) & 31u, m = h & 1023u, u;
  if (e == 0 && m == 0) {
    u = s << 31;
  } else if (e == 0) {  // subnormal: normalise
    e = 127 - 15 + 1;
    while (!(m & 1024u)) m <<= 1, --e;
    u = (s << 31) | (e << 23) | ((m & 1023u) << 13);
  } else if (e == 31) {
    u = (s << 31) | 0x7f800000u | (m << 13);
  } else {
    u = (s << 31) | ((e + 112) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline unsigned short emu_float_to_half(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  const unsigned s = (u >> 16) & 0x8000u, e = (u >> 23) & 255u;
  unsigned m = u & 0x7fffffu;
  if (e == 255) return (unsigned short)(s | 0x7c00u | (m ? 0x200u : 0u));
  const int ee = int(e) - 127 + 15;
  if (ee >= 31) return (unsigned short)(s | 0x7c00u);
  if (ee <= 0) {  // subnormal or zero
    if (ee < -10) return (unsigned short)s;
    m |= 0x800000u;
    const int shift = 14 - ee;
    unsigned r = m >> shift;
    const unsigned rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (unsigned short)(s | r);
  }
  unsigned r = (unsigned(ee) << 10) | (m >> 13);
  const unsigned rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // a carry into the exponent is still right
  return (unsigned short)(s | r);
}
