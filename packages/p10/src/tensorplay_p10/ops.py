"""``tensorplay.ops``: every registered op, callable by name, and the table of who implements what.

Where it sits: a window onto the dispatcher's registry (``csrc/dispatch/dispatcher.cpp``). The table is data
(STYLE.md rule 7): per op, its schema, where it was defined, and for each dispatch key the file:line of its
kernel — later pillars add ``Autograd`` (tpx) and ``Tracer`` (stax) entries to the same table.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.ops.add(tp.ones(2), 1.5)
    tensor([2.5000, 2.5000])
    >>> "CPU" in tp.ops.info("add")["kernels"]
    True
"""

from __future__ import annotations

from typing import Any

from . import _C
from ._op_signature import _doc, _signature  # noqa: F401  the packets' __signature__ and __doc__ hooks

_packets: dict[str, Any] = {}


def _packet(name: str) -> Any:
    p = _packets.get(name)
    if p is None:
        p = _packets[name] = _C._op(name)
    return p


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call op ``name`` ("add", "add.out", "mylib::scale") through the dispatcher."""
    return _packet(name)(*args, **kwargs)


def info(name: str) -> dict[str, Any]:
    """``{"name", "schema", "defined_at", "kernels": {key: "file:line"}, "overload", "arguments", "returns",
    "is_view"}`` for one op overload. Each argument (and return) is a dict: ``name``, ``type`` (``"Tensor?"``,
    ``"int[]"``), ``has_default``, ``default`` (a Python value), ``kwarg_only``, ``alias`` (``"a"`` for
    ``Tensor(a)``), ``alias_after``, ``is_write`` (``Tensor(a!)``), parsed by P10's one schema parser
    (csrc/dispatch/schema.cpp); ``is_view``: every result aliases the first argument.

        >>> [(a["name"], a["alias"], a["is_write"]) for a in info("add_")["arguments"]][0]
        ('self', 'a', True)
        >>> info("view")["is_view"], info("exp")["is_view"]
        (True, False)
    """
    return _C._op_info(name)


def list() -> list[dict[str, Any]]:  # noqa: A001 - the name PyTorch-style tooling expects
    """One :func:`info` dict per registered op overload, in definition order."""
    return [_C._op_info(n) for n in _C._op_names()]


def table() -> str:
    """A printable table: op, then which keys have kernels."""
    rows = [(d["name"], ", ".join(d["kernels"])) for d in list()]
    width = max(len(r[0]) for r in rows) + 2
    return "\n".join(f"{name:<{width}}{keys}" for name, keys in rows)


# Note [Ops as functions and methods]
#   Every built-in op is also ``tp.<name>`` and, when its first argument is ``Tensor self``, a method
#   ``x.<name>(...)``: the module and Tensor ``__getattr__`` hooks ask here. So adding an op is C++ (schema
#   and kernel) and a test; hand-written Python wrappers exist only where Python's calling conventions differ
#   (``x.view(2, 3)``).
_missing: set[str] = set()


def _function(name: str) -> Any:
    """The packet behind ``tp.<name>``; AttributeError when no built-in op has that name."""
    if name.startswith("_") or name in _missing:
        raise AttributeError(name)
    try:
        return _packet(name)
    except NotImplementedError:
        _missing.add(name)
        raise AttributeError(name) from None


def _function_names() -> set[str]:
    """The names ``tp.<name>`` answers for: every built-in op's name without its overload (custom namespaces'
    ops live under ``tp.ops.<namespace>``, private ``_`` ops are not functions)."""
    return {n.split(".", 1)[0] for n in _C._op_names() if "::" not in n and not n.startswith("_")}


def _first_arg_is_tensor_self(schema: str | dict[str, Any]) -> bool:
    """``add(Tensor self, ...)`` (alias annotations such as ``Tensor(a!) self`` included): yes. ``where(Tensor
    condition, Tensor self, ...)``: no, ``pow.Scalar(Scalar self, ...)``: no. Schema text or parse."""
    args = (_C._parse_schema(schema) if isinstance(schema, str) else schema)["arguments"]
    return bool(args) and args[0]["type"] == "Tensor" and args[0]["name"] == "self"


# name -> packet of the names found to be methods: every `x.<op>(...)` call comes through _method (Tensor's
# __getattr__), so the schema scan runs once per name, not once per call. Safe to keep: a packet stays the
# op's packet for the life of the process, and an overload defined later only adds schemas to it.
_methods: dict[str, Any] = {}


def _method(name: str) -> Any:
    """The packet behind ``Tensor.<name>``: ops with an overload whose first argument is ``Tensor self``. The
    method passes the tensor first, so overloads whose first argument is something else simply do not bind."""
    packet = _methods.get(name)
    if packet is not None:
        return packet
    packet = _function(name)
    if not any(_first_arg_is_tensor_self(s) for s in packet.parsed):
        raise AttributeError(name)
    _methods[name] = packet
    return packet


class _Namespace:
    """``tp.ops.mylib.scale``: ops of a custom namespace."""

    def __init__(self, ns: str) -> None:
        self._ns = ns

    def __getattr__(self, name: str) -> Any:
        return _packet(f"{self._ns}::{name}")


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return _packet(name)
    except NotImplementedError:
        prefix = name + "::"
        if any(n.startswith(prefix) for n in _C._op_names()):
            return _Namespace(name)
        raise AttributeError(f"module 'tensorplay.ops' has no op '{name}'") from None
