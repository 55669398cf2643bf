"""``DataLoader``: batches from a dataset, in the main process or in worker processes (after PyTorch's).

Where it sits: the top of ``tensorplay.utils.data``. The loader picks an index sampler (the ``batch_sampler``,
or a :class:`BatchSampler` over ``sampler`` / ``shuffle``), and an iterator runs it:

- ``num_workers=0``: :class:`_SingleProcessIter` fetches and collates each batch when asked.
- ``num_workers>0``: :class:`_MultiProcessIter` starts worker processes (``_worker.py``), hands batches of
  indices out round-robin, one index queue per worker, keeps ``prefetch_factor`` tasks per worker in flight,
  and returns results in sampler order from the single result queue (Note [In-order delivery]).

Both give the same batches for the same seeds. An error in a worker is re-raised in the main process with the
worker's traceback in its message; a worker that dies (a signal, ``os._exit``) is reported as a
``RuntimeError`` instead of a hang.

Note [In-order delivery]
    Task ``k`` goes to worker ``k mod num_workers`` (skipping workers whose iterable dataset has ended).
    Results arrive in any order; one that is early is parked in ``task_info`` until every earlier task has
    been returned. Each returned batch frees one slot, and the next task is sent then, so at most
    ``prefetch_factor * num_workers`` tasks are outstanding.

Example:
    >>> import tensorplay as tp
    >>> from tensorplay.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(tp.arange(10.0), tp.arange(10))
    >>> loader = DataLoader(ds, batch_size=4)
    >>> len(loader)
    3
    >>> [y.tolist() for _, y in loader]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import tensorplay_p10 as tp

from . import _worker
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler[None]):
    """The index sampler of an iterable dataset: ``None`` forever (the dataset decides what comes next)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _pin(data: Any) -> Any:
    """``pin_memory``: page-locked copies for fast host-to-GPU transfer where a tensor offers ``pin_memory``.

    On CPU-only builds tensors have no pinned memory: the batch (already a fresh copy) passes through as is.
    """
    if isinstance(data, tp.Tensor):
        pin = getattr(type(data), "pin_memory", None)
        return pin(data) if callable(pin) else data
    if isinstance(data, dict):
        try:
            return type(data)({k: _pin(v) for k, v in data.items()})
        except TypeError:  # a mapping type that cannot be rebuilt from a dict
            return {k: _pin(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(v) for v in data)
    return data


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Args:
        dataset: a map-style :class:`Dataset` (anything with ``__getitem__``/``__len__``) or an
            :class:`IterableDataset`.
        batch_size: samples per batch (``None`` turns batching off: each item is one sample, converted
            with ``default_convert``).
        shuffle: visit a new random permutation each epoch (map-style datasets only).
        sampler / batch_sampler: custom index order / custom index batches (exclusive with ``shuffle``;
            ``batch_sampler`` also with ``batch_size`` and ``drop_last``).
        num_workers: worker processes (0: load in the main process).
        collate_fn: merges a list of samples into a batch (default :func:`default_collate`).
        pin_memory: page-locked batches for GPU transfer (nothing to do on CPU-only builds).
        drop_last: drop the last incomplete batch.
        timeout: seconds to wait for a batch from the workers before ``RuntimeError`` (0: forever).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker after seeding.
        multiprocessing_context: a ``multiprocessing`` context or its start-method name.
        generator: draws the shuffle order and the workers' ``base_seed`` (Note [Worker seeds], _worker.py).
        prefetch_factor: batches each worker loads ahead (default 2 when ``num_workers > 0``).
        persistent_workers: keep the workers alive between epochs.

    With workers, an epoch's batch ``k`` is ``collate_fn([dataset[i] for i in indices_k])`` exactly as
    without them; random numbers drawn inside workers follow ``tp.manual_seed(base_seed + worker_id)``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay.utils.data import DataLoader
        >>> g = tp.Generator().manual_seed(0)
        >>> [b.tolist() for b in DataLoader(list(range(6)), batch_size=3, shuffle=True, generator=g)]
        [[5, 1, 0], [3, 2, 4]]
    """

    def __init__(
        self,
        dataset: Dataset | Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: tp.Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
    ) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing "
                f"(got num_workers={num_workers})"
            )
        if timeout < 0:
            raise ValueError(f"timeout option should be non-negative (got timeout={timeout})")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. let num_workers > 0 to "
                "enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int) or prefetch_factor < 1):
            raise ValueError(f"prefetch_factor option should be a positive integer (got {prefetch_factor})")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                        f"{name}={value}"
                    )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.persistent_workers = persistent_workers
        if isinstance(multiprocessing_context, str):
            multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
        self.multiprocessing_context = multiprocessing_context
        self.collate_fn = collate_fn or (default_collate if self._auto_collation else default_convert)
        self._iterator: _MultiProcessIter | None = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        """Batches per epoch (for an iterable dataset, from ``len(dataset)`` when it has one)."""
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)


class _BaseIter:
    """State shared by both iterators: the index stream and the workers' base seed."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._pin = loader.pin_memory
        self._sampler_iter = iter(loader._index_sampler)
        # Drawn after the sampler's iterator exists and before its first index, as in PyTorch, so the default
        # generator's stream is consumed in the same order (Note [Worker seeds], _worker.py).
        self._base_seed = int(tp.empty((), dtype=tp.int64).random_(generator=loader.generator).item())

    def __iter__(self) -> _BaseIter:
        return self

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def _reset(self, loader: DataLoader) -> None:
        self._sampler_iter = iter(loader._index_sampler)

    def __len__(self) -> int:
        return len(self._loader)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        make = _worker.IterableFetcher if self._iterable else _worker.MapFetcher
        self._fetcher = make(loader.dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def __next__(self) -> Any:
        data = self._fetcher.fetch(self._next_index())  # StopIteration ends the epoch
        return _pin(data) if self._pin else data


class _MultiProcessIter(_BaseIter):
    """Worker processes, one index queue each, one result queue (Note [In-order delivery])."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        ctx = loader.multiprocessing_context or multiprocessing
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._shutdown = False
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # never block interpreter exit on undelivered indices
            w = ctx.Process(
                target=_worker.worker_loop,
                args=(
                    self._iterable,
                    loader.dataset,
                    index_queue,
                    self._result_queue,
                    self._done_event,
                    self._auto_collation,
                    self._collate_fn,
                    self._drop_last,
                    self._base_seed,
                    loader.worker_init_fn,
                    i,
                    self._num_workers,
                ),
                daemon=True,
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first=True)

    def _reset(self, loader: DataLoader, first: bool = False) -> None:
        super()._reset(loader)
        self._send_idx = 0  # next task number to hand out
        self._rcvd_idx = 0  # next task number to return
        self._task_info: dict[int, tuple] = {}  # task -> (worker,) while pending, (worker, data) once early
        self._tasks_outstanding = 0
        self._worker_status = [True] * self._num_workers
        self._worker_cycle = 0
        if not first:  # persistent workers: start a new epoch and drop what is left of the old one
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                number, _ = self._get_data()
                if isinstance(number, _worker.ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker whose stream has not ended
            worker = self._worker_cycle % self._num_workers
            self._worker_cycle += 1
            if self._worker_status[worker]:
                break
        else:
            return  # every worker is done (iterable datasets): nothing left to ask for
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self) -> tuple[Any, Any]:
        """The next ``(task, data)`` from the result queue, watching for dead workers and the timeout."""
        waited = 0.0
        while True:
            try:
                number, blob = self._result_queue.get(timeout=_worker.STATUS_CHECK_INTERVAL)
                return number, pickle.loads(blob)
            except queue.Empty:
                waited += _worker.STATUS_CHECK_INTERVAL
            dead = [w for i, w in enumerate(self._workers) if self._worker_status[i] and not w.is_alive()]
            if dead:
                self._shutdown_workers()
                raise RuntimeError(
                    "DataLoader worker (pid(s) "
                    + ", ".join(str(w.pid) for w in dead)
                    + ") exited unexpectedly: "
                    + "; ".join(_describe_exit(w.exitcode) for w in dead)
                )
            if self._timeout > 0 and waited >= self._timeout:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def __next__(self) -> Any:
        while True:
            # Skip tasks of workers that have ended (their pending tasks will never come back).
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._worker_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:  # it came early and was parked
                del self._task_info[self._rcvd_idx]
                return self._process(info[1])
            number, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.IterableDatasetStopIteration):
                self._worker_status[data.worker_id] = False
                self._try_put_index()
                continue
            if isinstance(number, _worker.ResumeIteration):
                continue
            if number != self._rcvd_idx:
                if number in self._task_info:
                    self._task_info[number] += (data,)
                continue
            del self._task_info[number]
            return self._process(data)

    def _process(self, data: Any) -> Any:
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return _pin(data) if self._pin else data

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for q in self._index_queues:
                q.put(None)
            for w in self._workers:
                w.join(timeout=_worker.STATUS_CHECK_INTERVAL * 5)
            for q in self._index_queues:
                q.close()
            self._result_queue.cancel_join_thread()
            self._result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
