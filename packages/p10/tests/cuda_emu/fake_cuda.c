/* fake_cuda.c — a stand-in for libcuda.so.1 on a machine without a GPU (tests only).

   Device memory is host memory, copies and memsets are memcpy/memset, every wait returns at once. Built plain
   (test_cuda_host_paths.py), kernels are not run: the ops' host paths run to the end and read back zeros.
   Built with -DTP_EMU_KERNELS and linked with the emulator (emu_kernels.cpp, test_cuda_emulated.py), launches
   run the kernels' own source on the CPU. TP_EMU_SMS sets the multiprocessor count the ops plan launches for. */
#include <stdlib.h>
#include <string.h>
typedef int R;
typedef unsigned long long P;
R cuInit(unsigned f) { return 0; }
R cuDriverGetVersion(int *v) { *v = 13000; return 0; }
R cuGetErrorName(R e, const char **n) { *n = "CUDA_ERROR_FAKE"; return 0; }
R cuGetErrorString(R e, const char **n) { *n = "fake driver"; return 0; }
R cuDeviceGetCount(int *c) { *c = 1; return 0; }
R cuDeviceGet(int *d, int o) { *d = o; return 0; }
R cuDeviceGetName(char *n, int len, int d) { strncpy(n, "Stand-in GPU", (size_t)len); return 0; }
R cuDeviceGetAttribute(int *v, int a, int d) {
  const char *sms = getenv("TP_EMU_SMS");  /* multiprocessors (attribute 16): launch shapes depend on it */
  *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? (sms ? atoi(sms) : 4) : a == 1 ? 1024 : a == 10 ? 32 : a == 39 ? 2048
                                                                                                  : 49152;
  return 0;
}
R cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)1 << 34; return 0; }
R cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x1000; return 0; }
R cuCtxSetCurrent(void *c) { return 0; }
R cuCtxSynchronize(void) { return 0; }
R cuModuleLoadDataEx(void **m, const void *i, unsigned n, int *o, void **v) { *m = malloc(1); return 0; }
R cuModuleGetFunction(void **f, void *m, const char *name) { *f = strdup(name); return 0; }
R cuModuleUnload(void *m) { return 0; }
#ifdef TP_EMU_KERNELS
/* Fresh device memory holds 0xff bytes (NaN for floats), so a kernel that reads what nobody wrote shows it. */
R cuMemAlloc_v2(P *p, size_t b) {
  *p = (P)malloc(b ? b : 1);
  if (*p) memset((void *)*p, 0xff, b);
  return *p ? 0 : 2;
}
#else
R cuMemAlloc_v2(P *p, size_t b) { *p = (P)calloc(1, b); return *p ? 0 : 2; }
#endif
R cuMemFree_v2(P p) { free((void *)p); return 0; }
R cuMemGetInfo_v2(size_t *f, size_t *t) { *f = *t = (size_t)1 << 34; return 0; }
R cuMemHostAlloc(void **p, size_t b, unsigned f) { *p = malloc(b); return 0; }
R cuMemFreeHost(void *p) { free(p); return 0; }
R cuMemcpyHtoDAsync_v2(P d, const void *s, size_t n, void *st) { memcpy((void *)d, s, n); return 0; }
R cuMemcpyDtoHAsync_v2(void *d, P s, size_t n, void *st) { memcpy(d, (void *)s, n); return 0; }
R cuMemcpyDtoDAsync_v2(P d, P s, size_t n, void *st) { memmove((void *)d, (void *)s, n); return 0; }
R cuMemsetD8Async(P d, unsigned char v, size_t n, void *st) { memset((void *)d, v, n); return 0; }
R cuStreamCreateWithPriority(void **s, unsigned f, int p) { *s = malloc(1); return 0; }
R cuStreamDestroy_v2(void *s) { return 0; }
R cuStreamSynchronize(void *s) { return 0; }
R cuStreamQuery(void *s) { return 0; }
R cuStreamWaitEvent(void *s, void *e, unsigned f) { return 0; }
R cuEventCreate(void **e, unsigned f) { *e = malloc(1); return 0; }
R cuEventDestroy_v2(void *e) { return 0; }
R cuEventRecord(void *e, void *s) { return 0; }
R cuEventSynchronize(void *e) { return 0; }
R cuEventQuery(void *e) { return 0; }
R cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 0; return 0; }
#ifdef TP_EMU_KERNELS
/* The function handle is the kernel's name (cuModuleGetFunction above); emu_kernels.cpp runs it on the CPU. */
int emu_launch(const char *name, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned shared, void **args);
R cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned shared, void *s, void **p, void **x) {
  if (gz != 1 || bz != 1) return 998;
  return emu_launch((const char *)f, gx, gy, bx, by, shared, p);
}
#else
R cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned h,
                 void *s, void **p, void **x) { return 0; }
#endif
R cuFuncSetAttribute(void *f, int attr, int value) { return 0; }
R cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int b, size_t s) { *n = 2; return 0; }
R cuMemHostGetDevicePointer_v2(P *d, void *h, unsigned f) { *d = (P)h; return 0; }
R cuStreamBeginCapture_v2(void *s, int m) { return 0; }
R cuStreamEndCapture(void *s, void **g) { return 0; }
R cuStreamIsCapturing(void *s, int *st) { *st = 0; return 0; }
R cuThreadExchangeStreamCaptureMode(int *m) { return 0; }
R cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long f) { return 0; }
R cuGraphLaunch(void *e, void *s) { return 0; }
R cuGraphExecDestroy(void *e) { return 0; }
R cuGraphDestroy(void *g) { return 0; }
