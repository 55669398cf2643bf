/* fake_cuda_launch.c — the stand-in driver's modules, functions and launches (fake_cuda.c has the rest).

   A module image that is PTX names its kernels (`.entry`), their parameters (`.param`) and launch bounds
   (`.maxntid`, `.reqntid`); cuda_testing.ptx_provider starts it with a "// tp-emu module: <file>" line, which
   names the emulator library of its family (emu_<stem>.so beside this driver). Launches are checked as Note
   [What the stand-in checks] in fake_cuda.c says, then run through the emulator when its library has the
   kernel, else recorded. An image that is not PTX (a test's stand-in bytes) accepts any kernel name and its
   launches are checked only for their dimensions (and run, when some emulator library has the name). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

#define MAX_PARAMS 128
typedef struct {
  char name[256];
  int nparams;
  unsigned char wide[MAX_PARAMS]; /* a 64-bit scalar parameter (.u64/.b64/.s64): maybe a pointer */
  unsigned maxntid, reqntid[3];   /* 0: not given */
} Entry;
/* What an emulator library (emu_module.h) says of one kernel; tp_emu_run (emu_runtime.cpp) runs it. */
typedef struct {
  void (*body)(void **args);
  int nparams;
  unsigned long long pointers; /* bit i: parameter i is a pointer in the kernel's C++ signature */
} EmuKernel;
typedef const EmuKernel *(*FindFn)(const char *);
typedef int (*RunFn)(const EmuKernel *, void **, const unsigned *, const unsigned *, unsigned);
typedef struct {
  Entry *entries;
  int n; /* -1: not PTX, every name is accepted */
  void *emu;
  int abi; /* launched through the C ABI's cuda_launch: argument arrays are not NULL-terminated */
} Module;
typedef struct {
  const Entry *entry; /* NULL when the module is not PTX */
  char name[256];
  int max_dynamic_shared;
  const EmuKernel *emu;
  RunFn run;
  int abi; /* its module's */
} Function;

/* ---- the emulator libraries ------------------------------------------------------------------------------ */
static char here[4096]; /* this driver's folder, where build_emulated_driver puts the emulator */
static int emulator = -1;
int emulating(void) {
  if (emulator < 0) {
    Dl_info info;
    char rt[4200];
    dladdr((void *)&emulating, &info);
    snprintf(here, sizeof here, "%s", info.dli_fname);
    char *slash = strrchr(here, '/');
    if (slash) *slash = 0;
    else snprintf(here, sizeof here, ".");
    snprintf(rt, sizeof rt, "%s/libtpemu_rt.so", here);
    const char *run = getenv("TP_EMU_RUN");
    FILE *f = fopen(rt, "rb");
    emulator = f != NULL && !(run && run[0] == '0');
    if (f) fclose(f);
  }
  return emulator;
}
static void *open_emu(const char *file) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", here, file);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}
/* An image that is not PTX: the kernel from whichever emulator library has it. */
static const EmuKernel *find_anywhere(const char *name, void **lib) {
  DIR *d = opendir(here);
  const EmuKernel *k = NULL;
  for (struct dirent *e; d && !k && (e = readdir(d));) {
    if (strncmp(e->d_name, "emu_", 4) || !strstr(e->d_name, ".so")) continue;
    void *h = open_emu(e->d_name);
    FindFn find = h ? (FindFn)dlsym(h, "tp_emu_kernel") : NULL;
    if (find && (k = find(name))) *lib = h;
  }
  if (d) closedir(d);
  return k;
}

