"""The host side of CUDA ops, run on the CPU against a stand-in driver: no call may hang.

A tiny C library (compiled here with the system C compiler) stands in for ``libcuda.so.1``: device memory is
host memory, copies and memsets are ``memcpy``/``memset``, every wait returns at once and kernels are not run,
so the device-side index checks read back zero. The ops below then run their whole host path (meta checks,
allocation, the flag memset, launch, read-back) in a subprocess with a timeout. A hang there is a host bug:
Note [Single-slot raise_if_set] in csrc/cuda/index_common.h was one (every one-slot index check spun forever).
Skips when no C compiler is found.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

FAKE_DRIVER = r"""
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
  *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? 4 : a == 1 ? 1024 : a == 10 ? 32 : a == 39 ? 2048 : 49152;
  return 0;
}
R cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)1 << 34; return 0; }
R cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x1000; return 0; }
R cuCtxSetCurrent(void *c) { return 0; }
R cuCtxSynchronize(void) { return 0; }
R cuModuleLoadDataEx(void **m, const void *i, unsigned n, int *o, void **v) { *m = malloc(1); return 0; }
R cuModuleGetFunction(void **f, void *m, const char *name) { *f = strdup(name); return 0; }
R cuModuleUnload(void *m) { return 0; }
R cuMemAlloc_v2(P *p, size_t b) { *p = (P)calloc(1, b); return *p ? 0 : 2; }
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
R cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned h,
                 void *s, void **p, void **x) { return 0; }
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
"""

# Every op whose host path reads a device index-check flag back. Values are not checked (no kernel runs).
SCRIPT = textwrap.dedent(
    """
    import tensorplay_p10 as tp
    tp._C._cuda._set_module_provider(lambda module, major, minor: b"stand-in image")
    assert tp.cuda.is_available()
    x = tp.ones((4, 3), dtype=tp.int64).to("cuda")
    f = tp.ones((4, 3)).to("cuda")
    idx = tp.tensor([[0, 1, 2], [2, 1, 0]]).to("cuda")
    src = tp.ones((2, 3), dtype=tp.int64).to("cuda")
    big = tp.ones((2048, 1024)).to("cuda")
    rows = tp.zeros(4096, dtype=tp.int64).to("cuda")
    cols = tp.zeros((2048, 1024), dtype=tp.int64).to("cuda")
    long = tp.ones(1 << 17).to("cuda")
    steps = {
        "gather": lambda: tp.gather(x, 1, idx),
        "scatter": lambda: x.scatter(0, idx, src),
        "scatter_add": lambda: x.scatter_add(0, idx, src),
        "scatter_reduce prod": lambda: x.scatter_reduce(0, idx, src, "prod", include_self=False),
        "scatter_reduce mean": lambda: x.scatter_reduce(0, idx, src, "mean"),
        "index_select (rows)": lambda: tp.index_select(f, 0, tp.tensor([3, 0]).to("cuda")),
        "index_select (strided)": lambda: tp.index_select(f.t(), 1, tp.tensor([3, 0]).to("cuda")),
        "index_add_": lambda: f.clone().index_add_(0, tp.tensor([1, 1]).to("cuda"), f[:2]),
        "take": lambda: tp.take(f, tp.tensor([0, 5]).to("cuda")),
        "put_": lambda: f.clone().put_(tp.tensor([0, 5]).to("cuda"), tp.ones(2).to("cuda")),
        "embedding": lambda: tp.embedding(f, tp.tensor([[1, 0]]).to("cuda")),
        "index.Tensor": lambda: f[tp.tensor([3, 3, -1]).to("cuda")],
        "index.Tensor (2-d index)": lambda: f[tp.tensor([[3, 0], [1, -2]]).to("cuda")],
        "index.Tensor (two indices)": lambda: f[tp.tensor([3, 0]).to("cuda"), tp.tensor([1, 2]).to("cuda")],
        # Note [Check first] (csrc/cuda/index_common.h): results of >= 8 MB check indices in a kernel first
        "index_select (check first)": lambda: tp.index_select(big, 0, rows),
        "index.Tensor (check first)": lambda: big[rows],
        "gather (check first)": lambda: tp.gather(big, 1, cols),
        # the reduction plan's occupancy query (ops_reduce_plan.cpp) and the scan's flag memset (ops_scan.cpp)
        "argmax of a long vector": lambda: tp.argmax(long),
        "var of a long vector": lambda: tp.var(long),
        "cumsum of a long vector": lambda: tp.cumsum(long, 0),
        # CPU numbers in elementwise ops (is_cpu_number / number_as / on_device in cuda/ops_common.h)
        "add number (contiguous)": lambda: f * 2,
        "add number (strided)": lambda: f.t() + 2,
        "compare number (strided)": lambda: f.t() < 1.5,
        "where number": lambda: tp.where(f > 0, f, 0.0),
        "atan2 number": lambda: tp.atan2(f.t(), 2.0),
    }
    for name, step in steps.items():
        print("start", name, flush=True)
        step()
        print("done", name, flush=True)
    """
)


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in driver")
    d = tmp_path_factory.mktemp("fake_cuda")
    (d / "fake_cuda.c").write_text(FAKE_DRIVER)
    lib = d / "libcuda.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(d / "fake_cuda.c")], check=True)
    return str(lib)


def test_index_checks_read_back_without_hanging(fake_driver):
    env = {**os.environ, "TP_CUDA_DRIVER_LIBRARY": fake_driver}
    try:
        r = subprocess.run(
            [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        started = [line for line in out.splitlines() if line.startswith("start")]
        pytest.fail(f"hung in: {started[-1] if started else 'set-up'}\n{out}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("done") == r.stdout.count("start") == 25, r.stdout
