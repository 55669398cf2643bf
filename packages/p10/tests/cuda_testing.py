"""What the CUDA test files share (test_cuda_*.py here, in packages/tpx/tests and in tests/): the device under
test and the skip marks, NumPy views of results, sample inputs, the GPU-vs-CPU-vs-reference checks, and the
NVRTC helpers of the no-GPU kernel-name tests.

The tests run with --import-mode=importlib, which leaves sys.path alone, so a test file puts this folder on
sys.path before importing it (as test_opdb.py does for tests/opdb):

    sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
    from cuda_testing import DEV, needs_cuda, np_of  # noqa: E402

Note [dry run on the CPU]: TP_CUDA_TEST_DEVICE=cpu makes DEV "cpu". The files marked `needs_device` then run
their whole logic (inputs, references, comparisons, error paths) with the CPU op standing in for the CUDA one,
on a machine without a GPU: a cheap check of the tests themselves before GPU time is spent on them. The files
marked `needs_cuda` test what only a GPU has (streams, graphs, CUDA-only errors, or they compare with "cuda"
literally); they skip in a dry run, GPU or not.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_p10.cuda import _compiler, _loader

DEV = os.environ.get("TP_CUDA_TEST_DEVICE", "cuda")  # see Note [dry run on the CPU]

needs_device = pytest.mark.skipif(DEV == "cuda" and not tp.cuda.is_available(), reason="needs a CUDA device")
needs_cuda = pytest.mark.skipif(DEV != "cuda" or not tp.cuda.is_available(), reason="needs a CUDA device")

FLOATS = [tp.float16, tp.bfloat16, tp.float32, tp.float64]
INTS = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64]
REAL = [tp.bool, *INTS, *FLOATS]


# ---- NumPy views of results --------------------------------------------------------------------------------
def np_of(t: tp.Tensor) -> np.ndarray:
    """`t`'s values on the host in its own NumPy dtype (bfloat16, which NumPy lacks, widened to float32)."""
    t = t.cpu()
    return (t.float() if t.dtype is tp.bfloat16 else t).numpy()


def np_of64(t: tp.Tensor) -> np.ndarray:
    """np_of(t) as float64 (every float16/bfloat16 value is exact in float64)."""
    return np_of(t).astype(np.float64)


def f64(t: tp.Tensor) -> np.ndarray:
    """`t` converted to float64 by TensorPlay, as a NumPy array of its own."""
    return t.cpu().to(tp.float64).numpy().copy()  # a copy: a float64 CPU tensor's numpy() shares its memory


# ---- sample inputs -----------------------------------------------------------------------------------------
def normal(shape, dtype=tp.float32, seed=0, scale=1.0) -> tp.Tensor:
    """`scale` x standard-normal values drawn in float32, converted to `dtype` (whatever it is)."""
    rng = np.random.default_rng(seed)
    return tp.from_numpy(np.asarray(scale * rng.standard_normal(shape), dtype=np.float32)).to(dtype)


def sample(shape, dtype=tp.float32, seed=0, scale=1.0, *, lo=-50, hi=50, ulo=0) -> tp.Tensor:
    """Values of `dtype`: bool half True; integers in [lo, hi) ([ulo, hi) for uint8); floats as normal()."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(rng.random(shape) < 0.5)
    if dtype in INTS:
        return tp.from_numpy(rng.integers(ulo if dtype is tp.uint8 else lo, hi, size=shape)).to(dtype)
    return tp.from_numpy(np.asarray(scale * rng.standard_normal(shape), dtype=np.float32)).to(dtype)


def small_ints(shape, dtype=tp.float32, seed=0, lo=-6, hi=7, ulo=0) -> tp.Tensor:
    """Small integers in [lo, hi) ([ulo, hi) for uint8) as `dtype`; bool: whether each is positive."""
    a = np.random.default_rng(seed).integers(ulo if dtype is tp.uint8 else lo, hi, size=shape)
    return tp.from_numpy(a > 0) if dtype is tp.bool else tp.from_numpy(a).to(dtype)


def layouts(a: np.ndarray):
    """The same values on DEV contiguous, channels-last (permuted) and as a strided slice."""
    yield tp.tensor(a).to(DEV)
    perm = (0,) + tuple(range(2, a.ndim)) + (1,)
    yield tp.tensor(np.ascontiguousarray(a.transpose(perm))).to(DEV).permute(tuple(np.argsort(perm)))
    big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
    big[..., ::2] = a
    yield tp.tensor(big).to(DEV)[..., ::2]


# ---- checks ------------------------------------------------------------------------------------------------
def check(got: tp.Tensor, cpu: tp.Tensor, want: np.ndarray, tol: float) -> None:
    """The result on DEV against the CPU op's (dtype, shape, values) and the float64 reference `want`:
    exactly when `tol` is 0, else within rtol = atol = `tol` (NaN where both have NaN)."""
    assert got.device.type == DEV and got.dtype is cpu.dtype and got.shape == cpu.shape
    g = np_of64(got)
    if tol == 0:
        np.testing.assert_array_equal(g, np_of64(cpu))
        np.testing.assert_array_equal(g, want)
    else:
        np.testing.assert_allclose(g, np_of64(cpu), rtol=tol, atol=tol, equal_nan=True)
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol, equal_nan=True)


def close_to_cpu(got: tp.Tensor, cpu: tp.Tensor, want, tol: float = 0.0) -> None:
    """The result on DEV against the CPU op's and `want` (reshaped to the result) in float64, within `tol`."""
    assert got.device.type == DEV and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    np.testing.assert_allclose(f64(got), f64(cpu), rtol=tol, atol=tol)
    np.testing.assert_allclose(
        f64(got), np.asarray(want, dtype=np.float64).reshape(f64(cpu).shape), rtol=tol, atol=tol
    )


