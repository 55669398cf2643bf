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

from . import _C
from ._dtype import (bfloat16, bool, can_cast, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float,
                     float16, float32, float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long,
                     promote_types, set_default_dtype, short, uint8)
from ._device import device
from ._tensor import Size, Tensor, broadcast_shapes, chunk, flatten, movedim, split, unbind, unflatten
from ._factories import (arange, as_tensor, empty, empty_like, empty_strided, eye, from_dlpack, from_numpy, full,
                         full_like, linspace, logspace, ones, ones_like, tensor, zeros, zeros_like)
from ._tensor_str import get_printoptions, set_printoptions
from ._explain import explain
from . import library, ops, random
from .random import (Generator, bernoulli, default_generator, fork_rng, get_rng_state, initial_seed, manual_seed,
                     multinomial, normal, rand, rand_like, randint, randint_like, randn, randn_like, randperm, seed,
                     set_rng_state)
from ._C import get_num_threads, set_num_threads
from ._functional import (result_type, is_tensor, numel, neg, abs, exp, log, sqrt, sin, cos, tanh, sigmoid, add, sub, mul, div, true_divide, reshape, transpose, permute, squeeze, unsqueeze, narrow, select, diagonal, as_strided, t, clone, detach)

__version__ = "0.1.0"
