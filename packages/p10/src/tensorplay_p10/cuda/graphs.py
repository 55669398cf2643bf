"""CUDA graphs: capture the kernels of a piece of work once, then replay them with a single launch.

Where it sits: ``CUDAGraph`` wraps ``csrc/cuda/graphs.cpp`` (stream capture through the driver). During a
capture nothing runs: the kernels are recorded, with the addresses of the tensors they touch. So:

- the tensors a graph reads and writes are *static*: copy new inputs into the captured input tensors, replay,
  read the captured outputs;
- memory the capture allocates comes from the graph's private pool and stays reserved until ``reset()``
  (Note [Graph private pools] in ``csrc/cuda/caching_allocator.h``); graphs can share one pool
  (``graph_pool_handle()``, or ``pool=other.pool()``);
- random ops draw new numbers at each replay (Note [Graph-safe RNG] in ``cuda_kernels/philox.cuh``);
- a synchronisation (``.item()``, ``.cpu()``, ``tp.cuda.synchronize()``) or ``empty_cache()`` during a
  capture raises RuntimeError naming the operation, and the capture is lost.

Capture on a side stream, never the default one (``tp.cuda.graph`` makes one) and warm up first: run the
work once outside the capture so that its kernels are compiled and its workspaces allocated.

Example (needs a GPU):
    >>> import tensorplay_p10 as tp
    >>> x = tp.zeros(4, device="cuda")  # doctest: +SKIP
    >>> g = tp.cuda.CUDAGraph()  # doctest: +SKIP
    >>> with tp.cuda.graph(g):  # doctest: +SKIP
    ...     y = x * 2 + 1
    >>> _ = x.fill_(3.0); g.replay()  # doctest: +SKIP
    >>> y.tolist()  # doctest: +SKIP
    [7.0, 7.0, 7.0, 7.0]
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any

from .. import _C, _autograd_hooks
from .streams import Stream, current_stream, stream

_cu = _C._cuda

_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


def graph_pool_handle() -> tuple[int, int]:
    """A new memory pool id: pass it as ``pool=`` to several captures so that their graphs share memory."""
    return _cu._graph_pool_handle()


def is_current_stream_capturing() -> bool:
    """True while the current stream of the current device is being captured into a graph."""
    return _cu._is_current_stream_capturing()


def _pool_stats(pool: tuple[int, int], device: Any = None) -> dict[str, int]:
    """A private pool's bytes reserved and allocated, its segments, and how many graphs use it."""
    from ._device import index_of

    return _cu._pool_stats(index_of(device), int(pool[0]), int(pool[1]))


class CUDAGraph:
    """A captured CUDA graph (PyTorch's ``torch.cuda.CUDAGraph``)."""

    def __init__(self, keep_graph: bool = False) -> None:
        self._g = _cu._Graph()

    def capture_begin(self, pool: tuple[int, int] | None = None, capture_error_mode: str = "global") -> None:
        """Start capturing the current stream (not a default stream). ``pool``: share another graph's pool."""
        if capture_error_mode not in _MODES:
            raise ValueError(
                f"capture_error_mode must be one of {sorted(_MODES)}, got {capture_error_mode!r}"
            )
        p0, p1 = (0, 0) if pool is None else (int(pool[0]), int(pool[1]))
        self._g.capture_begin(p0, p1, _MODES[capture_error_mode])

    def capture_end(self) -> None:
        """Finish the capture and instantiate the graph; RuntimeError if an illegal operation broke it."""
        self._g.capture_end()

    def replay(self) -> None:
        """Launch the captured work on the current stream (random ops draw new numbers each time)."""
        self._g.replay()

    def reset(self) -> None:
        """Free the graph; its private pool's memory is released once no graph uses the pool."""
        self._g.reset()

    def pool(self) -> tuple[int, int]:
        """This graph's memory pool id, to share it with a later capture (``pool=g.pool()``)."""
        return self._g.pool()

    def __del__(self) -> None:
        g = getattr(self, "_g", None)
        if g is not None:
            try:
                g.reset()
            except Exception:  # never raise from a finaliser (a capture left open, interpreter exit)
                pass


def _capture_stream() -> Stream:
    """The side stream captures run on unless told otherwise (one per process, as PyTorch's)."""
    if graph.default_capture_stream is None:
        graph.default_capture_stream = Stream()
    return graph.default_capture_stream


class graph:
    """Context manager: capture the block into ``cuda_graph`` on a side stream.

    Like PyTorch's: it synchronises the device, collects garbage and empties the cache first, so that the
    capture starts from a quiet device; the side stream is one shared default unless ``stream`` is given.
    """

    default_capture_stream: Stream | None = None

    def __init__(
        self,
        cuda_graph: CUDAGraph,
        pool: tuple[int, int] | None = None,
        stream: Stream | None = None,
        capture_error_mode: str = "global",
    ) -> None:
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream if stream is not None else _capture_stream()
        self.capture_error_mode = capture_error_mode
        self._stream_ctx: Any = None

    def __enter__(self) -> None:
        from . import empty_cache, synchronize

        synchronize()
        gc.collect()
        empty_cache()
        # The side stream starts after the work already queued on the current one (inputs filled there).
        self.capture_stream.wait_stream(current_stream())
        self._stream_ctx = stream(self.capture_stream)
        self._stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(pool=self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            self.cuda_graph.capture_end()
        except RuntimeError:
            if exc_type is None:  # the block's own error (the illegal operation) is the one to report
                raise
        finally:
            self._stream_ctx.__exit__(None, None, None)


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flatten(item)]
    return [x]


