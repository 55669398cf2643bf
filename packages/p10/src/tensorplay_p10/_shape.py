"""Shapes: ``tensorplay.Size`` and the shape helpers that are compositions of primitive views.

Where it sits: ``flatten``, ``unflatten``, ``movedim`` are written with the view ops (``reshape``,
``view``, ``permute``), so they work on every backend and autograd differentiates them through their parts;
``split``, ``chunk`` and ``unbind`` call P10's multi-view ops (one autograd node for all the pieces).
``Tensor`` (``_tensor.py``) calls them for its methods of the same names; ``tp.flatten`` and the others are
these functions.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.arange(6).reshape(2, 3).flatten().shape
    tensorplay.Size([6])
    >>> [p.tolist() for p in tp.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _C


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints as ``tensorplay.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"tensorplay.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):  # slices of a Size are Sizes
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r


# ---- view helpers that are compositions of the primitive views (so they work on every backend) -----------
def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """Merge dims ``start_dim..end_dim`` into one (a view when the layout allows, else a copy)."""
    n = input.dim()
    if n == 0:
        return input.reshape(1)
    s, e = _wrap(start_dim, n, "flatten"), _wrap(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = list(input.shape)
    merged = 1
    for d in shape[s : e + 1]:
        merged *= d
    return input.reshape(shape[:s] + [merged] + shape[e + 1 :])


def unflatten(input: Any, dim: int, sizes: Sequence[int]) -> Any:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    d = _wrap(dim, input.dim(), "unflatten")
    shape = list(input.shape)
    return input.view(shape[:d] + list(sizes) + shape[d + 1 :])


def movedim(input: Any, source: Any, destination: Any) -> Any:
    """Move dims from ``source`` positions to ``destination`` positions, keeping the others in order."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = input.dim()
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
            f"same number of dims as destination ({dst} dims)"
        )
    src = [_wrap(s, n, "movedim") for s in src]
    dst = [_wrap(d, n, "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in source or destination")
    order: list[int | None] = [None] * n
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    perm = [o if o is not None else next(rest) for o in order]
    return input.permute(perm)


# Looked up once: RNN loops split every step.
_split, _split_with_sizes, _unbind = _C._op("split"), _C._op("split_with_sizes"), _C._op("unbind")


def split(tensor: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
    """Views of equal ``split_size`` chunks (the last may be smaller), or of the given section sizes.

    One op (``split.Tensor`` / ``split_with_sizes``), so autograd records one node for all the pieces
    (Note [One op for all the pieces] in P10's kernels/view.cpp).
    """
    if isinstance(split_size_or_sections, int):
        return tuple(_split(tensor, split_size_or_sections, dim))
    return tuple(_split_with_sizes(tensor, [int(s) for s in split_size_or_sections], dim))


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """Split into ``chunks`` pieces of ``ceil(size / chunks)`` (PyTorch's rule: possibly fewer pieces)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap(dim, input.dim(), "chunk")
    size = input.shape[d]
    if size == 0:  # PyTorch gives `chunks` empty pieces here
        return split(input, [0] * chunks, d)
    return split(input, -(-size // chunks), d)


def unbind(input: Any, dim: int = 0) -> tuple[Any, ...]:
    """All slices along ``dim``, as views (one op: Note [One op for all the pieces])."""
    return tuple(_unbind(input, dim))


def broadcast_shapes(*shapes: Sequence[int]) -> Size:
    """The shape NumPy-style broadcasting gives ``shapes`` (RuntimeError naming both when they clash)."""
    return Size(_C._broadcast_shapes([list(s) for s in shapes]))


def _wrap(dim: int, n: int, op: str) -> int:
    lo, hi = -max(n, 1), max(n, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim % max(n, 1)
