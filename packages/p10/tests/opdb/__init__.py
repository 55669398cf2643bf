"""The op database (PyTorch's OpInfo idea): one entry per op, with sample inputs and a NumPy reference.

Where it sits: the generic tests in ``tests/test_opdb.py`` run every entry (forward vs reference, Meta
shapes, in-place and ``out=`` forms, non-contiguous layouts, error inputs); later pillars reuse the same
entries — autograd runs ``gradcheck`` over the ``differentiable`` ones, CUDA compares CPU against GPU. So a
new op gets tested everywhere by adding one ``OpInfo`` to its family module (``unary.py``, ``binary.py``, …)
and nothing else; ``test_every_registered_op_is_in_the_database`` fails until it does.

An entry in short::

    OpInfo("exp", ref=np.exp, dtypes=FLOATS + INTS, sample_inputs=unary_samples, inplace=True, out=True)

``op`` defaults to ``tp.<name>``, ``inplace`` to the method ``Tensor.<name>_``. A sample generator is called
as ``sample_inputs(opinfo, dtype)`` and yields :class:`SampleInput`; ``ref`` receives the same sample with
every tensor turned into a NumPy array (floats as float64, see :func:`to_numpy`), so references compute in
float64 and the tolerance per dtype (:data:`TOLERANCES`) covers the rounding of the result.

Importing it: the tests run with ``--import-mode=importlib``, which leaves ``sys.path`` alone, so a test file
puts this folder's parent on the path first (see the top of ``test_opdb.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tensorplay_p10 as tp

# Dtype groups for the ``dtypes`` field. 16-bit floats compute in float32 inside the kernels (opmath), so
# their references are float64 results rounded by the tolerance, not bit-exact values.
FLOATS = (tp.float32, tp.float64, tp.float16, tp.bfloat16)
INTS = (tp.int64, tp.int32, tp.int16, tp.int8, tp.uint8)
SIGNED_INTS = (tp.int64, tp.int32, tp.int16, tp.int8)
BOOL = (tp.bool,)
ALL = FLOATS + INTS + BOOL

# (rtol, atol) per result dtype: a few ulp of the dtype. Integer and bool results must match exactly.
TOLERANCES: dict[Any, tuple[float, float]] = {
    tp.float64: (1e-10, 1e-12),
    tp.float32: (1.3e-5, 1e-5),
    tp.float16: (2e-3, 1e-3),
    tp.bfloat16: (1.6e-2, 1e-2),
    tp.complex64: (1.3e-5, 1e-5),
    tp.complex128: (1e-10, 1e-12),
}


@dataclass
class SampleInput:
    """One call: ``op(input, *args, **kwargs)``. ``input`` is a tensor, or a list of tensors (cat, stack).

    ``name`` says what the sample exercises ("0-d", "broadcast (3,1)x(4)", "transposed"): it is shown when a
    check fails. Tensors may appear anywhere in ``args``/``kwargs`` (lists and tuples included)."""

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    # The result's shape depends on values (a tensor of repeats, one_hot without num_classes): no Meta check.
    data_dependent: bool = False

    def map_tensors(self, fn: Callable[[Any], Any]) -> SampleInput:
        """The same call with ``fn`` applied to every tensor in it."""
        return SampleInput(
            _map(fn, self.input), _map(fn, self.args), _map(fn, self.kwargs), self.name, self.data_dependent
        )

    def tensors(self) -> list[Any]:
        """Every tensor in the call, in order."""
        found: list[Any] = []
        _map(lambda t: found.append(t) or t, (self.input, self.args, self.kwargs))
        return found

    def __repr__(self) -> str:
        def short(v: Any) -> str:
            if isinstance(v, tp.Tensor):
                layout = "" if v.is_contiguous() else f", stride={tuple(v.stride())}"
                return f"Tensor({tuple(v.shape)}, {v.dtype}{layout})"
            if isinstance(v, (list, tuple)):
                return "[" + ", ".join(short(x) for x in v) + "]"
            return repr(v)

        kw = ", ".join(f"{k}={short(v)}" for k, v in self.kwargs.items())
        args = ", ".join(short(a) for a in self.args)
        return f"<{self.name}: {short(self.input)}, ({args}), {{{kw}}}>"


def _map(fn: Callable[[Any], Any], v: Any) -> Any:
    if isinstance(v, tp.Tensor):
        return fn(v)
    if isinstance(v, tuple):
        return tuple(_map(fn, x) for x in v)
    if isinstance(v, list):
        return [_map(fn, x) for x in v]
    if isinstance(v, dict):
        return {k: _map(fn, x) for k, x in v.items()}
    return v


@dataclass
class ErrorInput:
    """A call that must fail with ``error`` and a message matching the regex ``match``; the generic test also
    checks that the message names the op (``names_op``: off only for messages PyTorch words without it, such
    as broadcasting errors raised by the shared iterator that name the op through ``match``)."""

    sample: SampleInput
    error: type[BaseException]
    match: str
    names_op: bool = True


@dataclass
class OpInfo:
    """Everything the generic tests need to know about one op (or one variant of it, ``variant``)."""

    name: str
    ref: Callable[..., Any] | None
    dtypes: tuple
    sample_inputs: Callable[[OpInfo, Any], Iterable[SampleInput]]
    # ``tp.<name>`` unless given (a lambda for ops whose Python spelling differs, e.g. ``x[idx]``).
    op: Callable[..., Any] | None = None
    variant: str = ""
    # In-place form: True means the method ``Tensor.<name>_``; a callable is used as is; False: none.
    inplace: bool | Callable[..., Any] = False
    # The in-place form refuses any result dtype other than self's (float_power_ needs a float64 self).
    inplace_exact_dtype: bool = False
    out: bool = False  # accepts ``out=`` (single-tensor results; tuple results take a tuple of outs)
    meta: bool = True  # the Meta device computes the result's shape and dtype
    # With ``out=`` of another dtype the op computes in it (reductions, scans) instead of refusing.
    out_casts: bool = False
    # PyTorch may reject every sample of this entry for the dtype (the comparison then checks nothing).
    torch_may_reject: bool = False
    differentiable: bool = True  # for autograd's gradcheck over the database (floating dtypes only)
    # Dtype of the result for a sample (``None``: not checked); ``same_dtype`` and friends below.
    result_dtype: Callable[[SampleInput, Any], Any] | None = None
    error_inputs: Callable[[OpInfo], Iterable[ErrorInput]] | None = None
    # Cast tensor operands to this dtype before the reference (``ref_cast(sample, dtype)``): the kernels
    # compute in the common dtype, so a float64 0-d operand of a bfloat16 op is rounded to bfloat16 first, and
    # integer inputs of float functions become floats (NumPy would compute int8 in float16).
    ref_cast: Callable[[SampleInput, Any], Any] | None = None
    # The reference also receives ``_dtype=`` (the input tensor's dtype), for results that depend on it
    # beyond rounding (nan_to_num's default replacements are the dtype's largest value).
    ref_gets_dtype: bool = False
    tolerances: dict = field(default_factory=dict)  # overrides of TOLERANCES, per dtype
    # The registered op names this entry covers besides ``name`` (overloads are folded, e.g. "add.out").
    covers: tuple[str, ...] = ()
    # Known failures: {(test, dtype or None): reason}; the generic tests xfail those (strictly).
    xfails: dict = field(default_factory=dict)
    # Extra checks on a result, ``check(sample, result)``: for outputs a reference cannot pin down, such as
    # the index of one of several equal values (median, mode) — the check gathers and compares the values.
    check: Callable[[SampleInput, Any], None] | None = None
    # With ``check``: the outputs the CUDA-vs-CPU test compares element by element (the first, by default:
    # the values among tied indices). The others are left to ``check``: singular vectors and Q are unique only
    # up to sign, and cuSOLVER may pick other signs than LAPACK (Note [Sign-ambiguous factors] in
    # linalg_spectral.py).
    unique_outputs: tuple[int, ...] = (0,)
    # Keyword arguments the CPU call gets in the CUDA-vs-CPU test where the CUDA op's defaults differ from the
    # CPU's, as PyTorch's do (lstsq's driver: gels on CUDA, gelsy on the CPU); a sample's own value wins.
    cuda_reference_kwargs: dict = field(default_factory=dict)
    # Outputs compared only in shape/dtype (random ops, unspecified index choices).
    compare_values: bool = True
    # A 1M-element sample (float32) for the threaded-vs-one-thread test; None: not run.
    large: Callable[[OpInfo], SampleInput] | None = None
    # PyTorch's function for the comparison test (``torch -> callable``); True: ``torch.<name>``; False: none.
    torch: bool | Callable[[Any], Any] = True
    # False where a sample's layout changes the meaning (as_strided reads raw storage): no contiguous test.
    layout_invariant: bool = True

    def __post_init__(self) -> None:
        if self.op is None:
            self.op = getattr(tp, self.name)
        if self.inplace is True:
            method = self.name + "_"
            self.inplace = lambda x, *a, **k: getattr(x, method)(*a, **k)
            self.covers = (*self.covers, method)

    @property
    def id(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name

    def tol(self, dtype: Any) -> tuple[float, float]:
        return self.tolerances.get(dtype, TOLERANCES.get(dtype, (0.0, 0.0)))

    def samples(self, dtype: Any) -> Iterator[SampleInput]:
        return iter(self.sample_inputs(self, dtype))

    def xfail_reason(self, test: str, dtype: Any) -> str | None:
        return self.xfails.get((test, dtype)) or self.xfails.get((test, None))


# Result-dtype rules for the ``result_dtype`` field.
def same_dtype(sample: SampleInput, dtype: Any) -> Any:
    return sample.input.dtype


def bool_dtype(sample: SampleInput, dtype: Any) -> Any:
    return tp.bool


def long_dtype(sample: SampleInput, dtype: Any) -> Any:
    return tp.int64


def float_dtype(sample: SampleInput, dtype: Any) -> Any:
    """Floating inputs keep their dtype; integers and bool promote to the default float (exp, sqrt, mean)."""
    d = sample.input.dtype
    return d if d.is_floating_point or d.is_complex else tp.get_default_dtype()


# ---------------------------------------------------------------------------------------------------------
# Conversions between tensors and the NumPy arrays references see.
_NP_EXACT = {
    tp.bool: np.bool_,
    tp.uint8: np.uint8,
    tp.int8: np.int8,
    tp.int16: np.int16,
    tp.int32: np.int32,
    tp.int64: np.int64,
    tp.complex64: np.complex128,
    tp.complex128: np.complex128,
}


def to_numpy(t: Any) -> np.ndarray:
    """A tensor as a NumPy array for references: real floats (16-bit ones included) become float64 so the
    reference computes in double precision; integers, bool and complex keep their values' type."""
    if t.dtype.is_floating_point:
        return t.to(tp.float64).numpy()
    if t.dtype.is_complex:
        return t.to(tp.complex128).numpy()
    return t.numpy()


