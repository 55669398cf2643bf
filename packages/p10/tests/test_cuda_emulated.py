"""CUDA ops run whole on the CPU: the host path against the stand-in driver, the kernels' own source emulated.

Where it sits: between test_cuda_nvrtc.py (the kernels compile) and the GPU tests (they compute right on a
GPU). cuda_emu/ holds a small emulation of CUDA's execution model (cuda_emu.h: blocks of cooperative threads,
__syncthreads and warp shuffles as barriers; a barrier that cannot open is reported as a deadlock) and the
stand-in libcuda (fake_cuda.c) whose cuLaunchKernel runs the named kernel through it
(cuda_testing.build_emulated_driver). The kernel files are the shipped ones, copied, with what only a device
runs swapped for C (Note [Emulator patches] in cuda_testing.py). test_cuda_opdb_emulated.py runs the whole op
database this way; the scripts here go deeper into a few families. Each script below calls a
CUDA op on CPU-made inputs moved to "cuda" and compares with the CPU op (the oracle of test_opdb.py): shapes,
dtypes, values, errors, and launch plans across multiprocessor counts (TP_EMU_SMS). It catches index
arithmetic, races between barriers, scratch layouts and host-side planning without a GPU; it cannot catch what
only hardware shows (timing, memory ordering beyond barriers, register limits). Needs g++ and cc; skips
without them. The same driver runs a GPU test file's cases for these ops:
    TP_CUDA_DRIVER_LIBRARY=<build_emulated_driver(dir)> pytest test_cuda_llm_ops.py -k "delta_rule or paged"
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import build_emulated_driver  # noqa: E402


@pytest.fixture(scope="module")
def emulated_driver(tmp_path_factory) -> str:
    try:
        return str(build_emulated_driver())  # built once per content, cached beside the kernel cache
    except FileNotFoundError as e:
        pytest.skip(str(e))


def run_emulated(driver: str, script: str, sms: int = 4) -> None:
    env = {**os.environ, "TP_CUDA_DRIVER_LIBRARY": driver, "TP_EMU_SMS": str(sms)}
    r = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 0 and "ALL OK" in r.stdout, r.stdout + r.stderr


PRELUDE = textwrap.dedent(
    """
    import numpy as np
    import tensorplay_p10 as tp
    tp._C._cuda._set_module_provider(lambda module, major, minor, names=(): b"stand-in image")
    assert tp.cuda.is_available()
    rng = np.random.default_rng(0)

    def T(*shape, lo=-1.0, hi=1.0, dt=np.float32):
        return tp.from_numpy(rng.uniform(lo, hi, shape).astype(dt))

    def cu(x):
        return x.to("cuda") if isinstance(x, tp.Tensor) else x

    def rel(a, b):  # the largest difference, relative to the larger of 1 and the reference's largest value
        if b is None:
            assert a is None
            return 0.0
        assert a.device.type == "cuda" and a.dtype == b.dtype and a.shape == b.shape, (a, b)
        if b.numel() == 0:
            return 0.0
        a, b = a.cpu().double().numpy(), b.double().numpy()
        return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))
    """
)

DELTA = """
    def case(name, q, k, v, g, beta, s0=None, chunk=64, tol=1e-5, btol=None):
        args = (q, k, v, g, beta, s0, chunk)
        fwd = max(rel(a, b) for a, b in zip(tp.delta_rule(*map(cu, args)), tp.delta_rule(*args)))
        out, state = tp.delta_rule(*args)
        bwd = 0.0
        go, gs = T(*out.shape).to(out.dtype), T(*state.shape)
        for go, gs in ((go, gs), (None, gs), (go, None)):
            want = tp.delta_rule_backward(go, gs, *args)
            got = tp.delta_rule_backward(cu(go), cu(gs), *map(cu, args))
            bwd = max(bwd, max(rel(a, b) for a, b in zip(got, want)))
        print(f"{name}: forward {fwd:.1e}, backward {bwd:.1e}", flush=True)
        assert fwd < tol and bwd < (btol or 10 * tol), name

    def make(B, T_, H, Dk, Dv, per_channel=False, init=False, dt=np.float32):
        g = T(*((B, T_, H, Dk) if per_channel else (B, T_, H)), lo=-1, hi=0, dt=dt)
        s0 = T(B, H, Dk, Dv, dt=dt) if init else None
        beta = T(B, T_, H, lo=0, hi=1, dt=dt)
        return T(B, T_, H, Dk, dt=dt), T(B, T_, H, Dk, dt=dt), T(B, T_, H, Dv, dt=dt), g, beta, s0

    case("tiny", *make(1, 3, 1, 2, 2))
    case("B 2, H 3, T 7, chunk 3", *make(2, 7, 3, 4, 5), chunk=3)
    case("per-channel g, state, chunk 4", *make(2, 9, 2, 3, 4, True, True), chunk=4)
    case("T 1, chunk 1", *make(1, 1, 2, 2, 1, False, True), chunk=1)
    case("T 0 with a state", *make(2, 0, 2, 3, 4, False, True))
    case("T 70 over chunks of 64", *make(1, 70, 2, 8, 8, True, True))
    case("Dk 20 (padding rows), Dv 37 (two backward tiles)", *make(1, 5, 1, 20, 37, False, True), chunk=2)
    case("Dk 40, Dv 70", *make(1, 6, 1, 40, 70, True, True), chunk=4)
    case("Dk 300: rows in scratch slots", *make(1, 4, 1, 300, 6, True, True), chunk=3)
    case("Dk 300, per-head g", *make(1, 4, 1, 300, 6), chunk=2)
    case("Dk 300, Dv 32: cross-warp sums in scratch", *make(1, 3, 1, 300, 32, True, True), chunk=2)
    case("Dv 0", *make(2, 5, 2, 6, 0))
    case("Dk 0", *make(2, 5, 2, 0, 3, False, True))
    case("float64", *make(1, 5, 2, 6, 9, True, True, np.float64), chunk=2, tol=1e-14)
    case("float64, Dk 200, Dv 32: sums in scratch", *make(2, 4, 1, 200, 32, True, True, np.float64),
         tol=1e-14)
    q, k, v, g, beta, s0 = make(2, 6, 3, 8, 5, True, True)
    for dt in (tp.bfloat16, tp.float16):  # float32 arithmetic on both; 16-bit results may differ by an ulp
        qh, kh, vh = q.to(dt), k.to(dt), v.to(dt)
        case(f"{dt} with float32 g, beta, state", qh, kh, vh, g, beta, s0, tol=8e-3, btol=8e-3)
        case(f"{dt} throughout", qh, kh, vh, g.to(dt), beta.to(dt), s0.to(dt), tol=8e-3, btol=8e-3)
    q, k, v, g, beta, s0 = make(2, 4, 3, 5, 6, True, True)
    case("non-contiguous", q.transpose(0, 1).contiguous().transpose(0, 1), T(2, 4, 3, 10)[..., ::2],
         T(3, 4, 2, 6).permute(2, 1, 0, 3), g, T(3, 2, 4).permute(1, 2, 0), T(2, 3, 6, 5).transpose(-1, -2))
    try:
        tp.delta_rule(*map(cu, make(1, 3, 2, 4, 5)[:4]), T(1, 3, 1).cuda())
    except RuntimeError as e:
        assert "expected beta of shape [B, T, H]" in str(e), e
    else:
        raise AssertionError("a bad beta passed")
    print("ALL OK")