def same(got: tp.Tensor, cpu: tp.Tensor, want=None) -> None:
    """The result on DEV equals the CPU op's exactly (dtype, shape, values) and, if given, `want`."""
    assert got.device.type == DEV and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    np.testing.assert_array_equal(np_of(got), np_of(cpu))
    if want is not None:
        np.testing.assert_array_equal(np_of(got), np.asarray(want).astype(np_of(got).dtype))


def equal(a: tp.Tensor, b: tp.Tensor) -> None:
    """Same shape, dtype and values (NaN equal to NaN), whatever the devices."""
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_array_equal(np_of(a), np_of(b))


# ---- processes and NVRTC -----------------------------------------------------------------------------------
def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter, `env` added to the environment (a driver-less or fresh state)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )


def nvrtc_or_skip() -> None:
    """Skip the calling test when NVRTC is not installed (it needs no GPU, only the pip wheel)."""
    try:
        _compiler.nvrtc()
    except RuntimeError as e:
        pytest.skip(f"NVRTC is not installed (pip install nvidia-cuda-nvrtc): {e}")


def entries(ptx: str) -> set[str]:
    """The kernel names (.entry) of a PTX text."""
    return set(re.findall(r"\.entry\s+(\w+)\(", ptx))


def ptx_of(module: str) -> str:
    """cuda_kernels/<module> compiled by NVRTC for sm_80 (skips without NVRTC)."""
    nvrtc_or_skip()
    text = _compiler.compile_ptx(module, arch=80).decode(errors="replace")
    assert ".target sm_80" in text
    return text


def kernel_entries(module: str) -> set[str]:
    """The kernel names cuda_kernels/<module> defines, compiled for sm_80 (skips without NVRTC)."""
    return entries(ptx_of(module))


# ---- the CUDA emulator (cuda_emu/, test_cuda_emulated.py, test_cuda_opdb_emulated.py) -------------------
_EMU = Path(__file__).parent / "cuda_emu"

# Note [Emulator patches]
#   The emulator compiles a copy of the shipped kernel sources with g++. What only the device can run is
#   swapped for C of the same result: common.cuh's float16 conversions (cuda_emu.h's emu_half_to_float and
#   emu_float_to_half), record_bad's lane mask (every lane that finds a bad index writes: the emulator cannot
#   tell which lanes run together) and rows_common.cuh's explicit 16-byte store. Dynamic shared memory
#   (`extern __shared__ T name[];`) becomes a pointer to the block's buffer (tp_emu_shared). A patch whose
#   text is gone fails the build, naming it: the emulator then needs updating, never silently skips it.
_EMU_PATCHES = {
    "common.cuh": {
        'asm("{ cvt.f32.f16 %0, %1; }" : "=f"(f) : "h"(h.bits));': "f = emu_half_to_float(h.bits);",
        'asm("{ cvt.rn.f16.f32 %0, %1; }" : "=h"(h.bits) : "f"(f));': "h.bits = emu_float_to_half(f);",
        'asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lower));': "lower = 0;",
        "if ((__activemask() & lower) == 0) {": "if (lower == 0) {",
    },
    "rows_common.cuh": {
        'asm volatile("st.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(c.w[0]), "r"(c.w[1]), "r"(c.w[2]),\n'
        '                 "r"(c.w[3]) : "memory");': "memcpy(p, c.w, 16);",
    },
}
_DYNAMIC_SHARED = re.compile(r"extern __shared__\s+(?:__align__\(\d+\)\s+)?([\w ]+?)\s+(\w+)\[\];")

