// cuda_emu.h — just enough of CUDA's execution model to run TensorPlay's kernel sources on the CPU (tests only).
//
// Where it sits: emu_kernels.cpp is compiled with this header force-included before the .cu files it includes,
// and test_cuda_emulated.py links it into the stand-in driver (fake_cuda.c built with -DTP_EMU_KERNELS), so a
// CUDA op's whole host path runs and its kernels compute, on a machine without a GPU. A block's threads are
// cooperative contexts on one OS thread (emu_runtime.cpp); __syncthreads and the warp shuffles are barriers
// that switch contexts, and a barrier some thread never reaches is reported as a deadlock instead of hanging.
// Only what the emulated kernel files use is here: 16-bit floats convert in C (emu_half), the rest of the
// intrinsics are the portable definitions of their documented results.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
extern dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static  // one block runs at a time: a static is the block's shared memory
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__

namespace emu {
void sync_block();
void sync_warp();
unsigned char (*warp_buffer())[8];  // 32 slots of 8 bytes for the current warp's exchanges
int lane();
}  // namespace emu

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
inline int __any_sync(unsigned, int p) {
  int any = 0;
  for (int l = 0; l < 32; ++l) any |= emu_exchange(p, l);
  return any != 0;
}
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
