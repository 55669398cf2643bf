"""Tensor printing: the text that ``repr(t)`` and ``str(t)`` show.

Where it sits: ``Tensor.__repr__`` / ``Tensor.__str__`` in ``tensorplay_p10/_tensor.py`` call
:func:`tensor_repr`; ``tp.set_printoptions`` / ``tp.get_printoptions`` are re-exported from here.
Nothing else in the library depends on this module, and it depends on the tensor only through a small
interface (``shape``, ``dim()``, ``numel()``, ``dtype``, ``device``, ``requires_grad``, ``grad_fn``,
``numpy()``, and ``detach()`` / ``cpu()`` / ``float()`` to reach a NumPy-readable tensor), so it can be read
and tested on its own.

The output matches PyTorch's character for character (with ``torch.`` spelled ``tensorplay.``), because
learners compare the two side by side. The pipeline is:

1. fetch the values as a NumPy array and, when the tensor is big, keep only the *edges* that will be shown
   (``_edges``), so printing a huge tensor costs as much as printing a small one;
2. build one ``_Formatter`` from those values: it chooses a notation (integer-valued, fixed, scientific)
   and a width shared by every element, so columns line up;
3. lay the elements out as nested brackets, wrapping rows at ``linewidth`` (``_nd_str``);
4. append the suffixes (device, size, dtype, grad_fn / requires_grad) and wrap them too (``_add_suffixes``).

See Note [Scientific notation] and Note [Summarising] below for the two rules that surprise people.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr", "tensor_str"]


# --------------------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _PrintOptions:
    """The process-wide printing options (one instance, ``PRINT_OPTS``), with PyTorch's defaults."""

    precision: int = 4  # digits after the decimal point
    threshold: float = 1000  # summarise (print edges and "...") when numel() exceeds this
    edgeitems: int = 3  # how many items to keep at each end of a summarised dimension
    linewidth: int = 80  # characters per line before wrapping
    sci_mode: bool | None = None  # None: choose automatically, see Note [Scientific notation]


PRINT_OPTS = _PrintOptions()

# profile name -> (precision, threshold, edgeitems, linewidth)
_PROFILES: dict[str, tuple[int, float, int, int]] = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the printing options; arguments left as None keep their value, except ``sci_mode``.

    ``profile`` ("default", "short" or "full") first resets precision, threshold, edgeitems and
    linewidth; the explicit arguments then override it. As in PyTorch, ``sci_mode`` is always assigned,
    so any call without ``sci_mode=...`` goes back to the automatic choice.

    >>> set_printoptions(precision=2)     # tp.tensor([1.12345]) -> tensor([1.12])
    >>> set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            # PyTorch silently ignores an unknown profile; a learner's typo deserves an error instead.
            raise ValueError(f"unknown print profile {profile!r}; expected one of {sorted(_PROFILES)}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = _PROFILES[
            profile
        ]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current options as a dict that can be passed back as ``set_printoptions(**d)``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the printing options (same arguments as :func:`set_printoptions`)."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------------------------------------
# Number formatting
# --------------------------------------------------------------------------------------------------------

# Note [Scientific notation]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# A floating tensor is printed in one of three notations, chosen once for all its printed elements by
# looking only at the values that are finite and nonzero (zeros, nan and inf say nothing about scale):
#   * scientific (1.2346e+05), when sci_mode=True, or when sci_mode is None and
#       max|x| / min|x| > 1000  or  max|x| > 1e8  or  min|x| < 1e-4;
#   * integer-valued (3.), when every such value is a whole number: the "." still marks a float dtype;
#   * fixed (3.1416) otherwise, with `precision` digits.
# If there is no finite nonzero value at all (all zeros, nan, inf), the notation is integer-valued and the
# width is 1 *even when sci_mode=True*: PyTorch prints tensor([0., 0.]) in every mode.
# The width is the longest formatted finite nonzero value, so "nan", "inf" or "-0." may stick out of the
# column (tensor([1., inf, -inf]) has no padding at all); PyTorch does the same and we copy it.