# Kernel files the emulator does not run, and why: their launches are checked and recorded only (Note [What
# the stand-in checks] in cuda_emu/fake_cuda.c), and their results are compared by dtype and shape.
NOT_EMULATED = {
    "attention.cu": "tensor-core tiles: inline PTX (mma.sync, ldmatrix, cp.async)",
    "attention_backward.cu": "tensor-core tiles: inline PTX (mma.sync, ldmatrix, cp.async)",
}


def emulated_modules() -> list[str]:
    """The kernel files whose kernels the emulator runs: every shipped one but NOT_EMULATED."""
    return [p.name for p in _loader.kernel_sources() if p.name not in NOT_EMULATED]


def _patched(src: Path) -> str:
    text = _DYNAMIC_SHARED.sub(r"\1 *const \2 = reinterpret_cast<\1 *>(tp_emu_shared);", src.read_text())
    for old, new in _EMU_PATCHES.get(src.name, {}).items():
        assert old in text, f"{src.name} changed: update cuda_testing.py's emulator patch for {old!r}"
        text = text.replace(old, new)
    return text


_CXX = ["-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-w"]


def _emulator_key(cxx: str, cc: str, extra: tuple[Path, ...] = ()) -> str:
    """A hash of all the emulator build reads: its sources, the kernel sources (with ``extra``'s folders),
    patches and compilers."""
    h = hashlib.sha256()
    files = (
        [f for f in _EMU.iterdir() if f.suffix in (".c", ".h", ".cpp")]
        + list(_loader.KERNEL_DIR.glob("*.cu"))
        + list(_loader.KERNEL_DIR.glob("*.cuh"))
    )
    for f in sorted(files, key=lambda p: p.name):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    for f in sorted({g for x in extra for g in x.parent.iterdir() if g.suffix in (".cu", ".cuh", ".h")}):
        h.update(str(f).encode() + b"\0" + f.read_bytes())
    templates = sorted(tp._C._cuda._template_modules().items())
    h.update(repr((_EMU_PATCHES, NOT_EMULATED, _CXX, templates)).encode())
    for tool in (cxx, cc):
        h.update(subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.encode())
    return h.hexdigest()[:24]


# The stand-in NVIDIA libraries built beside the driver (cuda_emu/fake_cublas.c, fake_cusolver.c), under the
# names P10's locators accept; emulated_run points TP_CUBLAS_LIBRARY / TP_CUSOLVER_LIBRARY at them.
CUBLAS_NAME, CUBLASLT_NAME, CUSOLVER_NAME = "libcublas.so.13", "libcublasLt.so.13", "libcusolver.so.12"


