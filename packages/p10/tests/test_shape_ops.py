"""Joining (cat, stack, tensor_split, meshgrid: join.cpp) and rearranging (flip, roll, repeat, tril, pad:
rearrange.cpp).

References are NumPy's functions of the same name (np.concatenate, np.flip, np.roll, np.tile, np.pad, …).
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(3)


def arr(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def views(a):
    """The same values as a contiguous tensor and as a transposed (non-contiguous) view."""
    yield tp.tensor(a)
    if a.ndim >= 2:
        yield tp.tensor(np.ascontiguousarray(np.swapaxes(a, 0, 1))).transpose(0, 1)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack(dim):
    a, b = arr(2, 3), arr(2, 3)
    for x in views(a):
        np.testing.assert_array_equal(tp.cat([x, tp.tensor(b)], dim).numpy(), np.concatenate([a, b], dim))
        np.testing.assert_array_equal(tp.stack([x, tp.tensor(b)], dim).numpy(), np.stack([a, b], dim))
    assert (
        tp.concat([tp.tensor(a)], dim).shape == a.shape
        and tp.concatenate([tp.tensor(a), tp.tensor(b)]).shape[0] == 4
    )


def test_cat_promotion_empty_and_errors():
    r = tp.cat([tp.tensor([1, 2]), tp.tensor([0.5])])
    assert r.dtype is tp.float32 and r.tolist() == [1.0, 2.0, 0.5]
    assert tp.cat([tp.zeros(2, 3), tp.tensor([])]).shape == (2, 3)  # legacy empty 1-D tensors are skipped
    assert tp.cat([tp.zeros(0, 3), tp.ones(1, 3)]).shape == (1, 3)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        tp.cat([tp.zeros(2, 3), tp.zeros(2, 4)])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        tp.cat([tp.tensor(1.0)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        tp.stack([tp.zeros(2), tp.zeros(3)])
    with pytest.raises(IndexError):
        tp.cat([tp.zeros(2)], 2)


def test_h_v_d_stack_and_atleast():
    a, b = arr(3), arr(3)
    A, B = tp.tensor(a), tp.tensor(b)
    np.testing.assert_array_equal(tp.hstack([A, B]).numpy(), np.hstack([a, b]))
    np.testing.assert_array_equal(tp.vstack([A, B]).numpy(), np.vstack([a, b]))
    np.testing.assert_array_equal(tp.row_stack([A, B]).numpy(), np.vstack([a, b]))
    np.testing.assert_array_equal(tp.dstack([A, B]).numpy(), np.dstack([a, b]))
    m = arr(2, 2)
    np.testing.assert_array_equal(tp.hstack([tp.tensor(m), tp.tensor(m)]).numpy(), np.hstack([m, m]))
    for n, fn in ((1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)):
        for shape in [(), (4,), (2, 3), (1, 2, 3)]:
            x = np.zeros(shape, np.float32)
            assert tuple(getattr(tp, f"atleast_{n}d")(tp.tensor(x)).shape) == fn(x).shape
    assert [t.dim() for t in tp.atleast_2d([tp.tensor(1.0), tp.zeros(3)])] == [2, 2]


@pytest.mark.parametrize("arg", [3, 4, [1, 4], [2, -1], [5, 1]])
def test_tensor_split(arg):
    a = arr(7, 2)
    got = [p.numpy() for p in tp.tensor(a).tensor_split(arg)]
    want = np.array_split(a, arg) if isinstance(arg, int) else np.split(a, arg)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_broadcast_and_meshgrid():
    x, y = tp.zeros(3, 1), tp.ones(4)
    bx, by = tp.broadcast_tensors([x, y])
    assert bx.shape == by.shape == (3, 4) and bx._shares_storage(x)
    assert tp.broadcast_to(tp.arange(3), (2, 3)).tolist() == [[0, 1, 2]] * 2
    a, b = np.arange(3), np.arange(4)
    for indexing in ("ij", "xy"):
        got = tp.meshgrid([tp.tensor(a), tp.tensor(b)], indexing=indexing)
        for g, w in zip(got, np.meshgrid(a, b, indexing=indexing), strict=True):
            np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(ValueError, match="indexing"):
        tp.meshgrid([tp.tensor(a)], indexing="yx")


@pytest.mark.parametrize("dims", [[0], [1], [0, 1], [-1]])
def test_flip(dims):
    a = arr(3, 4)
    for x in views(a):
        r = x.flip(dims)
        np.testing.assert_array_equal(r.numpy(), np.flip(a, dims))
        assert not r._shares_storage(x)  # a copy, as in PyTorch
    np.testing.assert_array_equal(tp.fliplr(tp.tensor(a)).numpy(), np.fliplr(a))
    np.testing.assert_array_equal(tp.flipud(tp.tensor(a)).numpy(), np.flipud(a))
    assert tp.flip(tp.zeros(0, 2), [0]).shape == (0, 2)
    with pytest.raises(RuntimeError, match="multiple times"):
        tp.zeros(2).flip([0, 0])


@pytest.mark.parametrize("shifts,dims", [(1, None), (-2, None), (2, 0), ((1, -3), (0, 1)), (7, 1)])
def test_roll(shifts, dims):
    a = arr(3, 4)
    sh = [shifts] if isinstance(shifts, int) else list(shifts)
    dm = [] if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    for x in views(a):
        np.testing.assert_array_equal(tp.roll(x, sh, dm).numpy(), np.roll(a, shifts, dims))


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
def test_rot90(k):
    a = arr(2, 3, 4)
    np.testing.assert_array_equal(tp.rot90(tp.tensor(a), k, [1, 2]).numpy(), np.rot90(a, k, (1, 2)))


@pytest.mark.parametrize("reps", [(2,), (2, 1), (1, 3), (2, 2, 2), (0, 2)])
def test_repeat_and_tile(reps):
    a = arr(2, 3)
    if len(reps) >= a.ndim:
        for x in views(a):
            np.testing.assert_array_equal(x.repeat(reps).numpy(), np.tile(a, reps))
    np.testing.assert_array_equal(tp.tile(tp.tensor(a), reps).numpy(), np.tile(a, reps))
    with pytest.raises(RuntimeError, match="can not be smaller"):
        tp.tensor(a).repeat(2)


def test_repeat_interleave():
    a = arr(2, 3)
    x = tp.tensor(a)
    np.testing.assert_array_equal(x.repeat_interleave(2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(x.repeat_interleave(3, dim=1).numpy(), np.repeat(a, 3, axis=1))
    counts = np.array([1, 0, 2])
    np.testing.assert_array_equal(
        x.repeat_interleave(tp.tensor(counts), dim=1).numpy(), np.repeat(a, counts, axis=1)
    )
    np.testing.assert_array_equal(x.repeat_interleave(tp.tensor(2), dim=0).numpy(), np.repeat(a, 2, axis=0))
    with pytest.raises(RuntimeError, match="same size as input along dim"):
        x.repeat_interleave(tp.tensor([1, 2]), dim=1)
    with pytest.raises(RuntimeError, match="negative"):
        x.repeat_interleave(-1)


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu(k):
    a = arr(2, 3, 4)
    for x in (
        views(a[0])
        if False
        else (tp.tensor(a), tp.tensor(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(1, 2))
    ):
        np.testing.assert_array_equal(x.tril(k).numpy(), np.tril(a, k))
        np.testing.assert_array_equal(x.triu(k).numpy(), np.triu(a, k))
    y = tp.tensor(a[0]).t()  # in place through a transposed view writes the base
    base = y.t()
    y.tril_(k)
    np.testing.assert_array_equal(base.numpy(), np.tril(a[0].T, k).T)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tp.zeros(3).tril()


def test_diag_family():
    v = arr(3)
    m = arr(3, 4)
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(tp.diag(tp.tensor(v), k).numpy(), np.diag(v, k))
        np.testing.assert_array_equal(tp.diag(tp.tensor(m), k).numpy(), np.diag(m, k))
        np.testing.assert_array_equal(tp.diagflat(tp.tensor(m), k).numpy(), np.diagflat(m, k))
    b = arr(2, 3)
    e = tp.diag_embed(tp.tensor(b))
    assert e.shape == (2, 3, 3)
    for i in range(2):
        np.testing.assert_array_equal(e[i].numpy(), np.diag(b[i]))
    assert tp.diag_embed(tp.tensor(b), 1, 0, 2).shape == (4, 2, 4)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        tp.diag(tp.zeros(2, 2, 2))


@pytest.mark.parametrize(
    "mode,np_mode",
    [("constant", "constant"), ("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")],
)
@pytest.mark.parametrize("pads", [(1, 2), (0, 0, 2, 1), (2, 1, 1, 0)])
def test_pad_matches_numpy(mode, np_mode, pads):
    a = arr(2, 3, 4)
    width = [(0, 0)] * (a.ndim - len(pads) // 2) + [
        (pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)
    ][::-1]
    for x in views(a):
        np.testing.assert_array_equal(tp.pad(x, list(pads), mode).numpy(), np.pad(a, width, mode=np_mode))


def test_pad_value_cropping_and_errors():
    a = arr(3, 4)
    np.testing.assert_array_equal(
        tp.pad(tp.tensor(a), [1, 1], value=7.0).numpy(), np.pad(a, [(0, 0), (1, 1)], constant_values=7)
    )
    np.testing.assert_array_equal(tp.pad(tp.tensor(a), [-1, 2]).numpy(), np.pad(a[:, 1:], [(0, 0), (0, 2)]))
    with pytest.raises(RuntimeError, match="divisible by 2"):
        tp.pad(tp.tensor(a), [1])
    with pytest.raises(RuntimeError, match="less than the corresponding input dimension"):
        tp.pad(tp.tensor(a), [4, 0], "reflect")
    with pytest.raises(NotImplementedError, match="unknown padding mode"):
        tp.pad(tp.tensor(a), [1, 1], "mirror")


def test_meta_shapes():
    m = tp.empty(2, 3, device="meta")
    assert tp.cat([m, m], 1).shape == (2, 6) and tp.stack([m, m]).shape == (2, 2, 3)
    assert m.flip([0]).shape == (2, 3) and m.repeat(2, 2).shape == (4, 6) and m.tril().device.type == "meta"
    assert tp.pad(m, [1, 1], "reflect").shape == (2, 5)