class _Formatter:
    """Choose a notation and a width from a tensor's (printed) values, then format one value at a time."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True  # every finite nonzero value is a whole number
        self.sci_mode = False
        self.width = 1
        if values.size == 0:
            return
        if not floating:
            # Integers and bools: the longest text belongs to the largest or the most negative value.
            longest = max(len(str(values.max().item())), len(str(values.min().item())))
            self.width = max(self.width, longest)
            return

        flat = values.reshape(-1)
        informative = flat[np.isfinite(flat) & (flat != 0)]
        if informative.size == 0:
            return  # see Note [Scientific notation]: no scale to learn from
        # float64 for the magnitudes: in float16 a ratio such as 60000 / 0.001 would overflow.
        magnitude = np.abs(informative.astype(np.float64))
        smallest, largest = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(informative == np.ceil(informative)))
        if PRINT_OPTS.sci_mode is None:
            with np.errstate(over="ignore"):  # 1e308 / 1e-308 is inf, which is simply "> 1000"
                ratio = np.float64(largest) / np.float64(smallest)
            self.sci_mode = bool(ratio > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4)
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)

        precision = PRINT_OPTS.precision
        for value in informative.tolist():
            if self.sci_mode:
                text = f"{value:.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}."
            else:
                text = f"{value:.{precision}f}"
            self.width = max(self.width, len(text))

    def format(self, value: float | int | bool) -> str:
        """Format one Python scalar, right-aligned to the shared width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."  # nan and inf are already clearly not integers
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.width)


class _ComplexFormatter:
    """Format complex values as ``re+imj``: real and imaginary parts each get their own ``_Formatter``."""

    def __init__(self, values: np.ndarray) -> None:
        self.real = _Formatter(values.real, floating=True)
        self.imag = _Formatter(values.imag, floating=True)
        # the room one element takes in a row: both parts plus the "j"
        self.width = self.real.width + self.imag.width + 1

    def format(self, value: complex) -> str:
        """Format one Python complex; the imaginary part is not padded, its sign joins the two parts."""
        real = self.real.format(value.real)
        imag = self.imag.format(value.imag).lstrip() + "j"
        # a negative part ("-2.j", "-0.j", "-infj") brings its own sign; others (incl. "nanj") need a "+"
        return real + (imag if imag[0] in "+-" else "+" + imag)


# --------------------------------------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------------------------------------

# Note [Summarising]
# ~~~~~~~~~~~~~~~~~~
# When numel() > threshold the tensor is *summarised*: every dimension longer than 2 * edgeitems shows its
# first and last `edgeitems` entries with "..." between them; shorter dimensions are shown whole. The
# notation and width (Note [Scientific notation]) are learned from the shown entries only, so a huge
# outlier hidden in the middle does not switch the printout to scientific notation. With edgeitems=0 the
# contents become "[...]" and a size=(...) suffix tells the shape instead.


def _edges(values: np.ndarray, edgeitems: int) -> tuple[np.ndarray, list[bool]]:
    """Keep only the entries a summarised print shows; also say which dimensions were cut."""
    if values.ndim == 0:
        return values, []  # a scalar has nothing to cut (and indexing it would give a NumPy scalar)
    index: list[np.ndarray] = []
    cut: list[bool] = []
    for n in values.shape:
        if n > 2 * edgeitems:
            index.append(np.r_[0:edgeitems, n - edgeitems : n])
            cut.append(True)
        else:
            index.append(np.arange(n))
            cut.append(False)
    # One np.ix_ gather copies just the corners, never a full slab of a big tensor.
    return values[np.ix_(*index)], cut


def _vector_str(values: np.ndarray, cut: bool, indent: int, fmt: _Formatter | _ComplexFormatter) -> str:
    """Lay out a 1-d row, as many elements per line as fit in linewidth (at least one)."""
    items = [fmt.format(v) for v in values.tolist()]
    if cut:
        items.insert(PRINT_OPTS.edgeitems, " ...")
    # Each element takes its width plus ", "; the indent is the column where this row's "[" sits.
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2)))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(values: np.ndarray, cut: list[bool], indent: int, fmt: _Formatter | _ComplexFormatter) -> str:
    """Lay out an n-d array as nested brackets; rows of a k-d block are separated by k-1 blank lines."""
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector_str(values, cut[0], indent, fmt)
    rows = [_nd_str(row, cut[1:], indent + 1, fmt) for row in values]
    if cut[0]:
        rows.insert(PRINT_OPTS.edgeitems, "...")
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _host_values(t: Any) -> np.ndarray:
    """The tensor's values as a NumPy array on the host, in a dtype NumPy can format."""
    if t.requires_grad:
        t = t.detach()  # numpy() refuses a tensor that requires grad (as in PyTorch); no history is needed
    if t.device.type != "cpu":
        t = t.cpu()  # numpy() only reads host memory
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()  # NumPy has no bfloat16; widening to float32 is exact, so the digits are the same
    values = np.asarray(t.numpy())
    if values.dtype.kind not in "biufc":
        values = values.astype(np.float32)  # e.g. an ml_dtypes bfloat16 array: widening is exact
    return values


