"""cat on the GPU (csrc/cuda/ops_join.cpp, join.cu) and the ops built on it (stack, hstack, vstack, roll),
against the CPU op and np.concatenate.

Covered: every dtype, every dim, inputs of different lengths along dim (the 16-byte, 8-, 4-, 2- and 1-byte
units the host picks), more inputs than one launch's table (kCatMax = 32), non-contiguous inputs and inputs
of another dtype (type promotion: copied by device_copy), size-0 inputs and the legacy empty [0] input cat
skips, errors (ranks, sizes, devices), and the gradient of cat against the CPU's.
TP_CUDA_TEST_DEVICE=cpu runs the checks on the CPU alone.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, REAL, needs_device, np_of, same  # noqa: E402
from cuda_testing import small_ints as sample

pytestmark = needs_device


def check_cat(parts, dim):
    got = tp.cat([p.to(DEV) for p in parts], dim)
    want = np.concatenate([np_of(p) for p in parts if tuple(p.shape) != (0,)], axis=dim)
    same(got, tp.cat(parts, dim), want)


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_cat_every_dtype_and_dim(dtype):
    for dim in (0, 1, 2, -1):
        parts = []
        for k, n in enumerate((1, 3, 8, 5)):  # lengths that force narrower units for some inputs
            shape = [2, 3, 4]
            shape[dim] = n
            parts.append(sample(tuple(shape), dtype, seed=k))
        check_cat(parts, dim)


def test_cat_many_inputs_layouts_and_promotion():
    check_cat([sample((2, k % 5 + 1), tp.float32, k) for k in range(70)], 1)  # three launches
    a, b = sample((4, 6), tp.float32, 1), sample((6, 4), tp.float32, 2)
    check_cat([a, b.t(), sample((4, 12), tp.float32, 3)[:, ::2]], 0)  # transposed and strided inputs
    check_cat([sample((3, 2), tp.int32, 3), sample((3, 5), tp.float16, 4), sample((3, 1), tp.bool, 5)], 1)
    check_cat([sample((0, 4)), sample((3, 4)), tp.zeros(0), sample((2, 4))], 0)  # size 0, legacy empty [0]
    check_cat([sample((5,), tp.float64, 6), sample((11,), tp.float64, 7)], 0)
    big = [sample((64, 1000), tp.float32, 8), sample((64, 24), tp.float32, 9)]
    check_cat(big, 1)


def test_stack_hstack_roll_pad():
    a, b = sample((3, 4), tp.float32, 1), sample((3, 4), tp.float32, 2)
    same(tp.stack([a.to(DEV), b.to(DEV)], 1), tp.stack([a, b], 1), np.stack([np_of(a), np_of(b)], 1))
    same(tp.hstack([a.to(DEV), b.to(DEV)]), tp.hstack([a, b]))
    same(tp.vstack([a.to(DEV), b.to(DEV)]), tp.vstack([a, b]))
    same(tp.roll(a.to(DEV), 1, 1), tp.roll(a, 1, 1), np.roll(np_of(a), 1, 1))


def test_cat_errors():
    a = sample((2, 3)).to(DEV)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        tp.cat([a, sample((3, 3)).to(DEV)], 1)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        tp.cat([a, sample((2, 3, 1)).to(DEV)], 0)
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        tp.cat([tp.tensor(1.0).to(DEV)], 0)
    if DEV != "cpu":
        with pytest.raises(RuntimeError, match="device"):
            tp.cat([a, sample((2, 3))], 0)


def test_cat_gradient_matches_the_cpu():
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    a, b = sample((2, 3), tp.float32, 1), sample((2, 5), tp.float32, 2)
    grads = {}
    for dev in ("cpu", DEV):
        ad, bd = a.to(dev).requires_grad_(True), b.to(dev).requires_grad_(True)
        w = tp.arange(16.0).reshape(2, 8).to(dev)
        grads[dev] = autograd.grad((tp.cat([ad, bd], 1) * w).sum(), [ad, bd])
    for got, want in zip(grads[DEV], grads["cpu"], strict=True):
        same(got, want)
