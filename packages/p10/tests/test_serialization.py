"""tp.save / tp.load: round trips per format, views and shared storage, map_location, bad files, cross-format.

References are NumPy arrays made independently of the code under test; PyTorch's safetensors files are
checked live only when torch is installed. The .pt format against real PyTorch is test_serialization_torch.py;
hostile .pt files (pickles, zip bombs, corrupted zips) are test_serialization_hostile.py.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import pickle
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tensorplay_p10 as tp

NUMPY_DTYPES = {
    "bool": np.bool_,
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "complex64": np.complex64,
    "complex128": np.complex128,
}


def sample(name: str, shape=(3, 4)) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    raw = rng.standard_normal(shape) * 50
    if name == "bool":
        return raw > 0
    if name.startswith("complex"):
        return (raw + 1j * rng.standard_normal(shape)).astype(NUMPY_DTYPES[name])
    return raw.astype(NUMPY_DTYPES[name])


def as_np(t: tp.Tensor) -> np.ndarray:
    return t.float().numpy() if t.dtype is tp.bfloat16 else t.numpy()


def bf16_pair() -> tuple[tp.Tensor, np.ndarray]:
    """A bfloat16 tensor and the float32 values it holds exactly (low 16 bits of each float32 zeroed)."""
    bits = (sample("float32").view(np.uint32) & 0xFFFF0000).astype(np.uint32)
    exact = bits.view(np.float32)
    return tp.from_numpy(exact.copy()).bfloat16(), exact


@pytest.fixture
def tmp(tmp_path):
    return lambda name: str(tmp_path / name)


# ---- .pt round trips --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
@pytest.mark.parametrize("ext", [".pt", ".pth"])
def test_pt_round_trip_every_dtype(tmp, name, ext):
    ref = sample(name)
    path = tmp("x" + ext)
    tp.save({"x": tp.from_numpy(ref.copy())}, path)
    out = tp.load(path)["x"]
    assert out.dtype is getattr(tp, name)
    np.testing.assert_array_equal(out.numpy(), ref)


def test_pt_round_trip_bfloat16(tmp):
    t, exact = bf16_pair()
    tp.save([t], tmp("b.pt"))
    (out,) = tp.load(tmp("b.pt"))
    assert out.dtype is tp.bfloat16
    np.testing.assert_array_equal(as_np(out), exact)


def test_pt_views_share_one_storage(tmp):
    ref = np.arange(24.0).reshape(4, 6)
    a = tp.from_numpy(ref.copy())
    obj = {"a": a, "rows": a[1:3], "cols": a[:, ::2], "t": a.t(), "elem": a[3, 5]}
    tp.save(obj, tmp("v.pt"))
    with zipfile.ZipFile(tmp("v.pt")) as z:  # one buffer, written once
        assert [n for n in z.namelist() if n.startswith("archive/data/")] == ["archive/data/0"]
    out = tp.load(tmp("v.pt"))
    for k, v in obj.items():
        assert out[k].shape == v.shape and out[k].stride() == v.stride()
        assert out[k].storage_offset() == v.storage_offset()
        np.testing.assert_array_equal(out[k].numpy(), v.numpy())
    out["a"][1, 0] = -1.0  # a write through one view is seen by the others
    assert (
        out["rows"][0, 0].item() == -1.0
        and out["cols"][1, 0].item() == -1.0
        and out["t"][0, 1].item() == -1.0
    )
    assert a[1, 0].item() == 6.0  # and not by the original


def test_pt_tied_tensors_and_distinct_storages(tmp):
    w = tp.ones(3, 3)
    other = tp.ones(3, 3)
    tp.save({"enc": w, "dec": w, "other": other}, tmp("tie.pt"))
    out = tp.load(tmp("tie.pt"))
    out["enc"].add_(1.0)
    assert out["dec"][0, 0].item() == 2.0 and out["other"][0, 0].item() == 1.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: tp.tensor(3.5),  # 0-d
        lambda: tp.zeros(0, 4),  # size 0
        lambda: tp.zeros(3, 0, 2).transpose(0, 2),
        lambda: tp.arange(30.0).reshape(5, 6)[::2, 1::3],  # non-contiguous with an offset
        lambda: tp.arange(6).expand(3, 6),  # zero stride
        lambda: tp.arange(10.0)[9:],
    ],
)
def test_pt_odd_shapes(tmp, make):
    t = make()
    tp.save(t, tmp("s.pt"))
    out = tp.load(tmp("s.pt"))
    assert out.shape == t.shape and out.stride() == t.stride() and out.dtype is t.dtype
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_pt_nested_python_values(tmp):
    obj = {
        "list": [1, 2.5, "s", None, True, False],
        "tuple": (1, (2, [3])),
        7: "int key",
        (1, 2): "tuple key",
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "floats": [math.inf, -math.inf, 1e-300],
        "complex": 1 + 2j,
        "dtype": tp.float16,
        "empty": {},
        "set": {1, "a", (2, 3)},
        "frozenset": frozenset([4]),
        "bytes": b"\x00\xffab",
        "no bytes": b"",
        "bytearray": bytearray(b"xy"),
        "slice": slice(1, None, 2),
        "size": tp.Size([2, 3]),
        "device": tp.device("cpu"),
        "big": 2**100,
        "negative": -(2**40),
    }
    tp.save(obj, tmp("n.pt"))
    out = tp.load(tmp("n.pt"))
    nan_free = {k: v for k, v in out.items()}
    assert nan_free == obj
    assert isinstance(out["od"], OrderedDict) and list(out["od"]) == ["b", "a"]
    assert isinstance(out["tuple"], tuple) and isinstance(out["tuple"][1][1], list)
    assert type(out["size"]) is tp.Size and type(out["bytearray"]) is bytearray and type(out["set"]) is set
    tp.save([math.nan], tmp("nan.pt"))
    assert math.isnan(tp.load(tmp("nan.pt"))[0])


def test_pt_requires_grad_is_kept_and_graph_is_not(tmp):
    w = tp.ones(2, requires_grad=True)
    tp.save({"w": w, "c": tp.zeros(2)}, tmp("g.pt"))
    out = tp.load(tmp("g.pt"))
    assert out["w"].requires_grad and out["w"].is_leaf and not out["c"].requires_grad
    pytest.importorskip("tensorplay_tpx")  # with autograd loaded: a non-leaf comes back as a leaf, data only
    y = w * 2
    assert y.grad_fn is not None
    tp.save(y, tmp("y.pt"))
    back = tp.load(tmp("y.pt"))
    assert back.requires_grad and back.is_leaf and back.grad_fn is None


def test_pt_file_like_objects():
    buf = io.BytesIO()
    tp.save({"x": tp.arange(5)}, buf)
    buf.seek(0)
    np.testing.assert_array_equal(tp.load(buf)["x"].numpy(), np.arange(5))


class Custom:
    def __init__(self, v):
        self.v = v


def test_pt_other_objects_need_weights_only_false(tmp):
    tp.save({"a": [1, Custom(tp.ones(2))]}, tmp("c.pt"))
    with pytest.raises(
        pickle.UnpicklingError, match=r"GLOBAL \S*test_serialization\.Custom: it is not an allowed global"
    ):
        tp.load(tmp("c.pt"))
    out = tp.load(tmp("c.pt"), weights_only=False)["a"][1]
    assert type(out) is Custom and out.v.tolist() == [1.0, 1.0]


def test_pt_allow_listed_class_loads(tmp):
    tp.save(Custom(3), tmp("c.pt"))
    with tp.serialization.safe_globals([Custom]):
        assert Custom in tp.serialization.get_safe_globals()
        assert tp.load(tmp("c.pt")).v == 3
    assert Custom not in tp.serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match="Custom"):
        tp.load(tmp("c.pt"))
    tp.serialization.add_safe_globals([Custom])
    try:
        assert tp.load(tmp("c.pt")).v == 3
    finally:
        tp.serialization.clear_safe_globals()
    assert tp.serialization.get_safe_globals() == []


class Tagged(tp.Tensor):
    pass


def test_pt_tensor_subclass_needs_allow_listing(tmp):
    t = Tagged([1.0, 2.0])
    t.note = "hi"
    tp.save(t, tmp("s.pt"))
    with pytest.raises(pickle.UnpicklingError, match="Tagged"):
        tp.load(tmp("s.pt"))
    with tp.serialization.safe_globals([Tagged]):
        out = tp.load(tmp("s.pt"))
    assert type(out) is Tagged and out.note == "hi" and out.tolist() == [1.0, 2.0]


# ---- map_location -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("loc", ["cpu", tp.device("cpu"), {"cpu": "cpu"}, None])
def test_map_location_to_cpu(tmp, loc):
    tp.save({"x": tp.arange(3.0)}, tmp("m.pt"))
    out = tp.load(tmp("m.pt"), map_location=loc)["x"]
    assert out.device == tp.device("cpu")
    np.testing.assert_array_equal(out.numpy(), [0.0, 1.0, 2.0])


def test_map_location_callable_sees_each_storage_once(tmp):
    a = tp.arange(6.0)
    tp.save({"a": a, "v": a[2:], "b": tp.ones(2)}, tmp("c.pt"))
    seen = []

    def move(t, location):
        seen.append((tuple(t.shape), location))
        return t * 10  # a new buffer: the views must follow it

    out = tp.load(tmp("c.pt"), map_location=move)
    assert sorted(seen) == [((2,), "cpu"), ((6,), "cpu")]
    np.testing.assert_array_equal(out["v"].numpy(), np.arange(2.0, 6.0) * 10)


def test_map_location_bad_type(tmp):
    tp.save(tp.ones(1), tmp("x.pt"))
    with pytest.raises(TypeError, match="map_location"):
        tp.load(tmp("x.pt"), map_location=3)


# ---- bad files --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["model.bin", "model", "model.ckpt", "model.tp", "x.npy"])
def test_any_other_name_saves_pt(tmp, name):
    tp.save({"x": tp.arange(3)}, tmp(name))
    with zipfile.ZipFile(tmp(name)) as z:
        assert "archive/data.pkl" in z.namelist()
    assert tp.load(tmp(name))["x"].tolist() == [0, 1, 2]


def test_load_goes_by_content_not_name(tmp):
    tp.save({"x": tp.arange(3)}, tmp("a.pt"))
    os.rename(tmp("a.pt"), tmp("a.safetensors"))
    assert tp.load(tmp("a.safetensors"))["x"].tolist() == [0, 1, 2]
    if importlib.util.find_spec("safetensors") is not None:
        tp.save({"y": tp.arange(2)}, tmp("b.safetensors"))
        os.rename(tmp("b.safetensors"), tmp("b.pt"))
        assert tp.load(tmp("b.pt"))["y"].tolist() == [0, 1]
        with open(tmp("b.pt"), "rb") as fh:
            assert tp.load(io.BytesIO(fh.read()))["y"].tolist() == [0, 1]


@pytest.mark.parametrize(
    "head,match",
    [
        (b"", "the file is empty"),
        (b"hello world, not a checkpoint", "neither a .pt zip"),
        (b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.", "legacy format"),
        (pickle.dumps([1, 2], protocol=2), "legacy format"),
    ],
)
def test_unrecognised_files(tmp, head, match):
    open(tmp("u.pt"), "wb").write(head)
    with pytest.raises(RuntimeError, match=match):
        tp.load(tmp("u.pt"))


def test_truncated_files_raise_runtime_error(tmp):
    tp.save({"x": tp.arange(1000.0), "y": [1, 2]}, tmp("t.pt"))
    data = open(tmp("t.pt"), "rb").read()
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        open(tmp("cut.pt"), "wb").write(data[:cut])
        with pytest.raises(RuntimeError, match="cut.pt' is not a valid checkpoint"):
            tp.load(tmp("cut.pt"))


def test_corrupted_storage_bytes_are_caught(tmp):
    tp.save({"x": tp.arange(1000.0)}, tmp("c.pt"))
    data = bytearray(open(tmp("c.pt"), "rb").read())
    with zipfile.ZipFile(tmp("c.pt")) as z:
        info = z.getinfo("archive/data/0")
    pos = info.header_offset + 30 + len(info.filename) + len(info.extra) + 100  # inside the storage bytes
    data[pos] ^= 0xFF
    open(tmp("c2.pt"), "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match="not a valid checkpoint.*CRC") as info:
        tp.load(tmp("c2.pt"))
    assert isinstance(info.value.__cause__, zipfile.BadZipFile)


# ---- TensorPlay's old .pt (a JSON manifest), still read ----------------------------------------------------


def write_zip(path: str, manifest: dict | str, storages: dict[str, bytes]) -> None:
    """A file in TensorPlay's old .pt format (Note [The old .pt manifest]), written independently of it."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", manifest if isinstance(manifest, str) else json.dumps(manifest))
        for k, v in storages.items():
            z.writestr(k, v)


