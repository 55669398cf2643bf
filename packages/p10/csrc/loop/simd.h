// simd.h — how P10 builds a hot loop for the CPU it runs on: TP_SIMD_LOOP.
//
// Where it sits: the wheels target baseline x86-64 (SSE2), which every x86-64 CPU runs. The hottest float loops
// (kernels/vec_math.h's maps in unary_float.cpp, softmax rows, the float32 sum in loop/reduce.cpp) are defined
// with TP_SIMD_LOOP, which compiles the same body twice, for AVX2+FMA and for the baseline, and calls the first
// on CPUs that have both (asked once), the way PyTorch dispatches on its CPU capability. The loops stay plain
// C++ written for the vectoriser; the baseline copy is always there.
//
// Why not GCC's target_clones: in target_clones("avx2,fma", "default") the comma separates clones, so it
// builds an AVX2 clone without FMA and an FMA clone without AVX2; a target("avx2,fma") function has both.
#pragma once

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TP_SIMD_X86 1
#define TP_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define TP_SIMD_X86 0
#define TP_TARGET_AVX2_FMA
#endif

namespace tp::p10 {

// Whether this CPU runs AVX2 and FMA instructions (checked once).
inline bool cpu_has_avx2_fma() {
#if TP_SIMD_X86
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

}  // namespace tp::p10

// TP_SIMD_LOOP(ret, name, (params), (args), { body }) defines `static ret name(params)`: `body` is compiled as
// name_avx2 (AVX2+FMA) and name_base (baseline), and name() calls the one this CPU can run.
#if TP_SIMD_X86
#define TP_SIMD_LOOP(ret, name, params, args, ...)                                         \
  static ret name##_base params __VA_ARGS__                                                \
  TP_TARGET_AVX2_FMA static ret name##_avx2 params __VA_ARGS__                             \
  static ret name params { return cpu_has_avx2_fma() ? name##_avx2 args : name##_base args; }
#else
#define TP_SIMD_LOOP(ret, name, params, args, ...) static ret name params __VA_ARGS__
#endif

// For the small helpers called inside such loops: inlined into each copy, so each is compiled for its target.
#define TP_VEC_INLINE inline __attribute__((always_inline))