"""

PAGED = """
    def ids(rows):
        return tp.tensor(rows, dtype=tp.int64)

    def case(name, q, kp, vp, table, lens, scale=None, tol=1e-6):
        want = tp.paged_attention(q, kp, vp, table, lens, scale)
        e = rel(tp.paged_attention(*map(cu, (q, kp, vp, table, lens)), scale), want)
        print(f"{name}: {e:.1e}", flush=True)
        assert e < tol, name

    kp, vp, table = T(9, 4, 2, 8), T(9, 4, 2, 6), ids([[3, 1, 7, -1], [0, 8, 2, 5]])
    case("tiny decode", T(1, 2, 1, 2), T(3, 2, 1, 2), T(3, 2, 1, 2), ids([[2, 0]]), ids([3]))
    case("GQA 4:2, T 3, padded table", T(2, 4, 3, 8), kp, vp, table, ids([10, 13]))
    case("decode, scale 0.3", T(2, 4, 1, 8), kp, vp, table, ids([1, 16]), 0.3)
    case("MHA, full blocks", T(2, 2, 4, 8), kp, vp, table, ids([4, 8]))
    case("T 0", T(2, 4, 0, 8), kp, vp, table, ids([0, 5]))
    case("B 0", T(0, 4, 1, 8), kp, vp, ids([]).reshape(0, 4), ids([]))
    case("transposed query and pools", T(2, 3, 4, 8).transpose(1, 2), T(9, 8, 2, 4).transpose(1, 3),
         T(4, 9, 2, 6).transpose(0, 1), table, ids([7, 11]))
    case("a block shared by two rows", T(2, 2, 1, 8), kp, vp, ids([[4, 4], [4, 1]]), ids([7, 6]))
    tb = tp.tensor(rng.permutation(20)[:10].reshape(2, 5), dtype=tp.int64)
    kp2, vp2 = T(20, 16, 2, 40), T(20, 16, 2, 300)
    case("Dv 300 (two column passes), S 70", T(2, 4, 2, 40), kp2, vp2, tb, ids([70, 33]))
    case("float64", T(2, 4, 3, 8).double(), kp.double(), vp.double(), table, ids([10, 13]), tol=1e-14)
    for dt in (tp.bfloat16, tp.float16):
        case(f"{dt}", T(2, 4, 3, 8).to(dt), kp.to(dt), vp.to(dt), table, ids([10, 13]), tol=8e-3)
    k1, v1 = tp.ones(3, 4, 2, 8), tp.ones(3, 4, 2, 6)
    for heads, tbl, lens, err, text in [
        (4, [[0, 3]], [5], IndexError, "block_table[0, 1] = 3 is not a block of the pools"),
        (4, [[0, 2]], [9], RuntimeError, "seq_lens[0] = 9 exceeds the block table's capacity"),
        (3, [[0, 2]], [2], RuntimeError, "query heads (3) must be a multiple"),
    ]:
        try:
            tp.paged_attention(*map(cu, (tp.ones(1, heads, 1, 8), k1, v1, ids(tbl), ids(lens))))
        except err as e:
            assert text in str(e), e
        else:
            raise AssertionError(text)
    print("ALL OK")
"""


@pytest.mark.slow
@pytest.mark.parametrize("sms", [1, 4, 64])
def test_delta_rule_kernels_match_the_cpu(emulated_driver, sms):
    # 1 multiprocessor: a block per (b, h); 64: the backward spreads a (b, h)'s tiles over blocks (groups)
    run_emulated(emulated_driver, DELTA, sms)


@pytest.mark.slow
def test_paged_attention_kernel_matches_the_cpu(emulated_driver):
    run_emulated(emulated_driver, PAGED)
