"""gradcheck on the GPU: every derivative formula of test_formulas.py, its inputs moved to CUDA, against
finite differences computed on CUDA.

Where it sits: test_formulas.py checks each formula on the CPU; test_cuda_autograd.py compares CUDA gradients
with the CPU's for the common families. This file runs the same finite-difference check as the CPU one with
float64 CUDA inputs, so every backward formula's ops (and their CUDA kernels) meet an oracle that does not
come from the formulas. A case whose function builds its own CPU tensors (index tensors written inline)
cannot mix them with CUDA inputs, as in PyTorch: it skips, saying so; so does an op with no CUDA kernel,
naming it. They need a GPU and skip elsewhere ("needs a CUDA device").
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import gradcheck

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find test_formulas
from test_formulas import CASES  # noqa: E402

pytestmark = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")


def _on_cuda(x):
    if not isinstance(x, tp.Tensor):
        return x
    return x.detach().to("cuda").requires_grad_(x.requires_grad)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_on_cuda(name: str) -> None:
    fn, args = CASES[name]
    inputs = tuple(_on_cuda(a) for a in args)
    try:
        ok = gradcheck(fn, inputs)
    except NotImplementedError as e:
        if "CUDA" not in str(e):
            raise
        pytest.skip(f"no CUDA kernel yet: {e}")
    except RuntimeError as e:
        if "device" not in str(e) or "Jacobian mismatch" in str(e):
            raise
        pytest.skip(f"the case builds CPU tensors inside its function: {e}")
    assert ok
