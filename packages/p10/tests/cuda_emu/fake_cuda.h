/* fake_cuda.h — what the two halves of the stand-in driver share: fake_cuda.c (device, memory, the arena)
   and fake_cuda_launch.c (modules, functions, launches). Called with `mu` held: range_of, in_arena. */
#pragma once
#include <pthread.h>
#include <stddef.h>

typedef int R;
typedef unsigned long long P;
enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700 };
enum { kMaxDynamicShared = 8, kSharedOptin = 97, kDefaultShared = 49152, kOptinShared = 232448 };

typedef struct {
  P base;
  size_t size;
} Range;

extern pthread_mutex_t mu;
extern long long emulated_launches, recorded_launches;
void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* with mu held */
const Range *range_of(P p, size_t n);  /* the live range holding [p, p + n) (n = 0: p may be its end) */
int in_arena(P p);                     /* whether p lies in the arena's handed-out part */
int emulating(void);                   /* whether kernels of emulated families run (fake_cuda_launch.c) */
