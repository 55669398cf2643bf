"""tp.save / tp.load against real PyTorch: .pt files written by one and read by the other, both ways.

Every test needs torch (skipped without it). References are NumPy arrays made independently of both
libraries; sharing is checked by writing through one loaded view and reading through another.
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tensorplay_p10 as tp

torch = pytest.importorskip("torch")

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def sample(name: str, shape=(3, 4)) -> np.ndarray:
    """Values exact in ``name`` (bfloat16 ones are float32 with the low 16 bits zero), as NumPy."""
    rng = np.random.default_rng(sum(map(ord, name)))
    raw = rng.standard_normal(shape) * 50
    if name == "bool":
        return raw > 0
    if name.startswith("complex"):
        return (raw + 1j * rng.standard_normal(shape)).astype(name)
    if name == "bfloat16":
        return (raw.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
    return raw.astype(name)


def tp_tensor(name: str, ref: np.ndarray) -> tp.Tensor:
    t = tp.from_numpy(ref.copy())
    return t.bfloat16() if name == "bfloat16" else t


def torch_tensor(name: str, ref: np.ndarray):
    t = torch.from_numpy(ref.copy())
    return t.bfloat16() if name == "bfloat16" else t


def tp_np(t: tp.Tensor) -> np.ndarray:
    return t.float().numpy() if t.dtype is tp.bfloat16 else t.numpy()


def torch_np(t) -> np.ndarray:
    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


@pytest.fixture
def tmp(tmp_path):
    return lambda name: str(tmp_path / name)


@pytest.mark.parametrize("name", DTYPES)
def test_tensorplay_writes_torch_reads(tmp, name):
    ref = sample(name)
    t = tp_tensor(name, ref)
    tp.save({"x": t, "nc": t.t(), "row": t[1]}, tmp("a.pt"))
    out = torch.load(tmp("a.pt"))  # torch's default: weights_only=True
    assert out["x"].dtype == getattr(torch, name)
    np.testing.assert_array_equal(torch_np(out["x"]), ref)
    np.testing.assert_array_equal(torch_np(out["nc"]), ref.T)
    assert out["nc"].stride() == (1, 4) and out["row"].storage_offset() == 4
    assert out["x"].untyped_storage().data_ptr() == out["row"].untyped_storage().data_ptr()


@pytest.mark.parametrize("name", DTYPES)
def test_torch_writes_tensorplay_reads(tmp, name):
    ref = sample(name)
    t = torch_tensor(name, ref)
    torch.save({"x": t, "nc": t.t(), "row": t[1]}, tmp("b.pt"))
    out = tp.load(tmp("b.pt"))
    assert out["x"].dtype is getattr(tp, name)
    np.testing.assert_array_equal(tp_np(out["x"]), ref)
    np.testing.assert_array_equal(tp_np(out["nc"]), ref.T)
    assert out["nc"].stride() == (1, 4) and out["row"].storage_offset() == 4


def test_views_and_tied_weights_share_both_ways(tmp):
    ref = np.arange(12.0, dtype=np.float32)
    w = torch.from_numpy(ref.copy()).reshape(3, 4)
    torch.save({"enc": w, "dec": w, "col": w[:, 1], "other": w.clone()}, tmp("t.pt"))
    out = tp.load(tmp("t.pt"))
    out["enc"][0, 1] = -5.0
    assert out["dec"][0, 1].item() == -5.0 and out["col"][0].item() == -5.0
    assert out["other"][0, 1].item() == 1.0
    tp.save(out, tmp("back.pt"))
    back = torch.load(tmp("back.pt"))
    back["dec"][2, 1] = 7.0
    assert back["enc"][2, 1].item() == 7.0 and back["col"][2].item() == 7.0
    assert back["other"][2, 1].item() == 9.0
    assert len({back[k].untyped_storage().data_ptr() for k in ("enc", "dec", "col")}) == 1


def test_plain_values_both_ways(tmp):
    theirs = {
        "n": [1, -2, 2**70, 1.5, float("inf"), None, True, "s", b"\x00ab", 1 - 2j],
        "t": (1, (2,)),
        "set": {3, 4},
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "dtype": torch.bfloat16,
        "size": torch.Size([2, 3]),
        "dev": torch.device("cpu"),
    }
    torch.save(theirs, tmp("v.pt"))
    ours = tp.load(tmp("v.pt"))
    assert ours["n"] == theirs["n"] and ours["t"] == theirs["t"] and ours["set"] == theirs["set"]
    assert list(ours["od"].items()) == [("b", 1), ("a", 2)]
    assert ours["dtype"] is tp.bfloat16 and ours["size"] == tp.Size([2, 3]) and type(ours["size"]) is tp.Size
    assert ours["dev"] == tp.device("cpu")
    tp.save(ours, tmp("w.pt"))
    again = torch.load(tmp("w.pt"))
    assert again == theirs


def test_state_dicts_cross(tmp):
    lin = torch.nn.Linear(3, 2)
    torch.save(lin.state_dict(), tmp("sd.pt"))
    sd = tp.load(tmp("sd.pt"))
    assert isinstance(sd, OrderedDict) and list(sd) == ["weight", "bias"]
    assert sd._metadata == lin.state_dict()._metadata  # BUILD of an OrderedDict's attributes
    np.testing.assert_array_equal(sd["weight"].numpy(), lin.weight.detach().numpy())
    sd["weight"].mul_(2.0)
    tp.save(sd, tmp("sd2.pt"))
    lin2 = torch.nn.Linear(3, 2)
    lin2.load_state_dict(torch.load(tmp("sd2.pt")))
    np.testing.assert_array_equal(lin2.weight.detach().numpy(), lin.weight.detach().numpy() * 2)


def test_parameters_cross(tmp):
    nn = pytest.importorskip("tensorplay_nn")
    p = torch.nn.Parameter(torch.ones(2, 2))
    torch.save({"p": p, "view": p.detach()[0]}, tmp("p.pt"))
    out = tp.load(tmp("p.pt"))
    assert type(out["p"]) is nn.nn.Parameter and out["p"].requires_grad
    out["p"].detach()[0, 0] = 3.0  # the parameter and the plain view share storage
    assert out["view"][0].item() == 3.0
    tp.save({"p": nn.nn.Parameter(tp.zeros(3)), "frozen": nn.nn.Parameter(tp.zeros(1), False)}, tmp("q.pt"))
    back = torch.load(tmp("q.pt"))
    assert type(back["p"]) is torch.nn.Parameter and back["p"].requires_grad
    assert not back["frozen"].requires_grad


def test_requires_grad_crosses(tmp):
    torch.save(torch.ones(2, requires_grad=True), tmp("g.pt"))
    assert tp.load(tmp("g.pt")).requires_grad
    tp.save(tp.ones(2, requires_grad=True), tmp("h.pt"))
    assert torch.load(tmp("h.pt")).requires_grad


def test_file_objects_and_other_protocols(tmp):
    buf = io.BytesIO()
    torch.save({"x": torch.arange(3)}, buf)  # torch names the folder "archive" for a file object
    assert tp.load(io.BytesIO(buf.getvalue()))["x"].tolist() == [0, 1, 2]
    for protocol in (3, 4, 5):  # FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL, ...
        torch.save({"x": torch.arange(4.0), "s": "é", "b": b"xy"}, tmp("p.pt"), pickle_protocol=protocol)
        out = tp.load(tmp("p.pt"))
        assert out["x"].tolist() == [0.0, 1.0, 2.0, 3.0] and out["s"] == "é" and out["b"] == b"xy"


def test_layout_is_torchs(tmp):
    tp.save({"a": tp.ones(3), "b": tp.zeros(5, dtype=tp.int64)}, tmp("ours.pt"))
    torch.save({"a": torch.ones(3), "b": torch.zeros(5, dtype=torch.int64)}, tmp("theirs.pt"))

    def members(path):
        with zipfile.ZipFile(path) as z:
            return {n.split("/", 1)[1]: z.read(n) for n in z.namelist()}, z.infolist()

    ours, infos = members(tmp("ours.pt"))
    theirs, _ = members(tmp("theirs.pt"))
    assert set(ours) == set(theirs)
    for k in ("version", "byteorder", ".format_version", ".storage_alignment", "data/0", "data/1"):
        assert ours[k] == theirs[k], k
    raw = open(tmp("ours.pt"), "rb").read()
    for info in infos:  # every member's bytes start at a multiple of 64, as torch writes them
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
    # torch's own reader finds what it expects at every member (mmap needs the alignment)
    mapped = torch.load(tmp("ours.pt"), mmap=True)
    assert mapped["a"].tolist() == [1.0, 1.0, 1.0]


def test_whole_module_needs_weights_only_false(tmp):
    torch.save(torch.nn.Linear(2, 2), tmp("m.pt"))
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        tp.load(tmp("m.pt"))


def test_torch_legacy_format_is_named(tmp):
    torch.save({"x": torch.ones(2)}, tmp("old.pt"), _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy format.*not support"):
        tp.load(tmp("old.pt"))


def test_tensorplay_old_format_rewrites_for_torch(tmp):
    import json

    with zipfile.ZipFile(tmp("old.pt"), "w") as z:  # TensorPlay's first format (Note [The old .pt manifest])
        node = {"storage": 0, "dtype": "float32", "size": [2], "stride": [1], "offset": 0}
        manifest = {"format": "tensorplay.pt", "version": 1, "storages": [{"dtype": "float32", "nbytes": 8}]}
        z.writestr("manifest.json", json.dumps({**manifest, "root": {"tensor": node}}))
        z.writestr("storages/0", np.array([1.5, 2.5], np.float32).tobytes())
    tp.save(tp.load(tmp("old.pt")), tmp("new.pt"))
    assert torch.load(tmp("new.pt")).tolist() == [1.5, 2.5]


def test_a_storage_saved_alone_comes_back_as_a_tensor(tmp):
    ref = np.array([1.5, -2.0], dtype=np.float32)
    torch.save(torch.from_numpy(ref.copy()).untyped_storage(), tmp("u.pt"))
    raw = tp.load(tmp("u.pt"))
    assert raw.dtype is tp.uint8 and raw.numpy().tobytes() == ref.tobytes()
