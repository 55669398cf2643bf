"""The fused optimizer ops on CUDA: nn::_fused_adam_ / nn::_fused_sgd_ launching cuda_kernels/fused_optim.cu
through the C ABI's cuda_launch (packages/nn/csrc/fused_optim.cpp).

On a GPU: SGD, Adam and AdamW with parameters on CUDA take the fused path (checked, not assumed) and follow
the trajectories recorded from PyTorch (float64) and the CPU for-loop path (float32); mixed devices raise
naming the argument. Anywhere: the .cu compiles through NVRTC and exports the kernels the C++ launches.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_optim import FUSABLE, RECORDED, _case_id, assert_trajectory, run

import tensorplay as tp
import tensorplay_nn
from tensorplay_nn.optim import _fused

needs_cuda = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")
KERNELS = Path(tensorplay_nn.__file__).resolve().parent / "cuda_kernels" / "fused_optim.cu"
CSRC = Path(__file__).resolve().parents[1] / "csrc" / "fused_optim.cpp"


@pytest.fixture
def fused_calls(monkeypatch) -> list:
    """Records every call of the fused path (so a test knows the CUDA kernels ran, not the for-loop)."""
    calls: list = []
    for fn in ("adam", "sgd"):
        real = getattr(_fused, fn)
        monkeypatch.setattr(_fused, fn, lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    return calls


def test_kernels_compile_and_match_what_the_ops_launch():
    pytest.importorskip("tensorplay_p10.cuda._compiler")
    from tensorplay_p10.cuda import _compiler

    try:
        ptx = _compiler.compile_ptx(str(KERNELS), arch=80)
    except RuntimeError as e:  # no NVRTC on this machine
        pytest.skip(str(e))
    entries = set(re.findall(rb"\.entry (\w+)", ptx))
    launched = set(re.findall(r'launch_elementwise\([^"]*"(\w+)"', CSRC.read_text()))
    assert launched == {"adam_step", "sgd_step"}
    assert {f"{k}_{t}".encode() for k in launched for t in ("float32", "float64")} <= entries


@needs_cuda
@pytest.mark.parametrize("case", FUSABLE, ids=_case_id)
def test_cuda_fused_follows_recorded_pytorch(case: dict[str, Any], fused_calls: list) -> None:
    ours = run(case["optimizer"], {**case["kwargs"], "fused": True}, RECORDED["steps"], device="cuda")
    assert fused_calls, "the CUDA parameters did not take the fused path"
    assert_trajectory(ours, case["trajectory"], case["optimizer"])


@needs_cuda
@pytest.mark.parametrize("case", FUSABLE, ids=_case_id)
def test_cuda_fused_float32_agrees_with_cpu_for_loop(case: dict[str, Any], fused_calls: list) -> None:
    cuda = run(case["optimizer"], case["kwargs"], 5, tp.float32, device="cuda")  # neither option: fused
    assert fused_calls
    cpu = run(case["optimizer"], {**case["kwargs"], "foreach": False}, 5, tp.float32)
    for a, b in zip(cuda, cpu, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


@needs_cuda
def test_cuda_fused_errors_name_the_argument() -> None:
    p = tp.zeros(3, device="cuda")
    with pytest.raises(RuntimeError, match=r"nn::_fused_sgd_: grads\[0\] is on cpu, expected cuda:0"):
        tp.ops.call("nn::_fused_sgd_", [p], [tp.zeros(3)], [], [], 0.1, 0.0, 0.0, 0.0, False, False)
    hyper = (0.1, 0.9, 0.99, 0.0, 1e-8, False, False, False)
    with pytest.raises(RuntimeError, match=r"state_steps\[0\] is on cuda:0, expected cpu"):
        tp.ops.call("nn::_fused_adam_", [p], [p], [p], [p], [], [tp.zeros((), device="cuda")], *hyper)
    empty = tp.zeros(0, device="cuda")  # size 0: nothing to launch, the step still counts
    step = tp.zeros(())
    tp.ops.call("nn::_fused_adam_", [empty], [empty], [empty], [empty], [], [step], *hyper)
    assert step.item() == 1.0