def numpy_sample(sample: SampleInput) -> SampleInput:
    """``sample`` with every tensor replaced by :func:`to_numpy` of it (what ``OpInfo.ref`` receives)."""
    return sample.map_tensors(to_numpy)


# The registry. Family modules append to it at import; order is the modules' order below, then definition
# order, so test ids are stable.
op_db: list[OpInfo] = []


def register(*infos: OpInfo) -> None:
    for info in infos:
        assert all(o.id != info.id for o in op_db), f"duplicate OpInfo {info.id}"
        op_db.append(info)


# Imported last: the family modules use the classes above (a partly initialised package is fine for that).
from . import (  # noqa: E402
    activation,  # noqa: F401
    attention,  # noqa: F401
    binary,  # noqa: F401
    compare,  # noqa: F401
    conv,  # noqa: F401
    embedding,  # noqa: F401
    index,  # noqa: F401
    index_advanced,  # noqa: F401
    linalg,  # noqa: F401
    linalg_basic,  # noqa: F401
    linalg_spectral,  # noqa: F401
    nn,  # noqa: F401
    operators,  # noqa: F401
    pool,  # noqa: F401
    recurrent,  # noqa: F401
    reduce,  # noqa: F401
    reduce_stats,  # noqa: F401
    sampling,  # noqa: F401
    shape,  # noqa: F401
    sort,  # noqa: F401
    unary,  # noqa: F401
    upsample,  # noqa: F401
    views,  # noqa: F401
)
