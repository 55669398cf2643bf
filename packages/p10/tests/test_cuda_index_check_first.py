"""Index ops whose indices are checked before their main kernel runs, and x[idx]'s row path, on the GPU
(Note [Check first] in csrc/cuda/index_common.h; index_dim0 in ops_index_advanced.cpp), against the CPU op and
NumPy.

Covered, on both sides of the 8 MB threshold (the check inside the main kernel, or a kernel of its own first,
the main kernel then skipping bad indices without recording them):
gather, index_select and x[idx] give the CPU's values, and the CPU's error (RuntimeError for gather,
IndexError for the others) for an index past the end, a negative one (wrapped by x[idx], refused by the
others) and one at -size - 1; x[idx] with an int32, a 2-d, a
0-d, a strided and an empty index, an x with an empty row, and the forms that still take the offsets path (two
indices, a mask, a non-contiguous x). TP_CUDA_TEST_DEVICE=cpu runs the same checks with the CPU op alone (to
check the tests, not the kernels).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_device, np_of  # noqa: E402

pytestmark = needs_device

# (rows, cols) of a float32 matrix: results of 4 KB .. 16 MB, under and over the 8 MB threshold.
SMALL, LARGE = (64, 16), (4096, 1024)


def matrix(shape, seed=0) -> tp.Tensor:
    return tp.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def ints(shape, lo, hi, seed=1) -> tp.Tensor:
    return tp.from_numpy(np.random.default_rng(seed).integers(lo, hi, size=shape))


def same(got: tp.Tensor, cpu: tp.Tensor, want=None):
    assert got.device.type == DEV and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    np.testing.assert_array_equal(np_of(got), np_of(cpu))
    if want is not None:
        np.testing.assert_array_equal(np_of(got), want)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_gather_values_and_errors(shape):
    rows, cols = shape
    x = matrix(shape)
    idx = ints((rows, 512 if rows > 64 else 7), 0, cols)  # large: 2M elements, 24 MB of out and index
    want = np.take_along_axis(x.numpy(), idx.numpy(), 1)
    same(tp.gather(x.to(DEV), 1, idx.to(DEV)), tp.gather(x, 1, idx), want)
    for bad, shown in ((cols, cols), (-1, -1)):
        b = idx.clone()
        b[rows - 1, 3] = bad
        with pytest.raises(  # RuntimeError for gather, as PyTorch (Note [Index error types])
            RuntimeError, match=f"index {shown} is out of bounds for dimension 1 with size {cols}"
        ):
            tp.gather(x.to(DEV), 1, b.to(DEV))
    # a non-contiguous index (large: checked first by index_wrap's strided kernel)
    it = ints((idx.shape[1], rows), 0, cols).t()
    same(
        tp.gather(x.to(DEV), 1, it.to(DEV)), tp.gather(x, 1, it), np.take_along_axis(x.numpy(), it.numpy(), 1)
    )
    bad_t = it.t().clone()  # the same layout, one entry out of range: the strided check must catch it
    bad_t[3, rows - 1] = cols
    with pytest.raises(RuntimeError, match=f"index {cols} is out of bounds for dimension 1 with size {cols}"):
        tp.gather(x.to(DEV), 1, bad_t.t().to(DEV))


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_index_select_values_and_errors(shape):
    rows, cols = shape
    x = matrix(shape)
    idx = ints(2 * rows, 0, rows)  # large: 32 MB of rows
    same(tp.index_select(x.to(DEV), 0, idx.to(DEV)), tp.index_select(x, 0, idx), x.numpy()[idx.numpy()])
    strided = idx[::2]
    same(
        tp.index_select(x.to(DEV), 0, strided.to(DEV)),
        tp.index_select(x, 0, strided),
        x.numpy()[strided.numpy()],
    )
    for bad in (rows, -1):
        b = idx.clone()
        b[rows] = bad
        with pytest.raises(
            IndexError, match=f"index {bad} is out of bounds for dimension 0 with size {rows}"
        ):
            tp.index_select(x.to(DEV), 0, b.to(DEV))
    e = tp.index_select(x.to(DEV), 0, tp.zeros(0, dtype=tp.int64).to(DEV))
    assert tuple(e.shape) == (0, cols)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_index_one_tensor_on_dim0(shape):
    rows, cols = shape
    x = matrix(shape)
    xd = x.to(DEV)
    a = x.numpy()
    idx = ints(2 * rows, -rows, rows)  # negatives count from the end
    same(xd[idx.to(DEV)], x[idx], a[idx.numpy()])
    i32 = idx.to(tp.int32)
    same(xd[i32.to(DEV)], x[i32], a[idx.numpy()])
    two = ints((4, rows // 2), -rows, rows, seed=2)  # a 2-d index: out (4, rows / 2, cols)
    same(xd[two.to(DEV)], x[two], a[two.numpy()])
    strided = idx[1::3]
    same(xd[strided.to(DEV)], x[strided], a[strided.numpy()])
    zero_d = tp.tensor(-2)
    same(xd[zero_d.to(DEV)], x[zero_d], a[-2])
    same(xd[tp.zeros(0, dtype=tp.int64).to(DEV)], x[tp.zeros(0, dtype=tp.int64)])
    cube = matrix((rows // 4, 4, cols))  # rows of 4 x cols elements
    same(
        cube.to(DEV)[idx[:8].clamp(-(rows // 4), rows // 4 - 1).to(DEV)],
        cube[idx[:8].clamp(-(rows // 4), rows // 4 - 1)],
    )
    for bad in (rows, -rows - 1):
        b = idx.clone()
        b[rows // 2] = bad
        with pytest.raises(
            IndexError, match=f"index {bad} is out of bounds for dimension 0 with size {rows}"
        ):
            xd[b.to(DEV)]


def test_index_on_dim0_edge_cases():
    x = matrix((5, 3))
    a = x.numpy()
    cpu_idx = tp.tensor([4, -5, 0])  # a CPU index for a GPU tensor, as PyTorch allows
    same(x.to(DEV)[cpu_idx], x[cpu_idx], a[[4, -5, 0]])
    empty_rows = tp.zeros((5, 0))  # an empty result still checks its indices
    assert tuple(empty_rows.to(DEV)[tp.tensor([1, 2]).to(DEV)].shape) == (2, 0)
    with pytest.raises(IndexError, match="out of bounds"):
        empty_rows.to(DEV)[tp.tensor([1, 7]).to(DEV)]
    no_rows = tp.zeros((0, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        no_rows.to(DEV)[tp.tensor([0]).to(DEV)]
    v = tp.arange(6.0)  # 1-d: one element per row
    same(
        v.to(DEV)[tp.tensor([5, -1, 2]).to(DEV)],
        v[tp.tensor([5, -1, 2])],
        np.array([5.0, 5.0, 2.0], np.float32),
    )
    # the forms that keep the offsets path: two indices, a mask, a non-contiguous x, a float index
    i, j = tp.tensor([0, 4, -1]), tp.tensor([2, 0, 1])
    same(x.to(DEV)[i.to(DEV), j.to(DEV)], x[i, j], a[i.numpy(), j.numpy()])
    m = tp.tensor([True, False, True, False, True])
    same(x.to(DEV)[m.to(DEV)], x[m], a[m.numpy()])
    same(x.to(DEV).t()[tp.tensor([2, 0]).to(DEV)], x.t()[tp.tensor([2, 0])], a.T[[2, 0]])
    with pytest.raises(IndexError, match="tensors used as indices"):
        x.to(DEV)[tp.tensor([0.0]).to(DEV)]
