"""CUDA streams and events: ``tp.cuda.Stream``, ``Event``, ``current_stream``, ``default_stream``, ``stream``.

Where it sits: the Python face of ``csrc/cuda/runtime.h`` (each thread has a current stream per device; every
op runs on it) and of the driver's events. Handles cross from C++ as integers.

A stream is a queue of GPU work that runs in order; work on two streams may overlap. An event marks a point in
a stream: another stream can wait for it, the host can wait for it, and two timed events measure the GPU time
between them. As in PyTorch, a stream made here lives as long as the process (a freed handle could be reused
by a new stream while the caching allocator still associates blocks with it).

Example (on a machine with a GPU):
    >>> import tensorplay as tp
    >>> s = tp.cuda.Stream()  # doctest: +SKIP
    >>> start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)  # doctest: +SKIP
    >>> with tp.cuda.stream(s):  # doctest: +SKIP
    ...     start.record()
    ...     y = tp.ones(1 << 20, device="cuda") * 2
    ...     end.record()
    >>> end.synchronize(); ms = start.elapsed_time(end)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import _C
from .._device import device as Device
from ._device import index_of

_cu = _C._cuda


class Stream:
    """A CUDA stream on ``device`` (default: the current device). ``priority``: lower numbers run first."""

    def __init__(self, device: Any = None, priority: int = 0) -> None:
        self.device_index = index_of(device)
        self.cuda_stream = _cu._stream_create(self.device_index, priority)

    @classmethod
    def _wrap(cls, device_index: int, handle: int) -> Stream:
        s = cls.__new__(cls)
        s.device_index, s.cuda_stream = device_index, handle
        return s

    @property
    def device(self) -> Device:
        return Device("cuda", self.device_index)

    def synchronize(self) -> None:
        """Wait until every piece of work queued on this stream has finished."""
        _cu._stream_synchronize(self.cuda_stream, self.device_index)

    def query(self) -> bool:
        """True when all work queued on this stream has finished."""
        return _cu._stream_query(self.cuda_stream, self.device_index)

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream after this call waits for ``event``."""
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Work queued on this stream after this call waits for everything queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one by default) on this stream and return it."""
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.device_index, self.cuda_stream) == (
            other.device_index,
            other.cuda_stream,
        )

    def __hash__(self) -> int:
        return hash((self.device_index, self.cuda_stream))

    def __repr__(self) -> str:
        return f"<tensorplay.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


def current_stream(device: Any = None) -> Stream:
    """The stream ops on ``device`` run on in this thread."""
    idx = index_of(device)
    return Stream._wrap(idx, _cu._current_stream(idx))


def default_stream(device: Any = None) -> Stream:
    """The device's default stream (the legacy stream, handle 0)."""
    return Stream._wrap(index_of(device), 0)


def set_stream(stream: Stream) -> None:
    """Make ``stream`` the current stream of its device for this thread."""
    _cu._set_current_stream(stream.device_index, stream.cuda_stream)


@contextmanager
def stream(s: Stream | None) -> Iterator[Stream | None]:
    """Run the block with ``s`` as the current stream (its device as the current device); None: no change."""
    if s is None:
        yield None
        return
    prev_device = _cu.current_device()
    prev = _cu._current_stream(s.device_index)
    _cu.set_device(s.device_index)
    _cu._set_current_stream(s.device_index, s.cuda_stream)
    try:
        yield s
    finally:
        _cu._set_current_stream(s.device_index, prev)
        _cu.set_device(prev_device)


class Event:
    """A marker in a stream. ``enable_timing=True`` lets ``elapsed_time`` measure between two events."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        if interprocess:
            raise NotImplementedError("Event(interprocess=True) is not supported by tensorplay yet")
        self.enable_timing, self.blocking = enable_timing, blocking
        self.cuda_event = 0  # made at the first record(), on that stream's device (as in PyTorch)
        self.device_index = -1

    def _ensure(self, device_index: int) -> None:
        if not self.cuda_event:
            self.cuda_event = _cu._event_create(device_index, self.enable_timing, self.blocking)
            self.device_index = device_index

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current end of ``stream`` (default: the current stream)."""
        stream = stream if stream is not None else current_stream()
        self._ensure(stream.device_index)
        if stream.device_index != self.device_index:
            raise ValueError(
                f"Event.record: the event was made on cuda:{self.device_index}, the stream is on "
                f"cuda:{stream.device_index}"
            )
        _cu._event_record(self.cuda_event, stream.cuda_stream, self.device_index)

    def wait(self, stream: Stream | None = None) -> None:
        """Work queued on ``stream`` (default: current) after this call waits until the event has happened."""
        stream = stream if stream is not None else current_stream()
        if self.cuda_event:
            _cu._stream_wait_event(stream.cuda_stream, self.cuda_event, stream.device_index)

    def query(self) -> bool:
        """True when the work before the event has finished (an event never recorded counts as done)."""
        return True if not self.cuda_event else _cu._event_query(self.cuda_event, self.device_index)

    def synchronize(self) -> None:
        """Wait on the host until the event has happened."""
        if self.cuda_event:
            _cu._event_synchronize(self.cuda_event, self.device_index)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds of GPU time from this event to ``end_event`` (both recorded, both with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time: both events must be created with enable_timing=True")
        if not (self.cuda_event and end_event.cuda_event):
            raise RuntimeError("elapsed_time: both events must be recorded before calculating elapsed time")
        return _cu._event_elapsed_time(self.cuda_event, end_event.cuda_event, self.device_index)

    def __del__(self) -> None:
        if getattr(self, "cuda_event", 0):
            try:
                _cu._event_destroy(self.cuda_event, self.device_index)
            except Exception:  # interpreter shutdown: the driver may already be gone
                pass

    def __repr__(self) -> str:
        return (
            f"<tensorplay.cuda.Event {self.cuda_event:#x}>"
            if self.cuda_event
            else "<tensorplay.cuda.Event uninitialized>"
        )
