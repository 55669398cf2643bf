"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset (after ``torch.utils.data``).

Where it sits: a sampler yields dataset indices; :class:`BatchSampler` groups them into lists. The random
samplers draw from TensorPlay's generator with PyTorch's exact calls (``randperm`` and ``randint`` in the same
order and chunk sizes, ``multinomial`` for weights), and P10's generator is bit-identical to PyTorch's CPU
one, so for the same seed they produce PyTorch's orders.

Example:
    >>> import tensorplay as tp
    >>> from tensorplay.utils.data import BatchSampler, RandomSampler
    >>> s = RandomSampler(range(6), generator=tp.Generator().manual_seed(0))
    >>> list(BatchSampler(s, batch_size=4, drop_last=False))
    [[2, 5, 3, 0], [1, 4]]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import tensorplay_p10 as tp

T_co = TypeVar("T_co", covariant=True)


def _positive_int(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _boolean(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} should be a boolean value, but got {name}={value}")


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (the indices) and, when they know it, ``__len__``."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"Subclasses of Sampler should implement __iter__ ({type(self).__name__})")


class SequentialSampler(Sampler[int]):
    """``0, 1, …, len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Random indices: a fresh permutation per pass, or ``num_samples`` draws with ``replacement=True``.

    Without ``replacement``, ``num_samples`` (default ``len(data_source)``) may exceed the dataset's length:
    whole permutations follow one another and the last is cut short. With no ``generator``, each pass seeds a
    private generator from the default one (so ``tp.manual_seed`` makes runs repeatable), as PyTorch does.
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: tp.Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _boolean(replacement, "replacement")
        _positive_int(self.num_samples, "num_samples")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(tp.empty((), dtype=tp.int64).random_().item())
            generator = tp.Generator()
            generator.manual_seed(seed)
        if self.replacement:
            # PyTorch draws in chunks of 32; the same chunks give the same stream.
            for _ in range(self.num_samples // 32):
                yield from tp.randint(0, n, (32,), dtype=tp.int64, generator=generator).tolist()
            rest = self.num_samples % 32
            yield from tp.randint(0, n, (rest,), dtype=tp.int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from tp.randperm(n, generator=generator).tolist()
            yield from tp.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (a fresh permutation per pass)."""

    def __init__(self, indices: Sequence[int], generator: tp.Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in tp.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (``tp.multinomial``).

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay.utils.data import WeightedRandomSampler
        >>> list(WeightedRandomSampler([0.0, 0.0, 1.0], 3))
        [2, 2, 2]
    """

    def __init__(
        self,
        weights: Sequence[float] | tp.Tensor,
        num_samples: int,
        replacement: bool = True,
        generator: tp.Generator | None = None,
    ) -> None:
        _positive_int(num_samples, "num_samples")
        _boolean(replacement, "replacement")
        weights_tensor = tp.as_tensor(weights, dtype=tp.float64)
        if weights_tensor.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = tp.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of ``batch_size`` (the last shorter unless ``drop_last``).

    Example:
        >>> from tensorplay.utils.data import BatchSampler, SequentialSampler
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=True))
        [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        _positive_int(batch_size, "batch_size")
        _boolean(drop_last, "drop_last")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(batch) for batch in zip(*[it] * self.batch_size, strict=False))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