def tensor_node(**over):
    node = {"storage": 0, "dtype": "float32", "size": [2], "stride": [1], "offset": 0, "requires_grad": False}
    node.update(over)
    return {"tensor": node}


@pytest.mark.parametrize(
    "root,storages,match",
    [
        (tensor_node(offset=1), {"storages/0": b"\0" * 8}, "reaches element 2"),
        (tensor_node(size=[-1]), {"storages/0": b"\0" * 8}, "invalid view"),
        (tensor_node(storage=5), {"storages/0": b"\0" * 8}, "storage 5"),
        (tensor_node(dtype="float64"), {"storages/0": b"\0" * 8}, "differs"),
        (tensor_node(), {}, "storage 0 is missing"),
        (tensor_node(), {"storages/0": b"\0" * 7}, "holds 7 bytes"),
        ({"pickle": "os.system"}, {"storages/0": b"\0" * 8}, "unknown manifest entry 'pickle'"),
        ({"a": 1, "b": 2}, {"storages/0": b"\0" * 8}, "unexpected manifest entry"),
    ],
)
def test_hostile_manifests_raise(tmp, root, storages, match):
    manifest = {
        "format": "tensorplay.pt",
        "version": 1,
        "storages": [{"dtype": "float32", "nbytes": 8}],
        "root": root,
    }
    write_zip(tmp("h.pt"), manifest, storages)
    with pytest.raises(RuntimeError, match=match):
        tp.load(tmp("h.pt"))


