"""The DataLoader's worker processes: their main loop, their seeds, and how their errors travel home.

Where it sits: ``dataloader.py`` starts ``num_workers`` processes running :func:`worker_loop`. Each reads
``(task_number, indices)`` from its own index queue, fetches and collates the samples, and puts
``(task_number, pickled batch)`` on the one result queue shared by all workers; the main process puts
batches back in task order. Tensors cross the process boundary by pickling (``tensorplay_p10/_pickle.py``).

Note [Worker seeds]
    As in PyTorch: the main process draws ``base_seed`` (one int64 from the loader's generator, or the default
    one) per iterator; worker ``i`` seeds Python's ``random`` and ``tp.manual_seed`` with ``base_seed + i``,
    and NumPy's global generator with :func:`_numpy_seed` (PyTorch's hash of ``(base_seed, i)``), so
    ``get_worker_info().seed`` and every random stream in a worker match PyTorch's for the same seeds.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

import tensorplay_p10 as tp

# How often a waiting worker checks that its parent is still alive (seconds).
STATUS_CHECK_INTERVAL = 1.0


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` gives in a worker: ``id``, ``num_workers``, ``seed``, ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Inside a DataLoader worker process, its :class:`WorkerInfo`; ``None`` in the main process.

    An :class:`~tensorplay.utils.data.IterableDataset` uses it to give each worker its own share.

    Example:
        >>> from tensorplay.utils.data import get_worker_info
        >>> get_worker_info() is None  # not in a worker
        True
    """
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, re-raised in the main process."""

    def __init__(self, where: str) -> None:
        exc_type, exc, tb = sys.exc_info()
        try:  # the type travels by name; one that cannot (a local class) comes home as RuntimeError
            pickle.loads(pickle.dumps(exc_type))
        except Exception:
            exc_type = RuntimeError
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self) -> None:
        """Raise the same exception type with a message holding the worker's traceback."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError would print the message repr()'d, newlines escaped
            raise _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class IterableDatasetStopIteration:
    """Sent by a worker whose copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; they echo it back once reset."""


def _numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """PyTorch's ``_generate_state``: four 32-bit words for NumPy's seed from ``(base_seed, worker_id)``."""
    mask = 0xFFFFFFFF
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    hash_a = 0x43B0D7E5

    def hash_value(value: int) -> int:
        nonlocal hash_a
        value = (value ^ hash_a) & mask
        hash_a = (hash_a * mult_a) & mask
        value = (value * hash_a) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x: int, y: int) -> int:
        r = ((0xCA01F9DD * x) & mask) - ((0x4973F715 * y) & mask)
        r &= mask
        return (r ^ (r >> 16)) & mask

    pool = [hash_value(e) for e in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hash_value(pool[src]))
    hash_b, state = 0x8B51F9DD, []
    for value in pool:
        value = (value ^ hash_b) & mask
        hash_b = (hash_b * mult_b) & mask
        value = (value * hash_b) & mask
        state.append((value ^ (value >> 16)) & mask)
    return state


class MapFetcher:
    """Fetches samples of a map-style dataset by index (a list of indices when batching)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index: Any) -> Any:
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class IterableFetcher:
    """Takes the next samples from an iterable dataset's iterator; raises StopIteration when it ends."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        data = []
        for _ in index:
            try:
                data.append(next(self.it))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def _pickled(data: Any, where: str) -> bytes:
    """``data`` as pickle bytes, made here so that a batch that cannot be pickled is reported, not lost.

    (``multiprocessing.Queue.put`` pickles in a background thread, which only prints such errors: the main
    process would wait forever for the batch.)
    """
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps(ExceptionWrapper(where), protocol=pickle.HIGHEST_PROTOCOL)


def worker_loop(
    iterable: bool,
    dataset: Any,
    index_queue: Any,
    result_queue: Any,
    done_event: Any,
    auto_collation: bool,
    collate_fn: Any,
    drop_last: bool,
    base_seed: int,
    init_fn: Any,
    worker_id: int,
    num_workers: int,
) -> None:
    """The body of worker process ``worker_id`` (see the module docstring)."""
    global _worker_info
    try:
        # One thread per worker: the workers already fill the cores, and a fork-inherited pool is unsafe.
        tp.set_num_threads(1)
        seed = base_seed + worker_id  # Note [Worker seeds]
        random.seed(seed)
        tp.manual_seed(seed)
        np.random.seed(_numpy_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        make_fetcher = IterableFetcher if iterable else MapFetcher
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where)
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:  # the parent died: stop instead of waiting forever
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, ResumeIteration):
                result_queue.put((task, pickle.dumps(None)))
                iteration_end = False
                fetcher = make_fetcher(dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:  # shut down
                break
            if done_event.is_set() or iteration_end:
                continue
            number, index = task
            if init_error is not None:
                data: Any = init_error
                init_error = None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where)
                    else:
                        data, iteration_end = IterableDatasetStopIteration(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where)
            result_queue.put((number, _pickled(data, where)))
            del data, task, index
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        result_queue.cancel_join_thread()
        result_queue.close()
