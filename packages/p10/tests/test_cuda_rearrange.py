"""flip, repeat, repeat_interleave (tensor counts), tril / triu (and in place) on the GPU
(csrc/cuda/ops_rearrange.cpp, rearrange.cu), against the CPU op and NumPy.

Covered: every dtype, several dims at once, non-contiguous inputs, size-0 and size-1 dims, 0-d inputs,
diagonals above and below and beyond the matrix, batches of matrices, repeat_interleave with zero counts and
the CUDA count scan (past one 1024-thread tile), its errors (negative counts, output_size), the causal masks
TinyLM builds, and the gradient of tril on CUDA. TP_CUDA_TEST_DEVICE=cpu runs the checks on the CPU alone.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, REAL, needs_device, np_of, same, small_ints  # noqa: E402

pytestmark = needs_device


def sample(shape, dtype=tp.float32, seed=0) -> tp.Tensor:
    return small_ints(shape, dtype, seed, ulo=1)  # uint8 from 1


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_flip_and_repeat(dtype):
    x = sample((3, 4, 5), dtype)
    for dims in ([0], [-1], [0, 2], [0, 1, 2]):
        same(tp.flip(x.to(DEV), dims), tp.flip(x, dims), np.flip(np_of(x), dims))
    xt = x.transpose(0, 2)
    same(tp.flip(xt.to(DEV), [1]), tp.flip(xt, [1]), np.flip(np_of(xt), 1))
    for reps in ([2, 1, 3], [1, 2, 1, 2]):
        same(x.to(DEV).repeat(*reps), x.repeat(*reps), np.tile(np_of(x), reps))
    same(xt.to(DEV).repeat(1, 2, 1), xt.repeat(1, 2, 1), np.tile(np_of(xt), (1, 2, 1)))


def test_flip_repeat_edges():
    for x in (tp.tensor(3.0), sample((0, 3)), sample((1, 4))):
        same(tp.flip(x.to(DEV), []), tp.flip(x, []))
        if x.dim():
            same(tp.flip(x.to(DEV), [0]), tp.flip(x, [0]))
    same(sample((2, 3)).to(DEV).repeat(0, 2), sample((2, 3)).repeat(0, 2))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        tp.flip(sample((2, 3)).to(DEV), [0, 0])


@pytest.mark.parametrize("dtype", [tp.float32, tp.int64, tp.bfloat16, tp.bool], ids=str)
def test_repeat_interleave_counts(dtype):
    x = sample((4, 3), dtype)
    counts = tp.tensor([2, 0, 3, 1])
    want = np.repeat(np_of(x), counts.numpy(), axis=0)
    same(x.to(DEV).repeat_interleave(counts.to(DEV), 0), x.repeat_interleave(counts, 0), want)
    c1 = tp.tensor([1, 0, 2], dtype=tp.int32)
    same(
        x.to(DEV).repeat_interleave(c1.to(DEV), 1),
        x.repeat_interleave(c1, 1),
        np.repeat(np_of(x), [1, 0, 2], 1),
    )
    same(
        x.to(DEV).repeat_interleave(tp.tensor(2).to(DEV)), x.repeat_interleave(tp.tensor(2))
    )  # 0-d: flattened


def test_repeat_interleave_long_and_errors():
    n = 3000  # the count scan crosses three 1024-wide tiles
    x = sample((n,), tp.float32)
    counts = tp.from_numpy(np.random.default_rng(1).integers(0, 4, size=n))
    same(
        x.to(DEV).repeat_interleave(counts.to(DEV)),
        x.repeat_interleave(counts),
        np.repeat(np_of(x), counts.numpy()),
    )
    with pytest.raises(RuntimeError, match="negative"):
        x[:3].to(DEV).repeat_interleave(tp.tensor([1, -1, 2]).to(DEV))
    with pytest.raises(RuntimeError, match="output_size"):
        x[:3].to(DEV).repeat_interleave(tp.tensor([1, 1, 2]).to(DEV), output_size=5)
    with pytest.raises(RuntimeError, match="same size"):
        x[:3].to(DEV).repeat_interleave(tp.tensor([1, 1]).to(DEV))


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_tril_triu(dtype):
    x = sample((2, 5, 7), dtype)
    for k in (-6, -1, 0, 2, 9):
        same(x.to(DEV).tril(k), x.tril(k), np.tril(np_of(x), k))
        same(x.to(DEV).triu(k), x.triu(k), np.triu(np_of(x), k))
    xt = x.transpose(1, 2)  # non-contiguous, kept layout
    same(xt.to(DEV).tril(1), xt.tril(1), np.tril(np_of(xt), 1))
    y, c = xt.clone().to(DEV), xt.clone()
    assert y.triu_(-1) is y
    same(y, c.triu_(-1), np.triu(np_of(xt), -1))
    same(y.tril_(0), c.tril_(0))


def test_tril_edges_masks_and_gradient():
    same(sample((0, 3)).to(DEV).tril(), sample((0, 3)).tril())
    same(sample((3, 1, 1)).to(DEV).triu(), sample((3, 1, 1)).triu())
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        sample((4,)).to(DEV).tril()
    causal = tp.ones((6, 6), dtype=tp.bool, device=DEV).tril()  # TinyLM's mask
    same(causal, tp.ones((6, 6), dtype=tp.bool).tril(), np.tril(np.ones((6, 6), bool)))
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    x = sample((4, 4))
    grads = []
    for dev in ("cpu", DEV):
        xd = x.to(dev).requires_grad_(True)
        w = tp.arange(16.0).reshape(4, 4).to(dev)
        grads.append(autograd.grad((xd.triu(1) * w).sum() + xd.tril().sum(), [xd])[0])
    same(grads[1], grads[0])


# ---- the row kernel of tril / triu (Note [Triangle rows] in rearrange.cu) ---------------------------------
@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.int8, tp.float64, tp.bool, tp.int64], ids=str)
def test_tril_rows_packs_and_partial_packs(dtype):
    # contiguous rows: 16-byte packs (cols * itemsize a multiple of 16), single elements otherwise; diagonals
    # that cut packs, keep or drop whole rows, and rows longer than one 256-thread team
    for shape in ((5, 8), (2, 3, 16), (7, 4), (3, 17), (40, 300), (2, 9, 1030)):
        x = sample(shape, dtype)
        xd, xn = x.to(DEV), np_of(x)
        for k in (-50, -3, 0, 1, 5, 400):
            same(xd.tril(k), x.tril(k), np.tril(xn, k))
            same(xd.triu(k), x.triu(k), np.triu(xn, k))
            y = xd.clone()
            assert y.tril_(k) is y
            same(y, x.tril(k), np.tril(xn, k))
    flat = sample((1 + 6 * 8,), dtype)  # rows that start one element off a 16-byte boundary
    xu, xn = flat.to(DEV)[1:].reshape(6, 8), np_of(flat)[1:].reshape(6, 8)
    same(xu.tril(-1), flat[1:].reshape(6, 8).tril(-1), np.tril(xn, -1))
    same(xu.triu(2), flat[1:].reshape(6, 8).triu(2), np.triu(xn, 2))


# ---- the strided copy (Note [Packed strided copy] in csrc/cuda/ops_copy.cpp) ------------------------------
@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.int8, tp.float64, tp.bool, tp.int64], ids=str)
def test_strided_copy_packs_and_flips(dtype):
    # [B, T, H, D] <-> [B, H, T, D] copies (D rows in 16-byte units where D * itemsize allows), slices whose
    # rows start off a 16-byte boundary, broadcast sources, permutes of every dim, and flips of the innermost
    # dim (reversed 16-byte packs) and of outer dims
    for shape in ((2, 5, 3, 8), (2, 3, 5, 6), (1, 4, 2, 16), (2, 2, 3, 1), (3, 64, 4, 32)):
        x = sample(shape, dtype)
        xd, xn = x.to(DEV), np_of(x)
        views = [
            (lambda t: t.transpose(1, 2), lambda n: n.transpose(0, 2, 1, 3)),
            (lambda t: t.permute(3, 2, 1, 0), lambda n: n.transpose(3, 2, 1, 0)),
            (lambda t: t[:, 1:], lambda n: n[:, 1:]),
            (lambda t: t[..., 1:], lambda n: n[..., 1:]),
            (lambda t, s=shape: t[:1].expand(*s), lambda n, s=shape: np.broadcast_to(n[:1], s)),
            (lambda t: t.transpose(1, 2)[:, :, 1:], lambda n: n.transpose(0, 2, 1, 3)[:, :, 1:]),
        ]
        for v, ref in views:
            same(v(xd).contiguous(), v(x).contiguous(), ref(xn))
        for dims in ([3], [0], [1, 3], [2]):
            same(tp.flip(xd, dims), tp.flip(x, dims), np.flip(xn, dims))
        same(tp.flip(xd[..., 1:], [3]), tp.flip(x[..., 1:], [3]), np.flip(xn[..., 1:], 3))
        same(
            tp.flip(xd.transpose(1, 2), [3]),
            tp.flip(x.transpose(1, 2), [3]),
            np.flip(xn.transpose(0, 2, 1, 3), 3),
        )
    y = tp.zeros((4, 6, 8), dtype=dtype, device=DEV)  # a strided destination
    src = sample((4, 8, 6), dtype)
    y.transpose(1, 2).copy_(src.to(DEV))
    np.testing.assert_array_equal(np_of(y), np_of(src).transpose(0, 2, 1))
