"""``tensorplay.autograd.graph``: look at the recorded graph — as text for graphviz.

Where it sits: walks ``grad_fn.next_functions`` (the C++ nodes, csrc/node.h) from a tensor.

    >>> import tensorplay as tp
    >>> x = tp.ones(2, requires_grad=True)
    >>> print(tp.autograd.graph.to_dot((x * 2).sum()))  # doctest: +ELLIPSIS
    digraph autograd {
    ...
"""

from __future__ import annotations

from typing import Any

import tensorplay_p10 as tp

__all__ = ["Node", "saved_tensors_hooks", "to_dot", "walk"]

from .. import _C
from .node import Node


def walk(root: Any) -> list[Any]:
    """Every node reachable from ``root`` (a tensor or a node), each once, in a depth-first order."""
    start = root.grad_fn if isinstance(root, tp.Tensor) else root
    seen: dict[int, Any] = {}
    stack = [start] if start is not None else []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(nxt for nxt, _ in n.next_functions if nxt is not None)
    return list(seen.values())


def to_dot(root: Any) -> str:
    """The graph behind ``root`` as graphviz dot text (``dot -Tsvg``): one box per node, edges toward
    leaves."""
    nodes = walk(root)
    lines = ["digraph autograd {", '  node [shape=box, fontname="monospace"];']
    ids = {id(n): f"n{i}" for i, n in enumerate(nodes)}
    for n in nodes:
        label = n.name()
        lines.append(f'  {ids[id(n)]} [label="{label}"];')
    for n in nodes:
        for nxt, input_nr in n.next_functions:
            if nxt is not None:
                lines.append(f'  {ids[id(n)]} -> {ids[id(nxt)]} [label="{input_nr}"];')
    lines.append("}")
    return "\n".join(lines)


class saved_tensors_hooks:
    """Transform every tensor autograd saves for backward: ``pack_hook(tensor)`` at save time returns
    anything,
    ``unpack_hook(that)`` gives the tensor back when backward needs it (offloading, compression, ...).

        >>> import tensorplay as tp
        >>> seen = []
        >>> with tp.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.shape) or t, lambda t: t):
        ...     y = (tp.ones(2, requires_grad=True) * tp.ones(2)).sum()
        >>> len(seen) > 0
        True
    """

    def __init__(self, pack_hook: Any, unpack_hook: Any) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> None:
        _C._push_saved_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc: Any) -> None:
        _C._pop_saved_hooks()
