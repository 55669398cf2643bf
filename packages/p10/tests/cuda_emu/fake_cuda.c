/* fake_cuda.c — a stand-in for libcuda.so.1 on a machine without a GPU, that checks what the host asks of it
   (tests only).

   Device memory is host memory carved from one reserved address range (the arena), copies and memsets are
   memcpy/memset, every wait returns at once. Every call is checked as a real GPU would refuse it, or worse,
   crash on it (Note [What the stand-in checks]); a refused call is a *violation*: printed on stderr, counted,
   and answered with an error code. Tests read the violations with tp_emu_take_report (ctypes on this file).

   Kernels (fake_cuda_launch.c): a module image that is PTX (cuda_testing.ptx_provider) tells the kernel names and their
   parameters, so a launch is checked against its `.entry`. A kernel whose family the CPU emulator runs
   (cuda_emu/: emu_<module>.so beside this file, built by cuda_testing.build_emulated_driver) computes; any
   other launch is only checked and recorded, leaving its outputs as they were (tp_emu_take_launches counts
   both kinds, so a test knows whether a result's values mean anything). Built alone (test_cuda_host_paths.py)
   with a stand-in image, no kernel runs and no parameter is known: the host paths run to the end.
   TP_EMU_SMS sets the multiprocessor count the ops plan launches for; TP_EMU_RUN=0 records every launch.

   Note [What the stand-in checks]
     - memory: cuMemAlloc/cuMemHostAlloc carve page-aligned ranges of the arena (a guard page after each);
       a copy or memset must lie inside one live range; cuMemFree must name a range's start. Freed pages are
       unmapped, so a later access faults instead of reading stale data.
     - launches: grid and block dimensions within the hardware's limits (block <= 1024 threads, x/y <= 1024,
       z <= 64, grid.x < 2^31, grid.y/z <= 65535, none 0), within the entry's .maxntid/.reqntid, and dynamic
       shared memory at most the function's limit (48 KiB unless cuFuncSetAttribute raised it, which may not
       exceed the device's opt-in maximum).
     - parameters: launch.h passes a NULL-terminated array, so exactly the entry's `.param` count of
       non-NULL slots must come before the NULL. The C ABI's cuda_launch (another pillar's kernel file,
       which cuda_testing.ptx_provider tags "(C ABI)") passes its caller's array as it is, unterminated, so
       exactly the entry's count of slots is read, none past it, and each must be non-NULL. An emulated
       kernel's C++ signature must have its entry's parameter count. PTX does not tell pointers from 64-bit integers, but the
       arena does: a 64-bit parameter whose value falls inside the arena is a pointer, and it must point into
       (or at the end of) a live range. For emulated kernels the C++ parameter types tell exactly: every
       pointer must be NULL or point into a live range. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_cuda.h"

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- violations ------------------------------------------------------------------------------------------ */
static char report[1 << 16];
static size_t report_len;
static long long violations;
long long emulated_launches, recorded_launches;

void violation(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "fake_cuda violation: %s\n", line);
  ++violations;
  const size_t n = strlen(line);
  if (report_len + n + 2 < sizeof report) {
    memcpy(report + report_len, line, n);
    report_len += n;
    report[report_len++] = '\n';
    report[report_len] = 0;
  }
}
/* The violations since the last call: their count, and their messages copied into buf. */
long long tp_emu_take_report(char *buf, size_t size) {
  pthread_mutex_lock(&mu);
  const long long n = violations;
  snprintf(buf, size, "%s", report);
  violations = 0, report_len = 0, report[0] = 0;
  pthread_mutex_unlock(&mu);
  return n;
}
/* The launches since the last call: emulated ones (they computed) and recorded ones (checked only). */
void tp_emu_take_launches(long long *emulated, long long *recorded) {
  pthread_mutex_lock(&mu);
  *emulated = emulated_launches, *recorded = recorded_launches;
  emulated_launches = recorded_launches = 0;
  pthread_mutex_unlock(&mu);
}

/* For the stand-in cuBLAS and cuSOLVER (fake_blas.h, Note [Finding the stand-in driver]): a check that
   [p, p + n) lies in one live allocation, a violation, and a count of a library call like a launch's. */
