"""Fake CUDA tensors against real ones, on the GPU: the meta rules that serve fake CUDA tensors
(Note [Fake tensors] in csrc/dispatch/fake_tensor.cpp) give the real CUDA results' shape and dtype, and refuse
what the CUDA backend refuses.

Where it sits: the device half of test_opdb.py's fake test (fake tensors against the CPU). Every op
of the database, one float and one integer dtype: when the real CUDA call succeeds, the fake call must succeed
with the same shapes and dtypes; when the real call raises NotImplementedError (no kernel, or a dtype CUDA
refuses), the fake call may raise it too. Needs a GPU; skips elsewhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp
from tensorplay_p10.fake_tensor import FakeTensorMode, is_fake

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find tests/opdb

from opdb import OpInfo, op_db  # noqa: E402

pytestmark = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")


def _representative(op: OpInfo) -> list:
    picks = []
    for group in ([tp.float32, tp.float64, tp.bfloat16], [tp.int64, tp.int32, tp.uint8]):
        found = [d for d in group if d in op.dtypes]
        if found:
            picks.append(found[0])
    return picks or [op.dtypes[0]]


def _as_list(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize(
    "op,dtype",
    [
        pytest.param(op, d, id=f"{op.id}-{str(d).rsplit('.', 1)[-1]}")
        for op in op_db
        if op.meta
        for d in _representative(op)
    ],
)
def test_fake_cuda_matches_real_cuda(op: OpInfo, dtype):
    mode = FakeTensorMode()
    for sample in op.samples(dtype):
        if sample.data_dependent:
            continue
        real_sample = sample.map_tensors(lambda t: t.to("cuda") if t.dim() else t)
        fake_sample = sample.map_tensors(lambda t: mode.from_tensor(t, device="cuda" if t.dim() else "cpu"))
        try:
            real = op.op(real_sample.input, *real_sample.args, **real_sample.kwargs)
        except NotImplementedError:
            continue  # CUDA refuses: the fake call may refuse too, or describe what a kernel would give
        except (RuntimeError, ValueError, TypeError, IndexError):
            continue  # the sample is an error on CUDA: test_cuda_opdb.py checks those
        fake = op.op(fake_sample.input, *fake_sample.args, **fake_sample.kwargs)
        for r, f in zip(_as_list(real), _as_list(fake), strict=True):
            if not isinstance(r, tp.Tensor):
                continue
            assert is_fake(f), f"{op.id} on {sample!r}"
            assert f.device == r.device, f"{op.id} on {sample!r}: {f.device} != {r.device}"
            assert tuple(f.shape) == tuple(r.shape), f"{op.id} on {sample!r}"
            assert f.dtype is r.dtype, f"{op.id} on {sample!r}: {f.dtype} != {r.dtype}"