def build_emulated_driver(dest=None, jobs: int | None = None, extra=()) -> Path:
    """The stand-in libcuda.so.1 with the emulator beside it (one emu_<module>.so per emulated kernel file,
    compiled in parallel) and the stand-in cuBLAS(Lt) and cuSOLVER, and return its path:
    TP_CUDA_DRIVER_LIBRARY=<it> makes "cuda" ops run on the CPU. ``extra``: kernel files of other pillars
    (absolute paths, launched through the C ABI's cuda_launch) to emulate too, their folders on the include
    path. Built once per content (Note [Emulator patches]; _emulator_key) under the kernel cache's folder, or
    into `dest` when given. FileNotFoundError without a C/C++ compiler."""
    extra = tuple(Path(x).resolve() for x in extra)
    cxx, cc = shutil.which("g++") or shutil.which("c++"), shutil.which("cc") or shutil.which("gcc")
    if cxx is None or cc is None:
        raise FileNotFoundError("no C/C++ compiler to build the CUDA emulator")
    final = (
        Path(dest)
        if dest is not None
        else _compiler.cache_dir().parent / "cuda-emu" / _emulator_key(cxx, cc, extra)
    )
    if (final / "libcuda.so.1").is_file():
        return final / "libcuda.so.1"
    final.parent.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(dir=final.parent, prefix=final.name + ".tmp"))
    kernels = d / "kernels"
    kernels.mkdir()
    for src in list(_loader.KERNEL_DIR.glob("*.cu")) + list(_loader.KERNEL_DIR.glob("*.cuh")) + list(extra):
        (kernels / src.name).write_text(_patched(src))
    flags = [*_CXX, "-include", str(_EMU / "cuda_emu.h"), f"-I{_EMU}", f"-I{kernels}"]

    def run(cmd):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"building the CUDA emulator failed: {' '.join(cmd)}\n{r.stderr[-4000:]}")

    run([cxx, *flags, "-shared", str(_EMU / "emu_runtime.cpp"), "-o", str(d / "libtpemu_rt.so")])

    def module(name: str) -> None:
        stem = name.rsplit(".", 1)[0]
        own = [f"-I{x.parent}" for x in extra if x.name == name]  # an extra file's own headers
        pre = subprocess.run(
            [cxx, *flags, *own, "-DTP_EMU_LIST_KERNELS", "-E", "-x", "c++", str(kernels / name)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        names = sorted(set(re.findall(r'extern\s+"C"\s+tp_emu_kernel_marker\s+(?:\w+\s+)*?(\w+)\s*\(', pre)))
        entries = "\n".join(f"    TP_EMU_ENTRY({n})" for n in names)
        # Note [Emulated templates]: a template module's kernels are instantiated here from the very name
        # expressions the C++ registered, each filed under the lowered name NVRTC gives it (what the host asks
        # a PTX module for) and under the expression itself (what it asks of a test's stand-in image, whose
        # provider returns no lowered names).
        expressions = _compiler.template_names(name)
        if expressions:
            lowered = _compiler.module_ptx(name, 80, expressions)[1]
            for n, e in zip(lowered, expressions, strict=True):
                entries += f'\n    TP_EMU_NAMED("{n}", {e})\n    TP_EMU_NAMED("{e}", {e})'
        assert entries, f"no kernels found in {name}"
        tu = d / f"emu_{stem}.cpp"
        tu.write_text(
            f"// {name} as an emulator library (written by cuda_testing.build_emulated_driver)\n"
            f'#include "{name}"\n#include "emu_module.h"\nTP_EMU_TABLE(\n{entries}\n)\n'
        )
        link = [f"-L{d}", "-ltpemu_rt", "-Wl,-rpath,$ORIGIN", "-Wl,-Bsymbolic"]
        run([cxx, *flags, *own, "-shared", str(tu), "-o", str(d / f"emu_{stem}.so"), *link])

    with ThreadPoolExecutor(jobs or os.cpu_count() or 2) as pool:
        list(pool.map(module, emulated_modules() + [x.name for x in extra]))
    driver = [str(_EMU / "fake_cuda.c"), str(_EMU / "fake_cuda_launch.c")]
    run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-O1",
            f"-I{_EMU}",
            *driver,
            "-o",
            str(d / "libcuda.so.1"),
            "-ldl",
            "-lpthread",
        ]
    )
    # The stand-in libraries find this driver beside them at run time (cuda_emu/fake_blas.h: Note [Finding
    # the stand-in driver]), for its arena and violation report.
    for src, name in (("fake_cublas.c", CUBLAS_NAME), ("fake_cusolver.c", CUSOLVER_NAME)):
        run([cc, "-shared", "-fPIC", "-O1", f"-I{_EMU}", str(_EMU / src), "-o", str(d / name), "-ldl", "-lm"])
    os.symlink(CUBLAS_NAME, d / CUBLASLT_NAME)  # P10 loads cuBLASLt as cuBLAS's sibling: the same file here
    try:
        os.rename(d, final)  # atomic: a concurrent build that finished first wins, this one is dropped
    except OSError:
        shutil.rmtree(d, ignore_errors=True)
    return final / "libcuda.so.1"


def ptx_provider(module: str, major: int, minor: int, names=()):
    """The module provider for the stand-in driver (tp._C._cuda._set_module_provider): the module's PTX for
    the device's architecture, disk-cached (_compiler.module_ptx), under a first line naming the file so the
    driver finds its emulator library and checks launches against its entries; a template module's lowered
    names with it (Note [Template modules] in cuda/_compiler.py). A module named by an absolute path is
    another pillar's, launched through the C ABI's cuda_launch, whose argument arrays are not NULL-terminated:
    its tag says "(C ABI)" (Note [What the stand-in checks])."""
    abi = " (C ABI)" if os.path.isabs(module) else ""
    head = f"// tp-emu module: {Path(module).name}{abi}\n".encode()
    if not names:
        return head + _compiler.module_ptx(module, major * 10 + minor)
    ptx, lowered = _compiler.module_ptx(module, major * 10 + minor, names)
    return head + ptx, lowered
