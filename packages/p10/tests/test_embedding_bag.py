"""embedding_bag and _embedding_bag (kernels/embedding_bag.cpp) against a float64 NumPy loop over bags.

Checked: the three modes over 1-D input with offsets (empty bags, one big bag, include_last_offset) and 2-D
fixed-size bags, per_sample_weights, padding_idx (positive and negative), max_norm (renormalising weight in
place), int32/int64 indices and offsets, every float dtype, non-contiguous weights, the auxiliary outputs of
_embedding_bag, meta, a threaded >= 1M-element case and the error messages. Where PyTorch is installed the
results are also compared with torch.nn.functional.embedding_bag.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def bag_bounds(n, offsets, include_last_offset):
    B = len(offsets) - (1 if include_last_offset else 0)
    return [(offsets[b], offsets[b + 1] if b + 1 < len(offsets) else n) for b in range(B)]


def reference_bag(weight, indices, offsets, mode, psw=None, include_last_offset=False, padding_idx=None):
    """The bags of Note [Bags], one at a time, in float64."""
    w = np.asarray(weight, np.float64)
    out = []
    for s, e in bag_bounds(len(indices), offsets, include_last_offset):
        take = [i for i in range(s, e) if indices[i] != padding_idx]
        if not take:
            out.append(np.zeros(w.shape[1]))
            continue
        rows = w[indices[take]]
        if psw is not None:
            rows = rows * np.asarray(psw, np.float64)[take, None]
        out.append({"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode])
    return np.array(out).reshape(-1, w.shape[1])


def run(weight, indices, offsets=None, **kw):
    t = tp.tensor
    return tp.embedding_bag(t(indices), t(weight), None if offsets is None else t(offsets), **kw)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize(
    "offsets",
    [[0, 2, 2, 5, 9], [0], [0, 0, 0], [0, 9], [0, 1, 2, 3, 4, 5, 6, 7, 8]],
    ids=lambda o: str(len(o)),
)
def test_one_d_with_offsets(mode, offsets):
    weight = rng.standard_normal((10, 6)).astype(np.float32)
    indices = np.array([1, 3, 3, 0, 9, 2, 5, 5, 7])
    got = run(weight, indices, np.array(offsets), mode=mode)
    want = reference_bag(weight, indices, offsets, mode)
    assert got.shape == want.shape and got.dtype == tp.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_two_d_fixed_bags(mode):
    weight = rng.standard_normal((20, 5)).astype(np.float32)
    idx = rng.integers(0, 20, (7, 4))
    got = run(weight, idx, mode=mode)
    want = reference_bag(weight, idx.reshape(-1), list(range(0, 28, 4)), mode)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    assert run(weight, np.zeros((0, 4), np.int64), mode=mode).shape == (0, 5)
    # bags of length 0: every bag empty, so zeros (PyTorch's arange(0, 0, 0) raises here)
    np.testing.assert_array_equal(
        run(weight, np.zeros((3, 0), np.int64), mode=mode).numpy(), np.zeros((3, 5))
    )


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_include_last_offset(mode):
    weight = rng.standard_normal((10, 3)).astype(np.float32)
    indices = np.array([4, 1, 1, 8, 0, 2])
    for offsets in ([0, 2, 3, 6], [0, 2, 2, 4], [0]):
        got = run(weight, indices, np.array(offsets), mode=mode, include_last_offset=True)
        want = reference_bag(weight, indices, offsets, mode, include_last_offset=True)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


def test_per_sample_weights():
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    indices = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    psw = rng.standard_normal(8).astype(np.float32)
    got = run(weight, indices, np.array([0, 3, 3, 6]), mode="sum", per_sample_weights=tp.tensor(psw))
    want = reference_bag(weight, indices, [0, 3, 3, 6], "sum", psw)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    idx2 = indices.reshape(2, 4)
    got = run(weight, idx2, mode="sum", per_sample_weights=tp.tensor(psw.reshape(2, 4)))
    np.testing.assert_allclose(
        got.numpy(), reference_bag(weight, indices, [0, 4], "sum", psw), rtol=1e-6, atol=1e-6
    )
    # a strided per_sample_weights
    big = np.repeat(psw, 2)
    got = run(weight, indices, np.array([0, 3]), mode="sum", per_sample_weights=tp.tensor(big)[::2])
    np.testing.assert_allclose(
        got.numpy(), reference_bag(weight, indices, [0, 3], "sum", psw), rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [2, -8, 0])
def test_padding_idx(mode, padding_idx):
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    indices = np.array([2, 2, 1, 2, 0, 2, 5, 0])
    offsets = [0, 2, 5, 8]
    got = run(weight, indices, np.array(offsets), mode=mode, padding_idx=padding_idx)
    want = reference_bag(weight, indices, offsets, mode, padding_idx=padding_idx % 10)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


def test_max_norm_renormalises_weight_in_place():
    weight = (rng.standard_normal((6, 4)) * 3).astype(np.float32)
    w = tp.tensor(weight)
    indices = np.array([0, 2, 2, 5])
    got = tp.embedding_bag(tp.tensor(indices), w, tp.tensor(np.array([0, 2])), max_norm=1.5, mode="sum")
    renormed = weight.astype(np.float64).copy()
    for r in {0, 2, 5}:
        norm = np.linalg.norm(renormed[r])
        if norm > 1.5:
            renormed[r] *= 1.5 / (norm + 1e-7)
    np.testing.assert_allclose(w.numpy(), renormed, rtol=1e-6)  # only the rows looked up changed
    np.testing.assert_allclose(
        got.numpy(), reference_bag(renormed, indices, [0, 2], "sum"), rtol=1e-6, atol=1e-6
    )
    w1 = tp.tensor(weight)
    tp.embedding_bag(tp.tensor(indices), w1, tp.tensor(np.array([0])), max_norm=2.0, norm_type=1.0)
    n1 = np.abs(weight[0]).sum()
    np.testing.assert_allclose(w1.numpy()[0], weight[0] * (2.0 / (n1 + 1e-7) if n1 > 2 else 1.0), rtol=1e-6)
    np.testing.assert_array_equal(w1.numpy()[1], weight[1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_dtypes_and_index_types(dtype, mode):
    weight = tp.tensor(rng.standard_normal((12, 5))).to(getattr(tp, dtype))
    indices = rng.integers(0, 12, 20)
    offsets = np.array([0, 4, 4, 11])
    exact = weight.to(tp.float64).numpy()
    want = reference_bag(exact, indices, offsets, mode)
    tol = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    for it in (tp.int64, tp.int32):
        got = tp.embedding_bag(tp.tensor(indices).to(it), weight, tp.tensor(offsets).to(it), mode=mode)
        assert got.dtype == weight.dtype
        np.testing.assert_allclose(got.to(tp.float64).numpy(), want, rtol=tol, atol=tol)


def test_non_contiguous_weight():
    base = rng.standard_normal((5, 12)).astype(np.float32)
    w = tp.tensor(base).t()  # [12, 5], column-major
    indices = np.array([0, 11, 3, 3, 7])
    got = tp.embedding_bag(tp.tensor(indices), w, tp.tensor(np.array([0, 2])), mode="mean")
    np.testing.assert_allclose(got.numpy(), reference_bag(base.T, indices, [0, 2], "mean"), rtol=1e-6)
    ws = tp.tensor(rng.standard_normal((12, 10)).astype(np.float32))[:, ::2]
    got = tp.embedding_bag(tp.tensor(indices), ws, tp.tensor(np.array([0, 2])), mode="max")
    np.testing.assert_allclose(got.numpy(), reference_bag(ws.numpy(), indices, [0, 2], "max"), rtol=1e-6)


def test_nan_in_max_mode():
    weight = np.array([[1.0, 2.0], [np.nan, 0.0], [3.0, -1.0]], np.float32)
    got = run(weight, np.array([0, 1, 2]), np.array([0]), mode="max").numpy()
    assert np.isnan(got[0, 0]) and got[0, 1] == 2.0


def test_auxiliary_outputs():
    weight = rng.standard_normal((10, 3)).astype(np.float32)
    indices = tp.tensor(np.array([4, 1, 7, 1, 8, 0]))
    out, offset2bag, bag_size, max_indices = tp.ops.call(
        "_embedding_bag",
        tp.tensor(weight),
        indices,
        tp.tensor(np.array([0, 2, 2, 5])),
        False,
        2,
        False,
        None,
        False,
        8,
    )
    np.testing.assert_array_equal(offset2bag.numpy(), [0, 0, 2, 2, 2, 3])
    np.testing.assert_array_equal(bag_size.numpy(), [2, 0, 2, 1])  # index 8 is padding
    want_idx = np.array([[4, 1][int(np.argmax(weight[[4, 1], d]))] for d in range(3)])
    np.testing.assert_array_equal(max_indices.numpy()[0], want_idx)
    np.testing.assert_array_equal(max_indices.numpy()[1], [-1, -1, -1])
    _, _, _, mi = tp.ops.call("_embedding_bag", tp.tensor(weight), indices, tp.tensor(np.array([0])))
    assert mi.shape == (0,)


def test_meta():
    w = tp.empty(100, 16, device="meta")
    got = tp.embedding_bag(tp.empty(7, 5, dtype=tp.int64, device="meta"), w, mode="max")
    assert got.device.type == "meta" and got.shape == (7, 16)
    got = tp.embedding_bag(
        tp.empty(20, dtype=tp.int64, device="meta"),
        w,
        tp.empty(4, dtype=tp.int64, device="meta"),
        include_last_offset=True,
    )
    assert got.shape == (3, 16)


def test_large_threaded():
    weight = rng.standard_normal((2000, 64)).astype(np.float32)
    indices = rng.integers(0, 2000, 100_000)
    offsets = np.sort(rng.integers(0, 100_000, 16_384))
    offsets[0] = 0  # 16384 x 64 = 1M outputs, some bags empty
    rows = weight[indices]  # float32: the sums below are pairwise in NumPy, close to the kernel's
    ends = np.append(offsets[1:], len(indices))
    empty = (ends == offsets)[:, None]
    sums = np.add.reduceat(rows.astype(np.float64), offsets)  # reduceat gives rows[s] for an empty bag
    want = {
        "sum": np.where(empty, 0.0, sums),
        "mean": np.where(empty, 0.0, sums / np.maximum(ends - offsets, 1)[:, None]),
        "max": np.where(empty, 0.0, np.maximum.reduceat(rows, offsets)),
    }
    for mode in ("sum", "mean", "max"):
        got = run(weight, indices, offsets, mode=mode).numpy()
        np.testing.assert_allclose(got, want[mode], rtol=1e-4, atol=1e-4)


def test_errors():
    w = tp.randn(10, 3)
    i1, o = tp.tensor([1, 2, 3]), tp.tensor([0, 1])
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        tp.embedding_bag(tp.tensor([[1, 2]]), w, o)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        tp.embedding_bag(i1, w)
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor, but got Tensor of dimension 3"):
        tp.embedding_bag(tp.zeros(1, 1, 1, dtype=tp.int64), w)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        tp.embedding_bag(i1, w, o, mode="min")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum' \\(got mode='mean'\\)"):
        tp.embedding_bag(i1, w, o, per_sample_weights=tp.ones(3))
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        tp.embedding_bag(i1, w, o, mode="sum", per_sample_weights=tp.ones(4))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        tp.embedding_bag(i1, w, tp.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="offsets\\[1\\] can not be greater than input's length \\(3\\)"):
        tp.embedding_bag(i1, w, tp.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing"):
        tp.embedding_bag(i1, w, tp.tensor([0, 2, 1]))
    with pytest.raises(IndexError, match="index 10 is out of bounds for dim 0 of weight with size 10"):
        tp.embedding_bag(tp.tensor([1, 10]), w, o)
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        tp.embedding_bag(tp.tensor([-1, 0]), w, o)
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        tp.embedding_bag(i1, w, o, padding_idx=10)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        tp.embedding_bag(i1, w, o, mode="max", sparse=True)
    with pytest.raises(RuntimeError, match="to have one of the following scalar types: Long, Int"):
        tp.embedding_bag(tp.tensor([1.0]), w, o)
    with pytest.raises(RuntimeError, match="expected per_sample_weights to have the dtype of weight"):
        tp.embedding_bag(i1, w, o, mode="sum", per_sample_weights=tp.ones(3, dtype=tp.float64))


# ---- PyTorch, where installed ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_against_torch(mode, include_last_offset, padding_idx):
    torch = pytest.importorskip("torch")
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    indices = np.array([3, 1, 3, 0, 9, 2, 5, 3, 7, 3])
    offsets = np.array([0, 2, 2, 6, 10])
    got = run(
        weight, indices, offsets, mode=mode, include_last_offset=include_last_offset, padding_idx=padding_idx
    )
    want = torch.nn.functional.embedding_bag(
        torch.from_numpy(indices),
        torch.from_numpy(weight),
        torch.from_numpy(offsets),
        mode=mode,
        include_last_offset=include_last_offset,
        padding_idx=padding_idx,
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