/* ---- PTX ------------------------------------------------------------------------------------------------- */
static const char *skip_space(const char *s) {
  while (*s && isspace((unsigned char)*s)) ++s;
  return s;
}
static int parse_entries(const char *ptx, Entry **out) {
  int n = 0, cap = 64;
  Entry *es = (Entry *)calloc((size_t)cap, sizeof(Entry));
  for (const char *s = ptx; (s = strstr(s, ".entry ")) != NULL;) {
    s = skip_space(s + 7);
    if (n == cap) es = (Entry *)realloc(es, (size_t)(cap *= 2) * sizeof(Entry));
    Entry *e = &es[n++];
    memset(e, 0, sizeof *e);
    size_t len = 0;
    while ((isalnum((unsigned char)s[len]) || s[len] == '_' || s[len] == '$') && len + 1 < sizeof e->name) ++len;
    memcpy(e->name, s, len);
    s = skip_space(s + len);
    if (*s == '(') {
      for (++s; (s = skip_space(s)), *s && *s != ')';) {
        if (strncmp(s, ".param", 6) == 0 && e->nparams < MAX_PARAMS) {
          const char *t = skip_space(s + 6);
          e->wide[e->nparams++] = !strncmp(t, ".u64", 4) || !strncmp(t, ".b64", 4) || !strncmp(t, ".s64", 4);
        }
        while (*s && *s != ',' && *s != ')') ++s;
        if (*s == ',') ++s;
      }
      if (*s == ')') ++s;
    }
    const char *body = strchr(s, '{');
    for (const char *d = s; body && d < body; ++d) {
      unsigned x = 1, y = 1, z = 1;
      if (strncmp(d, ".maxntid", 8) == 0 && sscanf(d + 8, " %u , %u , %u", &x, &y, &z) >= 1) e->maxntid = x * y * z;
      if (strncmp(d, ".reqntid", 8) == 0 && sscanf(d + 8, " %u , %u , %u", &x, &y, &z) >= 1)
        e->reqntid[0] = x, e->reqntid[1] = y, e->reqntid[2] = z;
    }
  }
  *out = es;
  return n;
}

/* ---- modules and functions ------------------------------------------------------------------------------- */
R cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *o, void **v) {
  Module *mod = (Module *)calloc(1, sizeof(Module));
  const char *text = (const char *)image, *tag = "// tp-emu module: ";
  mod->n = -1;
  if (strstr(text, ".version") && strstr(text, ".entry")) {
    mod->n = parse_entries(text, &mod->entries);
    const char *eol = strchr(text, '\n');
    mod->abi = strncmp(text, tag, strlen(tag)) == 0 && eol && memmem(text, (size_t)(eol - text), "(C ABI)", 7);
    if (emulating() && strncmp(text, tag, strlen(tag)) == 0) {
      char file[300];
      const char *name = text + strlen(tag);
      const size_t len = strcspn(name, ".\n");
      snprintf(file, sizeof file, "emu_%.*s.so", (int)len, name);
      mod->emu = open_emu(file); /* NULL: a family the emulator does not run */
    }
  }
  *m = mod;
  return OK;
}
R cuModuleGetFunction(void **f, void *m, const char *name) {
  Module *mod = (Module *)m;
  const Entry *entry = NULL;
  for (int i = 0; i < mod->n && !entry; ++i)
    if (strcmp(mod->entries[i].name, name) == 0) entry = &mod->entries[i];
  if (mod->n >= 0 && !entry) return NOT_FOUND; /* as the driver says: the host asked for a dtype not built */
  Function *fn = (Function *)calloc(1, sizeof(Function));
  fn->entry = entry;
  snprintf(fn->name, sizeof fn->name, "%s", name);
  fn->max_dynamic_shared = kDefaultShared;
  fn->abi = mod->abi;
  void *lib = mod->emu;
  if (emulating()) {
    FindFn find = lib ? (FindFn)dlsym(lib, "tp_emu_kernel") : NULL;
    fn->emu = find ? find(name) : mod->n < 0 ? find_anywhere(name, &lib) : NULL;
    fn->run = fn->emu ? (RunFn)dlsym(lib, "tp_emu_run") : NULL;
  }
  *f = fn;
  return OK;
}
R cuModuleUnload(void *m) { return OK; } /* functions stay valid: P10 drops its handles with the module */
R cuFuncSetAttribute(void *f, int attr, int value) {
  Function *fn = (Function *)f;
  if (attr != kMaxDynamicShared) return OK;
  if (value < 0 || value > kOptinShared) {
    pthread_mutex_lock(&mu);
    violation("cuFuncSetAttribute(%s, max dynamic shared = %d): above the device's %d", fn->name, value,
              kOptinShared);
    pthread_mutex_unlock(&mu);
    return INVALID_VALUE;
  }
  fn->max_dynamic_shared = value;
  return OK;
}
R cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int b, size_t s) { *n = 2; return OK; }

