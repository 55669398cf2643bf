"""``tp.explain(fn, *args)``: watch the dispatcher work.

For every op call made while ``fn`` runs, it records the dispatch key set the call computed, the kernel slot
that ran, and the kernel's source location (``file:line``), so a learner can open the file and read it. Nested
calls (an op whose kernel calls other ops) are indented. ``TP_TRACE_DISPATCH=1`` prints the same lines to
stderr as they happen, for a whole program.

Example:
    >>> import tensorplay_p10 as tp
    >>> x = tp.ones(2)
    >>> report = tp.explain(lambda: x + 1)   # prints one line per op call
    add  keys={CPU}  ran=CPU  at packages/p10/csrc/kernels/binary.cpp:...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from . import _C


class DispatchRecord(NamedTuple):
    op: str  # "add"
    keys: str  # the key set the call dispatched on, highest first: "{Autograd, CPU}"
    ran: str  # the key whose slot ran, e.g. "CPU" or "Autograd -> Composite"
    source: str  # the kernel's file:line
    depth: int  # nesting: 0 for calls made by fn itself
    unboxed: bool  # a typed C++ call that skipped boxing (Note [Unboxed calls] in dispatcher.h)


class Explanation(list):
    """The records of one ``explain`` call; ``print`` shows them as an indented table."""

    result: Any = None

    def __str__(self) -> str:
        if not self:
            return "(no op reached the dispatcher)"
        width = max(len("  " * r.depth + r.op) for r in self) + 2
        lines = []
        for r in self:
            ran = r.ran + (" (unboxed)" if r.unboxed else "")
            lines.append(f"{'  ' * r.depth + r.op:<{width}}keys={r.keys}  ran={ran}  at {r.source}")
        return "\n".join(lines)


def explain(fn: Callable[..., Any], *args: Any, quiet: bool = False, **kwargs: Any) -> Explanation:
    """Run ``fn(*args, **kwargs)`` and report every dispatcher decision it caused (printed unless ``quiet``).

    The returned :class:`Explanation` is a list of :class:`DispatchRecord`; ``.result`` holds ``fn``'s result.
    """
    _C._trace_begin()
    try:
        result = fn(*args, **kwargs)
    finally:
        records = _C._trace_end()
    report = Explanation(DispatchRecord(*r) for r in records)
    report.result = result
    if not quiet:
        print(report)
    return report
