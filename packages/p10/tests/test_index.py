"""Indexing with tensors: gather/scatter (index.cpp); subscripts, masks, nonzero (index_advanced.cpp).

References are NumPy's: take_along_axis/put_along_axis for gather/scatter, np.add.at for accumulation, and
NumPy's advanced indexing, whose rules (broadcasting, where the indexed dims land) PyTorch shares.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(5)


def arr(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def layouts(a):
    yield tp.tensor(a)
    if a.ndim >= 2:
        yield tp.tensor(np.ascontiguousarray(np.swapaxes(a, 0, 1))).transpose(0, 1)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    a = arr(3, 4)
    idx = rng.integers(0, a.shape[dim], size=(3, 4) if dim else (5, 4))
    if dim in (1, -1):
        idx = rng.integers(0, 4, size=(3, 6))
    for x in layouts(a):
        got = tp.gather(x, dim, tp.tensor(idx))
        np.testing.assert_array_equal(got.numpy(), np.take_along_axis(a, idx, dim))
    with pytest.raises(RuntimeError, match="out of bounds"):  # RuntimeError, as PyTorch's gather
        tp.gather(tp.tensor(a), 1, tp.tensor([[4]]))
    with pytest.raises(RuntimeError, match="int64"):
        tp.gather(tp.tensor(a), 1, tp.tensor([[1]], dtype=tp.int32))


def test_gather_smaller_index_and_empty():
    a = arr(4, 5)
    idx = np.array([[0, 3], [2, 1]])  # index smaller than self outside dim
    np.testing.assert_array_equal(
        tp.gather(tp.tensor(a), 1, tp.tensor(idx)).numpy(), np.take_along_axis(a[:2, :], idx, 1)
    )
    assert tp.gather(tp.tensor(a), 0, tp.zeros(0, 5, dtype=tp.int64)).shape == (0, 5)


def test_scatter_variants():
    a = np.zeros((3, 4), np.float32)
    idx = np.array([[0, 1, 2, 0], [2, 0, 1, 2]])
    src = arr(2, 4)
    want = a.copy()
    np.put_along_axis(want, idx, src, 0)
    np.testing.assert_array_equal(tp.scatter(tp.tensor(a), 0, tp.tensor(idx), tp.tensor(src)).numpy(), want)
    want_add = a.copy()
    for i in range(2):
        for j in range(4):
            want_add[idx[i, j], j] += src[i, j]
    np.testing.assert_allclose(tp.tensor(a).scatter_add(0, tp.tensor(idx), tp.tensor(src)).numpy(), want_add)
    t = tp.tensor(a)
    t.scatter_(1, tp.tensor([[1], [3], [0]]), 5.0)
    assert t.tolist()[0][1] == 5.0 and t.tolist()[1][3] == 5.0 and t.tolist()[2][0] == 5.0
    with pytest.raises(
        RuntimeError, match="same number of dimensions as src"
    ):  # a 0-d src: an error, not a crash
        t.scatter_(1, tp.tensor([[1], [3], [0]]), tp.tensor(5.0))
    m = tp.ones(3).scatter_(0, tp.tensor([0, 0, 2]), tp.tensor([2.0, 3.0, 4.0]), reduce="multiply")
    assert m.tolist() == [6.0, 1.0, 4.0]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    base = arr(5)
    idx = np.array([0, 2, 2, 4, 0, 0])
    src = arr(6)
    want = base.astype(np.float64).copy()
    groups = {i: [src[k] for k in range(6) if idx[k] == i] for i in set(idx)}
    for i, vals in groups.items():
        vals = ([base[i]] if include_self else []) + vals
        f = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
        want[i] = f(vals)
    got = tp.tensor(base).scatter_reduce(0, tp.tensor(idx), tp.tensor(src), reduce, include_self=include_self)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_index_select_add_copy_fill():
    a = arr(4, 3)
    for x in layouts(a):
        np.testing.assert_array_equal(x.index_select(0, tp.tensor([3, 0, 3])).numpy(), a[[3, 0, 3]])
        np.testing.assert_array_equal(
            x.index_select(1, tp.tensor([2, 0], dtype=tp.int32)).numpy(), a[:, [2, 0]]
        )
    with pytest.raises(IndexError, match="out of bounds"):
        tp.tensor(a).index_select(0, tp.tensor([4]))
    src = arr(3, 3)
    want = a.copy()
    np.add.at(want, [1, 1, 3], 2 * src)
    np.testing.assert_allclose(
        tp.tensor(a).index_add(0, tp.tensor([1, 1, 3]), tp.tensor(src), alpha=2).numpy(), want, rtol=1e-6
    )
    want = a.copy()
    want[[3, 0]] = src[:2]
    np.testing.assert_array_equal(
        tp.tensor(a).index_copy(0, tp.tensor([3, 0]), tp.tensor(src[:2])).numpy(), want
    )
    want = a.copy()
    want[:, [0, -1]] = -1
    np.testing.assert_array_equal(tp.tensor(a).index_fill(1, tp.tensor([0, -1]), -1.0).numpy(), want)


def test_take_put_take_along_dim():
    a = arr(3, 4)
    idx = np.array([[0, -1], [5, 11]])
    np.testing.assert_array_equal(tp.take(tp.tensor(a), tp.tensor(idx)).numpy(), np.take(a, idx))
    with pytest.raises(IndexError):
        tp.take(tp.tensor(a), tp.tensor([12]))
    t = tp.tensor(a)
    t.put_(tp.tensor([0, 0, 5]), tp.tensor([1.0, 2.0, 3.0]), accumulate=True)
    want = a.copy().reshape(-1)
    np.add.at(want, [0, 0, 5], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(t.numpy().reshape(-1), want, rtol=1e-6)
    order = np.argsort(a, axis=1)
    np.testing.assert_array_equal(
        tp.take_along_dim(tp.tensor(a), tp.tensor(order), 1).numpy(), np.sort(a, axis=1)
    )
    np.testing.assert_array_equal(
        tp.take_along_dim(tp.tensor(a), tp.tensor([0, 5])).numpy(), a.reshape(-1)[[0, 5]]
    )


SUBSCRIPTS = [
    lambda n: n[[0, 2]],
    lambda n: n[:, [1, 0, 1]],
    lambda n: n[[0, 1], [2, 3]],
    lambda n: n[[[0], [1]], [2, 3]],  # broadcasting index arrays
    lambda n: n[1:, [0, -1]],
    lambda n: n[..., [3, 0]],
    lambda n: n[[0, -1], :, [1, 0]] if n.ndim == 3 else n[[0, -1]],  # non-adjacent: indexed dims go first
    lambda n: n[[2, 0], None],
    lambda n: n[np.array([True, False, True])],
]


@pytest.mark.parametrize("k", range(len(SUBSCRIPTS)))
def test_advanced_getitem_matches_numpy(k):
    for shape in [(3, 4), (3, 4, 5)]:
        a = arr(*shape)
        ref = SUBSCRIPTS[k](a)

        class Proxy:  # the same subscript, written once, applied to a tensor (lists become index tensors)
            def __init__(self, t):
                self.t, self.ndim = t, t.dim()

            def __getitem__(self, idx):
                return self.t[idx]

        for x in layouts(a):
            got = SUBSCRIPTS[k](Proxy(x))
            assert tuple(got.shape) == ref.shape
            np.testing.assert_array_equal(got.numpy(), ref)


def test_mask_indexing_and_setitem():
    a = arr(3, 4)
    m = a > 0
    x = tp.tensor(a)
    np.testing.assert_array_equal(x[tp.tensor(m)].numpy(), a[m])
    np.testing.assert_array_equal(x[tp.tensor(m[:, 0])].numpy(), a[m[:, 0]])
    y = tp.tensor(a)
    y[tp.tensor(m)] = 0.0
    b = a.copy()
    b[m] = 0
    np.testing.assert_array_equal(y.numpy(), b)
    y[[0, 2], 1:3] = tp.tensor([7.0, 8.0])  # broadcast values, mixed advanced + slice
    b[[0, 2], 1:3] = [7, 8]
    np.testing.assert_array_equal(y.numpy(), b)
    z = tp.zeros(5)
    z.index_put_([tp.tensor([1, 1, 3])], tp.tensor([1.0, 2.0, 5.0]), accumulate=True)
    assert z.tolist() == [0.0, 3.0, 0.0, 5.0, 0.0]
    v = tp.tensor(a).t()  # writing through a transposed view changes the base
    base = v.t()
    v[[0]] = 0.0
    assert (base.numpy()[:, 0] == 0).all()
    with pytest.raises(IndexError, match="out of bounds"):
        x[[3]]
    with pytest.raises(IndexError, match="does not match the shape"):
        x[tp.tensor([True, False])]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        x[tp.tensor([0.5])]
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        x[[0, 1]] = tp.ones(3)


def test_masked_ops_and_nonzero():
    a = arr(3, 4)
    m = a > 0
    x, mt = tp.tensor(a), tp.tensor(m)
    np.testing.assert_array_equal(x.masked_fill(mt, -1.0).numpy(), np.where(m, -1.0, a).astype(np.float32))
    np.testing.assert_array_equal(
        x.masked_fill(tp.tensor(m[0]), 0.5).numpy(), np.where(m[0], 0.5, a).astype(np.float32)
    )
    np.testing.assert_array_equal(tp.masked_select(x, mt).numpy(), a[m])
    src = arr(12)
    want = a.copy()
    want[m] = src[: m.sum()]
    np.testing.assert_array_equal(x.masked_scatter(mt, tp.tensor(src)).numpy(), want)
    np.testing.assert_array_equal(tp.nonzero(mt).numpy(), np.argwhere(m))
    np.testing.assert_array_equal(tp.argwhere(mt).numpy(), np.argwhere(m))
    for got, want_i in zip(mt.nonzero(as_tuple=True), np.nonzero(m), strict=True):
        np.testing.assert_array_equal(got.numpy(), want_i)
    assert tp.nonzero(tp.zeros(0, 3)).shape == (0, 2)
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.masked_fill(tp.tensor(m.astype(np.int64)), 0.0)
    with pytest.raises(RuntimeError, match="at least"):
        x.masked_scatter(mt, tp.ones(1))


def test_large_gather_and_index():
    n = 1 << 20
    a = np.arange(n, dtype=np.float32)
    idx = rng.integers(0, n, size=n)
    np.testing.assert_array_equal(tp.tensor(a)[tp.tensor(idx)].numpy(), a[idx])
    np.testing.assert_array_equal(tp.gather(tp.tensor(a), 0, tp.tensor(idx)).numpy(), a[idx])


def test_where_with_only_a_condition_is_nonzero_as_tuple():
    m = np.array([[True, False, True], [False, False, True]])
    got = tp.where(tp.tensor(m))
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, np.nonzero(m), strict=True):
        assert g.dtype is tp.int64
        np.testing.assert_array_equal(g.numpy(), w)
    vals = np.array([0.0, 2.5, -1.0, 0.0])
    for g, w in zip(tp.where(tp.tensor(vals)), np.nonzero(vals), strict=True):  # nonzero, not just bools
        np.testing.assert_array_equal(g.numpy(), w)
    # the three-argument form is unchanged, with out= too
    c, a, b = tp.tensor(m), tp.ones(2, 3), tp.zeros(2, 3)
    np.testing.assert_array_equal(tp.where(c, a, b).numpy(), np.where(m, 1.0, 0.0))
    np.testing.assert_array_equal(tp.where(c, a, 0.0).numpy(), np.where(m, 1.0, 0.0))
    out = tp.empty(2, 3)
    assert tp.where(c, a, b, out=out) is out and out.tolist() == np.where(m, 1.0, 0.0).tolist()
    with pytest.raises(TypeError, match="either only condition"):
        tp.where(c, a)