def test_old_format_still_loads(tmp):
    ref = np.arange(6, dtype=np.float32)
    manifest = {
        "format": "tensorplay.pt",
        "version": 1,
        "storages": [{"dtype": "float32", "nbytes": 24}],
        "root": {"odict": [["w", tensor_node(size=[2, 3], stride=[3, 1])], ["v", tensor_node(offset=4)]]},
    }
    write_zip(tmp("old.pt"), manifest, {"storages/0": ref.tobytes()})
    out = tp.load(tmp("old.pt"))
    assert isinstance(out, OrderedDict)
    np.testing.assert_array_equal(out["w"].numpy(), ref.reshape(2, 3))
    out["w"][1, 1] = 100.0  # the two views share the one storage
    assert out["v"].tolist() == [100.0, 5.0]


def test_manifest_not_json_and_wrong_format(tmp):
    write_zip(tmp("j.pt"), "{not json", {})
    with pytest.raises(RuntimeError, match="manifest.json"):
        tp.load(tmp("j.pt"))
    write_zip(tmp("f.pt"), {"format": "other"}, {})
    with pytest.raises(RuntimeError, match="does not describe"):
        tp.load(tmp("f.pt"))


def test_deeply_nested_manifest(tmp):
    deep = "[" * 100_000 + "0" + "]" * 100_000
    write_zip(
        tmp("deep.pt"), '{"format": "tensorplay.pt", "version": 1, "storages": [], "root": ' + deep + "}", {}
    )
    with pytest.raises(RuntimeError, match="deep.pt. is not a valid checkpoint.*(recursion|nested)"):
        tp.load(tmp("deep.pt"))


