"""Python subscripts: ``x[1, ::2, None, ..., idx, mask]`` and ``x[...] = value``, PyTorch's rules.

Where it sits: ``Tensor.__getitem__``/``__setitem__`` call these. Basic index elements become primitive
view ops (``select`` for an int, ``slice`` for a slice, ``unsqueeze`` for ``None`` and ``True``), so basic
indexing returns a view. Tensors, lists and arrays (integer or boolean) are advanced indices: they are
collected, aligned to the dims of the view, and handed to ONE ``index`` (read) or ``index_put_`` (write) op
call, which returns a copy / writes through (Note [Advanced indexing] in csrc/kernels/index_advanced.cpp).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype as D


def _is_int(x: Any) -> bool:
    """Python ints and 0-d integer tensors index like ints (a view), as in PyTorch."""
    from ._tensor import Tensor

    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return (
        isinstance(x, Tensor)
        and x.dim() == 0
        and not (x.dtype.is_floating_point or x.dtype.is_complex)
        and x.dtype is not D.bool
    )


def _as_index_tensor(x: Any) -> Any:
    """An advanced index as a tensor: tensors as they are; lists/arrays through tp.tensor (ints or bools)."""
    from ._factories import tensor
    from ._tensor import Tensor

    if isinstance(x, Tensor):
        if x.dtype.is_floating_point or x.dtype.is_complex:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return x
    t = tensor(x)
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _split(t: Any, index: Any) -> tuple[Any, list[Any]]:
    """Apply the basic part of `index` as views; return the view and the advanced indices, aligned to dims."""
    from ._tensor import Tensor, _op

    items = list(index) if isinstance(index, tuple) else [index]
    advanced_kinds = (Tensor, list, np.ndarray)
    for it in items:
        if not (
            it is None or it is Ellipsis or isinstance(it, (slice, bool) + advanced_kinds) or _is_int(it)
        ):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                f"indices (got {type(it).__name__})"
            )
    ellipses = [i for i, it in enumerate(items) if it is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")

    def consumes(it: Any) -> int:
        if it is None or it is Ellipsis or isinstance(it, bool):
            return 0
        if isinstance(it, Tensor) and it.dtype is D.bool:
            return it.dim()
        if isinstance(it, (list, np.ndarray)) and np.asarray(it).dtype == np.bool_:
            return np.asarray(it).ndim
        return 1

    used = sum(consumes(it) for it in items)
    if used > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    if ellipses:
        items[ellipses[0] : ellipses[0] + 1] = [slice(None)] * (t.dim() - used)

    select, slice_, unsqueeze = _op("select"), _op("slice"), _op("unsqueeze")
    out, dim = t, 0
    advanced: list[Any] = []  # aligned to out's dims at the end (None = not indexed)
    for it in items:
        if it is None or it is True:
            out = unsqueeze(out, dim)
            advanced.insert(dim, None)
            dim += 1
        elif it is False:  # x[False]: a new dim of size 0
            out = slice_(unsqueeze(out, dim), dim, 0, 0, 1)
            advanced.insert(dim, None)
            dim += 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if it.start is None else int(it.start)
            stop = None if it.stop is None else int(it.stop)
            out = slice_(out, dim, start, stop, step)
            advanced.append(None)
            dim += 1
        elif _is_int(it):
            idx = int(it)
            size = out.shape[dim]
            if not -size <= idx < size:
                raise IndexError(f"index {idx} is out of bounds for dimension {dim} with size {size}")
            out = select(out, dim, idx)
        else:
            tensor = _as_index_tensor(it)
            advanced.append(tensor)
            n = tensor.dim() if tensor.dtype is D.bool else 1
            advanced.extend([None] * (n - 1))  # a k-dim mask covers k dims (the op expands it)
            dim += n
    return out, advanced


def getitem(t: Any, index: Any) -> Any:
    from ._tensor import _op

    view, advanced = _split(t, index)
    if any(a is not None for a in advanced):
        return _op("index")(view, _trim(advanced))
    return _op("alias")(t) if view is t else view  # x[...] is still a new view object


def setitem(t: Any, index: Any, value: Any) -> None:
    from ._factories import tensor
    from ._tensor import Tensor, _op

    view, advanced = _split(t, index)
    if not isinstance(value, Tensor):
        value = tensor(value, dtype=t.dtype, device=t.device)
    if any(a is not None for a in advanced):
        _op("index_put_")(view, _trim(advanced), value)
    else:
        view.copy_(value)


def _trim(advanced: list[Any]) -> list[Any]:
    """Drop trailing Nones (a k-dim mask occupies one entry followed by k - 1 placeholders)."""
    out = []
    skip = 0
    for a in advanced:
        if skip:
            skip -= 1
            continue
        out.append(a)
        if a is not None and a.dtype is D.bool:
            skip = a.dim() - 1
    while out and out[-1] is None:
        out.pop()
    return out
