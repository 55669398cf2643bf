"""Factories: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``, ``empty``, ``arange``.

Where it sits: thin Python over the factory ops in ``csrc/kernels/factory.cpp`` (``empty``, ``full``,
``arange``, ``linspace``, ``logspace``, ``eye``) plus data import through DLPack
(``_C._from_dlpack_capsule``), so that ``from_numpy`` shares memory and ``tensor`` copies, as in PyTorch.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.tensor([[1, 2], [3, 4]]).dtype
    tensorplay.int64
    >>> tp.zeros(2, 3, dtype=tp.float64).shape
    tensorplay.Size([2, 3])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _C
from . import _dtype as D
from ._shape import Size
from ._tensor import Tensor, _op, _shape_args
from .fake_tensor import follows_fake_input

_empty, _full, _arange = _op("empty"), _op("full"), _op("arange")


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _out(result: Tensor, out: Tensor | None) -> Tensor:
    """Write a factory's result into ``out=`` (resizing it like PyTorch) and return ``out``."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            raise RuntimeError(
                f"out= tensor of shape {list(out.shape)} does not match the result's "
                f"{list(result.shape)}; pass an empty tensor to have it resized"
            )
        raise NotImplementedError(
            "resizing an empty out= tensor is not supported yet; pass one of the right shape"
        )
    return out.copy_(result)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any DLPack producer (NumPy, PyTorch, CuPy, …) or capsule."""
    if hasattr(ext_tensor, "__dlpack__"):
        kwargs: dict[str, Any] = {}
        device_of = getattr(ext_tensor, "__dlpack_device__", None)
        device_type, device_index = device_of() if device_of is not None else (1, 0)
        if device_type == 2:  # kDLCUDA: the producer orders its pending work before our current stream
            from .cuda._dlpack import consumer_stream

            kwargs["stream"] = consumer_stream(device_index)
        try:
            capsule = ext_tensor.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:  # producers that predate DLPack 1.0 take no max_version
            capsule = ext_tensor.__dlpack__(**kwargs)
    else:
        capsule = ext_tensor
    return _C._from_dlpack_capsule(capsule)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (writes through either are seen by both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(ndarray.dtype)  # TypeError for unsupported dtypes
    if not ndarray.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. "
            "Conversion between byte orders is currently not supported."
        )
    if any(s % ndarray.itemsize for s in ndarray.strides) or any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative or not a multiple of the "
            "element size. Use np.ascontiguousarray(arr) (or arr.copy()) first."
        )
    return from_dlpack(ndarray)


def _infer_dtype(data: Any) -> D.dtype:
    """PyTorch's inference for Python data: bool < int64 < default float < default complex."""
    kind = ""  # no element seen yet: an empty list is the default float dtype
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            k = (
                "c"
                if x.dtype.is_complex
                else "f"
                if x.dtype.is_floating_point
                else "b"
                if x.dtype is D.bool
                else "i"
            )
        elif isinstance(x, bool) or isinstance(x, np.bool_):
            k = "b"
        elif isinstance(x, (int, np.integer)):
            k = "i"
        elif isinstance(x, (float, np.floating)):
            k = "f"
        elif isinstance(x, (complex, np.complexfloating)):
            k = "c"
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        elif isinstance(x, np.ndarray):
            k = x.dtype.kind if x.dtype.kind in "bifc" else "f"
            k = "i" if k == "u" else k
        else:
            # RuntimeError, as PyTorch raises it (tp.tensor(None), tp.tensor([1, object()])).
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        kind = max(kind, k, key="bifc".index) if kind else k
    dflt = D.get_default_dtype()
    return {"b": D.bool, "i": D.int64, "f": dflt, "c": dflt.to_complex(), "": dflt}[kind]


