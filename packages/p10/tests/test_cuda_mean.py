"""mean on the GPU (csrc/cuda/ops_reduce.cpp: the CUDA sum, then one division), against float64 NumPy.

Needs a GPU: elsewhere every test skips with "no CUDA device". Run on the lent H200 by tools/gpu-check.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import needs_cuda  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


TOL = {tp.float16: 2e-3, tp.bfloat16: 1e-2, tp.float32: 1e-5, tp.float64: 1e-12}


def values(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def on_gpu(a: np.ndarray, dtype) -> tp.Tensor:
    return tp.tensor(a, dtype=tp.float64).to(dtype).cuda()


def host(t: tp.Tensor) -> np.ndarray:
    return t.cpu().to(tp.float64).numpy()


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize(
    "dim,keepdim", [(None, False), (0, False), (1, True), (-1, False), ((0, 2), True), ((), False)]
)
def test_mean_matches_float64_numpy(dtype, dim, keepdim):
    a = values((5, 33, 7), 1)
    x = on_gpu(a, dtype)
    ref = host(x)  # the values as rounded to dtype
    kw = {} if dim is None else {"dim": dim}
    got = x.mean(**kw, keepdim=keepdim)
    want = ref.mean(axis=None if dim in (None, ()) else dim, keepdims=keepdim)
    assert got.dtype is dtype and got.device.type == "cuda" and tuple(got.shape) == want.shape
    np.testing.assert_allclose(host(got), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_mean_layouts_dtype_argument_and_long_rows():
    a = values((6, 4), 2)
    x = on_gpu(a, tp.float32)
    np.testing.assert_allclose(host(x.t().mean(1)), a.mean(0), rtol=1e-5)  # non-contiguous
    np.testing.assert_allclose(host(x[:, ::2].mean()), a[:, ::2].mean(), rtol=1e-5)
    i = tp.arange(10, dtype=tp.int32).cuda()
    assert i.mean(dtype=tp.float64).dtype is tp.float64 and i.mean(dtype=tp.float64).item() == 4.5
    big = values(3_000_001, 3).astype(np.float32)
    got = tp.from_numpy(big).cuda().mean().item()
    assert abs(got - big.astype(np.float64).mean()) <= 1e-6 * np.abs(big).mean()


def test_mean_of_nothing_is_nan_and_errors_match_the_cpu():
    assert np.isnan(tp.zeros(0).cuda().mean().item())
    assert tp.zeros(0, 3).cuda().mean(1).shape == (0,)
    with pytest.raises(RuntimeError, match="mean"):
        tp.arange(4).cuda().mean()  # integers need dtype=, as on the CPU
    with pytest.raises(IndexError, match="Dimension out of range"):
        tp.ones(2, 3).cuda().mean(2)
