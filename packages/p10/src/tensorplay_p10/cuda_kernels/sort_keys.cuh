// sort_keys.cuh — the order keys of the sort family: every value as an unsigned integer in sort order.
//
// Where it sits: included by sort.cu (bitonic rows, radix select, the segmented radix sort) and
// sort_radix.cu (the one-sweep radix sort of long rows); both sort by these keys, so they agree with each
// other and with the CPU's less_nan_last order (kernels/sort.cpp).
#pragma once
#include "common.cuh"

typedef unsigned int u32;
typedef unsigned long long u64;

// ---- Note [Order keys] ---------------------------------------------------------------------------------------
// Every value becomes an unsigned integer whose unsigned order is the CPU's less_nan_last order:
//   integers:  the sign bit flipped (two's complement -> offset binary); bool and uint8 as they are;
//   floats:    -0.0 first becomes +0.0 (the CPU compares with <, so they are equal and ties go by index), every
//              NaN becomes the all-ones key (NaN after +inf, all NaNs equal), then the IEEE bits are mapped as
//              positive -> sign bit set, negative -> all bits inverted, which orders them as numbers.
// Descending order is the bitwise complement of the key (masked to the key's width): NaN then comes first, as
// in the CPU's mirrored comparison, and equal keys stay equal, so ties still go by index.
// float16 and bfloat16 keep 16-bit keys (two radix passes), 64-bit types 64-bit keys (eight passes).
template <typename T> struct KeyTraits;
// UW is the unsigned type of T's own width, so a negative int8 maps to 0x80..0xff before the flip.
#define TP_INT_KEY(T, K, UW, FLIP)                                                                          \
  template <> struct KeyTraits<T> {                                                                         \
    typedef K Key;                                                                                          \
    static const int bytes = sizeof(T);                                                                     \
    __device__ __forceinline__ static Key key(T v) { return Key((UW)(v)) ^ Key(FLIP); }                     \
  };
TP_INT_KEY(bool, u32, unsigned char, 0)
TP_INT_KEY(uint8, u32, unsigned char, 0)
TP_INT_KEY(int8, u32, unsigned char, 0x80u)
TP_INT_KEY(int16, u32, unsigned short, 0x8000u)
TP_INT_KEY(int32, u32, u32, 0x80000000u)
TP_INT_KEY(int64, u64, u64, 0x8000000000000000ull)
#undef TP_INT_KEY

__device__ __forceinline__ u32 float_bits_key16(unsigned short h, unsigned short exp_mask) {
  if ((h & 0x7fffu) > exp_mask) return 0xffffu;  // NaN
  if ((h & 0x7fffu) == 0) h = 0;                  // -0.0 -> +0.0
  return (h & 0x8000u) ? u32((unsigned short)(~h)) : u32(h | 0x8000u);
}
template <> struct KeyTraits<float16> {
  typedef u32 Key;
  static const int bytes = 2;
  __device__ __forceinline__ static Key key(float16 v) { return float_bits_key16(v.bits, 0x7c00u); }
};
template <> struct KeyTraits<bfloat16> {
  typedef u32 Key;
  static const int bytes = 2;
  __device__ __forceinline__ static Key key(bfloat16 v) { return float_bits_key16(v.bits, 0x7f80u); }
};
template <> struct KeyTraits<float32> {
  typedef u32 Key;
  static const int bytes = 4;
  __device__ __forceinline__ static Key key(float v) {
    if (v != v) return 0xffffffffu;
    const u32 u = __float_as_uint(v == 0.0f ? 0.0f : v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
};
template <> struct KeyTraits<float64> {
  typedef u64 Key;
  static const int bytes = 8;
  __device__ __forceinline__ static Key key(double v) {
    if (v != v) return 0xffffffffffffffffull;
    const u64 u = (u64)__double_as_longlong(v == 0.0 ? 0.0 : v);
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
  }
};

// The key of `v` in the requested direction (Note [Order keys]).
template <typename T> __device__ __forceinline__ typename KeyTraits<T>::Key order_key(T v, int descending) {
  typedef typename KeyTraits<T>::Key K;
  const K k = KeyTraits<T>::key(v);
  if (!descending) return k;
  const K mask = KeyTraits<T>::bytes == sizeof(K) ? ~K(0) : ((K(1) << (8 * KeyTraits<T>::bytes)) - 1);
  return ~k & mask;
}
