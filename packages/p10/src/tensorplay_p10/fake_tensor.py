"""Fake tensors: tensors with sizes, strides, dtype and a device, but no data.

Where it sits: the Python face of the ``Fake`` dispatch key (Note [Fake tensors] in
``csrc/dispatch/fake_tensor.cpp``). A fake tensor is a meta tensor that remembers the device it stands for, so
every op runs its Meta kernel (shapes, dtypes, errors) while ``.device`` says ``cuda:0``. Stax captures
programs on fake tensors; a CUDA program can be traced on a machine without a GPU.

    >>> import tensorplay_p10 as tp
    >>> from tensorplay_p10.fake_tensor import FakeTensorMode
    >>> with FakeTensorMode() as mode:
    ...     x = tp.empty(8, 16, device="cuda")          # no GPU needed, no memory allocated
    ...     w = mode.from_tensor(tp.randn(16, 4)).to("cuda")
    ...     y = (x @ w).relu()
    >>> y.shape, y.device, y.dtype
    (tensorplay.Size([8, 4]), device(type='cuda', index=0), tensorplay.float32)
    >>> y
    FakeTensor(..., device='cuda:0', size=(8, 4))

Outside the mode, ops on fake tensors stay fake (the tensors carry the key); the mode is what makes factories
(``empty``, ``zeros``, ``randn``, ...) fake too. Reading data (``item``, ``tolist``, ``numpy``) raises.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

from . import _C

__all__ = ["FakeTensorMode", "follows_fake_input", "is_fake"]


def is_fake(t: Any) -> bool:
    """Whether ``t`` is a fake tensor (a meta tensor standing for a device)."""
    return bool(getattr(t, "_is_fake", False))


class FakeTensorMode(contextlib.ContextDecorator):
    """While active, every op on this thread runs on fake tensors: factories make fake tensors on the device
    they are given, and ops on fake tensors return fake tensors. Real tensors must be converted first
    (``from_tensor``); a real 0-d CPU tensor (a Python number) mixes in as it does with CUDA tensors.

    Usable as a context manager (``with FakeTensorMode() as mode:``), as a decorator, and nested.
    """

    def __init__(self) -> None:
        self._saved: list[int] = []

    def from_tensor(self, t: Any, device: Any = None) -> Any:
        """A fake twin of ``t``: same sizes, strides, dtype and requires_grad, on ``t.device``
        (or ``device``).

        >>> import tensorplay_p10 as tp
        >>> f = FakeTensorMode().from_tensor(tp.ones(2, 3).t(), device="cuda")
        >>> f.shape, f.stride(), f.is_cuda
        (tensorplay.Size([3, 2]), (1, 3), True)
        """
        fake = _C._make_fake(t, device)
        if getattr(t, "requires_grad", False):
            fake.requires_grad_(True)
        return fake

    def __enter__(self) -> FakeTensorMode:
        self._saved.append(_C._tls_included())
        _C._set_tls_included(self._saved[-1] | _C._key_bit("Fake", "FakeTensorMode"))
        return self

    def __exit__(self, *exc: Any) -> None:
        _C._set_tls_included(self._saved.pop())


def follows_fake_input(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a factory whose first argument is a tensor it imitates (``ones_like``, ``Tensor.new_zeros``).

    The factory it calls (``ones``) has no tensor argument, so nothing tells the dispatcher that a fake
    input's twin must be fake too; this runs the factory under FakeTensorMode when the input is fake.
    """

    @functools.wraps(fn)
    def wrapper(input: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(input, "_is_fake", False):
            with FakeTensorMode():
                return fn(input, *args, **kwargs)
        return fn(input, *args, **kwargs)

    return wrapper
