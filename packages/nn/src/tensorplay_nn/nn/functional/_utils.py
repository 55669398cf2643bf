"""Argument helpers shared by the conv, pooling and vision functions: one int or a sequence, as ``n`` ints.

Where it sits: private to ``nn/functional`` (and used by the matching modules), the counterpart of
``torch.nn.modules.utils._single/_pair/_triple``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """``value`` as an ``n``-tuple: a sequence is kept (as a tuple), anything else is repeated ``n`` times."""
    if isinstance(value, Iterable) and not isinstance(value, str):
        return tuple(value)
    return (value,) * n
