"""Indexing with tensors on the GPU (csrc/cuda/ops_index_advanced.cpp, index.cu): x[idx], x[mask], x[idx] = v
(accumulate=True with duplicates), nonzero / argwhere, masked_fill, masked_select, masked_scatter, and the
embedding lookup with its gradient (index_add on CUDA), against the CPU op and NumPy's fancy indexing.

Covered: every dtype, negative indices, several index tensors broadcast together, indexed dims not next to
each other (moved to the front, PyTorch's rule), bool and uint8 masks, CPU index tensors for a CUDA tensor,
empty indices and masks, nonzero past one block (4096 elements) and on NaN, out-of-range errors, and the
gradients of x[idx] / embedding against the CPU's. TP_CUDA_TEST_DEVICE=cpu runs the checks on the CPU alone.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, REAL, needs_device, np_of, same, small_ints  # noqa: E402

pytestmark = needs_device


# ---- index.Tensor ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_index_every_dtype(dtype):
    x = small_ints((4, 5, 6), dtype)
    a, b = np.array([[0, -1], [3, 2]]), np.array([4, -5])
    xd, xn = x.to(DEV), np_of(x)
    cases = [
        (lambda t, i, j: t[i], lambda n: n[a]),
        (lambda t, i, j: t[:, j], lambda n: n[:, b]),
        (lambda t, i, j: t[i, j], lambda n: n[a, b]),  # broadcast together
        (lambda t, i, j: t[i, :, j[:1]], lambda n: n[a, :, b[:1]]),  # not adjacent: the index dims go first
        (lambda t, i, j: t[1:, j, ::2], lambda n: n[1:, b, ::2]),
    ]
    ia, ib = tp.from_numpy(a), tp.from_numpy(b)
    for f, ref in cases:
        same(f(xd, ia.to(DEV), ib.to(DEV)), f(x, ia, ib), ref(xn))
        same(f(xd, ia, ib), f(x, ia, ib))  # CPU indices for a CUDA tensor


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.int8, tp.float64, tp.bool, tp.int64], ids=str)
def test_index_rows(dtype):
    # x[idx] on the leading dims with the rest contiguous: a thread team per row (Note [Row gathers] in
    # index.cu), in 16-byte units where rows, strides and pointers allow; rows of 1 unit up to several teams
    i, j = tp.tensor([[3, 0], [-1, 3]]), tp.tensor([1, -2])
    for shape in ((6,), (6, 1), (6, 3), (6, 8), (6, 2, 8), (6, 960), (6, 1028), (6, 1100)):
        x = small_ints(shape, dtype)
        xd, xn = x.to(DEV), np_of(x)
        same(xd[i.to(DEV)], x[i], xn[i.numpy()])
        same(xd[1:][i.to(DEV) % 5], x[1:][i % 5], xn[1:][i.numpy() % 5])  # rows off a 16-byte boundary
        if len(shape) > 1:
            jj = j % shape[1]
            same(
                xd[i.to(DEV), jj.to(DEV)], x[i, jj], xn[i.numpy(), jj.numpy()]
            )  # two indices: offsets summed
            same(xd[:, :1][i.to(DEV)], x[:, :1][i], xn[:, :1][i.numpy()])  # a row of a wider tensor
            xt, nt = xd.transpose(0, 1), np.swapaxes(xn, 0, 1)  # rest not contiguous: the general gather
            same(xt[jj.to(DEV)], x.transpose(0, 1)[jj], nt[jj.numpy()])
        mask = tp.tensor([True, False, True, True, False, True])
        same(xd[mask.to(DEV)], x[mask], xn[mask.numpy()])


def test_index_masks_and_empties():
    x = small_ints((4, 5), tp.float32)
    m = x > 0
    same(x.to(DEV)[m.to(DEV)], x[m], np_of(x)[np_of(m)])
    same(x.to(DEV)[m.to(DEV).to(tp.uint8)], x[m.to(tp.uint8)])
    row = tp.tensor([True, False, True, True])
    same(x.to(DEV)[row.to(DEV)], x[row], np_of(x)[np_of(row)])
    same(x.to(DEV)[:, m[0].to(DEV)], x[:, m[0]], np_of(x)[:, np_of(m[0])])
    none = tp.zeros((4, 5), dtype=tp.bool)
    same(x.to(DEV)[none.to(DEV)], x[none])
    e = tp.zeros(0, dtype=tp.int64)
    same(x.to(DEV)[e.to(DEV)], x[e])
    same(tp.masked_select(x.to(DEV), m.to(DEV)), tp.masked_select(x, m))


def test_index_errors():
    x = small_ints((3, 4)).to(DEV)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[tp.tensor([0, 3]).to(DEV)]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        x[:, tp.tensor([-5]).to(DEV)]
    with pytest.raises(IndexError, match="mask"):
        x[tp.tensor([True, False]).to(DEV)]


# ---- index_put_ ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_index_put(dtype):
    x, v = small_ints((5, 4), dtype, 1), small_ints((3, 4), dtype, 2)
    i = np.array([4, -5, 2])
    want = np_of(x).copy()
    want[i] = np_of(v)
    y, c = x.clone().to(DEV), x.clone()
    y[tp.from_numpy(i).to(DEV)] = v.to(DEV)
    c[tp.from_numpy(i)] = v
    same(y, c, want)
    y[y > 0] = 0 if dtype is not tp.bool else False  # a mask and a number
    c[c > 0] = 0 if dtype is not tp.bool else False
    same(y, c)


@pytest.mark.parametrize(
    "dtype", [tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str
)
def test_index_put_accumulate_duplicates(dtype):
    x = small_ints((6, 3), dtype, 1)
    i = np.random.default_rng(3).integers(-6, 6, size=40)
    v = small_ints((40, 3), dtype, 4)
    want = np_of(x).astype(np.float64)
    np.add.at(want, i, np_of(v))
    got = x.to(DEV).index_put((tp.from_numpy(i).to(DEV),), v.to(DEV), accumulate=True)
    same(got, x.index_put((tp.from_numpy(i),), v, accumulate=True), want)
    j = tp.tensor([0, 0, 2])  # two index tensors, a broadcast value
    got = x.to(DEV).index_put((j.to(DEV), j.to(DEV)), tp.tensor(1).to(dtype).to(DEV), accumulate=True)
    same(got, x.index_put((j, j), tp.tensor(1).to(dtype), accumulate=True))


def test_index_put_errors():
    x = small_ints((3, 4)).to(DEV)
    with pytest.raises(IndexError, match="out of bounds"):
        x[tp.tensor([3]).to(DEV)] = 1.0
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[tp.tensor([0, 1]).to(DEV)] = tp.ones((3, 4)).to(DEV)


# ---- nonzero ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5), (2, 3, 4), (5000,), (70, 130), (3, 1, 4, 1, 2)])
def test_nonzero(shape):
    x = small_ints(shape, tp.float32, seed=len(shape))
    want = np.argwhere(np_of(x))
    same(tp.nonzero(x.to(DEV)), tp.nonzero(x), want.reshape(-1, len(shape)))
    same(tp.argwhere(x.to(DEV)), tp.argwhere(x))
    for dtype in (tp.bool, tp.uint8, tp.int64, tp.float16, tp.bfloat16):
        same(tp.nonzero(x.to(dtype).to(DEV)), tp.nonzero(x.to(dtype)))


def test_nonzero_unaligned_and_many_dims():
    # a bool tensor whose data starts off a 16-byte boundary and ends mid-chunk (the byte-by-byte loads), and
    # 7 dims (past the 32-bit coordinate path's 6)
    x = small_ints((5003,), tp.bool, seed=3)
    same(tp.nonzero(x.to(DEV)[3:]), tp.nonzero(x[3:]), np.argwhere(np_of(x)[3:]))
    y = small_ints((2, 3, 1, 2, 3, 2, 5), tp.float32, seed=4)
    same(tp.nonzero(y.to(DEV)), tp.nonzero(y), np.argwhere(np_of(y)))


def test_nonzero_nan_0d_and_strided():
    x = tp.tensor([0.0, float("nan"), 0.0, 2.0])
    same(tp.nonzero(x.to(DEV)), tp.nonzero(x), [[1], [3]])  # NaN != 0
    same(tp.nonzero(tp.tensor(5).to(DEV)), tp.nonzero(tp.tensor(5)))
    same(tp.nonzero(tp.tensor(0).to(DEV)), tp.nonzero(tp.tensor(0)))
    y = small_ints((6, 8)).t()[::2]
    same(tp.nonzero(y.to(DEV)), tp.nonzero(y), np.argwhere(np_of(y)))


# ---- masked_fill / masked_scatter ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_masked_fill(dtype):
    x = small_ints((4, 6), dtype)
    m = small_ints((6,), tp.bool, 3)  # broadcast over rows
    val = True if dtype is tp.bool else 5
    want = np.where(np_of(m), val, np_of(x))
    same(x.to(DEV).masked_fill(m.to(DEV), val), x.masked_fill(m, val), want)
    xt = x.t().clone().to(DEV)  # non-contiguous self, in place
    xt.t().masked_fill_(m.to(DEV), val)
    same(xt.t(), x.masked_fill(m, val), want)
    same(x.to(DEV).masked_fill(m.to(DEV), tp.tensor(val).to(DEV)), x.masked_fill(m, tp.tensor(val)))


def test_masked_fill_attention_mask_and_errors():
    s = tp.from_numpy(np.random.default_rng(0).standard_normal((2, 5, 5)).astype(np.float32))
    causal = tp.ones((5, 5), dtype=tp.bool).triu(1)
    got = s.to(DEV).masked_fill(causal.to(DEV), float("-inf"))
    same(got, s.masked_fill(causal, float("-inf")), np.where(np_of(causal), -np.inf, np_of(s)))
    with pytest.raises(RuntimeError, match="boolean masks"):
        s.to(DEV).masked_fill(causal.to(tp.uint8).to(DEV), 0.0)


def test_masked_scatter():
    x, m = small_ints((3, 4), tp.float32, 1), small_ints((3, 4), tp.bool, 2)
    src = small_ints((20,), tp.float32, 3)
    want = np_of(x).copy()
    want[np_of(m)] = np_of(src)[: int(np_of(m).sum())]
    same(x.to(DEV).masked_scatter(m.to(DEV), src.to(DEV)), x.masked_scatter(m, src), want)
    row = tp.tensor([True, False, False, True])  # broadcast mask
    same(x.to(DEV).masked_scatter(row.to(DEV), src.to(DEV)), x.masked_scatter(row, src))
    with pytest.raises(RuntimeError, match="at least"):
        x.to(DEV).masked_scatter(tp.ones((3, 4), dtype=tp.bool).to(DEV), src[:5].to(DEV))


# ---- embedding and gradients -----------------------------------------------------------------------------
def test_embedding_forward():
    w = small_ints((10, 8), tp.float32)
    idx = tp.tensor([[1, 9, 1], [0, 0, 3]])
    same(tp.embedding(w.to(DEV), idx.to(DEV)), tp.embedding(w, idx), np_of(w)[idx.numpy()])
    same(
        tp.embedding(w.to(tp.bfloat16).to(DEV), idx.to(tp.int32).to(DEV)),
        tp.embedding(w.to(tp.bfloat16), idx),
    )
    with pytest.raises(IndexError, match="out of bounds"):
        tp.embedding(w.to(DEV), tp.tensor([10]).to(DEV))


def test_gradients_match_the_cpu():
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    w = small_ints((10, 8), tp.float32)
    idx = tp.tensor([[1, 9, 1], [0, 0, 3]])
    x = small_ints((4, 5), tp.float32, 2)
    grads = {}
    for dev in ("cpu", DEV):
        wd, xd = w.to(dev).requires_grad_(True), x.to(dev).requires_grad_(True)
        e = tp.embedding(wd, idx.to(dev))
        out = (e * e).sum() + xd[tp.tensor([3, 3, -1]).to(dev)].sum() + xd[xd > 0].sum()
        grads[dev] = autograd.grad(out, [wd, xd])
    for got, want in zip(grads[DEV], grads["cpu"], strict=True):
        same(got, want)
