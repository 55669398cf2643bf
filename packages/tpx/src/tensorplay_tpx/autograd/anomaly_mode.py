"""Anomaly detection: check every backward function's output for NaN, and say where the failing node came
from.

Where it sits: switches the C++ engine's anomaly flags (csrc/engine.cpp). While on, every recorded node keeps
the Python traceback of its forward call; when its backward fails (or returns NaN), a RuntimeWarning shows
that
traceback.

    >>> import tensorplay as tp
    >>> with tp.autograd.detect_anomaly():
    ...     x = tp.tensor([0.0], requires_grad=True)
    ...     y = x.sqrt() * 0  # d sqrt at 0 is inf, inf * 0 = nan
    ...     try:
    ...         y.sum().backward()
    ...     except RuntimeError as e:
    ...         print(str(e).splitlines()[0])
    Function 'SqrtBackward' returned nan values in its 0th output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _C

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_detect_anomaly"]


def is_anomaly_enabled() -> bool:
    return bool(_C._anomaly()[0])


def is_anomaly_check_nan_enabled() -> bool:
    return bool(_C._anomaly()[1])


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on for its body."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = _C._anomaly()
        _C._set_anomaly(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        _C._set_anomaly(*self._prev)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off (immediately; also usable as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = _C._anomaly()
        _C._set_anomaly(bool(mode), check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _C._set_anomaly(*self._prev)
