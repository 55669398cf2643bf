"""Basic indexing: ``x[1, ::2, None, ...]`` as a chain of views, and ``x[...] = value`` through them.

Where it sits: ``Tensor.__getitem__``/``__setitem__`` call these. Each index element becomes one primitive
view op (``select`` for an int, ``slice`` for a slice, ``unsqueeze`` for ``None``), so indexing is just
dispatcher calls and works on every backend. Indexing with tensors or lists (advanced indexing) belongs to
the CPU op library and raises ``NotImplementedError`` until it lands.
"""

from __future__ import annotations

from typing import Any


def _expand_index(t: Any, index: Any) -> list[Any]:
    items = list(index) if isinstance(index, tuple) else [index]
    for it in items:
        if not (it is None or it is Ellipsis or isinstance(it, slice) or _is_int(it)):
            raise NotImplementedError(
                f"indexing with {type(it).__name__} (advanced indexing) is not supported yet; "
                "use ints, slices, None and ..."
            )
    ellipses = [i for i, it in enumerate(items) if it is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for it in items if it is not None and it is not Ellipsis)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    if ellipses:
        items[ellipses[0] : ellipses[0] + 1] = [slice(None)] * (t.dim() - consumed)
    return items


def _is_int(x: Any) -> bool:
    from . import _dtype as D
    from ._tensor import Tensor

    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return (
        isinstance(x, Tensor)
        and x.dim() == 0
        and not (x.dtype.is_floating_point or x.dtype.is_complex)
        and x.dtype is not D.bool
    )


def getitem(t: Any, index: Any) -> Any:
    from ._tensor import _op

    items = _expand_index(t, index)
    out, dim = t, 0
    select, slice_, unsqueeze = _op("select"), _op("slice"), _op("unsqueeze")
    for it in items:
        if it is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if it.start is None else int(it.start)
            stop = None if it.stop is None else int(it.stop)
            out = slice_(out, dim, start, stop, step)
            dim += 1
        else:
            idx = int(it)
            size = out.shape[dim]
            if not -size <= idx < size:
                raise IndexError(f"index {idx} is out of bounds for dimension {dim} with size {size}")
            out = select(out, dim, idx)
    if out is t:  # x[...] or x[:] still returns a new view object
        out = _op("alias")(t)
    return out


def setitem(t: Any, index: Any, value: Any) -> None:
    from ._tensor import Tensor

    view = getitem(t, index)
    if isinstance(value, Tensor):
        view.copy_(value)
    elif isinstance(value, (int, float, complex, bool)):
        view.fill_(value)
    else:
        from ._factories import tensor

        view.copy_(tensor(value, dtype=t.dtype))