def _differentiable(x: Any) -> bool:
    from .. import Tensor

    return isinstance(x, Tensor) and x.requires_grad


def _graph_one(
    fn: Callable[..., Any], args: tuple, num_warmup_iters: int, allow_unused_input: bool, pool: Any
) -> Callable[..., Any]:
    from .. import Tensor

    # The engine, through P10's extension point: p10 never imports tpx (docs/design.md §1).
    autograd = _autograd_hooks.require_engine("tp.cuda.make_graphed_callables")

    params = list(fn.parameters()) if hasattr(fn, "parameters") else []
    surface = list(args) + params  # the static inputs: copied into before each replay
    needs_grad = [t for t in surface if isinstance(t, Tensor) and t.requires_grad]

    def grads_of(outputs: list[Any], grad_outputs: list[Any]) -> tuple[Any, ...]:
        outs = [o for o in outputs if _differentiable(o)]
        if not outs or not needs_grad:
            return tuple(None for _ in needs_grad)
        return autograd.grad(
            outs,
            needs_grad,
            grad_outputs=[
                g
                for o, g in zip(outputs, grad_outputs, strict=True)
                if isinstance(o, Tensor) and o.requires_grad
            ],
            allow_unused=allow_unused_input,
        )

    # Warm up on the stream that will be captured: kernels compiled and per-stream state (a cuBLAS handle and
    # its workspace) made outside the capture, where allocating from the driver is allowed.
    side = _capture_stream()
    side.wait_stream(current_stream())
    with stream(side):
        for _ in range(num_warmup_iters):
            outs = _flatten(fn(*args))
            grads_of(outs, [o.new_ones(o.shape) if isinstance(o, Tensor) else None for o in outs])
    current_stream().wait_stream(side)

    fwd, bwd = CUDAGraph(), CUDAGraph()
    with graph(fwd, pool=pool, stream=side):
        raw_out = fn(*args)
    static_out = _flatten(raw_out)
    static_grad_out = [
        o.new_zeros(o.shape) if isinstance(o, Tensor) and o.requires_grad else None for o in static_out
    ]
    with graph(bwd, pool=fwd.pool(), stream=side):
        static_grad_in = grads_of(static_out, static_grad_out)

    grad_slot = {id(t): i for i, t in enumerate(needs_grad)}

    class Graphed(autograd.Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> Any:
            for static, new in zip(surface, inputs, strict=True):
                if isinstance(static, Tensor) and static.data_ptr() != new.data_ptr():
                    static.copy_(new)
            fwd.replay()
            return tuple(o.detach() if isinstance(o, Tensor) else o for o in static_out)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            for static, g in zip(static_grad_out, grads, strict=True):
                if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd.replay()
            result = []
            for t in surface:
                slot = grad_slot.get(id(t))
                g = static_grad_in[slot] if slot is not None else None
                # A copy: autograd may keep a gradient as .grad; the next replay overwrites the static one.
                result.append(g.detach().clone() if g is not None else None)
            return tuple(result)

    def graphed(*user_args: Any) -> Any:
        out = Graphed.apply(*(tuple(user_args) + tuple(params)))
        if isinstance(raw_out, Tensor):
            return out[0]
        return out

    graphed._graphs = (fwd, bwd)  # type: ignore[attr-defined]  # kept alive with the callable
    return graphed


def make_graphed_callables(
    callables: Any,
    sample_args: Any,
    num_warmup_iters: int = 3,
    allow_unused_input: bool = False,
    pool: tuple[int, int] | None = None,
) -> Any:
    """Graphed versions of callables (functions or Modules), forward and backward each one CUDA graph.

    For each callable and its tuple of sample arguments: warm up on a side stream, capture the forward into
    one graph and the backward (the gradients of its outputs w.r.t. the arguments and parameters that require
    grad) into another, sharing a pool. The result is called like the original; it copies its arguments into
    the captured ones, replays the forward graph, and its autograd backward replays the backward graph. A
    Module gets its ``forward`` replaced and is returned. As in PyTorch, the arguments must have the sample
    arguments' shapes, dtypes and devices, and the work must not depend on values read on the host.
    """
    _autograd_hooks.require_engine("tp.cuda.make_graphed_callables")  # before any capture starts
    single = not isinstance(callables, (tuple, list))
    fns: Sequence[Any] = (callables,) if single else callables
    args_list: Sequence[Any] = (sample_args,) if single else sample_args
    if len(fns) != len(args_list):
        raise ValueError("make_graphed_callables: give one tuple of sample args per callable")
    shared = pool if pool is not None else graph_pool_handle()
    results = []
    for fn, args in zip(fns, args_list, strict=True):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        graphed = _graph_one(fn, args, num_warmup_iters, allow_unused_input, shared)
        if hasattr(fn, "parameters") and hasattr(fn, "forward"):
            fn.forward = graphed
            results.append(fn)
        else:
            results.append(graphed)
    return results[0] if single else tuple(results)


__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]
