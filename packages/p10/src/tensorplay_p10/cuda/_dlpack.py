"""DLPack's stream handshake for CUDA tensors (``Tensor.__dlpack__(stream=...)``, ``tp.from_dlpack``).

Where it sits: called by ``Tensor.__dlpack__`` (the producer side) and ``tp.from_dlpack`` (the consumer side);
the capsule itself is built in ``csrc/python/py_dlpack.cpp``. The DLPack protocol shares memory, not work: the
consumer names the stream it will read on, and the producer makes that stream wait for the work still queued
on its own current stream (an event recorded here, waited on there), so no host synchronisation is needed.
Stream numbers follow the DLPack specification for CUDA: ``None`` or ``1`` is the legacy default stream, ``2``
the per-thread default stream, ``-1`` "do not synchronise", any other integer a ``CUstream`` handle; ``0`` is
ambiguous and refused.
"""

from __future__ import annotations

from typing import Any

from .streams import Event, Stream, current_stream

_PER_THREAD_STREAM = 0x2  # CU_STREAM_PER_THREAD


def producer_sync(device_index: int, stream: Any) -> None:
    """Order the consumer's ``stream`` after the work queued so far on this device's current stream."""
    if stream == -1:
        return
    if stream == 0:
        raise ValueError("__dlpack__: stream=0 is ambiguous for CUDA; pass 1 for the legacy default stream")
    if not isinstance(stream, int) and stream is not None:
        raise TypeError(f"__dlpack__: stream must be an int or None, got {type(stream).__name__}")
    handle = {None: 0, 1: 0, 2: _PER_THREAD_STREAM}.get(stream, stream)
    producer = current_stream(device_index)
    if producer.cuda_stream == handle:
        return  # same stream: already in order
    event = Event()
    event.record(producer)
    event.wait(Stream._wrap(device_index, handle))


def consumer_stream(device_index: int) -> int:
    """The stream number to hand a producer: this thread's current stream on ``device_index``."""
    handle = current_stream(device_index).cuda_stream
    return 1 if handle == 0 else handle
