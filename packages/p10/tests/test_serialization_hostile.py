"""tp.load on hostile and broken .pt files: pickles that try to run code, zip bombs, corrupt zips, bad views.

The files are built here byte by byte (pickle opcodes, zip members), independently of the writer under test.
Each code-running payload would create a marker file; the tests assert that it never appears, and, as a check
that the payloads are real, that Python's own unpickler (``weights_only=False``) does run one of them.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import tensorplay_p10 as tp


@pytest.fixture
def tmp(tmp_path):
    return lambda name: str(tmp_path / name)


# ---- a tiny protocol-2 pickle writer, opcode by opcode ----------------------------------------------------
def G(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def S(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def I(n: int) -> bytes:  # noqa: E743 (the opcode's name)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def T(*items: bytes) -> bytes:
    return b"(" + b"".join(items) + b"t"


def P(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


def storage_id(key="0", numel=4, kind="FloatStorage", location="cpu") -> bytes:
    return T(S("storage"), G("torch", kind), S(key), S(location), I(numel)) + b"Q"


def tensor(sid=None, offset=0, size=(4,), stride=(1,)) -> bytes:
    sid = storage_id() if sid is None else sid
    hooks = G("collections", "OrderedDict") + b")R"
    args = T(sid, I(offset), T(*map(I, size)), T(*map(I, stride)), b"\x89", hooks)
    return G("torch._utils", "_rebuild_tensor_v2") + args + b"R"


FLOATS = np.arange(4, dtype=np.float32).tobytes()


def write_pt(path: str, pkl: bytes, storages: dict[str, bytes] | None = None, method=zipfile.ZIP_STORED):
    storages = {"0": FLOATS} if storages is None else storages
    with zipfile.ZipFile(path, "w", compression=method) as z:
        z.writestr("archive/data.pkl", pkl)
        for key, data in storages.items():
            z.writestr(f"archive/data/{key}", data)
        z.writestr("archive/version", b"3\n")


def test_the_hand_made_tensor_pickle_loads(tmp):
    write_pt(tmp("ok.pt"), P(T(tensor(), tensor(offset=1, size=(2,), stride=(2,)))))
    a, b = tp.load(tmp("ok.pt"))
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0] and b.tolist() == [1.0, 3.0]
    a[3] = 9.0
    assert b[1].item() == 9.0


# ---- pickles that try to run code ---------------------------------------------------------------------
class Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def payloads(marker: str) -> dict[str, bytes]:
    cmd = S(f"touch {marker}")
    return {
        "reduce os.system": pickle.dumps(Evil(marker), protocol=2),
        "reduce os.system, protocol 4": pickle.dumps(Evil(marker), protocol=4),
        "posix.system": P(G("posix", "system") + T(cmd) + b"R"),
        "builtins eval": P(G("builtins", "eval") + T(S(f"__import__('os').system('touch {marker}')")) + b"R"),
        "__builtin__ exec": P(G("__builtin__", "exec") + T(S(f"open({marker!r}, 'w')")) + b"R"),
        "builtins getattr": P(G("builtins", "getattr") + T(G("os", "path"), S("join")) + b"R"),
        "subprocess": P(G("subprocess", "check_call") + T(T(S("touch"), S(marker))) + b"R"),
        "fake torch._utils name": P(G("torch._utils", "system") + T(cmd) + b"R"),
        "torch._utils helper": P(G("torch._utils", "_import_dotted_name") + T(S("os.system")) + b"R"),
        "torch.nn module": P(G("torch.nn.modules.linear", "Linear") + T(I(2), I(2)) + b"R"),
        "stack global": b"\x80\x04" + b"\x8c\x02os\x8c\x06system\x93" + T(cmd) + b"R.",
        "nested reduce in allowed call": P(
            G("collections", "OrderedDict") + T(G("os", "system") + T(cmd) + b"R") + b"R"
        ),
        "reduce in a tensor's args": P(
            G("torch._utils", "_rebuild_tensor_v2") + T(G("os", "system") + T(cmd) + b"R", I(0)) + b"R"
        ),
        "INST": P(b"(" + cmd + b"ios\nsystem\n"),
        "OBJ of os.system": P(b"(" + G("os", "system") + cmd + b"o"),
        "OBJ": P(b"(" + G("builtins", "set") + T(cmd) + b"o"),
        "NEWOBJ of a class": P(G("subprocess", "Popen") + T(T(S("touch"), S(marker))) + b"\x81"),
        "EXT1": P(b"\x82\x01" + T(cmd) + b"R"),
        "persistent id not a storage": P(T(S("module"), S("os.system")) + b"Q"),
        "text persistent id": P(b"Pos.system\n"),
    }


def test_hostile_pickles_never_run(tmp):
    marker = tmp("pwned")
    for what, pkl in payloads(marker).items():
        write_pt(tmp("evil.pt"), pkl)
        with pytest.raises(pickle.UnpicklingError) as info:
            tp.load(tmp("evil.pt"))
        assert "evil.pt" in str(info.value), what
        assert not os.path.exists(marker), what


@pytest.mark.parametrize("what", ["reduce os.system", "posix.system", "subprocess", "INST", "OBJ"])
def test_each_payload_is_refused_by_name(tmp, what):
    marker = tmp("pwned")
    write_pt(tmp("evil.pt"), payloads(marker)[what])
    expected = {
        "reduce os.system": r"GLOBAL (posix|os)\.system",
        "posix.system": r"GLOBAL posix\.system is never allowed",
        "subprocess": r"GLOBAL subprocess\.check_call is never allowed",
        "INST": r"opcode INST",
        "OBJ": r"opcode OBJ",
    }[what]
    with pytest.raises(pickle.UnpicklingError, match=expected):
        tp.load(tmp("evil.pt"))
    assert not os.path.exists(marker)


def test_the_payloads_are_real(tmp):
    marker = tmp("ran")
    write_pt(tmp("evil.pt"), payloads(marker)["reduce os.system"])
    tp.load(tmp("evil.pt"), weights_only=False)  # Python's unpickler: it runs, as documented
    assert os.path.exists(marker)


def test_blocked_modules_stay_blocked_when_allow_listed(tmp):
    marker = tmp("pwned")
    write_pt(tmp("evil.pt"), payloads(marker)["posix.system"])
    with tp.serialization.safe_globals([os.system, (os.system, "posix.system")]):
        with pytest.raises(pickle.UnpicklingError, match="never allowed"):
            tp.load(tmp("evil.pt"))
    assert not os.path.exists(marker)


@pytest.mark.parametrize(
    "what,body,match",
    [
        ("BUILD on a list", b"]" + G("builtins", "set") + b"b", "BUILD of a list"),
        (
            "BUILD on an allowed function",
            G("torch._utils", "_rebuild_tensor_v2") + b"}b",
            "BUILD of a function",
        ),
        ("BUILD on a dtype", G("torch", "float32") + b"}b", "BUILD of a dtype"),
        ("BUILD on a tensor", tensor() + b"}" + S("__class__") + S("x") + b"sb", "BUILD of a Tensor"),
        (
            "BUILD dunder on OrderedDict",
            G("collections", "OrderedDict") + b")R}" + S("__class__") + I(1) + b"sb",
            "attribute names",
        ),
        ("REDUCE on a dtype", G("torch", "float32") + b")R", "not an allowed callable"),
        ("REDUCE on torch.Tensor", G("torch", "Tensor") + T(I(2**40)) + b"R", "not an allowed callable"),
        ("NEWOBJ of a rebuild", G("torch._utils", "_rebuild_tensor_v2") + b")\x81", "NEWOBJ"),
        ("APPEND to a dict", b"}" + I(1) + b"a", "APPEND into a dict"),
        ("SETITEM on a list", b"]" + I(1) + I(2) + b"s", "SETITEM into a list"),
        ("memo read before write", b"h\x05", "memo entry 5"),
        ("no STOP", b"]", None),
        ("unhashable key", b"}" + b"]" + I(1) + b"s", "bad set item or dict key"),
        ("text INT", b"I1\n", "opcode INT"),
        ("string too long", b"X\xff\xff\xff\x7f" + b"ab", "ends inside an opcode"),
    ],
)
def test_odd_opcode_uses_are_refused(tmp, what, body, match):
    pkl = P(body) if match is not None else b"\x80\x02" + body
    write_pt(tmp("odd.pt"), pkl)
    with pytest.raises(pickle.UnpicklingError, match=match or "without STOP"):
        tp.load(tmp("odd.pt"))


@pytest.mark.parametrize(
    "body,match",
    [
        (G("builtins", "bytes") + T(I(2**40)) + b"R", "builtins.bytes"),
        (G("builtins", "bytearray") + T(I(2**40)) + b"R", "builtins.bytearray"),
        (G("builtins", "set") + T(tensor()) + b"R", "builtins.set takes a list"),
        (G("_codecs", "encode") + T(S("x"), S("rot13")) + b"R", "latin-1"),
        (G("torch", "Size") + T(T(I(-1))) + b"R", "negative"),
        (
            G("torch._utils", "_rebuild_tensor_v2") + T(I(0), I(0), T(), T(), b"\x89", b"N") + b"R",
            "not a storage",
        ),
        (
            G("torch._tensor", "_rebuild_from_type_v2")
            + T(G("builtins", "set"), G("torch", "Tensor"), b")", b"N")
            + b"R",
            "not a tensor rebuild function",
        ),
    ],
)
def test_allowed_callables_check_their_arguments(tmp, body, match):
    write_pt(tmp("args.pt"), P(body))
    with pytest.raises(RuntimeError, match=match):
        tp.load(tmp("args.pt"))


def test_deeply_nested_pickle_does_not_overflow(tmp):
    depth = 200_000
    write_pt(tmp("deep.pt"), P(b"]" * depth + b"a" * (depth - 1)))
    out = tp.load(tmp("deep.pt"))
    for _ in range(10):
        assert isinstance(out, list) and len(out) == 1
        out = out[0]


# ---- bad storages and views -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pkl,storages,match",
    [
        (tensor(offset=1), None, "reaches element 4"),
        (tensor(size=(-1,)), None, "invalid view"),
        (tensor(size=(2**62,), stride=(0,)), None, "more than a tensor can hold"),
        (tensor(size=(2**40, 2**40), stride=(0, 0)), None, "more than a tensor can hold"),
        (tensor(), {}, "storage '0' is missing"),
        (tensor(sid=storage_id(numel=3)), None, "declares 16 bytes; the pickle says its storage holds 12"),
        (tensor(sid=storage_id(numel=-1)), None, "has -1 elements"),
        (tensor(sid=storage_id(kind="QInt8Storage")), None, None),
        (
            tensor(sid=T(S("storage"), G("torch", "float32"), S("0"), S("cpu"), I(4)) + b"Q"),
            None,
            "bad storage id",
        ),
        (tensor(sid=T(S("storage"), G("torch", "FloatStorage")) + b"Q"), None, "fields, not 5"),
        (T(tensor(), tensor(sid=storage_id(kind="LongStorage", numel=2))), None, "described twice"),
    ],
)
def test_bad_storages_and_views_are_refused(tmp, pkl, storages, match):
    write_pt(tmp("v.pt"), P(pkl), storages)
    if match is None:  # a torch storage type TensorPlay has no dtype for
        with pytest.raises(pickle.UnpicklingError, match="QInt8Storage"):
            tp.load(tmp("v.pt"))
        return
    with pytest.raises(RuntimeError, match=f"v.pt' is not a valid checkpoint.*{match}"):
        tp.load(tmp("v.pt"))


def test_huge_zero_stride_view_that_fits_is_safe(tmp):
    write_pt(tmp("z.pt"), P(tensor(size=(2**60,), stride=(0,))))
    t = tp.load(tmp("z.pt"))
    assert t.shape == (2**60,) and t[2**59].item() == 0.0
    with pytest.raises(RuntimeError, match="not enough memory"):  # refused by the allocator, not a crash
        t.clone()


def test_big_endian_files_are_swapped(tmp):
    ref = np.array([1.5, -2.0, 3.25], dtype=np.float64)
    c = np.array([1 + 2j], dtype=np.complex64)
    with zipfile.ZipFile(tmp("be.pt"), "w") as z:
        z.writestr(
            "archive/data.pkl",
            P(
                T(
                    tensor(sid=storage_id(numel=3, kind="DoubleStorage"), size=(3,)),
                    tensor(sid=storage_id("1", 1, "ComplexFloatStorage"), size=(1,)),
                )
            ),
        )
        z.writestr("archive/byteorder", b"big")
        z.writestr("archive/data/0", ref.astype(">f8").tobytes())
        z.writestr("archive/data/1", c.astype(">c8").tobytes())
    a, b = tp.load(tmp("be.pt"))
    np.testing.assert_array_equal(a.numpy(), ref)
    np.testing.assert_array_equal(b.numpy(), c)


# ---- zip bombs --------------------------------------------------------------------------------------------
BOMB = 512 << 20


def write_bomb(path: str, declared: int | None = None) -> None:
    """A .pt whose storage member inflates to 512 MiB of zeros while the pickle says 16 bytes."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", P(tensor()))
        with z.open("archive/data/0", "w") as dest:
            chunk = bytes(1 << 20)
            for _ in range(BOMB >> 20):
                dest.write(chunk)
    if declared is not None:
        declare(path, declared)