def test_weights_only_must_be_a_bool(tmp):
    tp.save([1], tmp("w.pt"))
    assert tp.load(tmp("w.pt"), weights_only=False) == [1]
    with pytest.raises(TypeError, match="weights_only"):
        tp.load(tmp("w.pt"), weights_only="yes")


# ---- .safetensors -----------------------------------------------------------------------------------------
ST_DTYPES = [n for n in NUMPY_DTYPES if n != "complex128"]


@pytest.mark.parametrize("name", ST_DTYPES)
def test_safetensors_round_trip_and_numpy_reader(tmp, name):
    st_numpy = pytest.importorskip("safetensors.numpy")
    ref = sample(name)
    tp.save({"x": tp.from_numpy(ref.copy()), "nc": tp.from_numpy(ref.copy()).t()}, tmp("a.safetensors"))
    out = tp.load(tmp("a.safetensors"))
    np.testing.assert_array_equal(out["x"].numpy(), ref)
    np.testing.assert_array_equal(out["nc"].numpy(), ref.T)
    if name != "complex64":  # the safetensors package's own NumPy reader, independent of ours
        theirs = st_numpy.load_file(tmp("a.safetensors"))
        np.testing.assert_array_equal(theirs["x"], ref)
        np.testing.assert_array_equal(theirs["nc"], ref.T)


