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
- every op with a CUDA kernel is called by some case, or is in NOT_CALLED with its reason.

Cost: the emulator builds once per content (about a minute of g++ on 2 cores, then cached beside the kernel
cache), NVRTC compiles each module to PTX once (cached in the kernel cache), the run takes a few minutes on 2
cores. Skips without a C/C++ compiler or NVRTC.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
sys.path.insert(0, str(Path(__file__).parent / "cuda_emu"))
import emulated_run  # noqa: E402
from cuda_testing import build_emulated_driver, nvrtc_or_skip  # noqa: E402

OPDB = Path(__file__).parent / "test_cuda_opdb.py"

# Ops with a CUDA kernel that no case of the op database calls on CUDA, and why. None of them is one that
# cannot run on the stand-in driver: each waits for an op-database entry (or a case of its own here). An entry
# that the run does call fails test_every_cuda_op_is_called_by_the_run, so this list only shrinks.
_RANDOM = "random: the op database has no entry for it (its values are not a function of its inputs)"
_BACKWARD = "a backward kernel: autograd calls it, the op database's forward cases do not"
_OUT = "an out= overload of a tuple-result op whose database entry has no out= cases"
NOT_CALLED: dict[str, str] = {
    **dict.fromkeys(
        [
            "_rrelu_with_noise",
            "bernoulli",
            "bernoulli_.Tensor",
            "bernoulli_.float",
            "cauchy_",
            "exponential_",
            "geometric_",
            "log_normal_",
            "multinomial",
            "normal_",
            "poisson",
            "random_",
            "random_.from",
            "random_.to",
            "randperm",
            "uniform_",
        ],
        _RANDOM,
    ),
    **dict.fromkeys(
        [
            "delta_rule_backward",
            "layer_norm_backward",
            "rms_norm_backward",
            "scaled_dot_product_attention_backward",
        ],
        _BACKWARD,
    ),
    **dict.fromkeys(
        [
            "adaptive_max_pool2d.out",
            "adaptive_max_pool3d.out",
            "max_pool2d_with_indices.out",
            "max_pool3d_with_indices.out",
        ],
        _OUT,
    ),
    "bitwise_left_shift.Scalar_Tensor": "number-first: the database's samples put the tensor first",
    "bitwise_right_shift.Scalar_Tensor": "number-first: the database's samples put the tensor first",
    "float_power_": "its in-place form needs a float64 self; the in-place test picks float32",
    "true_divide": "an alias of div: the database covers div",
    "true_divide.out": "an alias of div: the database covers div",
    "is_pinned": "a property of CPU tensors (the driver is asked about a host pointer), no CUDA tensor",
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


@pytest.mark.slow
def test_every_cuda_op_is_called_by_the_run(run):
    with_cuda = {d["name"] for d in tp.ops.list() if "CUDA" in d["kernels"]}
    never = sorted(with_cuda - run.cuda_ops - NOT_CALLED.keys())
    assert not never, (
        f"ops with a CUDA kernel that no emulated case calls (add samples or NOT_CALLED): {never}"
    )
    stale = sorted(NOT_CALLED.keys() & run.cuda_ops)
    assert not stale, f"NOT_CALLED lists ops the run does call: {stale}"
