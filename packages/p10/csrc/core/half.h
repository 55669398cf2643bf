// half.h — the two 16-bit float storage types, float16 (IEEE binary16) and bfloat16.
//
// Where it sits: storage types only. Kernels load them, compute in float32 and store back (PyTorch's
// "half/bfloat16 compute in float32" rule), so these structs need nothing but exact conversions.
#pragma once
#include <cstdint>
#include <cstring>

namespace tp::p10 {

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// IEEE binary16 with round-to-nearest-even on the way in.
struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(from_float(f)) {}
  operator float() const { return to_float(x); }

  static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u)  // inf or nan: keep nan-ness (quiet bit set)
      return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: overflow to inf
    if (abs < 0x38800000u) {  // result is subnormal (or zero): add 0.5 to shift mantissa out, float rounds it
      float r = bits_float(abs) + 0.5f;
      return uint16_t(sign | (float_bits(r) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return uint16_t(sign | (abs >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: mant * 2^-24
      float f = float(mant) * 5.9604644775390625e-08f;
      return bits_float(float_bits(f) | sign);
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

// bfloat16: the top 16 bits of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}
  operator float() const { return bits_float(uint32_t(x) << 16); }

  static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet nan
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  }
};

}  // namespace tp::p10