int tp_emu_lib_span_ok(P p, size_t n) {
  pthread_mutex_lock(&mu);
  const int ok = range_of(p, n) != NULL;
  pthread_mutex_unlock(&mu);
  return ok;
}
void tp_emu_lib_refuse(const char *line) {
  pthread_mutex_lock(&mu);
  violation("%s", line);
  pthread_mutex_unlock(&mu);
}
void tp_emu_lib_count(int computed) {
  pthread_mutex_lock(&mu);
  ++*(computed ? &emulated_launches : &recorded_launches);
  pthread_mutex_unlock(&mu);
}

/* ---- the arena ------------------------------------------------------------------------------------------- */
#define ARENA_BYTES (1ull << 40) /* reserved, not committed: pages are mapped as ranges are handed out */
static char *arena;
static size_t arena_used, page;
static Range *ranges; /* live, sorted by base (the arena only grows, so a new range goes last) */
static size_t nranges, cap_ranges;

static int arena_init(void) {
  if (arena) return 1;
  page = (size_t)sysconf(_SC_PAGESIZE);
  void *p = mmap(NULL, ARENA_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 0;
  arena = (char *)p;
  return 1;
}
int in_arena(P p) { return arena && p >= (P)arena && p < (P)arena + arena_used; }
/* The live range holding [p, p + n) (n = 0: p may be its end), or NULL. */
const Range *range_of(P p, size_t n) {
  size_t lo = 0, hi = nranges;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (ranges[mid].base <= p) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  const Range *r = &ranges[lo - 1];
  return p + n <= r->base + r->size && (n > 0 ? p < r->base + r->size : 1) ? r : NULL;
}
static R carve(P *out, size_t bytes, int fill) {
  pthread_mutex_lock(&mu);
  if (!arena_init()) {
    pthread_mutex_unlock(&mu);
    return OUT_OF_MEMORY;
  }
  const size_t size = (bytes + page - 1) / page * page + (bytes == 0 ? page : 0);
  if (arena_used + size + page > ARENA_BYTES) {
    pthread_mutex_unlock(&mu);
    return OUT_OF_MEMORY;
  }
  char *p = arena + arena_used;
  arena_used += size + page; /* the page after stays unmapped: a guard */
  if (mprotect(p, size, PROT_READ | PROT_WRITE) != 0) {
    pthread_mutex_unlock(&mu);
    return OUT_OF_MEMORY;
  }
  if (fill) memset(p, fill, size);
  if (nranges == cap_ranges) {
    cap_ranges = cap_ranges ? 2 * cap_ranges : 256;
    ranges = (Range *)realloc(ranges, cap_ranges * sizeof(Range));
  }
  ranges[nranges++] = (Range){(P)p, bytes};
  pthread_mutex_unlock(&mu);
  *out = (P)p;
  return OK;
}
static R release(P p, const char *what) {
  pthread_mutex_lock(&mu);
  const Range *r = range_of(p, 0);
  if (!r || r->base != p) {
    violation("%s(0x%llx): not the start of a live allocation", what, p);
    pthread_mutex_unlock(&mu);
    return INVALID_VALUE;
  }
  const size_t size = (r->size + page - 1) / page * page + (r->size == 0 ? page : 0);
  madvise((void *)p, size, MADV_DONTNEED);
  mprotect((void *)p, size, PROT_NONE);
  const size_t i = (size_t)(r - ranges);
  memmove(ranges + i, ranges + i + 1, (nranges - i - 1) * sizeof(Range));
  --nranges;
  pthread_mutex_unlock(&mu);
  return OK;
}
static int inside(P p, size_t n, const char *what) {
  if (n == 0) return 1;
  pthread_mutex_lock(&mu);
  const int ok = range_of(p, n) != NULL;
  if (!ok) violation("%s: [0x%llx, +%zu) is not inside one live allocation", what, p, n);
  pthread_mutex_unlock(&mu);
  return ok;
}

/* ---- device, context, memory ----------------------------------------------------------------------------- */
R cuInit(unsigned f) { return OK; }
R cuDriverGetVersion(int *v) { *v = 13000; return OK; }
R cuGetErrorName(R e, const char **n) { *n = "CUDA_ERROR_FAKE"; return OK; }
R cuGetErrorString(R e, const char **n) { *n = "fake driver"; return OK; }
R cuDeviceGetCount(int *c) { *c = 1; return OK; }
R cuDeviceGet(int *d, int o) { *d = o; return OK; }
R cuDeviceGetName(char *n, int len, int d) { strncpy(n, "Stand-in GPU", (size_t)len); return OK; }
R cuDeviceGetAttribute(int *v, int a, int d) {
  const char *sms = getenv("TP_EMU_SMS"); /* multiprocessors (attribute 16): launch shapes depend on it */
  *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? (sms ? atoi(sms) : 4) : a == 1 ? 1024 : a == 10 ? 32 : a == 39 ? 2048
     : a == kSharedOptin ? kOptinShared : 49152;
  return OK;
}
R cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)1 << 34; return OK; }
R cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x1000; return OK; }
R cuCtxSetCurrent(void *c) { return OK; }
R cuCtxSynchronize(void) { return OK; }
/* Fresh device memory holds TP_EMU_FILL bytes (default 0xff, NaN for floats, when kernels are emulated, so
   that a kernel reading what nobody wrote shows it; 0 otherwise, so unrun kernels leave zeros). */
