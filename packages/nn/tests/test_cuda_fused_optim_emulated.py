"""NN's fused optimizer ops on CUDA without a GPU: nn::_fused_adam_ / _fused_sgd_ on P10's stand-in driver.

Where it sits: test_cuda_fused_optim.py runs these ops on a GPU; here the same CUDA host path (fused_optim.cpp
launching cuda_kernels/fused_optim.cu through the C ABI's cuda_launch) runs in CI against P10's stand-in
libcuda and CPU emulator (packages/p10/tests/cuda_emu, built with this pillar's kernel file added:
cuda_testing.build_emulated_driver(extra=...)). The stand-in checks every launch against the kernel's PTX
entry — for the C ABI's unterminated argument arrays, exactly the entry's parameter count (Note [What the
stand-in checks] in fake_cuda.c) — and the emulated kernels compute, so the CUDA results are compared with the
CPU kernels' over a few steps (amsgrad, weight decay, maximize, nesterov, first-step momentum). Runs in a
subprocess (the driver is chosen when CUDA first loads). Skips without the P10 test folder, a C/C++ compiler
or NVRTC.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tensorplay_nn

P10_TESTS = Path(__file__).resolve().parents[2] / "p10" / "tests"
KERNELS = Path(tensorplay_nn.__file__).resolve().parent / "cuda_kernels" / "fused_optim.cu"

SCRIPT = """
import ctypes, os
import numpy as np
import tensorplay as tp
import tensorplay_nn.optim  # noqa: F401  (defines the fused ops and tells them where fused_optim.cu is)
from cuda_testing import ptx_provider

tp._C._cuda._set_module_provider(ptx_provider)  # PTX: the driver checks launches against the entries
driver = ctypes.CDLL(os.environ["TP_CUDA_DRIVER_LIBRARY"])  # the very library P10 loaded
assert tp.cuda.is_available()
SHAPES = [(5,), (3, 70), (300,)]  # 300 elements: two blocks of 256 threads


def tensors(dt, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return [tp.from_numpy((scale * rng.standard_normal(s)).astype(dt)) for s in SHAPES]


def on(ts, dev):
    return [t.to(dev) for t in ts]


def launches():
    e, r = ctypes.c_longlong(), ctypes.c_longlong()
    driver.tp_emu_take_launches(ctypes.byref(e), ctypes.byref(r))
    return e.value, r.value


def refused():
    buf = ctypes.create_string_buffer(1 << 16)
    driver.tp_emu_take_report.restype = ctypes.c_longlong
    n = driver.tp_emu_take_report(buf, ctypes.c_size_t(len(buf)))
    return n, buf.value.decode(errors="replace")


def compare(name, cuda, cpu, dt):
    tol = 1e-6 if dt == np.float32 else 1e-13
    for i, (a, b) in enumerate(zip(cuda, cpu, strict=True)):
        assert a.device.type == "cuda", (name, i, a.device)
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=tol, atol=tol, err_msg=f"{name}[{i}]")


def adam(dev, dt, amsgrad, maximize, decoupled, wd):
    p, g = on(tensors(dt, 0), dev), on(tensors(dt, 1), dev)
    m, v, vmax = (on([tp.zeros(s, dtype=p[0].dtype) for s in SHAPES], dev) for _ in range(3))
    steps = [tp.zeros(()) for _ in SHAPES]  # CPU float32 counters, PyTorch's format
    for k in range(3):
        g = on(tensors(dt, 10 + k), dev)
        tp.ops.call("nn::_fused_adam_", p, g, m, v, vmax if amsgrad else [], steps,
                    0.01, 0.9, 0.99, wd, 1e-8, amsgrad, maximize, decoupled)
    return p + m + v + (vmax if amsgrad else []), [s.item() for s in steps]


def sgd(dev, dt, momentum, nesterov, maximize, wd):
    p, bufs = on(tensors(dt, 2), dev), on([tp.zeros(s, dtype=tp.float32 if dt == np.float32 else tp.float64)
                                          for s in SHAPES], dev)
    for k in range(3):
        g = on(tensors(dt, 20 + k), dev)
        first = [int(k == 0)] * len(SHAPES) if momentum else []
        tp.ops.call("nn::_fused_sgd_", p, g, bufs if momentum else [], first,
                    0.1, wd, momentum, 0.0 if nesterov else 0.1, nesterov, maximize)
    return p + (bufs if momentum else [])


for dt in (np.float32, np.float64):
    for flags in [(False, False, False, 0.0), (True, False, True, 0.01), (True, True, False, 0.1)]:
        launches()
        cuda, steps = adam("cuda", dt, *flags)
        ran, recorded = launches()
        assert ran > 0 and recorded == 0, ("adam", flags, ran, recorded)  # every launch emulated
        cpu, cpu_steps = adam("cpu", dt, *flags)
        assert steps == cpu_steps == [3.0] * len(SHAPES), (steps, cpu_steps)
        compare(f"adam {flags} {dt.__name__}", cuda, cpu, dt)
    for flags in [(0.0, False, False, 0.0), (0.9, False, True, 0.01), (0.9, True, False, 0.0)]:
        launches()
        cuda = sgd("cuda", dt, *flags)
        ran, recorded = launches()
        assert ran > 0 and recorded == 0, ("sgd", flags, ran, recorded)
        compare(f"sgd {flags} {dt.__name__}", cuda, sgd("cpu", dt, *flags), dt)
n, text = refused()
assert n == 0, f"the stand-in driver refused {n} call(s):\\n{text}"
print("ALL OK")
"""


@pytest.mark.slow
def test_fused_optimizers_on_the_emulated_driver_match_the_cpu():
    if not (P10_TESTS / "cuda_testing.py").is_file():
        pytest.skip("needs P10's test folder (cuda_testing.py, cuda_emu/) beside this package")
    sys.path.insert(0, str(P10_TESTS))
    from cuda_testing import build_emulated_driver, nvrtc_or_skip

    nvrtc_or_skip()
    try:
        driver = str(build_emulated_driver(extra=[KERNELS]))
    except FileNotFoundError as e:
        pytest.skip(str(e))
    env = {**os.environ, "TP_CUDA_DRIVER_LIBRARY": driver, "PYTHONPATH": str(P10_TESTS)}
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 0 and "ALL OK" in r.stdout, r.stdout[-4000:] + r.stderr[-8000:]
