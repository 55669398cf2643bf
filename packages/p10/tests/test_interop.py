"""NumPy and DLPack interop (memory is shared, not copied) and Python conversions."""

import numpy as np
import pytest

import tensorplay_p10 as tp


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tp.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1
    assert a[1, 2] == -1
    assert t.dtype is tp.float32 and t.shape == (2, 3) and t.stride() == (3, 1)


def test_from_numpy_strided_and_dtypes():
    a = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]
    t = tp.from_numpy(a)
    assert t.stride() == (4, 2) and t.tolist() == a.tolist()
    for dt in (
        np.bool_,
        np.uint8,
        np.int8,
        np.int32,
        np.int64,
        np.float16,
        np.float64,
        np.complex64,
        np.complex128,
    ):
        arr = np.ones(3, dtype=dt)
        assert tp.from_numpy(arr).numpy().dtype == arr.dtype
    with pytest.raises(TypeError, match="can't convert"):
        tp.from_numpy(np.ones(2, dtype=np.uint16))
    with pytest.raises(ValueError, match="negative"):
        tp.from_numpy(np.arange(4)[::-1])
    with pytest.raises(TypeError):
        tp.from_numpy([1, 2])


def test_numpy_shares_memory():
    t = tp.zeros(2, 2)
    a = t.numpy()
    a[0, 1] = 3
    assert t[0, 1].item() == 3
    tt = tp.arange(6.0).reshape(2, 3).t()
    assert tt.numpy().strides == (4, 12)
    with pytest.raises(TypeError, match="BFloat16"):
        tp.ones(2, dtype=tp.bfloat16).numpy()
    assert np.asarray(tp.ones(2, dtype=tp.bfloat16)).dtype == np.float32
    with pytest.raises(TypeError, match="meta"):
        tp.ones(2, device="meta").numpy()


def test_dlpack_round_trip_with_numpy():
    t = tp.arange(12.0).reshape(3, 4)[:, 1:3]
    a = np.from_dlpack(t)
    assert a.shape == (3, 2) and a.tolist() == t.tolist()
    assert t.__dlpack_device__() == (1, 0)
    back = tp.from_dlpack(a)
    back[0, 0] = 100
    assert t[0, 0].item() == 100
    cap = t.__dlpack__()
    u = tp.from_dlpack(cap)
    assert u.tolist() == t.tolist()
    with pytest.raises(TypeError):
        tp.from_dlpack(cap)  # a capsule is consumed once


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    t = tp.arange(6.0).reshape(2, 3)
    pt = torch.from_dlpack(t)
    pt[0, 0] = 9
    assert t[0, 0].item() == 9
    back = tp.from_dlpack(torch.arange(4, dtype=torch.int32))
    assert back.dtype is tp.int32 and back.tolist() == [0, 1, 2, 3]


def test_python_conversions():
    t = tp.tensor([[1, 2], [3, 4]])
    assert len(t) == 2 and [r.tolist() for r in t] == [[1, 2], [3, 4]]
    assert t.tolist() == [[1, 2], [3, 4]]
    s = tp.tensor(2.5)
    assert float(s) == 2.5 and int(s) == 2 and bool(s) and s.item() == 2.5
    assert [10, 20, 30][tp.tensor(1)] == 20
    with pytest.raises(TypeError):
        [1, 2][tp.tensor(1.0)]
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tp.ones(2))
    with pytest.raises(TypeError, match="0-d"):
        len(s)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        t.item()
    assert tp.tensor([1 + 2j]).tolist() == [1 + 2j]
    assert tp.tensor(True).item() is True


def test_size_object():
    t = tp.zeros(2, 3)
    assert repr(t.shape) == "tensorplay.Size([2, 3])"
    assert t.shape == (2, 3) and t.size() == t.shape and t.size(1) == 3 and t.size(-1) == 3
    assert t.shape.numel() == 6 and isinstance(t.shape[1:], tp.Size)


def test_device_objects():
    assert repr(tp.device("cuda:1")) == "device(type='cuda', index=1)"
    assert str(tp.device("cuda", 0)) == "cuda:0"
    assert tp.device("cpu") == "cpu"
    assert tp.zeros(1).device == tp.device("cpu")
    with pytest.raises(RuntimeError, match="Expected one of"):
        tp.device("tpu")
    with pytest.raises(RuntimeError):
        tp.device("cuda:x")
