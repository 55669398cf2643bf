"""Collation: turning a list of samples into one batch (``default_collate``), or converting one sample's
NumPy arrays and numbers into tensors (``default_convert``) — PyTorch's rules, from ``torch.utils.data``.

Where it sits: a ``DataLoader`` calls its ``collate_fn`` on each list of samples, in the worker process when
there are workers. The rules, applied recursively by the type of the batch's first element:

=================================  =====================================================================
first element                      batch
=================================  =====================================================================
Tensor                             ``tp.stack(batch)`` (all samples must have the same shape)
NumPy array / NumPy scalar         as tensors, then stacked (string and object arrays are an error)
float / int / bool                 a float64 / int64 / bool tensor of the numbers
str / bytes                        the list unchanged
Mapping                            the same mapping type, each key collated over the batch
namedtuple                         the same namedtuple, each field collated
other sequence (tuple, list ...)   a list (tuple) or the same sequence type, position by position
=================================  =====================================================================

Example:
    >>> import tensorplay as tp
    >>> from tensorplay.utils.data import default_collate
    >>> b = default_collate([{"x": tp.zeros(2), "y": 1}, {"x": tp.ones(2), "y": 2}])
    >>> b["x"].shape, b["y"]
    (tensorplay.Size([2, 2]), tensor([1, 2]))
"""

from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any

import numpy as np

import tensorplay_p10 as tp

_STRING_KINDS = re.compile(r"[SaUO]")  # NumPy dtype chars of strings and objects: not collatable
_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _rebuild_mapping(elem: Any, values: dict) -> Any:
    """A mapping like ``elem`` holding ``values`` (a plain dict when its type cannot be rebuilt)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem: Any, values: list) -> Any:
    """A sequence like ``elem`` holding ``values`` (a list when its type cannot be rebuilt)."""
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """Convert NumPy arrays and NumPy scalars inside ``data`` to tensors, keeping the structure.

    Used instead of :func:`default_collate` when automatic batching is off (``batch_size=None``). Tuples
    become lists, as in PyTorch.

    Example:
        >>> import numpy as np
        >>> from tensorplay.utils.data import default_convert
        >>> default_convert((np.array([1, 2]), "s"))
        [tensor([1, 2]), 's']
    """
    if isinstance(data, tp.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _STRING_KINDS.search(data.dtype.str) else tp.as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return tp.as_tensor(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def default_collate(batch: list) -> Any:
    """Merge a list of samples into a batch with PyTorch's rules (see the module docstring).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay.utils.data import default_collate
        >>> x, y = default_collate([(tp.tensor([1.0, 2.0]), 0), (tp.tensor([3.0, 4.0]), 1)])
        >>> x
        tensor([[1., 2.],
                [3., 4.]])
        >>> y
        tensor([0, 1])
    """
    if not isinstance(batch, collections.abc.Sequence) or isinstance(batch, (str, bytes)) or not len(batch):
        raise TypeError(f"default_collate: expected a non-empty list of samples, got {batch!r:.80}")
    elem = batch[0]
    if isinstance(elem, tp.Tensor):
        if any(not isinstance(b, tp.Tensor) for b in batch):
            kinds = sorted({type(b).__name__ for b in batch})
            raise TypeError(f"default_collate: a batch mixes tensors with other types ({', '.join(kinds)})")
        shapes = [tuple(b.shape) for b in batch]
        bad = next((i for i, s in enumerate(shapes) if s != shapes[0]), None)
        if bad is not None:
            raise RuntimeError(
                "default_collate: stack expects each tensor to be equal size, but got "
                f"{list(shapes[0])} at entry 0 and {list(shapes[bad])} at entry {bad} (a ragged batch: pad "
                "the samples to one shape, or pass a collate_fn that keeps them as a list)"
            )
        return tp.stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and not isinstance(elem, (np.str_, np.bytes_)):
        if _STRING_KINDS.search(elem.dtype.str):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([tp.as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return tp.as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tp.tensor(batch, dtype=tp.float64)
    if isinstance(elem, int):  # bool is an int: tp.tensor infers bool for all-bool batches
        return tp.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        sizes = [len(e) for e in batch]
        if any(n != sizes[0] for n in sizes):
            raise RuntimeError(
                f"default_collate: each element in list of batch should be of equal size (got sizes {sizes})"
            )
        transposed = [default_collate(list(samples)) for samples in zip(*batch, strict=False)]
        return transposed if isinstance(elem, tuple) else _rebuild_sequence(elem, transposed)
    raise TypeError(_ERR.format(type(elem)))
