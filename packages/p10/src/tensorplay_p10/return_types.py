"""Named tuples for ops with several named results: ``tp.max(x, dim=0)`` returns ``return_types.max``.

Where it sits: ``csrc/python/py_ops.cpp`` builds one type per op name the first time such an op returns, from
the names in its schema (``-> (Tensor values, Tensor indices)``), through :func:`_make`. Like PyTorch's
``torch.return_types``, each is a tuple (it unpacks and indexes) with named fields.

Example:
    >>> import tensorplay_p10 as tp
    >>> pair = tp.return_types._make("demo_pair", ["values", "indices"])(1, 2)
    >>> pair
    tensorplay.return_types.demo_pair(values=1, indices=2)
    >>> v, i = pair
"""

from __future__ import annotations

import collections


def _make(op: str, fields: list[str]) -> type:
    """A tuple subclass for op ``op`` whose fields are ``fields``; registered as ``return_types.<op>``."""
    base = collections.namedtuple(op, fields)  # type: ignore[misc]

    def __repr__(self: tuple) -> str:
        items = ", ".join(f"{name}={value!r}" for name, value in zip(fields, self, strict=True))
        return f"tensorplay.return_types.{op}({items})"

    cls = type(op, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})
    globals()[op] = cls
    return cls
