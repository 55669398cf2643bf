"""Grad modes: whether operations are recorded for autograd, per thread.

Where it sits: grad mode is P10's thread-local exclusion of the ``Autograd`` dispatch key (docs/design.md §3):
with it off, no call reaches TPX's recording kernel. Each class here works as a context manager and as a
decorator, like PyTorch's.

    >>> import tensorplay as tp
    >>> x = tp.ones(2, requires_grad=True)
    >>> with tp.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _C

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """Whether operations on this thread are recorded for autograd."""
    return _C._is_grad_enabled()


class _GradModeContext:
    """A context manager that sets grad mode on entry and restores it on exit; also a decorator."""

    _mode: bool = True

    def __enter__(self) -> None:
        self._prev = _C._is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _clone(self) -> _GradModeContext:
        return self.__class__()


class no_grad(_GradModeContext):
    """Disable recording: results of operations do not require grad.

    >>> import tensorplay as tp
    >>> @tp.no_grad()
    ... def double(t):
    ...     return t * 2
    >>> double(tp.ones(1, requires_grad=True)).requires_grad
    False
    """

    _mode = False


class enable_grad(_GradModeContext):
    """Enable recording inside a ``no_grad`` region."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode``; takes effect immediately (also usable as a context manager)."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = _C._is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)

    def _clone(self) -> _GradModeContext:
        return _Scoped(self._mode)


class _Scoped(_GradModeContext):
    def __init__(self, mode: bool) -> None:
        self._mode = mode


def is_inference_mode_enabled() -> bool:
    return _C._inference_mode()


class inference_mode(_GradModeContext):
    """Like ``no_grad``, for code that will never need gradients; tensors made inside are *inference
    tensors* that can never enter autograd later (Note [Inference tensors] in P10's tensor.h).
    ``mode=False`` makes it a no-op.

        >>> import tensorplay as tp
        >>> with tp.inference_mode():
        ...     y = tp.ones(2) * 2
        >>> y.is_inference(), y.requires_grad
        (True, False)
    """

    def __init__(self, mode: bool = True) -> None:
        self._inference = bool(mode)
        self._mode = not mode

    def __enter__(self) -> None:
        self._prev_inference = _C._inference_mode()
        if self._inference:
            super().__enter__()
            _C._set_inference_mode(True)

    def __exit__(self, *exc: Any) -> None:
        if self._inference:
            _C._set_inference_mode(self._prev_inference)
            super().__exit__(*exc)

    def _clone(self) -> _GradModeContext:
        return inference_mode(self._inference)