/* ---- launches -------------------------------------------------------------------------------------------- */
/* Note [What the stand-in checks] in fake_cuda.c; with mu held. Whether the launch may go ahead. */
static int launch_ok(const Function *fn, const unsigned g[3], const unsigned b[3], unsigned shared, void **p) {
  const char *k = fn->name;
  int ok = 1;
  const unsigned long long threads = (unsigned long long)b[0] * b[1] * b[2];
  if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2] || g[0] > 0x7fffffffu || g[1] > 65535 || g[2] > 65535 ||
      b[0] > 1024 || b[1] > 1024 || b[2] > 64 || threads > 1024) {
    violation("%s: grid (%u, %u, %u) x block (%u, %u, %u) is outside the hardware's limits", k, g[0], g[1], g[2],
              b[0], b[1], b[2]);
    ok = 0;
  }
  if ((int)shared > fn->max_dynamic_shared) {
    violation("%s: %u bytes of dynamic shared memory, above the function's limit of %d", k, shared,
              fn->max_dynamic_shared);
    ok = 0;
  }
  const Entry *e = fn->entry;
  if (e && e->maxntid && threads > e->maxntid) {
    violation("%s: %llu threads per block, above its .maxntid %u", k, threads, e->maxntid);
    ok = 0;
  }
  if (e && e->reqntid[0] && (b[0] != e->reqntid[0] || b[1] != e->reqntid[1] || b[2] != e->reqntid[2])) {
    violation("%s: block (%u, %u, %u), not its .reqntid", k, b[0], b[1], b[2]);
    ok = 0;
  }
  const int nparams = e ? e->nparams : fn->emu ? fn->emu->nparams : -1;
  if (e && fn->emu && fn->emu->nparams != e->nparams) {
    violation("%s: its emulated C++ signature has %d parameters, its PTX entry %d", k, fn->emu->nparams, e->nparams);
    return 0;
  }
  if (nparams >= 0 && fn->abi) { /* exactly nparams slots, none read past them */
    for (int i = 0; i < nparams; ++i)
      if (!p[i]) {
        violation("%s: argument %d of its %d is NULL (launched through the C ABI)", k, i, nparams);
        return 0;
      }
  } else if (nparams >= 0) {
    int given = 0;
    while (given <= nparams && p[given]) ++given;
    if (given != nparams) {
      violation("%s: launched with %s%d arguments for its %d parameters", k, given > nparams ? "more than " : "",
                given > nparams ? nparams : given, nparams);
      return 0;
    }
  }
  for (int i = 0; i < nparams; ++i) {
    const int pointer = fn->emu && i < 64 && ((fn->emu->pointers >> i) & 1);
    if (!pointer && !(e && e->wide[i])) continue;
    P v;
    memcpy(&v, p[i], sizeof v);
    if ((pointer && v != 0 && !range_of(v, 0)) || (!pointer && in_arena(v) && !range_of(v, 0))) {
      violation("%s: parameter %d = 0x%llx points into no live allocation", k, i, v);
      ok = 0;
    }
  }
  return ok;
}
R cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned shared, void *s, void **p, void **x) {
  const Function *fn = (const Function *)f;
  const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  pthread_mutex_lock(&mu);
  const int ok = launch_ok(fn, g, b, shared, p);
  if (ok) ++*(fn->run ? &emulated_launches : &recorded_launches);
  pthread_mutex_unlock(&mu);
  if (!ok) return INVALID_VALUE;
  if (!fn->run) return OK;
  static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER; /* the emulator is one machine: one launch at a time */
  pthread_mutex_lock(&run_mu);
  const R r = fn->run(fn->emu, p, g, b, shared);
  pthread_mutex_unlock(&run_mu);
  return r;
}
