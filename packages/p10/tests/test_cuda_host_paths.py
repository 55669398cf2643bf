"""The host side of CUDA ops, run on the CPU against a stand-in driver: no call may hang.

A tiny C library (cuda_emu/fake_cuda.c, compiled here with the system C compiler) stands in for
``libcuda.so.1``: device memory is host memory, copies and memsets are ``memcpy``/``memset``, every wait
returns at once and kernels are not run, so the device-side index checks read back zero. The ops below then
run their whole host path (meta checks, allocation, the index flags in mapped host memory, launch, the wait
and read-back) in a subprocess with a timeout. A hang there is a host bug: Note [Single-slot raise_if_set] in
csrc/cuda/index_common.h was one (every one-slot index check spun forever).
Skips when no C compiler is found.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The stand-in driver's sources, shared with cuda_testing.build_emulated_driver (which puts the emulator
# beside it so kernels also run). Alone, with a stand-in image, it runs no kernel and knows no parameters.
FAKE_DRIVER = [Path(__file__).parent / "cuda_emu" / f for f in ("fake_cuda.c", "fake_cuda_launch.c")]

# Every op whose host path reads a device index-check flag back. Values are not checked (no kernel runs).
SCRIPT = textwrap.dedent(
    """
    import tensorplay_p10 as tp
    tp._C._cuda._set_module_provider(lambda module, major, minor, names=(): b"stand-in image")
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
    print("steps", len(steps), flush=True)
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
    lib = tmp_path_factory.mktemp("fake_cuda") / "libcuda.so.1"
    sources = [str(f) for f in FAKE_DRIVER]
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), *sources, "-ldl", "-lpthread"], check=True)
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
    announced = int(r.stdout.split("\n", 1)[0].split()[1])  # the first line: "steps N"
    assert r.stdout.count("done") == r.stdout.count("start") == announced, r.stdout
