"""Sorting and searching (sort.cpp): sort/argsort/msort/topk/kthvalue, unique(_consecutive), searchsorted,
bucketize, histc, bincount — against NumPy (np.sort kind="stable", np.unique, np.searchsorted, np.histogram,
np.bincount), with PyTorch's NaN placement (last ascending, first descending)."""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(11)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_stable_numpy(dim, descending):
    a = rng.integers(0, 5, size=(4, 6)).astype(np.float32)  # many ties: stability shows
    a[1, 2] = np.nan
    for x in (tp.tensor(a), tp.tensor(np.ascontiguousarray(a.T)).t()):
        values, indices = x.sort(dim=dim, descending=descending)
        key = -a if descending else a
        if descending:  # NaN first when descending: sort NaN as -inf of the negated key
            key = np.where(np.isnan(a), -np.inf, key)
        order = np.argsort(key, axis=dim, kind="stable")
        np.testing.assert_array_equal(indices.numpy(), order)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, order, dim))
        np.testing.assert_array_equal(tp.argsort(x, dim, descending).numpy(), order)
    np.testing.assert_array_equal(tp.msort(tp.tensor(a)).numpy(), np.sort(a, axis=0))


def test_sort_int_bool_and_empty():
    a = rng.integers(-50, 50, size=20)
    np.testing.assert_array_equal(tp.tensor(a).sort().values.numpy(), np.sort(a))
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(tp.tensor(b).sort().indices.numpy(), np.argsort(b, kind="stable"))
    assert tp.zeros(0).sort().values.shape == (0,)
    assert tp.tensor(3.0).sort().values.item() == 3.0


@pytest.mark.parametrize("largest", [True, False])
def test_topk_and_kthvalue(largest):
    a = rng.standard_normal((3, 10)).astype(np.float32)
    v, i = tp.tensor(a).topk(4, largest=largest)
    ref = np.sort(a, axis=1)[:, ::-1][:, :4] if largest else np.sort(a, axis=1)[:, :4]
    np.testing.assert_array_equal(v.numpy(), ref)
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy(), 1), ref)
    kv, ki = tp.tensor(a).kthvalue(3, dim=1, keepdim=True)
    np.testing.assert_array_equal(kv.numpy()[:, 0], np.sort(a, axis=1)[:, 2])
    np.testing.assert_array_equal(np.take_along_axis(a, ki.numpy(), 1), kv.numpy())
    with pytest.raises(RuntimeError, match="out of range"):
        tp.tensor(a).topk(11)
    with pytest.raises(RuntimeError, match="out of range"):
        tp.tensor(a).kthvalue(0)


def test_unique_flat_and_dim():
    a = np.array([3, 1, 2, 1, 3, 3])
    vals, inv, counts = tp.tensor(a).unique(return_inverse=True, return_counts=True)
    want_v, want_inv, want_c = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(vals.numpy(), want_v)
    np.testing.assert_array_equal(inv.numpy(), want_inv)
    np.testing.assert_array_equal(counts.numpy(), want_c)
    assert isinstance(tp.unique(tp.tensor(a)), tp.Tensor)
    m = np.array([[1, 2], [1, 2], [0, 5]])
    v, i, c = tp.unique(tp.tensor(m), dim=0, return_inverse=True, return_counts=True)
    wv, wi, wc = np.unique(m, axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), wv)
    np.testing.assert_array_equal(i.numpy(), wi.reshape(-1))
    np.testing.assert_array_equal(c.numpy(), wc)
    cols = tp.unique(tp.tensor(m.T), dim=1)
    np.testing.assert_array_equal(cols.numpy(), np.unique(m.T, axis=1))
    nan = tp.unique(tp.tensor([2.0, np.nan, 1.0, np.nan]))
    assert nan.shape == (4,) and nan[:2].tolist() == [1.0, 2.0]  # every NaN stays distinct, as in PyTorch


def test_unique_consecutive():
    a = np.array([1, 1, 2, 2, 3, 1, 1])
    v, i, c = tp.unique_consecutive(tp.tensor(a), return_inverse=True, return_counts=True)
    assert v.tolist() == [1, 2, 3, 1] and i.tolist() == [0, 0, 1, 1, 2, 3, 3] and c.tolist() == [2, 2, 1, 2]


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(right):
    seq = np.array([1.0, 3.0, 5.0, 7.0])
    vals = np.array([[0.0, 3.0], [6.0, 9.0]])
    side = "right" if right else "left"
    want = np.searchsorted(seq, vals, side=side)
    np.testing.assert_array_equal(tp.searchsorted(tp.tensor(seq), tp.tensor(vals), right=right).numpy(), want)
    np.testing.assert_array_equal(tp.searchsorted(tp.tensor(seq), tp.tensor(vals), side=side).numpy(), want)
    np.testing.assert_array_equal(tp.bucketize(tp.tensor(vals), tp.tensor(seq), right=right).numpy(), want)
    assert tp.searchsorted(tp.tensor(seq), 3.0).item() == np.searchsorted(seq, 3.0)
    rows = np.array([[1, 3], [2, 4]])
    got = tp.searchsorted(tp.tensor(rows), tp.tensor([[2], [3]]))
    assert got.tolist() == [[1], [1]]
    assert tp.searchsorted(tp.tensor(seq), tp.tensor(vals), out_int32=True).dtype is tp.int32
    order = np.array([3, 0, 2, 1])
    shuffled = seq[order]
    sorter = np.argsort(shuffled)
    np.testing.assert_array_equal(
        tp.searchsorted(tp.tensor(shuffled), tp.tensor(vals), sorter=tp.tensor(sorter)).numpy(),
        np.searchsorted(shuffled, vals, sorter=sorter),
    )
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        tp.searchsorted(tp.tensor(seq), tp.tensor(vals), right=True, side="left")


def test_histc_and_bincount():
    x = rng.standard_normal(1000).astype(np.float32)
    want, _ = np.histogram(x, bins=10, range=(-2, 2))
    np.testing.assert_array_equal(
        tp.histc(tp.tensor(x), bins=10, min=-2, max=2).numpy(), want.astype(np.float32)
    )
    want, _ = np.histogram(x, bins=7, range=(x.min(), x.max()))
    np.testing.assert_array_equal(tp.histc(tp.tensor(x), bins=7).numpy(), want.astype(np.float32))
    assert tp.histc(tp.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="not implemented for 'int64'"):
        tp.histc(tp.tensor([1, 2]))
    i = np.array([0, 1, 1, 3])
    np.testing.assert_array_equal(tp.bincount(tp.tensor(i)).numpy(), np.bincount(i))
    w = np.array([0.5, 1.0, 1.0, 2.0], np.float32)
    r = tp.bincount(tp.tensor(i), tp.tensor(w), minlength=6)
    assert r.dtype is tp.float32
    np.testing.assert_array_equal(r.numpy(), np.bincount(i, w, minlength=6))
    assert tp.bincount(tp.tensor([0, 1]), tp.tensor([1, 2], dtype=tp.int32)).dtype is tp.float64
    with pytest.raises(RuntimeError, match="non-negative"):
        tp.bincount(tp.tensor([-1]))