static int fill_byte(void) {
  const char *f = getenv("TP_EMU_FILL");
  return f ? (int)strtol(f, NULL, 0) : emulating() ? 0xff : 0;
}
R cuMemAlloc_v2(P *p, size_t b) { return carve(p, b, fill_byte()); }
R cuMemFree_v2(P p) { return release(p, "cuMemFree"); }
R cuMemGetInfo_v2(size_t *f, size_t *t) { *f = *t = (size_t)1 << 34; return OK; }
R cuMemHostAlloc(void **p, size_t b, unsigned f) { return carve((P *)p, b, 0); }
R cuMemFreeHost(void *p) { return release((P)p, "cuMemFreeHost"); }
R cuMemHostGetDevicePointer_v2(P *d, void *h, unsigned f) {
  if (!inside((P)h, 1, "cuMemHostGetDevicePointer")) return INVALID_VALUE;
  *d = (P)h;
  return OK;
}
R cuMemcpyHtoDAsync_v2(P d, const void *s, size_t n, void *st) {
  if (!inside(d, n, "cuMemcpyHtoD destination")) return INVALID_VALUE;
  memcpy((void *)d, s, n);
  return OK;
}
R cuMemcpyDtoHAsync_v2(void *d, P s, size_t n, void *st) {
  if (!inside(s, n, "cuMemcpyDtoH source")) return INVALID_VALUE;
  memcpy(d, (void *)s, n);
  return OK;
}
R cuMemcpyDtoDAsync_v2(P d, P s, size_t n, void *st) {
  if (!inside(d, n, "cuMemcpyDtoD destination") || !inside(s, n, "cuMemcpyDtoD source")) return INVALID_VALUE;
  memmove((void *)d, (void *)s, n);
  return OK;
}
R cuMemsetD8Async(P d, unsigned char v, size_t n, void *st) {
  if (!inside(d, n, "cuMemsetD8")) return INVALID_VALUE;
  memset((void *)d, v, n);
  return OK;
}
R cuStreamCreateWithPriority(void **s, unsigned f, int p) { *s = malloc(1); return OK; }
R cuStreamDestroy_v2(void *s) { return OK; }
R cuStreamSynchronize(void *s) { return OK; }
R cuStreamQuery(void *s) { return OK; }
R cuStreamWaitEvent(void *s, void *e, unsigned f) { return OK; }
R cuEventCreate(void **e, unsigned f) { *e = malloc(1); return OK; }
R cuEventDestroy_v2(void *e) { return OK; }
R cuEventRecord(void *e, void *s) { return OK; }
R cuEventSynchronize(void *e) { return OK; }
R cuEventQuery(void *e) { return OK; }
R cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 0; return OK; }
R cuStreamBeginCapture_v2(void *s, int m) { return OK; }
R cuStreamEndCapture(void *s, void **g) { return OK; }
R cuStreamIsCapturing(void *s, int *st) { *st = 0; return OK; }
R cuThreadExchangeStreamCaptureMode(int *m) { return OK; }
R cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long f) { return OK; }
R cuGraphLaunch(void *e, void *s) { return OK; }
R cuGraphExecDestroy(void *e) { return OK; }
R cuGraphDestroy(void *g) { return OK; }

