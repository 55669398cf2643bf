"""``tensorplay.Tensor``: the Python half of a tensor.

Where it sits: ``_C.TensorBase`` (``csrc/python/py_tensor.cpp``) holds the C++ tensor and answers metadata
questions fast (shape, dtype, strides); this class adds the PyTorch-style methods. Each method is a plain call
of an op through the dispatcher (``_C._op(name)`` packets) — no arithmetic happens here. The operators and
arithmetic methods live in ``_tensor_operators.py``, the random fills in ``_tensor_random.py`` (base classes).

Example:
    >>> import tensorplay_p10 as tp
    >>> x = tp.Tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (x.t() * 2)[0]
    tensor([2., 6.])
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import _C, _autograd_hooks, ops
from . import _dtype as D
from ._device import device as Device
from ._shape import Size, chunk, flatten, movedim, split, unbind, unflatten
from ._tensor_operators import TensorOperators
from ._tensor_random import TensorRandomFills
from .fake_tensor import follows_fake_input
from .library import exclude_keys

_op = _C._op


def _shape_args(args: tuple, what: str = "size") -> list[int]:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size)`` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for a in args:
        if not isinstance(a, int) or isinstance(a, bool):
            if hasattr(a, "__index__") and not isinstance(a, float):
                continue
            raise TypeError(f"{what} must be a tuple of ints, but got an element of type {type(a).__name__}")
    return [builtins.int(a) for a in args]


# The packets the methods below call, looked up once.
_view, _reshape, _select, _slice, _copy_, _fill_ = (
    _op(n) for n in ("view", "reshape", "select", "slice", "copy_", "fill_")
)
_to, _unsqueeze = _op("to"), _op("unsqueeze")


class Tensor(TensorOperators, TensorRandomFills, _C.TensorBase):
    """A multi-dimensional array with a dtype and a device, and (with tensorplay-tpx) autograd.

    ``Tensor(data)`` makes a tensor of the default float dtype from nested lists; ``Tensor(2, 3)`` makes an
    uninitialised 2×3 tensor. Prefer :func:`tensorplay.tensor` to choose the dtype.
    """

    def __new__(cls, *args: Any, requires_grad: bool = False, device: Any = None) -> Tensor:
        from ._factories import empty, tensor

        if not args:
            t = empty(0, device=device)
        elif len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], Size):
            t = tensor(args[0], dtype=D.get_default_dtype(), device=device)
        else:
            t = empty(*args, device=device)
        if cls is not Tensor:
            t = _C._make_subclass(cls, t, False)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # all work happens in __new__
        pass

    def __getattr__(self, name: str) -> Any:
        """Ops without a hand-written method are methods too (Note [Ops as functions and methods] in ops.py).
        The first use puts the packet on the class, which binds it to ``x`` from then on (Note [Methods
        without binding] in csrc/python/py_ops.cpp)."""
        try:
            packet = ops._method(name)
        except AttributeError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'") from None
        setattr(Tensor, name, packet)
        return packet.__get__(self, type(self))

    # ---- printing and conversion ----------------------------------------------------------------------
    def __repr__(self) -> str:
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no' if self.numel() == 0 else 'more than one'} "
                "values is ambiguous"
            )
        return builtins.bool(self.item())

    def __int__(self) -> int:
        return builtins.int(self.item())

    def __float__(self) -> float:
        return builtins.float(self.item())

    def __complex__(self) -> complex:
        return builtins.complex(self.item())

    def __index__(self) -> int:
        if self.numel() != 1 or self.dtype.is_floating_point or self.dtype.is_complex or self.dtype is D.bool:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return self.item()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.detach().numpy() if self.dtype is not D.bfloat16 else self.detach().float().numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy array sharing this tensor's memory (CPU only; ``force=True`` copies/detaches as needed)."""
        if force:
            t = self.detach().cpu()
            return t.numpy()
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device.type} device type tensor to numpy. Use Tensor.cpu() to copy "
                "the tensor to host memory first."
            )
        D.to_numpy_dtype(self.dtype)  # TypeError for bfloat16
        return np.from_dlpack(self)

    def tolist(self) -> Any:
        """The tensor as (nested) Python numbers."""
        if self.device.type == "meta":
            raise NotImplementedError("Cannot call tolist() on a meta tensor: it has no data")
        host = self if self.device.type == "cpu" else self.cpu()  # as PyTorch: a GPU tensor is copied over
        return host.__array__().tolist()

    def __reduce_ex__(self, protocol: Any) -> tuple:
        """Pickling (also deepcopy, worker processes): Note [Storage sharing in one pickle], _pickle.py."""
        from ._pickle import reduce_tensor

        return reduce_tensor(self)

    def __dlpack__(
        self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None
    ) -> Any:
        """A DLPack capsule sharing this tensor's memory. For a CUDA tensor, the consumer's ``stream`` is made
        to wait for the work queued on this device's current stream (``cuda/_dlpack.py``)."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(
                f"__dlpack__: cannot export a {self.device} tensor to DLPack device {dl_device}"
            )
        if self.device.type == "cuda":
            from .cuda._dlpack import producer_sync

            producer_sync(self.device.index, stream)
        if copy:
            return _C._to_dlpack(self.clone(), max_version)
        return _C._to_dlpack(self, max_version)

    def __dlpack_device__(self) -> tuple[int, int]:
        return _C._dlpack_device(self)

    # ---- autograd surface (filled by tensorplay-tpx) -------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        eng = _autograd_hooks.engine()
        if eng is not None:
            eng.set_requires_grad(self, requires_grad)
        else:
            self._set_requires_grad(requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        eng = _autograd_hooks.engine()
        return None if eng is None else eng.get_grad(self)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        _autograd_hooks.require_engine("Tensor.grad").set_grad(self, value)

    @property
    def grad_fn(self) -> Any:
        eng = _autograd_hooks.engine()
        return None if eng is None else eng.grad_fn(self)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        _autograd_hooks.require_engine("Tensor.backward()").backward(
            self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs
        )

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, cut out of the autograd graph."""
        eng = _autograd_hooks.engine()
        return eng.detach(self) if eng is not None else _op("alias")(self)

    @property
    def data(self) -> Tensor:
        """This tensor's values outside autograd: a tensor sharing its memory, like :meth:`detach`.

        Unlike PyTorch's ``.data`` it shares the version counter, so an in-place write through it into a
        tensor saved for backward is caught by the version check instead of silently giving a wrong
        gradient. Assigning ``t.data = other`` makes ``t`` share ``other``'s memory and shape (``set_``),
        outside autograd.

        Example:
            >>> import tensorplay_p10 as tp
            >>> w = tp.zeros(2)
            >>> w.data = tp.ones(3)
            >>> w.tolist()
            [1.0, 1.0, 1.0]
        """
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        with exclude_keys("Autograd"):
            _op("set_")(self, value)

    def detach_(self) -> Tensor:
        """Cut this tensor out of the autograd graph, in place (it becomes a leaf)."""
        eng = _autograd_hooks.engine()
        if eng is not None:
            eng.detach_(self)
        else:
            self._set_requires_grad(False)
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        _autograd_hooks.require_engine("Tensor.retain_grad()").retain_grad(self)

    @property
    def retains_grad(self) -> bool:
        eng = _autograd_hooks.engine()
        return False if eng is None else eng.retains_grad(self)

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return _autograd_hooks.require_engine("Tensor.register_hook()").register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call ``hook(tensor)`` after a gradient was accumulated into this leaf's ``.grad``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        eng = _autograd_hooks.require_engine("Tensor.register_post_accumulate_grad_hook()")
        return eng.register_post_accumulate_grad_hook(self, hook)

    @property
    def output_nr(self) -> int:
        eng = _autograd_hooks.engine()
        return 0 if eng is None else eng.output_nr(self)

    # ---- shape and views ----------------------------------------------------------------------------
    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], D.dtype):
            raise NotImplementedError("view(dtype) is not supported yet")
        return _view(self, _shape_args(shape, "view"))

    def reshape(self, *shape: Any) -> Tensor:
        return _reshape(self, _shape_args(shape, "reshape"))

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def permute(self, *dims: Any) -> Tensor:
        return _op("permute")(self, _shape_args(dims, "permute"))

    def expand(self, *sizes: Any) -> Tensor:
        return _op("expand")(self, _shape_args(sizes, "expand"))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def repeat(self, *repeats: Any) -> Tensor:
        return _op("repeat")(self, _shape_args(repeats, "repeat"))

    def tile(self, *dims: Any) -> Tensor:
        return _op("tile")(self, _shape_args(dims, "tile"))

    def flip(self, *dims: Any) -> Tensor:
        return _op("flip")(self, _shape_args(dims, "flip"))

    def squeeze(self, dim: Any = None) -> Tensor:
        return _op("squeeze")(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return _unsqueeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        return unflatten(self, dim, sizes)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _op("transpose")(self, dim0, dim1)

    def t(self) -> Tensor:
        return _op("t")(self)

    @property
    def T(self) -> Tensor:
        return self.permute(list(range(self.dim() - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self.dim() < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
            )
        return self.transpose(-2, -1)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return _op("narrow")(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        return _select(self, dim, index)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        return _op("unfold")(self, dimension, size, step)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _op("diagonal")(self, offset, dim1, dim2)

    def as_strided(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        return _op("as_strided")(self, list(size), list(stride), storage_offset)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return movedim(self, source, destination)

    def split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return unbind(self, dim)

    def contiguous(self) -> Tensor:
        return _op("contiguous")(self)

    def clone(self) -> Tensor:
        return _op("clone")(self)

    def copy_(self, src: Tensor, non_blocking: bool = False) -> Tensor:
        return _copy_(self, src, non_blocking)

    def fill_(self, value: Any) -> Tensor:
        return _fill_(self, value)

    def zero_(self) -> Tensor:
        return _fill_(self, 0)

    # ---- dtype and device ---------------------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; ``copy=True`` copies.

        ``non_blocking=True``: a copy between the host and a GPU does not wait for the GPU when the host
        side is pinned memory (``pin_memory()``); a copy to the host then lands in pinned memory, and is
        ready once the stream it ran on has been synchronised.
        """
        dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        non_blocking = kwargs.pop("non_blocking", False)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        flags = []  # positional bools, as PyTorch's to(dtype, non_blocking=False, copy=False)
        for a in args:
            if isinstance(a, builtins.bool):
                flags.append(a)
            elif isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, Device, int)):
                device = a
            else:
                raise TypeError(f"to() received an invalid argument of type {type(a).__name__}")
        if len(flags) > 2:
            raise TypeError("to() takes at most two positional bools (non_blocking, copy)")
        if flags:
            non_blocking = flags[0]
        if len(flags) == 2:
            copy = flags[1]
        return _to(self, dtype=dtype, device=device, copy=copy, non_blocking=non_blocking)

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return f"tensorplay.{_TYPE_NAMES[self.dtype]}"
        if isinstance(dtype, str):
            dtype = {f"tensorplay.{v}": k for k, v in _TYPE_NAMES.items()}.get(dtype, dtype)
            if isinstance(dtype, str):
                raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype)

    def type_as(self, other: Tensor) -> Tensor:
        """``self`` with ``other``'s dtype and device: ``self`` itself when both already match (PyTorch's
        ``self.to(other.options())``)."""
        return self.to(dtype=other.dtype, device=other.device)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        """A copy on a CUDA device (``device``: an index, ``"cuda:1"``; default the current one), or self."""
        if device is None:
            device = "cuda"
        elif isinstance(device, builtins.int) and not isinstance(device, builtins.bool):
            device = f"cuda:{device}"
        if Device(device).type != "cuda":
            raise ValueError(f"Invalid device, must be cuda device, got {device}")
        return self.to(device, non_blocking=non_blocking)

    def record_stream(self, stream: Any) -> None:
        """Mark this CUDA tensor's memory as used by ``stream`` too (Note [Caching allocator])."""
        from . import cuda

        cuda._cu._record_stream(self, stream.cuda_stream)

    def float(self) -> Tensor:
        return self.to(D.float32)

    def double(self) -> Tensor:
        return self.to(D.float64)

    def half(self) -> Tensor:
        return self.to(D.float16)

    def bfloat16(self) -> Tensor:
        return self.to(D.bfloat16)

    def int(self) -> Tensor:
        return self.to(D.int32)

    def long(self) -> Tensor:
        return self.to(D.int64)

    def short(self) -> Tensor:
        return self.to(D.int16)

    def bool(self) -> Tensor:
        return self.to(D.bool)

    def byte(self) -> Tensor:
        return self.to(D.uint8)

    def char(self) -> Tensor:
        return self.to(D.int8)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    @follows_fake_input
    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None) -> Tensor:
        from ._factories import empty

        return empty(*size, dtype=dtype or self.dtype, device=device or self.device)

    @follows_fake_input
    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None) -> Tensor:
        from ._factories import zeros

        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device)

    @follows_fake_input
    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None) -> Tensor:
        from ._factories import ones

        return ones(*size, dtype=dtype or self.dtype, device=device or self.device)

    @follows_fake_input
    def new_full(self, size: Sequence[int], fill_value: Any, dtype: Any = None, device: Any = None) -> Tensor:
        from ._factories import full

        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device)

    @follows_fake_input
    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None) -> Tensor:
        from ._factories import tensor

        return tensor(data, dtype=dtype or self.dtype, device=device or self.device)

    # ---- indexing -----------------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Tensor:
        from ._indexing import getitem

        return getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        from ._indexing import setitem

        setitem(self, index, value)

    def unique(
        self,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
    ) -> Any:
        """Distinct values (sorted). With ``return_inverse``/``return_counts``, also where each element went
        and how often each value occurs, as a tuple (PyTorch's convention)."""
        out = _op("unique")(self, sorted, return_inverse, return_counts, dim)
        return _pick_unique(out, return_inverse, return_counts)

    def unique_consecutive(
        self, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
    ) -> Any:
        """Like :meth:`unique` but only merges runs of equal neighbours (no sorting)."""
        out = _op("unique_consecutive")(self, return_inverse, return_counts, dim)
        return _pick_unique(out, return_inverse, return_counts)

    @property
    def real(self) -> Tensor:
        """The real part, as a view for complex tensors (the tensor itself for real ones), as in PyTorch."""
        return _op("real")(self)

    @real.setter
    def real(self, value: Any) -> None:
        self.real.copy_(value if isinstance(value, Tensor) else _op("scalar_tensor")(value))

    @property
    def imag(self) -> Tensor:
        """The imaginary part of a complex tensor, as a view (RuntimeError for real tensors)."""
        return _op("imag")(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        self.imag.copy_(value if isinstance(value, Tensor) else _op("scalar_tensor")(value))

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` holds, else ``other`` (the op takes the condition first)."""
        return _op("where")(condition, self, other)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """Coordinates of the nonzero elements: ``[n, ndim]``, or one index tensor per dim (``as_tuple``)."""
        coords = _op("nonzero")(self)
        if not as_tuple:
            return coords
        if self.dim() == 0:  # PyTorch treats a 0-d tensor as 1-D here
            return (_op("full")([coords.shape[0]], 0, dtype=D.int64),)
        return tuple(coords.unbind(1))


def _pick_unique(out: Any, return_inverse: bool, return_counts: bool) -> Any:
    """The unique ops compute all three results; return what was asked for, as PyTorch does."""
    values, inverse, counts = out
    extra = [t for t, want in ((inverse, return_inverse), (counts, return_counts)) if want]
    return (values, *extra) if extra else values


_TYPE_NAMES = {
    D.bool: "BoolTensor",
    D.uint8: "ByteTensor",
    D.int8: "CharTensor",
    D.int16: "ShortTensor",
    D.int32: "IntTensor",
    D.int64: "LongTensor",
    D.float16: "HalfTensor",
    D.bfloat16: "BFloat16Tensor",
    D.float32: "FloatTensor",
    D.float64: "DoubleTensor",
    D.complex64: "ComplexFloatTensor",
    D.complex128: "ComplexDoubleTensor",
}


_C._set_tensor_classes(Tensor, Size, Device)
