"""gradcheck on the GPU: every derivative formula of test_formulas.py, its inputs moved to CUDA, against
finite differences computed on CUDA.

Where it sits: test_formulas.py checks each formula on the CPU; test_cuda_autograd.py compares CUDA gradients
with the CPU's for the common families. This file runs the same finite-difference check as the CPU one with
float64 CUDA inputs, so every backward formula's ops (and their CUDA kernels) meet an oracle that does not
come from the formulas. The cases build their inline tensors (indices, masks, targets) on their inputs' device
(Note [tensors built inside a case] in test_formulas.py), so a device mismatch is a failure here; only an op
with no CUDA kernel skips, naming the op. They need a GPU and skip elsewhere ("needs a CUDA device").
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import gradcheck

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find test_formulas
from test_formulas import CASES  # noqa: E402

pytestmark = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")

# The two errors that name an op with no CUDA kernel: the dispatcher's (no kernel for the CUDA key) and
# TensorIterator's (a Composite or CPU kernel's loop reached with a CUDA tensor). Anything else fails,
# Tensor::data<T>()'s "this op has no CUDA kernel yet" included: it names no op, and it is also what a CUDA
# kernel that reads a device tensor (an index, an offset) on the host raises.
_MISSING_KERNEL = re.compile(
    r"Could not run '(?P<op>[^']+)' with arguments from the 'CUDA' backend"
    r"|(?P<loop_op>\w+): no CUDA kernel yet"
)


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
        missing = _MISSING_KERNEL.search(str(e))
        if missing is None:
            raise
        pytest.skip(f"no CUDA kernel for {missing['op'] or missing['loop_op']} yet")
    assert ok
