"""Every CUDA op's host path, run in CI without a GPU: the op database's CUDA cases on the stand-in driver.

Where it sits: test_cuda_opdb.py (every op x dtype x sample on CUDA vs the CPU: forward, in-place, ``out=``,
error inputs) skips without a GPU. Here it runs whole with TP_CUDA_EMULATED=1 against the stand-in libcuda
(cuda_emu/fake_cuda.c) and the CPU emulator (cuda_testing.build_emulated_driver), in subprocesses
(cuda_emu/emulated_run.py), so that:

- a segfault, abort, stack overflow or hang in any CUDA op's host path fails here, naming the test (and so
  the op and dtype) it happened in — a refactor of csrc/cuda once made every CUDA layer_norm recurse until the
  stack overflowed, and only a GPU run saw it;
- every launch is checked against its kernel's PTX entry (parameter count, pointers into live allocations,
  grid, block and shared-memory limits: Note [What the stand-in checks]) and a refused one fails the case;
- kernels of the emulated families compute on the CPU and their results must equal the CPU op's; the others
  (cuda_testing.NOT_EMULATED) are checked for device, dtype and shape;
- matrix products, linear layers and convolutions call the stand-in cuBLAS(Lt) (cuda_emu/fake_cublas.c),
  which checks its arguments and computes the GEMM, so their values are compared too; solvers call the
  stand-in cuSOLVER (fake_cusolver.c): LU and Cholesky compute, QR, SVD and eigh are checked and recorded;
- every op with a CUDA kernel is called by some case, or is in NOT_CALLED with its reason, and every skip
  has a reason ALLOWED_SKIPS lists (the fixture prints the skips counted by reason).

Cost: the emulator builds once per content (about a minute of g++ on 2 cores, then cached beside the kernel
cache), NVRTC compiles each module to PTX once (cached in the kernel cache), the run takes a few minutes on 2
cores. Skips without a C/C++ compiler or NVRTC.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
sys.path.insert(0, str(Path(__file__).parent / "cuda_emu"))
import emulated_run  # noqa: E402
from cuda_testing import build_emulated_driver, nvrtc_or_skip  # noqa: E402

OPDB = Path(__file__).parent / "test_cuda_opdb.py"

# Ops with a CUDA kernel that no case of test_cuda_opdb.py calls on CUDA, and why: only ops that cannot run
# on the stand-in driver belong here. An entry that the run does call fails
# test_every_cuda_op_is_called_by_the_run, so this list only shrinks. (Random ops, backward kernels,
# number-first and alias overloads have cases of their own at the end of test_cuda_opdb.py.)
NOT_CALLED: dict[str, str] = {}

# Why an emulated case may skip: a regex of the skip reason -> why it cannot run here. A skip matching none
# fails test_every_skip_is_explained, so a new kind of skip is seen, and fixed or listed with its reason.
ALLOWED_SKIPS: dict[str, str] = {
    # cuBLAS has no integer GEMM: P10's CUDA products and convolutions raise NotImplementedError for integer
    # dtypes (PyTorch's CUDA refuses them too), which the CUDA tests skip as a missing kernel, on a GPU alike
    r"^no CUDA kernel yet: \S+: CUDA (matrix products|convolutions) support float16, bfloat16, float32 and "
    r"float64, but got u?int\d+$": "integer matrix products and convolutions: cuBLAS has no integer GEMM",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> emulated_run.Run:
    nvrtc_or_skip()
    try:
        driver = str(build_emulated_driver())
    except FileNotFoundError as e:
        pytest.skip(str(e))
    tmp = tmp_path_factory.mktemp("opdb_emulated")
    ids = emulated_run.collect(OPDB, driver, tmp)
    root = OPDB.parents[len(Path(ids[0].split("::")[0]).parts) - 1]  # ids are relative to pytest's rootdir
    result = emulated_run.run_pytest(ids, driver, tmp, root)
    print(f"{len(ids)} CUDA cases emulated in {result.seconds:.0f} s")
    print(emulated_run.skip_summary(result))
    return result


@pytest.mark.slow
def test_no_cuda_host_path_crashes_or_hangs(run):
    assert not run.crashes, (
        "CUDA host paths died (segfault, abort, stack overflow or hang) in:\n"
        + "\n".join(f"--- {test}\n{tail[-3000:]}" for test, tail in run.crashes.items())
    )


@pytest.mark.slow
def test_every_cuda_case_passes_emulated(run):
    failed = sorted(t for t, outcome in run.outcomes.items() if outcome in ("FAILED", "ERROR"))
    assert not failed, f"{len(failed)} emulated CUDA cases failed: {failed[:40]}\n{run.failures[-20000:]}"


@pytest.mark.slow
def test_every_case_ran(run):
    missing = [t for t in run.ids if t not in run.outcomes and t not in run.crashes]
    assert not missing, f"{len(missing)} cases never ran (time budget?): {missing[:20]}"


# Ops with CUDA kernels whose emulated run lives beside their own pillar's tests, not in the op database.
COVERED_ELSEWHERE: dict[str, str] = {
    "nn::_fused_adam_": "packages/nn/tests/test_cuda_fused_optim_emulated.py",
    "nn::_fused_sgd_": "packages/nn/tests/test_cuda_fused_optim_emulated.py",
}


def _built_in_cuda_ops() -> set[str]:
    """Every op with a CUDA kernel once the installed pillars are imported, asked in a fresh interpreter: this
    process also holds the ops other test files define for themselves (test_dispatch_keys' disp_keys::)."""
    script = (
        "import json, importlib, tensorplay_p10 as tp\n"
        "for pillar in ('tensorplay_tpx', 'tensorplay_nn', 'tensorplay_stax'):\n"
        "    try:\n        importlib.import_module(pillar)\n"
        "    except ImportError:\n        pass\n"
        "print(json.dumps([d['name'] for d in tp.ops.list() if 'CUDA' in d['kernels']]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.slow
def test_every_cuda_op_is_called_by_the_run(run):
    repo = Path(__file__).resolve().parents[3]
    for op, test in COVERED_ELSEWHERE.items():  # each one really is called there
        assert f'"{op}"' in (repo / test).read_text(), f"{test} does not call {op}"
    with_cuda = _built_in_cuda_ops()
    never = sorted(with_cuda - run.cuda_ops - NOT_CALLED.keys() - COVERED_ELSEWHERE.keys())
    assert not never, (
        f"ops with a CUDA kernel that no emulated case calls (add samples or NOT_CALLED): {never}"
    )
    stale = sorted(NOT_CALLED.keys() & run.cuda_ops)
    assert not stale, f"NOT_CALLED lists ops the run does call: {stale}"


@pytest.mark.slow
def test_every_skip_is_explained(run):
    unexplained = {
        t: why for t, why in run.skips.items() if not any(re.search(p, why) for p in ALLOWED_SKIPS)
    }
    assert not unexplained, (
        f"{len(unexplained)} emulated cases skip for a reason ALLOWED_SKIPS does not list:\n"
        + "\n".join(f"{t}: {why}" for t, why in sorted(unexplained.items())[:40])
    )
