"""Views and layout: shapes, strides and offsets match NumPy's; writes go through; versions move."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorplay_p10 as tp


def strides_of(a: np.ndarray) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def base():
    return tp.arange(24.0).reshape(2, 3, 4), np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "fn_tp,fn_np",
    [
        (lambda t: t.transpose(0, 2), lambda a: a.transpose(2, 1, 0)),
        (lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
        (lambda t: t[1], lambda a: a[1]),
        (lambda t: t[:, 1:, ::2], lambda a: a[:, 1:, ::2]),
        (lambda t: t[..., -1], lambda a: a[..., -1]),
        (lambda t: t[None, 0, :, None], lambda a: a[None, 0, :, None]),
        (lambda t: t[:, -2:-1], lambda a: a[:, -2:-1]),
        (lambda t: t[:, 5:], lambda a: a[:, 5:]),
        (lambda t: t.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
        (lambda t: t.select(1, -1), lambda a: a[:, -1]),
        (lambda t: t.unsqueeze(1), lambda a: a[:, None]),
        (lambda t: t[:, :1].squeeze(), lambda a: a[:, :1].squeeze()),
        (lambda t: t[:, :1].squeeze(1), lambda a: a[:, :1].squeeze(1)),
        (lambda t: t.view(6, 4), lambda a: a.reshape(6, 4)),
        (lambda t: t.view(-1), lambda a: a.reshape(-1)),
        (lambda t: t.reshape(4, -1), lambda a: a.reshape(4, -1)),
        (lambda t: t[0].t(), lambda a: a[0].T),
        (lambda t: t.T, lambda a: a.T),
        (lambda t: t.mT, lambda a: np.swapaxes(a, -1, -2)),
        (lambda t: t[:, :, :1].expand(2, 3, 5), lambda a: np.broadcast_to(a[:, :, :1], (2, 3, 5))),
        (lambda t: t.diagonal(0, 1, 2), lambda a: np.diagonal(a, 0, 1, 2)),
        (lambda t: t.diagonal(1, 1, 2), lambda a: np.diagonal(a, 1, 1, 2)),
        (lambda t: t.diagonal(-1, 1, 2), lambda a: np.diagonal(a, -1, 1, 2)),
        (lambda t: t.flatten(1), lambda a: a.reshape(2, 12)),
        (lambda t: t.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
        (lambda t: t.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1)),
        (lambda t: t.unfold(2, 2, 1), lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, axis=2)),
        (
            lambda t: t.as_strided((3, 3), (1, 4), 2),
            lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[2:], (3, 3), (4, 16)),
        ),
    ],
)
def test_view_matches_numpy(fn_tp, fn_np):
    t, a = base()
    v, r = fn_tp(t), fn_np(a)
    assert tuple(v.shape) == r.shape
    np.testing.assert_array_equal(v.numpy(), r)
    assert v._shares_storage(t)


def test_view_strides_equal_numpy_for_pure_views():
    t, a = base()
    assert t.transpose(0, 2).stride() == strides_of(a.transpose(2, 1, 0))
    assert t[:, 1:, ::2].stride() == strides_of(a[:, 1:, ::2])
    assert t[:, 1:, ::2].storage_offset() == 4
    assert t.unsqueeze(0).stride() == (24, 12, 4, 1)


def test_view_incompatible_raises_and_reshape_copies():
    t = tp.arange(6.0).reshape(2, 3).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(6)
    r = t.reshape(6)
    assert r.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert not r._shares_storage(t)


def test_view_errors():
    t = tp.zeros(2, 3)
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        t.view(4)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        t.view(-1, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.transpose(0, 2)
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(RuntimeError, match="expanded size"):
        t.expand(3, 3)
    with pytest.raises(RuntimeError, match="duplicate dims"):
        t.permute(0, 0)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        t.narrow(1, 2, 2)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 24"):
        t.as_strided((3, 3), (3, 1))


def test_size0_and_size1_dims():
    e = tp.zeros(0, 3)
    assert e.view(3, 0).shape == (3, 0)
    with pytest.raises(RuntimeError):  # -1 is ambiguous for 0 elements, as in PyTorch
        e.reshape(0, -1)
    assert e.t().shape == (3, 0)
    o = tp.zeros(1, 3)
    assert o.expand(4, 3).stride() == (0, 1)
    assert tp.zeros(()).view(1).shape == (1,)
    assert tp.zeros(()).unsqueeze(0).shape == (1,)


def test_writes_through_views_and_version_counter():
    t = tp.zeros(2, 3)
    v0 = t._version
    col = t[:, 1]
    col.fill_(5.0)
    assert t.tolist() == [[0.0, 5.0, 0.0], [0.0, 5.0, 0.0]]
    assert t._version > v0 and col._version == t._version
    t[0, 2] = 7
    assert t[0, 2].item() == 7.0
    t[1] = tp.tensor([1.0, 2.0, 3.0])
    assert t[1].tolist() == [1.0, 2.0, 3.0]
    t.t()[0] = 9.0  # write through a transposed view
    assert t[:, 0].tolist() == [9.0, 9.0]


def test_split_chunk_unbind():
    t = tp.arange(10.0)
    assert [p.tolist() for p in t.split(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(p) for p in t.split([2, 3, 5])] == [2, 3, 5]
    assert [len(p) for p in t.chunk(3)] == [4, 4, 2]
    assert [len(p) for p in tp.arange(6).chunk(4)] == [2, 2, 2]
    rows = tp.arange(6).reshape(2, 3).unbind(1)
    assert [r.tolist() for r in rows] == [[0, 3], [1, 4], [2, 5]]
    with pytest.raises(RuntimeError):
        t.split([1, 2])


def test_contiguous_clone_copy():
    t = tp.arange(6.0).reshape(2, 3).t()
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == t.tolist() and c.stride() == (2, 1)
    o = tp.ones(3)
    assert o.contiguous() is o  # already contiguous: the same tensor, as in PyTorch
    x = tp.zeros(2, 3, dtype=tp.int32)
    x.copy_(tp.tensor([1.7, -2.2, 3.9]))  # broadcasting + float->int truncation
    assert x.tolist() == [[1, -2, 3], [1, -2, 3]]
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        x.copy_(tp.ones(4))


def test_to_and_type():
    t = tp.tensor([1.5, -2.5])
    assert t.to(tp.float32) is t
    assert t.to(tp.float32, copy=True) is not t
    assert t.to(tp.int64).tolist() == [1, -2]
    assert (
        t.double().dtype is tp.float64 and t.half().dtype is tp.float16 and t.bool().tolist() == [True, True]
    )
    assert t.type() == "tensorplay.FloatTensor"
    assert t.type(tp.int32).dtype is tp.int32
    m = t.to("meta")
    assert m.device.type == "meta" and m.shape == (2,)
    with pytest.raises(NotImplementedError, match="meta"):
        m.to("cpu")
    with pytest.raises(NotImplementedError, match="meta"):
        tp.ones(1, device="meta").item()
    copied = tp.arange(24.0).reshape(2, 3, 4).transpose(0, 1).reshape(12, 2)  # not viewable: a copy
    assert copied.tolist() == np.arange(24.0).reshape(2, 3, 4).transpose(1, 0, 2).reshape(12, 2).tolist()


def test_detach_shares_storage():
    t = tp.ones(3)
    d = t.detach()
    d[0] = 4.0
    assert t[0].item() == 4.0 and d is not t


def test_meta_shapes():
    a = tp.empty(2, 1, 4, device="meta")
    b = tp.empty(3, 1, dtype=tp.float64, device="meta")
    c = a + b
    assert c.device.type == "meta" and c.shape == (2, 3, 4) and c.dtype is tp.float64
    assert a.transpose(0, 2).shape == (4, 1, 2)
    assert tp.arange(5, device="meta").shape == (5,)
    assert tp.empty(2, 3, device="meta").exp().dtype is tp.float32


# Note [Layout preservation]: expected strides recorded from PyTorch 2.13 on the same calls.
@pytest.mark.parametrize(
    "build,expected",
    [
        (lambda: tp.ones(3, 4).t() + 1, (1, 4)),
        (lambda: tp.ones(3, 4).t().clone(), (1, 4)),
        (lambda: tp.ones(3, 4).t().to(tp.float64), (1, 4)),
        (lambda: tp.ones(3, 4).t().exp(), (1, 4)),
        (lambda: tp.ones(3, 4).t().contiguous(), (3, 1)),
        (lambda: tp.ones(3, 4).t().reshape(12), (1,)),
        (lambda: tp.ones(2, 3, 4).permute(2, 0, 1) * 2, (1, 12, 4)),
        (lambda: tp.ones(2, 3, 4).permute(2, 0, 1).clone(), (1, 12, 4)),
        (lambda: tp.zeros(4, 6)[:, ::2] + 1, (3, 1)),
        (lambda: tp.zeros(4, 6)[:, ::2].clone(), (3, 1)),
        (lambda: tp.ones(3, 4).t() + tp.ones(4, 3), (1, 4)),
        (lambda: tp.ones(4, 3) + tp.ones(3, 4).t(), (3, 1)),
        (lambda: tp.ones(3, 4).t() + tp.ones(3), (1, 4)),
        (lambda: tp.ones(4, 1).expand(4, 3).clone(), (3, 1)),
        (lambda: tp.ones(4, 1).expand(4, 3) + 1, (3, 1)),
        # a slice keeps its dims' order too (PyTorch's infer_dense_strides), for clone and to as for exp
        (lambda: tp.zeros(6, 40, 9).permute(1, 2, 0)[2:5].clone(), (9, 1, 27)),
        (lambda: tp.zeros(6, 40, 9).permute(1, 2, 0)[2:5].to(tp.float64), (9, 1, 27)),
        (lambda: tp.zeros(6, 40, 9).permute(1, 2, 0)[2:5].exp(), (9, 1, 27)),
        (lambda: tp.zeros(6, 40, 9)[:, ::3, 1:].transpose(0, 1).clone(), (8, 112, 1)),
    ],
)
def test_outputs_keep_the_input_layout(build, expected):
    assert build().stride() == expected


@settings(max_examples=60, deadline=None)
@given(st.permutations([0, 1, 2]), st.sampled_from(["add", "clone", "to64", "mul_bcast"]))
def test_layout_matches_torch(perm, op):
    torch = pytest.importorskip("torch")

    def run(m):
        x = m.ones(2, 3, 4).permute(*perm)
        if op == "add":
            return x + 1
        if op == "clone":
            return x.clone()
        if op == "to64":
            return x.to(m.float64)
        return x * m.ones(x.shape[-1])

    results = [tuple(run(m).stride()) for m in (tp, torch)]
    assert results[0] == results[1]
