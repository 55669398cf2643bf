"""arange, linspace, logspace, eye and scalar_tensor with device="cuda" (csrc/cuda/ops_factory.cpp,
factory.cu), against the CPU op and NumPy.

Covered: integer and float arange (negative steps, float steps, dtype=), linspace's two halves (both ends
exact) for floats and integers, logspace with a base, eye square and rectangular in every dtype, the CPU's
dtype rules and errors (checked by the CPU op on meta), and empty results.
TP_CUDA_TEST_DEVICE=cpu runs the checks on the CPU alone.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_device, np_of  # noqa: E402

pytestmark = needs_device


def close(got: tp.Tensor, cpu: tp.Tensor, want=None, tol=0.0):
    assert got.device.type == DEV and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    g = np_of(got).astype(np.float64)
    np.testing.assert_allclose(g, np_of(cpu).astype(np.float64), rtol=tol, atol=tol)
    if want is not None:
        np.testing.assert_allclose(g, np.asarray(want, np.float64), rtol=max(tol, 1e-6), atol=max(tol, 1e-6))


@pytest.mark.parametrize(
    "args,kw",
    [
        ((10,), {}),
        ((2, 17, 3), {}),
        ((5, -7, -2), {}),
        ((0, 1, 0.1), {}),
        ((-1.5, 2.0, 0.25), {}),
        ((0, 10), {"dtype": tp.float16}),
        ((0, 100, 7), {"dtype": tp.bfloat16}),
        ((0.5, 4.0), {"dtype": tp.int32}),
        ((3, 3), {}),
    ],
)
def test_arange(args, kw):
    got, cpu = tp.arange(*args, device=DEV, **kw), tp.arange(*args, **kw)
    close(got, cpu, np.arange(*args) if "dtype" not in kw else None)


@pytest.mark.parametrize("dtype", [None, tp.float64, tp.float16, tp.bfloat16, tp.int64, tp.int16, tp.uint8])
@pytest.mark.parametrize("steps", [0, 1, 2, 7, 100])
def test_linspace_logspace(steps, dtype):
    tol = 0.0 if dtype in (None, tp.float64) or not dtype.is_floating_point else 1e-2
    got, cpu = tp.linspace(-3, 8, steps, dtype=dtype, device=DEV), tp.linspace(-3, 8, steps, dtype=dtype)
    close(got, cpu, np.linspace(-3, 8, steps) if dtype is None else None, tol)
    if dtype is None or dtype.is_floating_point:
        got, cpu = (
            tp.logspace(-2, 1, steps, base=2.0, dtype=dtype, device=DEV),
            tp.logspace(-2, 1, steps, base=2.0, dtype=dtype),
        )
        close(got, cpu, np.logspace(-2, 1, steps, base=2.0) if dtype is None else None, max(tol, 1e-6))


@pytest.mark.parametrize(
    "dtype", [tp.bool, tp.uint8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32], ids=str
)
def test_eye(dtype):
    for n, m in ((4, None), (3, 5), (5, 2), (0, 3)):
        close(tp.eye(n, m, dtype=dtype, device=DEV), tp.eye(n, m, dtype=dtype), np.eye(n, m))


def test_scalar_tensor_and_errors():
    for v, dtype in ((2.5, None), (3, None), (True, None), (7, tp.float16)):
        close(tp.scalar_tensor(v, dtype=dtype, device=DEV), tp.scalar_tensor(v, dtype=dtype), v)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tp.arange(0, 5, 0, device=DEV)
    with pytest.raises(RuntimeError, match="non-negative"):
        tp.linspace(0, 1, -1, device=DEV)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        tp.eye(-1, device=DEV)
