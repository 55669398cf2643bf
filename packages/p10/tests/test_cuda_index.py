"""gather, scatter (all forms and reductions), index_select, index_add_/copy_/fill_, take and put_ on the GPU
(csrc/cuda/ops_index.cpp, index.cu), against the CPU op and a NumPy reference.

Covered: every dtype, dims (negative too), non-contiguous self / index / src, duplicate indices accumulating
atomically (against np.add.at and a per-element loop), scatter_reduce's five reductions with and without
include_self, negative indices where allowed, 0-d and empty index tensors, out-of-range indices raising the
CPU's error from the device check (Note [Device index checks]; RuntimeError for gather/scatter, IndexError for
the others: Note [Index error types]), and gradients of gather / index_select
(index_add on CUDA) against the CPU's. Values are small integers, so float sums are exact in any order.
TP_CUDA_TEST_DEVICE=cpu runs the same checks with the CPU op alone (to check the tests, not the kernels).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, REAL, needs_device, np_of  # noqa: E402
from cuda_testing import small_ints as sample

pytestmark = needs_device


NUMERIC = [tp.uint8, tp.int8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64]


def index(shape, size, seed=1) -> tp.Tensor:
    return tp.from_numpy(np.random.default_rng(seed).integers(0, size, size=shape))


def same(got: tp.Tensor, cpu: tp.Tensor, want=None, tol=0.0):
    assert got.device.type == DEV and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    g = np_of(got)
    np.testing.assert_allclose(g.astype(np.float64), np_of(cpu).astype(np.float64), rtol=tol, atol=tol)
    if want is not None:
        np.testing.assert_allclose(g.astype(np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


# ---- gather ----------------------------------------------------------------------------------------------
def np_gather(x, dim, idx):
    out = np.empty(idx.shape, x.dtype)
    for p in np.ndindex(idx.shape):
        q = list(p)
        q[dim] = idx[p]
        out[p] = x[tuple(q)]
    return out


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_gather_every_dtype_and_dim(dtype):
    x = sample((4, 5, 6), dtype)
    for dim in (0, 1, 2, -1):
        shape = [3, 4, 5]
        shape[dim] = 7
        idx = index(tuple(shape), x.shape[dim], seed=dim + 5)
        want = np_gather(np_of(x), dim, idx.numpy())
        same(tp.gather(x.to(DEV), dim, idx.to(DEV)), tp.gather(x, dim, idx), want)


def test_gather_layouts():
    x = sample((6, 8))
    idx = index((8, 5), 6)
    for xs, ix in [(x.t(), idx[:, :5]), (x[::2], idx[:3] % 3), (x, idx.t()[:, :6])]:
        want = np_gather(np_of(xs), 0, ix.numpy())
        same(tp.gather(xs.to(DEV), 0, ix.to(DEV)), tp.gather(xs, 0, ix), want)
    # 0-d index of a 1-D tensor, and empty indices
    same(tp.gather(x[0].to(DEV), 0, tp.tensor(3).to(DEV)), tp.gather(x[0], 0, tp.tensor(3)))
    e = tp.zeros((0, 8), dtype=tp.int64)
    same(tp.gather(x.to(DEV), 0, e.to(DEV)), tp.gather(x, 0, e))


def test_gather_errors():
    x = sample((3, 4)).to(DEV)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        tp.gather(x, 0, tp.tensor([[0, 3]]).to(DEV))
    with pytest.raises(RuntimeError, match="out of bounds"):
        tp.gather(x, 1, tp.tensor([[-1]]).to(DEV))
    with pytest.raises(RuntimeError, match="int64"):
        tp.gather(x, 1, tp.tensor([[0]], dtype=tp.int32).to(DEV))


# ---- scatter ---------------------------------------------------------------------------------------------
def np_scatter(self_np, dim, idx, src, combine):
    out = self_np.astype(np.float64).copy()
    for p in np.ndindex(idx.shape):
        q = list(p)
        q[dim] = idx[p]
        out[tuple(q)] = combine(out[tuple(q)], src if np.isscalar(src) else src[p])
    return out


def unique_rows(shape, size, seed):
    """An index whose entries along dim 0 never repeat within a column (a plain scatter is then defined)."""
    rng = np.random.default_rng(seed)
    cols = [rng.permutation(size)[: shape[0]] for _ in range(int(np.prod(shape[1:])))]
    return tp.from_numpy(np.stack(cols, axis=-1).reshape(shape))


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_scatter_src_and_value(dtype):
    x, src = sample((6, 5), dtype, 1), sample((4, 5), dtype, 2)
    idx = unique_rows((4, 5), 6, 3)
    want = np_scatter(np_of(x), 0, idx.numpy(), np_of(src), lambda a, b: b)
    same(x.to(DEV).scatter(0, idx.to(DEV), src.to(DEV)), x.scatter(0, idx, src), want)
    want = np_scatter(np_of(x), 0, idx.numpy(), 1, lambda a, b: b)
    same(x.to(DEV).scatter(0, idx.to(DEV), 1), x.scatter(0, idx, 1), want)
    y = x.clone().to(DEV)
    assert y.scatter_(0, idx.to(DEV), src.to(DEV)) is y  # in place


@pytest.mark.parametrize("dtype", NUMERIC + [tp.int16], ids=str)
def test_scatter_add_duplicates(dtype):
    # every target hit several times: atomic adds (CAS loops for 8/16-bit types) must not lose any
    x, src = sample((3, 4), dtype, 4, 0, 3), sample((50, 4), dtype, 5, 0, 3)
    idx = index((50, 4), 3, 6)
    want = np_scatter(np_of(x), 0, idx.numpy(), np_of(src), lambda a, b: a + b)
    if dtype in (tp.uint8, tp.int8):
        want = np.asarray(want, np.int64).astype(np_of(x).dtype)  # wraps, as on the CPU
    same(x.to(DEV).scatter_add(0, idx.to(DEV), src.to(DEV)), x.scatter_add(0, idx, src), want)
    same(
        x.to(DEV).scatter(0, idx.to(DEV), src.to(DEV), reduce="add"),
        x.scatter(0, idx, src, reduce="add"),
        want,
    )


@pytest.mark.parametrize(
    "dtype", [tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str
)
def test_scatter_multiply(dtype):
    x = tp.from_numpy(np.array([[1, -2, 2], [2, 1, -1]])).to(dtype)
    src = tp.from_numpy(np.random.default_rng(7).choice([-2, -1, 1, 2], size=(6, 3))).to(dtype)
    idx = index((6, 3), 2, 8)
    want = np_scatter(np_of(x), 0, idx.numpy(), np_of(src), lambda a, b: a * b)
    same(
        x.to(DEV).scatter(0, idx.to(DEV), src.to(DEV), reduce="multiply"),
        x.scatter(0, idx, src, reduce="multiply"),
        want,
    )


def np_scatter_reduce(self_np, dim, idx, src, reduce, include_self, integer):
    out = self_np.astype(np.float64).copy()
    groups: dict = {}
    for p in np.ndindex(idx.shape):
        q = list(p)
        q[dim] = idx[p]
        groups.setdefault(tuple(q), []).append(float(src[p]))
    for q, vals in groups.items():
        vals = vals + ([float(self_np[q])] if include_self else [])
        if reduce == "sum":
            out[q] = sum(vals)
        elif reduce == "prod":
            out[q] = np.prod(vals)
        elif reduce == "amax":
            out[q] = max(vals)
        elif reduce == "amin":
            out[q] = min(vals)
        else:
            out[q] = np.floor_divide(sum(vals), len(vals)) if integer else sum(vals) / len(vals)
    return out


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize(
    "dtype", [tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str
)
def test_scatter_reduce(dtype, reduce, include_self):
    rng = np.random.default_rng(9)
    pick = [-2, -1, 1, 2] if reduce == "prod" else list(range(-5, 6))
    x = tp.from_numpy(rng.choice(pick, size=(4, 3))).to(dtype)
    src = tp.from_numpy(rng.choice(pick, size=(2, 7))).to(dtype)
    idx = index((2, 5), 3, 10)  # dim 1: positions 3..6 of src are not read (index is smaller than src)
    integer = not dtype.is_floating_point
    want = np_scatter_reduce(np_of(x), 1, idx.numpy(), np_of(src), reduce, include_self, integer)
    tol = 1e-2 if dtype in (tp.float16, tp.bfloat16) else 1e-6
    got = x.to(DEV).scatter_reduce(1, idx.to(DEV), src.to(DEV), reduce, include_self=include_self)
    same(got, x.scatter_reduce(1, idx, src, reduce, include_self=include_self), want, tol)


def test_scatter_reduce_nan_wins_in_amax():
    x = tp.tensor([0.0, 0.0])
    src = tp.tensor([1.0, float("nan"), 2.0])
    idx = tp.tensor([0, 0, 1])
    got = x.to(DEV).scatter_reduce(0, idx.to(DEV), src.to(DEV), "amax")
    assert np.isnan(np_of(got)[0]) and np_of(got)[1] == 2.0


def test_scatter_errors():
    x = sample((3, 4)).to(DEV)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 1 with size 4"):
        x.scatter_(1, tp.tensor([[5]]).to(DEV), sample((1, 1)).to(DEV))
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_add_(0, tp.tensor([[-1]]).to(DEV), sample((1, 1)).to(DEV))
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, tp.tensor([[0]]).to(DEV), sample((1, 1)).to(DEV), "max")
    with pytest.raises(RuntimeError, match="dtype"):
        x.scatter_(0, tp.tensor([[0]]).to(DEV), sample((1, 1), tp.float64).to(DEV))


# ---- index_select / index_add_ / index_copy_ / index_fill_ ------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_index_select(dtype):
    x = sample((5, 6, 3), dtype)
    for dim in (0, 1, -1):
        for idx in (
            tp.tensor([4, 0, 0, 2]),
            tp.tensor([1], dtype=tp.int32),
            tp.tensor(2),
            tp.zeros(0, dtype=tp.int64),
        ):
            i = idx.clamp(max=x.shape[dim] - 1) if idx.numel() else idx
            want = np.take(np_of(x), i.numpy().astype(np.int64).reshape(-1), axis=dim)
            same(tp.index_select(x.to(DEV), dim, i.to(DEV)), tp.index_select(x, dim, i), want)
    xt = x.transpose(0, 2)  # non-contiguous self, strided index
    idx = tp.tensor([0, 9, 2, 9, 1])[::2]
    same(
        tp.index_select(xt.to(DEV), 1, idx.to(DEV)),
        tp.index_select(xt, 1, idx),
        np.take(np_of(xt), [0, 2, 1], axis=1),
    )
    a, b = sample((7, 8), dtype, 3), sample((9, 5), dtype, 4)
    i = tp.tensor([0, 5, 5, 1, 4])
    for rows, rows_dev in ((a, a.to(DEV)), (a[1:], a.to(DEV)[1:]), (b[2:], b.to(DEV)[2:])):
        # whole rows: 16-byte units where rows and pointers allow, narrower ones where they do not
        same(tp.index_select(rows_dev, 0, i.to(DEV)), tp.index_select(rows, 0, i), np_of(rows)[i.numpy()])
    s = tp.tensor(3.0)  # 0-d self
    same(tp.index_select(s.to(DEV), 0, tp.tensor([0]).to(DEV)), tp.index_select(s, 0, tp.tensor([0])))


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.int8, tp.float64, tp.bool], ids=str)
def test_index_select_row_teams(dtype):
    # Note [Row gathers]: rows of 1 unit (a team of one thread) up to several 256-thread passes, an outer dim
    # (rows o * nidx + j), and a strided index; float32 rows of 960 / 1024 / 1028 elements (240 / 256 / 257
    # 16-byte units) sit at the warp team's limit of 8 units per thread: some lanes take the batch of 8
    # loads, some the batch of 4 and the tail; all lanes one full batch; a 64-thread team
    idx = tp.tensor([5, 0, 0, 2, 7, 1, 9, 9])[::2]
    shapes = ((10,), 0), ((10, 3), 0), ((10, 960), 0), ((10, 1024), 0), ((10, 1028), 0), ((10, 1100), 0)
    for shape, dim in shapes + (((3, 10, 8), 1), ((2, 10, 4, 5), 1)):
        x = sample(shape, dtype)
        want = np.take(np_of(x), idx.numpy(), axis=dim)
        same(tp.index_select(x.to(DEV), dim, idx.to(DEV)), tp.index_select(x, dim, idx), want)
    with pytest.raises(IndexError, match="out of bounds"):
        tp.index_select(sample((10, 1100), dtype).to(DEV), 0, tp.tensor([1, 10]).to(DEV))


def test_index_select_errors():
    x = sample((3, 4)).to(DEV)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        tp.index_select(x, 1, tp.tensor([0, 4]).to(DEV))
    with pytest.raises(IndexError, match="out of bounds"):
        tp.index_select(x, 0, tp.tensor([-1]).to(DEV))
    with pytest.raises(IndexError, match="vector"):
        tp.index_select(x, 0, tp.tensor([[0]]).to(DEV))


@pytest.mark.parametrize(
    "dtype", [tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str
)
def test_index_add_duplicates(dtype):
    x, src = sample((4, 5), dtype, 1), sample((4, 30), dtype, 2)
    idx = index((30,), 5, 3)
    want = np_of(x).astype(np.float64)
    np.add.at(want, (slice(None), idx.numpy()), 2 * np_of(src).astype(np.float64))
    got = x.to(DEV).index_add(1, idx.to(DEV), src.to(DEV), alpha=2)
    same(got, x.index_add(1, idx, src, alpha=2), want)
    y = x.clone().to(DEV)
    y.index_add_(1, idx.to(DEV), src.to(DEV), alpha=2)
    same(y, x.index_add(1, idx, src, alpha=2), want)


def test_index_copy_and_fill():
    x, src = sample((5, 3), tp.float32, 1), sample((3, 3), tp.float32, 2)
    idx = tp.tensor([4, 0, 2])
    want = np_of(x).copy()
    want[idx.numpy()] = np_of(src)
    same(x.to(DEV).index_copy(0, idx.to(DEV), src.to(DEV)), x.index_copy(0, idx, src), want)
    want = np_of(x).copy()
    want[:, [2, 0]] = -7  # negative indices count from the end in index_fill
    got = x.to(DEV).index_fill(1, tp.tensor([-1, 0]).to(DEV), -7)
    same(got, x.index_fill(1, tp.tensor([-1, 0]), -7), want)
    with pytest.raises(IndexError, match="out of bounds"):
        x.to(DEV).index_fill_(1, tp.tensor([3]).to(DEV), 0)
    with pytest.raises(IndexError, match="out of bounds"):
        x.to(DEV).index_copy_(0, tp.tensor([5, 0, 1]).to(DEV), src.to(DEV))


# ---- take / put_ -----------------------------------------------------------------------------------------
def test_take_and_put():
    x = sample((3, 4), tp.float32, 1)
    idx = tp.tensor([[0, -1], [11, 5]])
    want = np_of(x).reshape(-1)[idx.numpy()]
    same(tp.take(x.to(DEV), idx.to(DEV)), tp.take(x, idx), want)
    same(tp.take(x.t().to(DEV), idx.to(DEV)), tp.take(x.t(), idx), np_of(x.t()).reshape(-1)[idx.numpy()])
    with pytest.raises(IndexError, match="out of bounds"):
        tp.take(x.to(DEV), tp.tensor([12]).to(DEV))
    # put_ with duplicates, accumulating
    src = sample((20,), tp.float32, 3)
    pidx = tp.from_numpy(np.random.default_rng(4).integers(-12, 12, size=20))
    want = np_of(x).reshape(-1).astype(np.float64)
    np.add.at(want, pidx.numpy(), np_of(src))
    for base in (x, x.t()):  # contiguous and not (put_ then writes through a contiguous copy)
        w = np_of(base).reshape(-1).astype(np.float64)
        np.add.at(w, pidx.numpy(), np_of(src))
        y = base.clone().to(DEV)
        y.put_(pidx.to(DEV), src.to(DEV), accumulate=True)
        c = base.clone()
        c.put_(pidx, src, accumulate=True)
        same(y, c, w.reshape(tuple(base.shape)))
    with pytest.raises(IndexError, match="out of bounds"):
        x.to(DEV).put_(tp.tensor([-13]).to(DEV), tp.tensor([1.0]).to(DEV))


# ---- gradients -------------------------------------------------------------------------------------------
def test_gradients_match_the_cpu():
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    x = sample((5, 4), tp.float32, 1)
    idx = tp.tensor([3, 3, 0, 4, 3])
    g2 = tp.tensor([[0, 1, 1, 0], [2, 2, 4, 4]])
    for dev in ("cpu", DEV):
        xd = x.to(dev).requires_grad_(True)
        out = tp.index_select(xd, 0, idx.to(dev)).sum() + (tp.gather(xd, 0, g2.to(dev)) * 3).sum()
        (grad,) = autograd.grad(out, [xd])
        if dev == "cpu":
            want = grad
        else:
            same(grad, want)
