"""Pickling tensors (tensorplay_p10/_pickle.py): values, dtypes, shared views, deepcopy, processes."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import tensorplay_p10 as tp

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def roundtrip(obj, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_every_dtype(name, protocol):
    ref = (np.arange(-6, 6).reshape(3, 4) * 7).astype(name if name != "bool" else np.bool_)
    out = roundtrip(tp.from_numpy(ref.copy()), protocol)
    assert type(out) is tp.Tensor and out.dtype is getattr(tp, name)
    np.testing.assert_array_equal(out.numpy(), ref)


def test_bfloat16_bits_survive():
    t = tp.tensor([1.5, -2.25, 3e38, 1e-39]).bfloat16()
    out = roundtrip(t)
    assert out.dtype is tp.bfloat16
    np.testing.assert_array_equal(out.float().numpy(), t.float().numpy())


def test_views_share_their_new_storage():
    a = tp.arange(12.0).reshape(3, 4)
    a2, row, col, tr = roundtrip([a, a[1], a[:, 2], a.t()])
    assert (row.storage_offset(), col.stride(), tr.stride()) == (4, (4,), (1, 4))
    a2[1, 2] = 100.0
    assert row[2].item() == 100.0 and col[1].item() == 100.0 and tr[2, 1].item() == 100.0
    assert a[1, 2].item() == 6.0


def test_separate_pickles_do_not_share():
    a = tp.zeros(3)
    b = roundtrip(a)
    c = roundtrip(a[1:])
    b[1] = 5.0
    assert c[0].item() == 0.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: tp.tensor(2.5),
        lambda: tp.zeros(0),
        lambda: tp.zeros(2, 0, 3),
        lambda: tp.arange(20).reshape(4, 5)[1::2, ::3],
        lambda: tp.ones(3).expand(2, 3),
    ],
)
def test_odd_shapes(make):
    t = make()
    out = roundtrip(t)
    assert out.shape == t.shape and out.stride() == t.stride()
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_requires_grad_and_deepcopy():
    w = tp.ones(3, requires_grad=True)
    out = roundtrip(w)
    assert out.requires_grad and out.is_leaf
    d = copy.deepcopy({"w": w, "v": w.detach()[1:]})
    assert d["w"].requires_grad and not d["v"].requires_grad
    d["w"].detach().add_(1.0)
    assert d["v"][0].item() == 2.0 and w[0].item() == 1.0  # the copies share with each other, not with w


class Tagged(tp.Tensor):
    pass


def test_subclass_and_attributes_survive():
    t = Tagged([1.0, 2.0])
    t.note = "hello"
    out = roundtrip(t)
    assert type(out) is Tagged and out.note == "hello"
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])


def _double(q_in, q_out):
    q_out.put(q_in.get() * 2)


def test_tensors_cross_processes():
    ctx = multiprocessing.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_double, args=(q_in, q_out))
    p.start()
    q_in.put(tp.arange(5.0)[1:])
    out = q_out.get(timeout=60)
    p.join(60)
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0, 6.0, 8.0])


def test_meta_tensors_do_not_pickle():
    with pytest.raises(RuntimeError, match="meta tensor"):
        pickle.dumps(tp.empty(2, device="meta"))
