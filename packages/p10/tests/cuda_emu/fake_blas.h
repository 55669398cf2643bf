/* fake_blas.h — what the stand-in cuBLAS(Lt) (fake_cublas.c) and cuSOLVER (fake_cusolver.c) share: element
   loads and stores of cuBLAS's data types, and the check that a column-major matrix lies in live memory.

   Where it sits: both libraries use the stand-in driver (fake_cuda.c) P10 loaded — its arena, its violation
   report (which the emulated tests read) and its launch counts — through the three tp_emu_lib_* functions it
   exports for them (Note [What the stand-in libraries check] in fake_cublas.c).

   Note [Finding the stand-in driver]
     The libraries do not link against libcuda.so.1: a DT_NEEDED entry would register the driver under the
     bare name "libcuda.so.1", and NVRTC, which looks for a loaded driver by that name, would then call into
     the stand-in and crash. Instead they dlopen the libcuda.so.1 beside themselves by its full path (where
     build_emulated_driver puts both, and the path P10 loaded it from: the loader hands back the same copy). */
#pragma once
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long P;

static struct {
  int (*span_ok)(P p, size_t bytes);  /* [p, p + bytes) inside one live allocation */
  void (*refuse)(const char *line);   /* a violation */
  void (*count)(int computed);        /* a launch: emulated (values known) or recorded */
} driver;

/* Note [Finding the stand-in driver]: bind `driver` once; abort if the driver is not beside this library. */
static void bind_driver(void) {
  if (driver.count) return;
  Dl_info info;
  char path[4200];
  dladdr((void *)&bind_driver, &info);
  const char *slash = strrchr(info.dli_fname, '/');
  snprintf(path, sizeof path, "%.*s/libcuda.so.1", slash ? (int)(slash - info.dli_fname) : 1,
           slash ? info.dli_fname : ".");
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  driver.span_ok = h ? (int (*)(P, size_t))dlsym(h, "tp_emu_lib_span_ok") : NULL;
  driver.refuse = h ? (void (*)(const char *))dlsym(h, "tp_emu_lib_refuse") : NULL;
  *(void **)&driver.count = h ? dlsym(h, "tp_emu_lib_count") : NULL;
  if (!driver.span_ok || !driver.refuse || !driver.count) {
    fprintf(stderr, "stand-in library: no stand-in driver at %s\n", path);
    abort();
  }
}

/* A refusal of a call: a violation in the driver's report. */
static void __attribute__((format(printf, 1, 2))) REFUSE(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  bind_driver();
  driver.refuse(line);
}

enum { T_32F = 0, T_64F = 1, T_16F = 2, T_16BF = 14 }; /* cudaDataType_t */

/* Bytes per element of a data type; 0 for one the stand-in does not know. */
static inline size_t type_bytes(int t) {
  return t == T_32F ? 4 : t == T_64F ? 8 : t == T_16F || t == T_16BF ? 2 : 0;
}
static inline const char *type_name(int t) {
  return t == T_32F ? "CUDA_R_32F" : t == T_64F ? "CUDA_R_64F" : t == T_16F ? "CUDA_R_16F" : t == T_16BF ? "CUDA_R_16BF" : "?";
}

/* IEEE binary16 and bfloat16 <-> float, round to nearest even (as the device converts). */
static inline float half_to_float(uint16_t h) {
  const uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u;
  uint32_t m = h & 1023u, u;
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float */
    float f = (float)m * 5.9604644775390625e-8f;
    return s ? -f : f;
  }
  u = e == 31 ? s | 0x7f800000u | (m << 13) : s | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t float_to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  const uint32_t s = (u >> 16) & 0x8000u, e = (u >> 23) & 255u;
  uint32_t m = u & 0x7fffffu;
  if (e == 255) return (uint16_t)(s | 0x7c00u | (m ? 0x200u : 0u));
  const int ee = (int)e - 127 + 15;
  if (ee >= 31) return (uint16_t)(s | 0x7c00u);
  if (ee <= 0) {
    if (ee < -10) return (uint16_t)s;
    m |= 0x800000u;
    const int shift = 14 - ee;
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (uint16_t)(s | r);
  }
  uint32_t r = ((uint32_t)ee << 10) | (m >> 13);
  const uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (uint16_t)(s | r);
}
static inline float bf16_to_float(uint16_t b) {
  const uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN stays NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* Element i of an array of type t, widened to double (exact for every type here). */
static inline double load(int t, const void *p, long long i) {
  switch (t) {
    case T_32F: return ((const float *)p)[i];
    case T_64F: return ((const double *)p)[i];
    case T_16F: return half_to_float(((const uint16_t *)p)[i]);
    default: return bf16_to_float(((const uint16_t *)p)[i]);
  }
}
/* Element i of an array of type t set to v, rounded once to t (16-bit types through float: v is a float sum). */
static inline void store(int t, void *p, long long i, double v) {
  switch (t) {
    case T_32F: ((float *)p)[i] = (float)v; break;
    case T_64F: ((double *)p)[i] = v; break;
    case T_16F: ((uint16_t *)p)[i] = float_to_half((float)v); break;
    default: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
  }
}

/* Whether `batch` column-major rows x cols matrices of type t at p (leading dimension ld, `stride` elements
   apart) are well described and lie in one live allocation; a violation naming fn and what otherwise. An
   empty matrix touches no memory, but its leading dimension must still be >= max(1, rows), as the library
   checks. */
static inline int matrix_ok(const char *fn, const char *what, const void *p, int t, long long rows, long long cols,
                            long long ld, long long batch, long long stride) {
  if (rows < 0 || cols < 0 || batch < 0) {
    REFUSE("%s: %s is %lld x %lld (batch %lld): negative", fn, what, rows, cols, batch);
    return 0;
  }
  if (ld < (rows > 1 ? rows : 1)) {
    REFUSE("%s: %s's leading dimension %lld is below its %lld rows", fn, what, ld, rows);
    return 0;
  }
  if (rows == 0 || cols == 0 || batch == 0) return 1;
  if (stride < 0) {
    REFUSE("%s: %s's batch stride %lld is negative", fn, what, stride);
    return 0;
  }
  const size_t bytes = (size_t)((batch - 1) * stride + (cols - 1) * ld + rows) * type_bytes(t);
  bind_driver();
  if (!p || !driver.span_ok((P)(uintptr_t)p, bytes)) {
    REFUSE("%s: %s (%lld x %lld, ld %lld, batch %lld, stride %lld, %s) = [%p, +%zu) is not inside one live "
           "allocation", fn, what, rows, cols, ld, batch, stride, type_name(t), p, bytes);
    return 0;
  }
  return 1;
}

/* Whether [p, p + bytes) lies in one live allocation (nothing to check when bytes is 0). */
static inline int span_ok(const char *fn, const char *what, const void *p, size_t bytes) {
  if (bytes == 0) return 1;
  bind_driver();
  const int ok = p && driver.span_ok((P)(uintptr_t)p, bytes);
  if (!ok) REFUSE("%s: %s [%p, +%zu) is not inside one live allocation", fn, what, p, bytes);
  return ok;
}

/* A library call that computed (values known) or was only checked (values left as they were): counted with
   the driver's launches (tp_emu_take_launches), so a test knows whether a result's values mean anything. */
static inline void count_call(int computed) {
  bind_driver();
  driver.count(computed);
}
