"""``tensorplay.library``: define new ops and register kernels from Python.

Where it sits: the Python door into the dispatcher (the C ABI's ``op_define``/``op_register_kernel`` are
the C door). A kernel registered here is an ordinary boxed kernel: ``tp.explain`` shows its file:line, and it
can sit at any dispatch key, including the wrapper keys, where it usually hands on with :func:`redispatch`.

Example:
    >>> import tensorplay_p10 as tp
    >>> lib = tp.library.Library("demo")
    >>> lib.define("twice(Tensor x) -> Tensor")
    'demo::twice'
    >>> lib.impl("twice", lambda x: x * 2, "CPU")
    >>> tp.ops.demo.twice(tp.ones(2))
    tensor([2., 2.])
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from . import _C


def _key_names() -> tuple[str, ...]:
    """Every dispatch key, runtime keys highest priority first, then the kernel-only slots (``Composite``,
    ``AnyBackend``): read from P10's key table (Note [Dispatch key table] in csrc/dispatch/dispatch_key.h)."""
    rows = _C._dispatch_keys()
    runtime = sorted((r for r in rows if r["priority"] is not None), key=lambda r: -r["priority"])
    return tuple(r["name"] for r in runtime) + tuple(r["name"] for r in rows if r["priority"] is None)


# The names impl / fallback / include_keys / exclude_keys accept.
KEYS = _key_names()


class Library:
    """Ops of one namespace: ``Library("mylib").define("f(Tensor x) -> Tensor")`` makes ``tp.ops.mylib.f``."""

    def __init__(self, ns: str) -> None:
        if not ns.isidentifier():
            raise ValueError(f"Library: namespace must be an identifier, got {ns!r}")
        self.ns = ns

    def _qualify(self, name: str) -> str:
        return name if "::" in name or not self.ns else f"{self.ns}::{name}"

    def define(self, schema: str) -> str:
        """Define an op from a schema string; returns its qualified name."""
        caller = inspect.stack()[1]
        return _C._define(self._qualify(schema), f"{caller.filename}:{caller.lineno}")

    def impl(self, name: str, fn: Callable[..., Any], dispatch_key: str = "CPU") -> None:
        """Register ``fn`` as the kernel of op ``name`` for ``dispatch_key``."""
        _C._impl(self._qualify(name), dispatch_key, fn)


def define(qualified_schema: str) -> str:
    """Define ``"ns::name(...) -> ..."`` without a Library object."""
    caller = inspect.stack()[1]
    return _C._define(qualified_schema, f"{caller.filename}:{caller.lineno}")


def impl(
    qualified_name: str, dispatch_key: str = "CPU"
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form: ``@impl("mylib::f", "CPU")``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _C._impl(qualified_name, dispatch_key, fn)
        return fn

    return register


def fallback(dispatch_key: str, fn: Callable[..., Any]) -> None:
    """Register ``fn`` for a wrapper key, for every op with no kernel of its own at that key."""
    _C._impl_fallback(dispatch_key, fn)


def redispatch(op_name: str, below_key: str, *args: Any, **kwargs: Any) -> Any:
    """From a wrapper-key kernel: call ``op_name`` again with ``below_key`` and all keys above masked out."""
    return _C._redispatch(op_name, below_key, *args, **kwargs)


def _bits(keys: tuple[str, ...], what: str) -> int:
    bits = 0
    for k in keys:
        bits |= _C._key_bit(k, what)
    return bits


@contextlib.contextmanager
def include_keys(*keys: str) -> Iterator[None]:
    """Add dispatch keys to every op call on this thread for the duration of the block."""
    saved = _C._tls_included()
    _C._set_tls_included(saved | _bits(keys, "include_keys"))
    try:
        yield
    finally:
        _C._set_tls_included(saved)


@contextlib.contextmanager
def exclude_keys(*keys: str) -> Iterator[None]:
    """Remove dispatch keys from every op call on this thread for the duration of the block."""
    saved = _C._tls_excluded()
    _C._set_tls_excluded(saved | _bits(keys, "exclude_keys"))
    try:
        yield
    finally:
        _C._set_tls_excluded(saved)
