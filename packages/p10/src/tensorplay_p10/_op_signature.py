"""An op's Python signature and docstring, from its parsed schemas: what ``inspect.signature(tp.exp)`` and
``help(tp.exp)`` show.

Where it sits: ``_C.OpPacket.__signature__``/``__doc__`` (csrc/python/py_ops.cpp) call :func:`_signature` and
:func:`_doc`; ``tools/gen_stubs.py`` writes the ``.pyi`` stubs from the same signatures. The schemas come from
P10's one parser (``OpPacket.parsed``, csrc/dispatch/schema.cpp); hand-written text comes from
``_op_docs.py``.

Example:
    >>> import inspect
    >>> import tensorplay_p10 as tp
    >>> inspect.signature(tp.exp)
    <Signature (self: 'Tensor', *, out: 'Tensor | None' = None) -> 'Tensor'>
    >>> print(render(inspect.signature(tp.ones(2).sum)))
    (dim: int | Sequence[int] | None = None, keepdim: bool = False, *, dtype: dtype | None = None,
     out: Tensor | None = None) -> Tensor
"""

from __future__ import annotations

import inspect
import keyword
from typing import Any

from ._op_docs import DOCS

# Schema type -> the annotation a Python reader expects (what the argument parser in py_ops.cpp accepts).
_ANNOTATIONS = {
    "Tensor": "Tensor",
    "Tensor[]": "Sequence[Tensor]",
    "Tensor?[]": "Sequence[Tensor | None]",
    "int": "int",
    "int[]": "int | Sequence[int]",  # `dim=1` is taken for an int[] argument
    "float": "float",
    "bool": "bool",
    "Scalar": "int | float | complex",
    "ScalarType": "dtype",
    "Device": "device | str",
    "str": "str",
    "Generator": "Generator",
}
_RETURNS = {"Tensor[]": "list[Tensor]", "int[]": "tuple[int, ...]"}


def annotation(type_text: str) -> str:
    """``"int[]?"`` -> ``"int | Sequence[int] | None"``."""
    optional = type_text.endswith("?")
    base = _ANNOTATIONS[type_text.rstrip("?")]
    return f"{base} | None" if optional else base


def return_annotation(returns: list[dict[str, Any]]) -> str:
    """The Python type of an overload's results: one value, a tuple of several, or None for ``-> ()``."""
    types = [_RETURNS.get(r["type"].rstrip("?"), annotation(r["type"])) for r in returns]
    if not types:
        return "None"
    return types[0] if len(types) == 1 else f"tuple[{', '.join(types)}]"


def _is_out_variant(schema: dict[str, Any]) -> bool:
    return schema["overload"] == "out" or schema["overload"].endswith("_out")


def primary(schemas: list[dict[str, Any]], method: bool) -> dict[str, Any]:
    """The overload a signature shows: the one without an overload name, else the first that is not an
    ``out=`` variant; for a method, only overloads whose first argument is ``Tensor self`` count."""
    from .ops import _first_arg_is_tensor_self

    pool = [s for s in schemas if _first_arg_is_tensor_self(s)] if method else schemas
    pool = [s for s in pool if not _is_out_variant(s)] or pool
    return next((s for s in pool if not s["overload"]), pool[0])


def parameters(schema: dict[str, Any], *, out_arg: dict[str, Any] | None = None) -> list[inspect.Parameter]:
    """One inspect.Parameter per schema argument, plus ``out`` (keyword-only, default None) when given.

    A missing optional argument is filled with None by the argument parser, so it shows ``= None``; a
    positional argument keeps no default when a later positional one has none (Python's rule)."""
    args = schema["arguments"]
    params: list[inspect.Parameter] = []
    later_required = False
    for a in reversed(args):
        name = a["name"] + ("_" if keyword.iskeyword(a["name"]) else "")
        kind = inspect.Parameter.KEYWORD_ONLY if a["kwarg_only"] else inspect.Parameter.POSITIONAL_OR_KEYWORD
        default: Any = inspect.Parameter.empty
        if a["has_default"]:
            default = a["default"]
        elif a["type"].endswith("?"):
            default = None
        if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            if later_required:
                default = inspect.Parameter.empty
            later_required = later_required or default is inspect.Parameter.empty
        params.append(inspect.Parameter(name, kind, default=default, annotation=annotation(a["type"])))
    params.reverse()
    # An argument named by a Python keyword (`ScalarType from`) can only be passed by position: it shows as
    # `from_`, positional-only with the arguments before it.
    last_keyword = max((i for i, a in enumerate(args) if keyword.iskeyword(a["name"])), default=-1)
    for i in range(last_keyword + 1):
        params[i] = params[i].replace(kind=inspect.Parameter.POSITIONAL_ONLY)
    if out_arg is not None and all(p.name != "out" for p in params):
        params.append(
            inspect.Parameter(
                "out",
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=f"{annotation(out_arg['type'])} | None",
            )
        )
    return params


