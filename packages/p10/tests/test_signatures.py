"""Every op is a real Python callable: ``inspect.signature``, ``__doc__`` and ``help`` work for ``tp.<op>``
and ``x.<op>``, the signature describes what the call accepts, and a method call builds no partial."""

import functools
import inspect
import pydoc

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_p10 import _C, ops
from tensorplay_p10._op_docs import DOCS

P = inspect.Parameter


def test_function_signature_from_the_primary_overload():
    sig = inspect.signature(tp.exp)
    assert [(p.name, p.kind) for p in sig.parameters.values()] == [
        ("self", P.POSITIONAL_OR_KEYWORD),
        ("out", P.KEYWORD_ONLY),
    ]
    assert sig.parameters["out"].default is None  # from exp.out
    assert sig.return_annotation == "Tensor"


def test_defaults_are_python_values():
    sig = inspect.signature(tp.ops.slice)
    defaults = {n: p.default for n, p in sig.parameters.items()}
    assert defaults == {"self": P.empty, "dim": 0, "start": None, "end": None, "step": 1}
    keepdim = inspect.signature(tp.sum).parameters["keepdim"].default
    assert keepdim is False
    assert inspect.signature(tp.sum).parameters["dtype"].kind is P.KEYWORD_ONLY


def test_keyword_named_arguments_are_positional_only():
    # random_.from(Tensor(a!) self, int from, int? to, ...): `from` cannot be a Python keyword argument
    params = inspect.signature(tp.ops.uniform_).parameters
    assert list(params)[:2] == ["self", "from_"] and params["from_"].kind is P.POSITIONAL_ONLY


def test_method_signature_drops_self():
    x = tp.ones(2)
    assert list(inspect.signature(x.exp).parameters) == ["out"]
    assert list(inspect.signature(x.sum).parameters) == ["dim", "keepdim", "dtype", "out"]


@pytest.mark.parametrize("name", sorted(ops._function_names()))
def test_every_op_has_a_signature_and_doc(name):
    packet = ops._function(name)
    sig = inspect.signature(packet)
    primary = {a["name"] for s in packet.parsed for a in s["arguments"]}
    for p in sig.parameters.values():  # every parameter is an argument some overload takes
        assert p.name.rstrip("_") in {n.rstrip("_") for n in primary}, (name, p.name)
    doc = packet.__doc__
    assert doc.startswith(f"{name}(")
    for schema in packet.schemas:
        assert schema in doc


def test_the_signature_binds_like_the_call():
    x, out = tp.tensor([0.0, 1.0]), tp.empty(2)
    inspect.signature(tp.exp).bind(x, out=out)
    r = tp.exp(x, out=out)
    assert r is out and np.allclose(out.numpy(), np.exp([0.0, 1.0]))
    with pytest.raises(TypeError):
        inspect.signature(tp.exp).bind(x, out)  # out is keyword-only in both
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        tp.exp(x, out)


def test_doc_puts_hand_written_text_first():
    doc = tp.exp.__doc__
    assert doc.splitlines()[0] == "exp(self: Tensor, *, out: Tensor | None = None) -> Tensor"
    assert "The exponential of each element" in doc
    assert doc.index("The exponential") < doc.index("exp.out(Tensor self")
    assert "sin" not in DOCS and "Overloads (schemas):" in tp.sin.__doc__  # no hand text: schemas only
    assert "exp(*, out: Tensor | None = None)" in tp.ones(1).exp.__doc__
    text = pydoc.render_doc(tp.exp)
    assert "The exponential of each element" in text


def test_methods_bind_without_partial():
    x = tp.tensor([0.5, 2.0])
    m = x.exp
    assert not isinstance(m, functools.partial) and type(m) is _C.BoundOp
    assert m.__self__ is x and m.__func__ is tp.exp and m.__name__ == "exp"
    assert np.allclose(m().numpy(), np.exp([0.5, 2.0]))
    assert tp.Tensor.exp is tp.exp  # on the class: the op itself, an unbound function
    assert np.allclose(tp.Tensor.exp(x).numpy(), np.exp([0.5, 2.0]))
    assert tp.exp is tp.ops.exp is _C._op("exp")  # one packet per name


def test_methods_still_refuse_non_methods():
    x = tp.ones(1)
    assert not hasattr(x, "empty")  # first argument is not Tensor self
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'no_such_op'"):
        x.no_such_op  # noqa: B018


def test_packet_sees_an_overload_defined_later():
    lib = tp.library.Library("sig_later")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x + 1, "CPU")
    packet = tp.ops.sig_later.f
    lib.define("f.two(Tensor x, Tensor y) -> Tensor")
    lib.impl("f.two", lambda x, y: x + y, "CPU")
    assert packet(tp.tensor([1.0]), tp.tensor([2.0])).tolist() == [3.0]
    assert len(packet.schemas) == 2