def declare(path: str, size: int) -> None:
    """Make archive/data/0's central-directory entry (what zip readers trust) claim ``size`` bytes."""
    raw = bytearray(open(path, "rb").read())
    entry = raw.index(b"PK\x01\x02", raw.index(b"PK\x01\x02") + 4)  # the second entry
    assert raw[entry + 46 : entry + 46 + 14] == b"archive/data/0"
    struct.pack_into("<I", raw, entry + 24, size)
    open(path, "wb").write(bytes(raw))


PEAK_RSS = """
import resource, sys, tensorplay_p10 as tp
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    tp.load(sys.argv[1])
    print("LOADED")
except RuntimeError as e:
    print("REFUSED", e)
print("GROWTH_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.parametrize("declared", [None, 16], ids=["declared 512 MiB", "declared 16 bytes"])
def test_zip_bomb_costs_no_memory(tmp, declared):
    write_bomb(tmp("bomb.pt"), declared)
    assert os.path.getsize(tmp("bomb.pt")) < 4 << 20
    run = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, tmp("bomb.pt")], capture_output=True, text=True, timeout=300
    )
    out = run.stdout
    assert run.returncode == 0, run.stderr
    assert "REFUSED" in out and "not a valid checkpoint" in out, out
    assert ("declares 536870912 bytes" in out) if declared is None else ("Bad CRC-32" in out), out
    assert int(out.split("GROWTH_KB")[1]) < 100 * 1024, out


def test_deflate_ratio_is_bounded(tmp):
    write_pt(tmp("r.pt"), P(tensor(sid=storage_id(numel=1 << 18))), {"0": FLOATS}, zipfile.ZIP_DEFLATED)
    declare(tmp("r.pt"), 1 << 20)  # ~20 deflated bytes cannot hold 1 MiB
    with pytest.raises(RuntimeError, match="more than deflate can"):
        tp.load(tmp("r.pt"))


# ---- corrupted zips ---------------------------------------------------------------------------------------
def good_file(tmp) -> bytes:
    tp.save({"x": tp.arange(100.0)}, tmp("good.pt"))
    return open(tmp("good.pt"), "rb").read()


def test_flipped_central_directory(tmp):
    raw = bytearray(good_file(tmp))
    cd = raw.rindex(b"PK\x01\x02")
    raw[cd : cd + 4] = b"XXXX"
    open(tmp("cd.pt"), "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match=r"cd.pt' is not a valid checkpoint") as info:
        tp.load(tmp("cd.pt"))
    assert isinstance(info.value.__cause__, zipfile.BadZipFile)


def test_truncated_zip(tmp):
    raw = good_file(tmp)
    for cut in (5, 100, len(raw) // 2, len(raw) - 3):
        open(tmp("cut.pt"), "wb").write(raw[:cut])
        with pytest.raises(RuntimeError, match=r"cut.pt' is not a valid checkpoint") as info:
            tp.load(tmp("cut.pt"))
        assert isinstance(info.value.__cause__, zipfile.BadZipFile)


def test_unsupported_compression_method(tmp):
    raw = bytearray(good_file(tmp))
    for sig, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # the method field of every header
        start = 0
        while (i := raw.find(sig, start)) >= 0:
            struct.pack_into("<H", raw, i + at, 99)
            start = i + 4
    open(tmp("m.pt"), "wb").write(bytes(raw))
    with pytest.raises(
        RuntimeError, match=r"m.pt' is not a valid checkpoint.*compression method 99.*not supported"
    ):
        tp.load(tmp("m.pt"))


def test_zip_without_a_checkpoint(tmp):
    with zipfile.ZipFile(tmp("z.pt"), "w") as z:
        z.writestr("hello.txt", b"hi")
    with pytest.raises(RuntimeError, match="not in a folder"):
        tp.load(tmp("z.pt"))
    with zipfile.ZipFile(tmp("ts.pt"), "w") as z:
        z.writestr("m/constants.pkl", b"")
        z.writestr("m/code/m.py", b"")
    with pytest.raises(RuntimeError, match="TorchScript"):
        tp.load(tmp("ts.pt"))


def test_crc_of_the_pickle_is_checked(tmp):
    raw = bytearray(good_file(tmp))
    with zipfile.ZipFile(tmp("good.pt")) as z:
        info = z.getinfo("archive/data.pkl")
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    raw[info.header_offset + 30 + name_len + extra_len + 3] ^= 0x01
    open(tmp("crc.pt"), "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match="CRC"):
        tp.load(tmp("crc.pt"))
