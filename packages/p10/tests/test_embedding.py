"""embedding, one_hot, dropout and native_dropout (kernels/embedding.cpp) against NumPy references.

embedding is checked over index shapes (0-d, 1-D, 2-D, empty), int32/int64 indices, dtypes and errors; one_hot
against np.eye rows with inferred and given num_classes and PyTorch's error messages; dropout for its mask
semantics (zeros or x / (1 - p)), keep rate on a large tensor, reproducibility under tp.manual_seed, p = 0 and
p = 1, eval mode and the probability check. Where PyTorch is installed its dropout stream is compared too.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("idx_shape", [(), (5,), (2, 3), (0,), (2, 0)])
def test_embedding(idx_shape, idx_dtype, dtype):
    w = (rng.standard_normal((7, 4)) * 10).astype(dtype)
    idx = rng.integers(0, 7, size=idx_shape).astype(idx_dtype)
    got = tp.embedding(tp.tensor(w), tp.tensor(idx))
    assert got.shape == idx_shape + (4,) and got.dtype == getattr(tp, dtype)
    np.testing.assert_array_equal(got.numpy(), w[idx])


def test_embedding_layouts_and_padding_idx():
    w = rng.standard_normal((6, 8)).astype(np.float32)
    wt = tp.tensor(np.ascontiguousarray(w.T)).t()  # transposed weight
    idx = np.array([[5, 0, 0], [1, 2, 5]])
    idx_strided = tp.tensor(np.array([[5, 9, 0, 9, 0], [1, 9, 2, 9, 5]]))[:, ::2]
    np.testing.assert_array_equal(tp.embedding(wt, tp.tensor(idx)).numpy(), w[idx])
    np.testing.assert_array_equal(tp.embedding(tp.tensor(w), idx_strided, padding_idx=0).numpy(), w[idx])


def test_embedding_errors():
    w = tp.zeros((4, 3))
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        tp.embedding(w, tp.tensor([1, 4]))
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        tp.embedding(w, tp.tensor([-5]))
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        tp.embedding(w, tp.tensor([1.0]))
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        tp.embedding(tp.zeros(4), tp.tensor([1]))


def test_one_hot():
    v = np.array([[0, 3], [2, 2], [1, 0]])
    got = tp.one_hot(tp.tensor(v))
    assert got.dtype == tp.int64 and got.shape == (3, 2, 4)
    np.testing.assert_array_equal(got.numpy(), np.eye(4, dtype=np.int64)[v])
    np.testing.assert_array_equal(tp.tensor(v).one_hot(6).numpy(), np.eye(6, dtype=np.int64)[v])
    np.testing.assert_array_equal(tp.one_hot(tp.tensor(2), 3).numpy(), [0, 0, 1])
    assert tp.one_hot(tp.tensor(np.zeros(0, np.int64)), 5).shape == (0, 5)
    assert tp.one_hot(tp.empty((2,), dtype=tp.int64, device="meta"), 5).shape == (2, 5)


def test_one_hot_errors():
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        tp.one_hot(tp.tensor([1, -1]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        tp.one_hot(tp.tensor([1, 3]), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor."):
        tp.one_hot(tp.tensor(np.zeros(0, np.int64)))
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor."):
        tp.one_hot(tp.tensor([1.0]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_mask_semantics(p, dtype):
    a = (rng.random((1024, 1024)) + 0.5).astype(dtype)  # >= 1M elements, no zeros in the input
    got = tp.dropout(tp.tensor(a), p, True).numpy()
    kept = got != 0
    np.testing.assert_allclose(got[kept], a[kept] / (1 - p), rtol=1e-6)
    assert abs(kept.mean() - (1 - p)) < 0.01  # 1M Bernoulli draws: std of the rate is < 0.0005


def test_dropout_reproducible_and_special_p():
    a = tp.tensor(rng.standard_normal((50, 40)).astype(np.float32))
    tp.manual_seed(7)
    first = tp.dropout(a, 0.3, True).numpy()
    tp.manual_seed(7)
    np.testing.assert_array_equal(tp.dropout(a, 0.3, True).numpy(), first)
    assert tp.dropout(a, 0.3, False) is a
    assert tp.dropout(a, 0.0, True) is a
    assert (tp.dropout(a, 1.0, True).numpy() == 0).all()
    assert tp.dropout(tp.zeros((0, 3)), 0.5, True).shape == (0, 3)
    t = tp.tensor(rng.standard_normal((8, 6)).astype(np.float32)).t()  # non-contiguous input
    got, ref = tp.dropout(t, 0.5, True).numpy(), t.numpy()
    np.testing.assert_allclose(got[got != 0], ref[got != 0] * 2, rtol=1e-6)


def test_native_dropout():
    a = rng.standard_normal((30, 20)).astype(np.float32)
    out, mask = tp.native_dropout(tp.tensor(a), 0.4, True)
    assert mask.dtype == tp.bool and mask.shape == a.shape
    m = mask.numpy()
    np.testing.assert_allclose(out.numpy(), np.where(m, a / 0.6, 0), rtol=1e-6)
    out, mask = tp.native_dropout(tp.tensor(a), 0.4, False)
    assert mask.numpy().all() and (out.numpy() == a).all()
    out, mask = tp.native_dropout(tp.tensor(a), 1.0, True)
    assert (out.numpy() == 0).all() and not mask.numpy().any()


def test_dropout_errors():
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
            tp.dropout(tp.ones(3), p, True)


def test_dropout_matches_torch_stream():
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((64, 33)).astype(np.float32)
    tp.manual_seed(3)
    ours = tp.dropout(tp.tensor(a), 0.25, True).numpy()
    torch.manual_seed(3)
    theirs = torch.nn.functional.dropout(torch.tensor(a), 0.25).numpy()
    np.testing.assert_array_equal(ours, theirs)
