"""Building blocks for sample inputs: deterministic random tensors and the layouts every family reuses.

Where it sits: the family modules (unary.py, binary.py, …) build their ``sample_inputs`` generators from
these, so "size-0 dims, 0-d, transposed, strided slice" mean the same thing for every op.

Layouts: P10, like PyTorch, has no negative strides (``flip`` copies; ``x[::-1]`` raises), so the
non-contiguous samples are transposed (last two dims swapped in memory), strided (every other element of a
bigger buffer), permuted (3-d, dims in reverse memory order), sliced (an offset window) and expanded
(stride 0, read-only uses). A flipped input is ``tp.flip`` of a tensor, which exercises the op, not a layout.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

import tensorplay_p10 as tp

from . import SampleInput

# Elementwise shapes: 0-d, size-0 and size-1 dims, a vector, matrices, a 3-d block.
SHAPES = [(), (0,), (1,), (7,), (1, 1), (3, 4), (2, 0, 3), (2, 3, 4)]


def rng_for(*key: Any) -> np.random.Generator:
    """A generator seeded from ``key`` (op name, dtype, …): samples are the same on every run and in every
    process, and independent of the order tests run in."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def make_array(
    shape: tuple,
    dtype: Any,
    rng: np.random.Generator,
    low: float | None = None,
    high: float | None = None,
    exclude_zero: bool = False,
) -> np.ndarray:
    """Random values for ``dtype`` in [low, high) (ints: [low, high]); defaults keep every dtype exact."""
    if dtype is tp.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point or dtype.is_complex:
        lo, hi = (-9.0 if low is None else low), (9.0 if high is None else high)
        a = rng.uniform(lo, hi, shape)
        if dtype.is_complex:
            a = a + 1j * rng.uniform(lo, hi, shape)
        if exclude_zero:
            a[np.abs(a) < 0.1] = 0.5
        return a
    info = tp.iinfo(dtype)
    lo = max(-9 if low is None else int(low), info.min)
    hi = min(9 if high is None else int(high), info.max)
    a = rng.integers(lo, hi + 1, shape)
    if exclude_zero:
        a[a == 0] = 1 if hi >= 1 else -1
    return a


def from_array(a: np.ndarray, dtype: Any) -> Any:
    """A contiguous tensor of ``dtype`` holding ``a`` (rounded once to the dtype)."""
    if dtype.is_complex:
        return tp.tensor(np.asarray(a, np.complex128)).to(dtype)
    if dtype.is_floating_point:
        return tp.tensor(np.asarray(a, np.float64)).to(dtype)
    return tp.tensor(np.asarray(a)).to(dtype)


def make_tensor(shape: tuple, dtype: Any, rng: np.random.Generator, **kw: Any) -> Any:
    return from_array(make_array(shape, dtype, rng, **kw), dtype)


# Layouts: each returns a tensor with the same shape and values as ``t`` but another memory layout.
def transposed(t: Any) -> Any:
    """Last two dims swapped in memory (the common "x.t()" layout)."""
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)


def strided(t: Any) -> Any:
    """Every other element of a buffer twice as long in the last dim (a ``x[..., ::2]`` slice)."""
    shape = tuple(t.shape)
    big = tp.zeros(*shape[:-1], 2 * shape[-1], dtype=t.dtype)
    view = big[..., ::2]
    view.copy_(t)
    return view


def permuted(t: Any) -> Any:
    """Dims stored in reverse order (3-d and up: neither C- nor Fortran-like for the iterator's first dim)."""
    perm = tuple(reversed(range(t.dim())))
    return t.permute(perm).contiguous().permute(perm)


def offset(t: Any) -> Any:
    """A window into a bigger buffer that starts at a non-zero offset in every dim."""
    shape = tuple(t.shape)
    big = tp.zeros(*(s + 2 for s in shape), dtype=t.dtype)
    idx = tuple(slice(1, 1 + s) for s in shape)
    view = big[idx]
    view.copy_(t)
    return view


def layouts(t: Any) -> Iterator[tuple[str, Any]]:
    """The non-contiguous layouts that make sense for ``t``'s rank (none for 0-d and empty tensors)."""
    if t.dim() == 0 or t.numel() == 0:
        return
    yield "strided", strided(t)
    yield "offset", offset(t)
    if t.dim() >= 2:
        yield "transposed", transposed(t)
    if t.dim() >= 3:
        yield "permuted", permuted(t)


def unary_samples(op: Any, dtype: Any, **value_kw: Any) -> Iterator[SampleInput]:
    """One tensor over :data:`SHAPES`, then the non-contiguous layouts of the 2-d and 3-d ones."""
    rng = rng_for(op.id, str(dtype))
    for shape in SHAPES:
        t = make_tensor(shape, dtype, rng, **value_kw)
        yield SampleInput(t, name=f"shape {shape}")
        if shape in ((3, 4), (2, 3, 4)):
            for lname, v in layouts(t):
                yield SampleInput(v, name=f"{lname} {shape}")


def is_noncontiguous(sample: SampleInput) -> bool:
    return any(not t.is_contiguous() for t in sample.tensors())
