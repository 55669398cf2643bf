"""Random numbers: the default generator, seeding, and the sampling factories (``rand``, ``randn`` …).

Where it sits: the default generator is a CPU ``_C.Generator`` (``csrc/random/cpu_generator.cpp``: mt19937
with PyTorch's formulas, so ``tp.manual_seed(s); tp.randn(n)`` equals ``torch.manual_seed(s); torch.randn(n)``
bit for bit). The factories are ``empty`` followed by an in-place sampler op (``csrc/kernels/random.cpp``).

``tp.Generator(device="cpu")`` (the default) and ``tp.Generator(device="cuda")`` are generators of your own,
to pass as ``generator=``; both are ``tp.Generator`` instances with ``device``, ``manual_seed`` (returns the
generator), ``seed``, ``initial_seed`` and ``get_state`` / ``set_state``. A CUDA one is a Philox (seed,
offset) pair (``tp.cuda``'s ``random.py``). An op accepts only a generator of its own device type: a CUDA
generator given to a CPU op, or the reverse, raises RuntimeError ("Expected a 'cpu' device type for generator
but found 'cuda'"), as in PyTorch.

Example:
    >>> import tensorplay_p10 as tp
    >>> _ = tp.manual_seed(0)
    >>> tp.rand(2)
    tensor([0.4963, 0.7682])
    >>> g = tp.Generator().manual_seed(0)  # the same stream, private
    >>> tp.rand(2, generator=g)
    tensor([0.4963, 0.7682])
    >>> state = g.get_state()
    >>> a = tp.randn(3, generator=g)
    >>> _ = g.set_state(state)
    >>> bool((tp.randn(3, generator=g) == a).all())
    True
    >>> c = tp.Generator(device="cuda")  # needs no GPU to make
    >>> c.device, isinstance(c, tp.Generator), c.manual_seed(7).initial_seed()
    (device(type='cuda'), True, 7)
    >>> tp.rand(2, generator=c)
    Traceback (most recent call last):
        ...
    RuntimeError: uniform_: Expected a 'cpu' device type for generator but found 'cuda'
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from . import _C
from . import _dtype as D
from ._factories import _finish, empty
from ._shape import broadcast_shapes
from ._tensor import Tensor, _op, _shape_args
from .fake_tensor import follows_fake_input

Generator = _C.Generator
default_generator = _C.default_generator


def manual_seed(seed: int) -> Generator:
    """Seed the default generator and every CUDA device's (as PyTorch; needs no GPU); returns the first."""
    _C._cuda._rng_manual_seed_all(int(seed))
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator and every CUDA device's from the OS entropy source; returns the seed."""
    s = default_generator.seed()
    _C._cuda._rng_manual_seed_all(s)
    return s


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as a uint8 tensor (the same bytes PyTorch uses)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore a state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True) -> Iterator[None]:
    """Run a block with the RNG state restored afterwards."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def _sample(
    size: tuple,
    fill: str,
    args: tuple,
    generator: Any,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    out: Tensor | None = None,
) -> Tensor:
    t = out if out is not None else empty(*size, dtype=dtype, device=device)
    _op(fill)(t, *args, generator=generator)
    return _finish(t, requires_grad)


def rand(
    *size: Any,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform samples in ``[0, 1)``."""
    return _sample(
        tuple(_shape_args(size)), "uniform_", (0.0, 1.0), generator, dtype, device, requires_grad, out
    )


def randn(
    *size: Any,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal samples."""
    return _sample(
        tuple(_shape_args(size)), "normal_", (0.0, 1.0), generator, dtype, device, requires_grad, out
    )


def randint(
    low: int,
    high: Any = None,
    size: Sequence[int] | None = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``; int64 default."""
    if size is None:
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    t = empty(*_shape_args((size,)), dtype=dtype or D.int64, device=device)
    _op("random_.from")(t, int(low), int(high), generator=generator)
    return _finish(t, requires_grad)


def randperm(
    n: int, *, generator: Any = None, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A random permutation of ``0 … n-1``."""
    return _finish(_op("randperm")(n, generator=generator, dtype=dtype, device=device), requires_grad)


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Sequence[int] | None = None,
    *,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples: ``normal(mean, std, size)`` with numbers, or elementwise ``normal(mean_t, std_t)``.

    With tensors, PyTorch draws standard normals of the broadcast shape and scales them (``z * std + mean``);
    doing the same keeps the random stream identical.
    """
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        shape = broadcast_shapes(*(x.shape for x in (mean, std) if isinstance(x, Tensor)))
        if isinstance(std, Tensor) and std.device.type == "cpu" and (std.__array__() < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        z = _sample(
            tuple(shape), "normal_", (0.0, 1.0), generator, dtype or like.dtype, like.device, False, out
        )
        return _finish(z.mul_(std).add_(mean), requires_grad)
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    return _sample(
        tuple(size), "normal_", (float(mean), float(std)), generator, dtype, device, requires_grad, out
    )


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """0/1 samples: element i is 1 with probability ``input[i]`` (or ``p`` for every element)."""
    if p is not None:
        return empty(*input.shape, dtype=input.dtype, device=input.device).bernoulli_(p, generator=generator)
    return _op("bernoulli")(input, generator=generator)


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """Category indices drawn from the rows of ``input`` (unnormalised probabilities)."""
    return _op("multinomial")(input, num_samples, replacement, generator=generator)


@follows_fake_input
def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return rand(
        *input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad
    )


@follows_fake_input
def randn_like(
    input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return randn(
        *input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad
    )


@follows_fake_input
def randint_like(
    input: Tensor,
    low: int,
    high: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        tuple(input.shape),
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )
