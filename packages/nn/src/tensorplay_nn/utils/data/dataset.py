"""Datasets: what a ``DataLoader`` reads samples from (``tensorplay.utils.data``, after ``torch.utils.data``).

Where it sits: plain Python over the public tensor API. A map-style :class:`Dataset` answers
``dataset[i]`` and ``len(dataset)``; an :class:`IterableDataset` is a stream (``iter(dataset)``). The
combinators here (concatenation, chaining, subsets, stacking) and :func:`random_split` build new datasets from
old ones without copying samples.

Example:
    >>> import tensorplay as tp
    >>> from tensorplay.utils.data import TensorDataset, random_split
    >>> ds = TensorDataset(tp.arange(10.0).reshape(5, 2), tp.arange(5))
    >>> ds[1]
    (tensor([2., 3.]), tensor(1))
    >>> train, val = random_split(ds, [0.8, 0.2], generator=tp.Generator().manual_seed(0))
    >>> len(train), len(val)
    (4, 1)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import tensorplay_p10 as tp

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__()``.

    ``a + b`` is ``ConcatDataset([a, b])``.
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError(
            f"Subclasses of Dataset should implement __getitem__ ({type(self).__name__})"
        )

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy of the dataset; use
    :func:`~tensorplay.utils.data.get_worker_info` inside ``__iter__`` to give each worker its share.

    Example:
        >>> from tensorplay.utils.data import DataLoader, IterableDataset
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(5))
        >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(
            f"Subclasses of IterableDataset should implement __iter__ ({type(self).__name__})"
        )

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are the rows of the given tensors: ``ds[i] == tuple(t[i] for t in tensors)``.

    All tensors must have the same size in their first dimension.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay.utils.data import TensorDataset
        >>> TensorDataset(tp.zeros(3, 2), tp.ones(3))[0]
        (tensor([0., 0.]), tensor(1.))
    """

    def __init__(self, *tensors: tp.Tensor) -> None:
        if any(not isinstance(t, tp.Tensor) or t.dim() == 0 for t in tensors):
            raise ValueError("TensorDataset: every argument must be a tensor with at least one dimension")
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise ValueError(f"TensorDataset: size mismatch between tensors (first dimensions {sizes})")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0) if self.tensors else 0


class StackDataset(Dataset[T_co]):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) of the datasets' samples.

    Example:
        >>> from tensorplay.utils.data import StackDataset
        >>> StackDataset(x=[1, 2], y=["a", "b"])[1]
        {'x': 2, 'y': 'b'}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "StackDataset: give datasets either as positional or as keyword arguments, not both"
            )
        datasets: Sequence[Any] = args or list(kwargs.values())
        if not datasets:
            raise ValueError("StackDataset: at least one dataset should be passed")
        lengths = [len(d) for d in datasets]  # type: ignore[arg-type]
        if any(n != lengths[0] for n in lengths):
            raise ValueError(f"StackDataset: size mismatch between datasets (lengths {lengths})")
        self._length = lengths[0]
        self.datasets: tuple | dict = args if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Several map-style datasets one after another: index ``i`` runs through them in order.

    Example:
        >>> from tensorplay.utils.data import ConcatDataset
        >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
        >>> len(ds), ds[2], ds[-1]
        (5, 3, 5)
    """

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ValueError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which == len(self.datasets):
            raise IndexError(
                f"ConcatDataset: index {idx} is out of range for a dataset of length {len(self)}"
            )
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another (a lazy ``itertools.chain``)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Example:
        >>> from tensorplay.utils.data import Subset
        >>> s = Subset(["a", "b", "c", "d"], [3, 1])
        >>> len(s), s[0]
        (2, 'd')
    """

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        # Forward batched fetching when the wrapped dataset has it (as PyTorch does).
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])  # type: ignore[attr-defined]
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[T_co], lengths: Sequence[int | float], generator: tp.Generator | None = None
) -> list[Subset[T_co]]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or fractions).

    Fractions that sum to 1 become ``floor(len(dataset) * f)`` items each, and the remainder is dealt out one
    item at a time from the first split on. The order comes from ``tp.randperm(n, generator=generator)`` — the
    same split as ``torch.utils.data.random_split`` for the same seed.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay.utils.data import random_split
        >>> a, b = random_split(range(10), [3, 7], generator=tp.Generator().manual_seed(42))
        >>> len(a), len(b)
        (3, 7)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1 (got {frac})")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))  # type: ignore[arg-type]
        for i in range(len(dataset) - sum(subset_lengths)):  # type: ignore[arg-type]
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=2
                )
    if sum(lengths) != len(dataset):  # type: ignore[arg-type]
        raise ValueError(
            f"random_split: sum of input lengths ({sum(lengths)}) does not equal the length of the input "
            f"dataset ({len(dataset)})"  # type: ignore[arg-type]
        )
    gen = generator if generator is not None else tp.default_generator
    indices = tp.randperm(int(sum(lengths)), generator=gen).tolist()
    return [
        Subset(dataset, indices[end - n : end])
        for end, n in zip(itertools.accumulate(lengths), lengths, strict=False)  # type: ignore[arg-type]
    ]