def out_argument(schemas: list[dict[str, Any]], chosen: dict[str, Any]) -> dict[str, Any] | None:
    """The ``out`` argument of the out= variant that matches ``chosen`` (``exp`` -> ``exp.out``), if any."""
    if _is_out_variant(chosen):
        return None
    for s in schemas:
        if _is_out_variant(s):
            outs = [a for a in s["arguments"] if a["name"] == "out" and a["is_write"]]
            if outs:
                return outs[0]
    return None


def signature_of(schemas: list[dict[str, Any]], method: bool = False) -> inspect.Signature:
    """The signature of an op's primary overload (without ``self`` for a method)."""
    chosen = primary(schemas, method)
    params = parameters(chosen, out_arg=out_argument(schemas, chosen))
    if method:
        params = params[1:]
    return inspect.Signature(params, return_annotation=return_annotation(chosen["returns"]))


def _literal(value: Any) -> str:
    """A default as source text: literals as written, anything else ``...`` (a stub's "some default")."""
    simple = (type(None), bool, int, float, str)
    if isinstance(value, simple) or (isinstance(value, tuple) and all(isinstance(v, simple) for v in value)):
        return repr(value)
    return "..."


def render(sig: inspect.Signature, qualify: Any = None) -> str:
    """``(self: Tensor, *, out: Tensor | None = None) -> Tensor``: a signature as source text, annotations
    unquoted; ``qualify`` (annotation -> annotation) lets the stub writer spell ``builtins.int``."""
    q = qualify or (lambda a: a)
    parts: list[str] = []
    star_done = False
    for i, p in enumerate(sig.parameters.values()):
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
        star_done = star_done or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.annotation is not p.empty:
            a = p.annotation
            text += f": {q(a if isinstance(a, str) else inspect.formatannotation(a))}"
        if p.default is not p.empty:
            text += f" = {_literal(p.default)}" if p.annotation is not p.empty else f"={_literal(p.default)}"
        parts.append(text)
        nxt = list(sig.parameters.values())[i + 1 : i + 2]
        if p.kind is p.POSITIONAL_ONLY and (not nxt or nxt[0].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    ret = ""
    if sig.return_annotation is not sig.empty:
        r = sig.return_annotation
        ret = f" -> {q(r if isinstance(r, str) else inspect.formatannotation(r))}"
    return f"({', '.join(parts)}){ret}"


_cache: dict[tuple[str, bool], inspect.Signature] = {}


def _signature(packet: Any, method: bool) -> inspect.Signature:
    """``OpPacket.__signature__`` (``BoundOp.__signature__`` when ``method``)."""
    key = (packet.name, method)
    sig = _cache.get(key)
    if sig is None:
        sig = _cache[key] = signature_of(packet.parsed, method)
    return sig


def _doc(packet: Any, method: bool) -> str:
    """``OpPacket.__doc__``: the hand-written text of ``_op_docs.py`` when there is one, then every overload's
    schema (the exact argument names, types and defaults the call accepts)."""
    lines = [f"{packet.__name__}{render(_signature(packet, method))}", ""]
    text = DOCS.get(packet.name)
    if text:
        lines += [inspect.cleandoc(text), ""]
    lines.append("Overloads (schemas):")
    lines += [f"    {s}" for s in packet.schemas]
    return "\n".join(lines)