def test_safetensors_bfloat16_header_and_bytes(tmp):
    pytest.importorskip("safetensors")
    t, exact = bf16_pair()
    tp.save({"w": t}, tmp("b.safetensors"))
    raw = open(tmp("b.safetensors"), "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    assert header["w"]["dtype"] == "BF16" and header["w"]["shape"] == list(exact.shape)
    payload = np.frombuffer(raw[8 + n :], dtype=np.uint16)
    np.testing.assert_array_equal(payload, (exact.view(np.uint32) >> 16).reshape(-1))
    np.testing.assert_array_equal(as_np(tp.load(tmp("b.safetensors"))["w"]), exact)


def test_safetensors_rejects_non_flat_and_shared(tmp):
    pytest.importorskip("safetensors")
    with pytest.raises(TypeError, match="flat dict of str -> Tensor"):
        tp.save({"a": {"b": tp.ones(1)}}, tmp("n.safetensors"))
    with pytest.raises(TypeError, match="flat dict"):
        tp.save([tp.ones(1)], tmp("n.safetensors"))
    a = tp.ones(4)
    with pytest.raises(RuntimeError, match="share memory"):
        tp.save({"a": a, "b": a[1:]}, tmp("s.safetensors"))
    with pytest.raises(TypeError, match="complex128"):
        tp.save({"c": tp.zeros(1, dtype=tp.complex128)}, tmp("c.safetensors"))


def test_safetensors_corrupted(tmp):
    pytest.importorskip("safetensors")
    tp.save({"x": tp.arange(100.0)}, tmp("c.safetensors"))
    data = open(tmp("c.safetensors"), "rb").read()
    for bad in (data[:-10], data[:5], b"\xff" * 16 + data[16:]):
        open(tmp("bad.safetensors"), "wb").write(bad)
        with pytest.raises(RuntimeError, match="bad.safetensors' is not a valid"):
            tp.load(tmp("bad.safetensors"))


def test_safetensors_missing_package_is_a_clear_import_error(tmp, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        tp.save({"x": tp.ones(1)}, tmp("x.safetensors"))


@pytest.mark.parametrize("name", ST_DTYPES + ["bfloat16"])
def test_safetensors_files_cross_with_pytorch(tmp, name):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    if name == "bfloat16":
        t, exact = bf16_pair()
        ours, ref = {"w": t}, {"w": torch.from_numpy(exact.copy()).bfloat16()}
    else:
        arr = sample(name)
        ours, ref = {"w": tp.from_numpy(arr.copy())}, {"w": torch.from_numpy(arr.copy())}
    # PyTorch writes, we read.
    st_torch.save_file(ref, tmp("torch.safetensors"))
    got = tp.load(tmp("torch.safetensors"))["w"]
    assert got.dtype is getattr(tp, name)
    np.testing.assert_array_equal(
        as_np(got), ref["w"].float().numpy() if name == "bfloat16" else ref["w"].numpy()
    )
    # We write, PyTorch reads.
    tp.save(ours, tmp("tp.safetensors"))
    back = st_torch.load_file(tmp("tp.safetensors"))["w"]
    assert str(back.dtype) == f"torch.{name}"
    assert torch.equal(back, ref["w"])


# ---- .mega ------------------------------------------------------------------------------------------------
def test_mega_without_megatensors_is_a_clear_import_error(tmp, monkeypatch):
    monkeypatch.setitem(sys.modules, "megatensors", None)
    with pytest.raises(ImportError, match="megatensors"):
        tp.save({"x": tp.ones(1)}, tmp("x.mega"))
    assert not os.path.exists(tmp("x.mega"))
    open(tmp("y.mega"), "wb").write(b"MEGA\x01\x00\x00\x00")  # recognised by its magic, whatever its name
    os.rename(tmp("y.mega"), tmp("y.bin"))
    with pytest.raises(ImportError, match="pip install megatensors"):
        tp.load(tmp("y.bin"))


MEGA_DTYPES = [n for n in NUMPY_DTYPES if not n.startswith("complex")]


def test_mega_round_trip_every_dtype(tmp):
    pytest.importorskip("megatensors.cpp")
    refs = {name: sample(name) for name in MEGA_DTYPES}
    t_bf16, exact = bf16_pair()
    tensors = {name: tp.from_numpy(r.copy()) for name, r in refs.items()}
    tensors["bf16"], tensors["nc"], tensors["empty"] = t_bf16, tensors["float32"].t(), tp.zeros(0, 3)
    tp.save(tensors, tmp("m.mega"))
    out = tp.load(tmp("m.mega"))
    for name, r in refs.items():
        assert out[name].dtype is getattr(tp, name)
        np.testing.assert_array_equal(out[name].numpy(), r)
    np.testing.assert_array_equal(as_np(out["bf16"]), exact)
    np.testing.assert_array_equal(out["nc"].numpy(), refs["float32"].T)
    assert out["empty"].shape == (0, 3)


def test_mega_corrupted_and_bad_input(tmp):
    pytest.importorskip("megatensors.cpp")
    tp.save({"x": tp.arange(256.0)}, tmp("c.mega"))
    data = bytearray(open(tmp("c.mega"), "rb").read())
    data[-20] ^= 0xFF  # a payload byte: the CRC32 catches it
    open(tmp("bad.mega"), "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match="corrupted"):
        tp.load(tmp("bad.mega"))
    open(tmp("cut.mega"), "wb").write(bytes(data[:40]))
    with pytest.raises(RuntimeError, match="not a valid .mega file"):
        tp.load(tmp("cut.mega"))
    with pytest.raises(TypeError, match="flat dict"):
        tp.save({"x": [tp.ones(1)]}, tmp("n.mega"))


def test_mega_files_load_in_megatensors_pytorch_loader(tmp):
    pytest.importorskip("megatensors.cpp")
    torch = pytest.importorskip("torch")
    import megatensors

    t_bf16, exact = bf16_pair()
    ref = sample("float32")
    tp.save({"w": tp.from_numpy(ref.copy()), "b": t_bf16, "i": tp.arange(4)}, tmp("x.mega"))
    theirs = megatensors.load_state_dict(tmp("x.mega"), framework="pt")
    np.testing.assert_array_equal(theirs["w"].numpy(), ref)
    assert theirs["b"].dtype == torch.bfloat16
    np.testing.assert_array_equal(theirs["b"].float().numpy(), exact)
    assert theirs["i"].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("name", ["serialization", "_pickle"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"tensorplay_p10.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
