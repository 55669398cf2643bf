"""tensorplay_p10 — TensorPlay's tensor core: ``Tensor``, dtypes, devices, the dispatcher, kernels and RNG.

This package is the P10 pillar. Most people import it through the meta-package (``import tensorplay as tp``),
which re-exports everything here; it also works on its own (``import tensorplay_p10 as tp``).

Example:
    >>> import tensorplay_p10 as tp
    >>> x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.t() + 1
    tensor([[2., 4.],
            [3., 5.]])
"""

from __future__ import annotations

import os as _os

# Note [BLAS thread spin]
#   OpenBLAS's worker threads busy-wait for 2^28 cycles (~0.1 s) after each GEMM before they sleep. Our
#   elementwise kernels run on a separate OpenMP pool right after (x @ w + b): the spinning BLAS workers hold
#   the cores and a 65k-element add took 5 ms instead of 10 us on a 2-core machine. 2^12 cycles (~1 us) keeps
#   back-to-back GEMMs fast and frees the cores at once. It must be set before the library loads; a value the
#   user set wins.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "12")

import scipy_openblas32 as _openblas  # noqa: E402,F401  loads libscipy_openblas.so before _C needs it

from . import backends, cuda, library, linalg, ops, random, return_types
from ._C import get_num_threads, set_num_threads
from ._device import device
from ._dtype import (
    bfloat16,
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from ._explain import explain
from ._factories import (
    arange,
    as_tensor,
    empty,
    empty_like,
    empty_strided,
    eye,
    from_dlpack,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._functional import (
    add,
    as_strided,
    clone,
    detach,
    diagonal,
    div,
    is_tensor,
    mul,
    narrow,
    nonzero,
    numel,
    permute,
    reshape,
    result_type,
    select,
    squeeze,
    sub,
    t,
    transpose,
    true_divide,
    unique,
    unique_consecutive,
    unsqueeze,
    where,
)
from ._interpolate import interpolate
from ._matmul import einsum, tensordot
from ._shape import Size, broadcast_shapes, chunk, flatten, movedim, split, unbind, unflatten
from ._tensor import Tensor
from ._tensor_str import get_printoptions, set_printoptions
from .backends import get_float32_matmul_precision, set_float32_matmul_precision
from .random import (
    Generator,
    bernoulli,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from .serialization import load, save

# The public API: what `from tensorplay_p10 import *` (and the tensorplay meta-package) re-exports.
__all__ = [
    "bfloat16",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "double",
    "dtype",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "half",
    "iinfo",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "promote_types",
    "set_default_dtype",
    "short",
    "uint8",
    "device",
    "Size",
    "Tensor",
    "broadcast_shapes",
    "chunk",
    "flatten",
    "movedim",
    "split",
    "unbind",
    "unflatten",
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "empty_strided",
    "eye",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "tensor",
    "zeros",
    "zeros_like",
    "get_printoptions",
    "set_printoptions",
    "explain",
    "einsum",
    "tensordot",
    "interpolate",
    "backends",
    "cuda",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
    "library",
    "linalg",
    "nonzero",
    "where",
    "unique",
    "unique_consecutive",
    "return_types",
    "ops",
    "random",
    "Generator",
    "bernoulli",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "multinomial",
    "normal",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
    "get_num_threads",
    "set_num_threads",
    "result_type",
    "is_tensor",
    "numel",
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "reshape",
    "transpose",
    "permute",
    "squeeze",
    "unsqueeze",
    "narrow",
    "select",
    "diagonal",
    "as_strided",
    "t",
    "clone",
    "detach",
    "save",
    "load",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``tp.<op>`` for every registered op (Note [Ops as functions and methods] in ops.py).

    The packet is stored as a module attribute on first use, so later ``tp.exp`` look-ups are plain attribute
    reads that never reach this hook (a packet stays its op's packet for the life of the process)."""
    try:
        packet = ops._function(name)
    except AttributeError:
        raise AttributeError(f"module 'tensorplay_p10' has no attribute {name!r}") from None
    globals()[name] = packet
    return packet


def __dir__() -> list[str]:
    """The module's names and every built-in op's, so ``dir(tp)`` and completion show ``tp.exp``."""
    return sorted(set(globals()) | ops._function_names())
