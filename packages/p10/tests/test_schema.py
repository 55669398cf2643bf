"""P10's one schema parser (csrc/dispatch/schema.cpp) seen from Python: alias annotations, argument data,
the view flag derived from them, and agreement with PyTorch's own parser when torch is installed."""

import pytest

import tensorplay_p10 as tp
from tensorplay_p10 import _C


def _arg(schema, i=0, key="arguments"):
    return _C._parse_schema(schema)[key][i]


def test_alias_annotations_are_kept():
    s = _C._parse_schema("view(Tensor(a) self, int[] size) -> Tensor(a)")
    assert (s["name"], s["overload"]) == ("view", "")
    assert s["arguments"][0]["alias"] == "a" and not s["arguments"][0]["is_write"]
    assert s["arguments"][1]["alias"] is None
    assert s["returns"][0]["alias"] == "a" and s["returns"][0]["name"] == ""
    assert s["is_view"]


def test_written_arguments():
    s = _C._parse_schema(
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    )
    out = s["arguments"][3]
    assert (out["name"], out["alias"], out["is_write"], out["kwarg_only"]) == ("out", "a", True, True)
    assert s["returns"][0]["is_write"] and s["returns"][0]["alias"] == "a"
    assert not s["is_view"]  # written, not viewed
    assert not _C._parse_schema("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)")["is_view"]


def test_list_annotations():
    s = _C._parse_schema("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
    self_arg, ret = s["arguments"][0], s["returns"][0]
    assert (self_arg["alias"], self_arg["alias_after"]) == ("a", "*")
    assert (ret["type"], ret["alias"]) == ("Tensor[]", "a")
    assert s["is_view"]
    outs = _arg("f.out(Tensor self, *, Tensor(a!)[] out) -> ()", 1)
    assert (outs["type"], outs["alias"], outs["is_write"]) == ("Tensor[]", "a", True)


def test_types_and_defaults_become_python_values():
    s = _C._parse_schema(
        "f(Tensor? w, int[] dims=[0, 1], float eps=1e-05, bool keepdim=False, *, Scalar alpha=1, "
        "str? mode='mean', int? n=None, Tensor?[] idx, SymInt k=-2) -> (Tensor values, Tensor indices)"
    )
    got = [(a["name"], a["type"], a["has_default"], a["default"], a["kwarg_only"]) for a in s["arguments"]]
    assert got == [
        ("w", "Tensor?", False, None, False),
        ("dims", "int[]", True, (0, 1), False),
        ("eps", "float", True, 1e-05, False),
        ("keepdim", "bool", True, False, False),
        ("alpha", "Scalar", True, 1, True),
        ("mode", "str?", True, "mean", True),
        ("n", "int?", True, None, True),
        ("idx", "Tensor?[]", False, None, True),
        ("k", "int", True, -2, True),
    ]
    assert type(s["arguments"][4]["default"]) is int
    assert [r["name"] for r in s["returns"]] == ["values", "indices"]


@pytest.mark.parametrize(
    "bad, message",
    [
        ("f(int(a) x) -> int", "alias annotations apply to Tensor only, not 'int'"),
        ("f(Tensor(a x) -> Tensor", "expected ')' to close the alias annotation"),
        ("f(Tensor(a?) x) -> Tensor", "expected ')' to close the alias annotation"),
        ("f(Tensor() x) -> Tensor", "expected a name"),
    ],
)
def test_bad_annotations_raise_value_error(bad, message):
    with pytest.raises(
        ValueError, match=r"invalid op schema .*" + message.replace("(", r"\(").replace(")", r"\)")
    ):
        _C._parse_schema(bad)


def test_info_and_packets_carry_the_parse():
    info = tp.ops.info("transpose")
    assert info["is_view"] and [a["name"] for a in info["arguments"]] == ["self", "dim0", "dim1"]
    assert info["returns"][0]["alias"] == "a"
    parsed = tp.exp.parsed
    assert [p["overload"] for p in parsed] == ["", "out"]
    assert parsed[1]["arguments"][-1]["is_write"]
    assert not tp.ops.info("conj")["is_view"]  # a new tensor for complex inputs (Note [Alias annotations])


def test_view_ops_are_exactly_the_annotated_ones():
    views = {n for n in _C._op_names() if tp.ops.info(n)["is_view"]}
    for name in ["view", "transpose", "select", "split_with_sizes", "unbind.int", "real", "as_strided"]:
        assert name in views
    for name in ["add_", "add.out", "exp", "clone", "contiguous", "conj", "cat"]:
        assert name not in views


def test_every_schema_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    checked = 0
    for name in _C._op_names():
        text = tp.ops.info(name)["schema"]
        try:
            ref = torch._C.parse_schema(text)
        except RuntimeError:  # a type PyTorch spells differently; our own tests above cover the grammar
            continue
        ours = _C._parse_schema(text)
        for mine, theirs in [(ours["arguments"], ref.arguments), (ours["returns"], ref.returns)]:
            assert len(mine) == len(theirs), text
            for a, b in zip(mine, theirs, strict=True):
                info = b.alias_info
                assert a["name"] == b.name, text
                # PyTorch keeps a list's element annotation (`Tensor(a)[]`) out of its Python API
                if info is not None and (info.before_set or not a["type"].endswith("[]")):
                    assert {a["alias"]} == info.before_set, text
                    assert ({a["alias_after"]} if a["alias_after"] else info.before_set) == info.after_set, (
                        text
                    )
                elif info is None:
                    assert a["alias"] is None, text
                assert a["is_write"] == (info is not None and info.is_write), text
                assert a["kwarg_only"] == b.kwarg_only, text
        checked += 1
    assert checked > 300