def _contents(t: Any, indent: int) -> str:
    """The bracketed contents of a non-empty, non-meta tensor, e.g. ``[[1., 2.], [3., 4.]]``."""
    values = _host_values(t)
    summarize = t.numel() > PRINT_OPTS.threshold
    if summarize and values.ndim > 0 and PRINT_OPTS.edgeitems <= 0:
        return "[...]"  # Note [Summarising]: nothing is kept, the size suffix tells the shape
    if summarize:
        values, cut = _edges(values, PRINT_OPTS.edgeitems)
    else:
        cut = [False] * values.ndim
    fmt: _Formatter | _ComplexFormatter
    if t.dtype.is_complex:
        fmt = _ComplexFormatter(values)
    else:
        fmt = _Formatter(values, floating=bool(t.dtype.is_floating_point))
    return _nd_str(values, cut, indent, fmt)


# --------------------------------------------------------------------------------------------------------
# Suffixes and the public entry points
# --------------------------------------------------------------------------------------------------------


def _default_dtype_name() -> str:
    """Name of the default floating dtype, e.g. "tensorplay.float32" (one function, so tests can patch it)."""
    from tensorplay_p10._dtype import get_default_dtype  # lazy: _dtype imports the tensor core

    return str(get_default_dtype())


def _dtype_goes_without_saying(dtype_name: str, default_name: str) -> bool:
    """True for the dtypes the values already imply: the default float, its complex, int64 and bool."""
    short = dtype_name.rsplit(".", 1)[-1]  # "tensorplay.int64" -> "int64"
    default = default_name.rsplit(".", 1)[-1]
    default_complex = "complex128" if default == "float64" else "complex64"
    return short in (default, default_complex, "int64", "bool")


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ", suffix" items, moving one to a new line (under the contents) when it would pass linewidth."""
    # PyTorch's bookkeeping, copied for identical wrapping: the current line counts 2 more than its length,
    # but after a wrap it counts exactly indent + the suffix's length.
    line_len = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_len += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(t: Any) -> str:
    """The full printout of a tensor, e.g. ``tensor([1., 2.], dtype=tensorplay.float64, requires_grad=True)``.

    Suffixes come in PyTorch's order: device (when not CPU), size (for empty and meta tensors, or when
    edgeitems=0), dtype (when the values do not imply it), then grad_fn or else requires_grad.
    """
    fake = t._is_fake  # Note [Fake tensors] (csrc/dispatch/fake_tensor.cpp): printed as PyTorch's FakeTensor
    prefix = "FakeTensor(" if fake else "tensor("
    indent = len(prefix)
    suffixes: list[str] = []
    dtype_name = str(t.dtype)
    default_name = _default_dtype_name()
    size = "size=" + str(tuple(int(n) for n in t.shape))

    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if fake or t.device.type == "meta":
        # A meta tensor has a shape and a dtype but no values.
        contents = "..."
        suffixes.append(size)
        if dtype_name != default_name:
            suffixes.append("dtype=" + dtype_name)
    elif t.numel() == 0:
        contents = "[]"
        if t.dim() != 1:
            suffixes.append(size)  # "[]" alone reads as shape (0,), like NumPy
        if dtype_name != default_name:
            suffixes.append("dtype=" + dtype_name)  # no values to tell an int tensor from a float one
    else:
        contents = _contents(t, indent)
        if PRINT_OPTS.edgeitems <= 0:
            suffixes.append(size)
        if not _dtype_goes_without_saying(dtype_name, default_name):
            suffixes.append("dtype=" + dtype_name)

    if t.grad_fn is not None:
        # Autograd node names have no numeric suffix ("MulBackward"); strip a C++ namespace if any.
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + contents, suffixes, indent)


def tensor_str(t: Any) -> str:
    """What ``str(t)`` shows: the same as ``repr(t)``, as in PyTorch."""
    return tensor_repr(t)
