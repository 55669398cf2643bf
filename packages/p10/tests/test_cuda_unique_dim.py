"""unique and unique_consecutive over slices (dim=) on the GPU (csrc/cuda/ops_unique_dim.cpp, Note [Unique
rows by stable passes]): compared with the CPU op and with NumPy's np.unique(axis=). GPU only: elsewhere
these skip with "needs a CUDA device".
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_device, np_of  # noqa: E402
from cuda_testing import equal as same

pytestmark = [pytest.mark.cuda, needs_device]


def rows_with_repeats(shape, dtype, seed) -> tp.Tensor:
    """Few distinct values, so that whole slices repeat."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(np.asarray(rng.random(shape) < 0.5))
    return tp.from_numpy(np.asarray(rng.integers(0, 2, size=shape))).to(dtype)


def both(fn, x, **kw):
    got = fn(x.to(DEV), return_inverse=True, return_counts=True, **kw)
    want = fn(x, return_inverse=True, return_counts=True, **kw)
    for g, w in zip(got, want, strict=True):
        assert g.device.type == DEV
        same(g, w)
    return got


@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int32, tp.int64, tp.float16, tp.float32], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim_matches_cpu_and_numpy(dtype, dim):
    x = rows_with_repeats((9, 3, 2), dtype, seed=3)
    got = both(tp.unique, x, dim=dim)
    u, inv, cnt = np.unique(np_of(x), axis=dim, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(np_of(got[0]), u)
    np.testing.assert_array_equal(np_of(got[1]).reshape(-1), inv.reshape(-1))
    np.testing.assert_array_equal(np_of(got[2]), cnt)
    both(tp.unique_consecutive, x, dim=dim)


def test_unique_dim_layouts_nan_and_sizes():
    x = rows_with_repeats((6, 5), tp.float32, seed=4)
    x[2, 1] = float("nan")
    x[4, 1] = float("nan")  # NaN never equals itself: rows 2 and 4 stay distinct even if otherwise equal
    for xx in (x, x.t(), x.flip(0), x[:, ::2]):
        for d in (0, 1):
            both(tp.unique, xx, dim=d)
            both(tp.unique_consecutive, xx, dim=d)
    runs = tp.from_numpy(np.repeat(np.arange(4)[:, None] % 2, 3, axis=0).repeat(2, 1))  # runs of equal rows
    both(tp.unique_consecutive, runs, dim=0)
    both(tp.unique, tp.zeros((0, 3)), dim=0)  # no slices
    both(tp.unique, tp.zeros((4, 0)), dim=0)  # empty slices: all equal, one group
    both(tp.unique, tp.ones((1, 7)), dim=0)
    both(tp.unique, rows_with_repeats((40, 33), tp.int16, seed=5), dim=1)  # more than 32 columns