def tensor(
    data: Any,
    *,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, NumPy arrays or tensors).

    >>> tensor([1.5, 2]).dtype
    tensorplay.float32
    """
    if isinstance(data, Tensor):
        t = data.detach().clone()
        if dtype is not None or device is not None:
            t = t.to(dtype=dtype, device=device)
        return _finish(t, requires_grad)
    if isinstance(data, np.ndarray):
        target = dtype or D.from_numpy_dtype(data.dtype)
    else:
        target = dtype or _infer_dtype(data)
    stage = D.float32 if target is D.bfloat16 else target  # NumPy has no bfloat16: go through float32
    try:
        arr = np.array(data, dtype=D.to_numpy_dtype(stage), copy=True, order="C")
    except ValueError as e:
        raise ValueError(f"tensor(): could not build a tensor from the data: {e}") from None
    t = from_dlpack(arr)
    if stage is not target:
        t = t.to(target)
    if device is not None and str(device) != "cpu":
        t = t.to(device=device)
    return _finish(t, requires_grad)


def as_tensor(data: Any, dtype: D.dtype | None = None, device: Any = None) -> Tensor:
    """Like :func:`tensor`, but shares memory with ``data`` when no conversion is needed."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if (
        isinstance(data, np.ndarray)
        and (dtype is None or dtype is D.from_numpy_dtype(data.dtype))
        and (device is None or str(device) == "cpu")
    ):
        try:
            return from_numpy(data)
        except (ValueError, BufferError):
            pass
    return tensor(data, dtype=dtype, device=device)


def empty(
    *size: Any,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """An uninitialised tensor of the given shape."""
    return _finish(_out(_empty(_shape_args(size), dtype=dtype, device=device), out), requires_grad)


def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialised tensor with the given strides."""
    return _finish(_op("empty_strided")(list(size), list(stride), dtype=dtype, device=device), requires_grad)


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value (bool, int64 or default float)."""
    return _finish(
        _out(_full(_shape_args((size,)), fill_value, dtype=dtype, device=device), out), requires_grad
    )


def zeros(
    *size: Any,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of zeros (default float dtype unless ``dtype=``)."""
    r = _full(_shape_args(size), 0.0 if dtype is None else 0, dtype=dtype, device=device)
    return _finish(_out(r, out), requires_grad)


def ones(
    *size: Any,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ones (default float dtype unless ``dtype=``)."""
    r = _full(_shape_args(size), 1.0 if dtype is None else 1, dtype=dtype, device=device)
    return _finish(_out(r, out), requires_grad)


def _like(input: Tensor, dtype: Any, device: Any) -> dict:
    return {"dtype": dtype or input.dtype, "device": device or input.device}


@follows_fake_input
def empty_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    return empty(input.shape, requires_grad=requires_grad, **_like(input, dtype, device))


@follows_fake_input
def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    return zeros(input.shape, requires_grad=requires_grad, **_like(input, dtype, device))


@follows_fake_input
def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    return ones(input.shape, requires_grad=requires_grad, **_like(input, dtype, device))


@follows_fake_input
def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    return full(input.shape, fill_value, requires_grad=requires_grad, **_like(input, dtype, device))


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values ``start, start + step, ...`` below ``end``.

    >>> arange(1, 4).tolist(), arange(0, 1, 0.25).tolist()
    ([1, 2, 3], [0.0, 0.25, 0.5, 0.75])
    """
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    return _finish(_out(_arange(start, end, step, dtype=dtype, device=device), out), requires_grad)


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _finish(_out(_op("linspace")(start, end, steps, dtype=dtype, device=device), out), requires_grad)


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    return _finish(
        _out(_op("logspace")(start, end, steps, builtins.float(base), dtype=dtype, device=device), out),
        requires_grad,
    )


def eye(
    n: int,
    m: int | None = None,
    *,
    out: Tensor | None = None,
    dtype: D.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The ``n × m`` identity matrix."""
    return _finish(_out(_op("eye")(n, m, dtype=dtype, device=device), out), requires_grad)


__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "from_dlpack",
    "empty",
    "empty_strided",
    "full",
    "zeros",
    "ones",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "Size",
]
