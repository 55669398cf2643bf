"""``tp.backends``: switches that choose how a backend computes (PyTorch's ``torch.backends``), and the
float32 matmul precision (``tp.set_float32_matmul_precision``).

Where it sits: re-exported by ``tensorplay_p10/__init__.py``. The setting lives in P10's C++
(``csrc/cuda/cublas.h``), where the CUDA matrix products (``csrc/cuda/ops_matmul.cpp``) read it: ``"highest"``
(the default) computes float32 products in full float32; ``"high"`` and ``"medium"`` let them use TF32 tensor
cores (inputs rounded to a 10-bit mantissa, float32 accumulation: about 7x the float32 throughput on an H200,
with relative errors near 1e-3). ``tp.backends.cuda.matmul.allow_tf32`` is the same switch as a bool. CPU
products are always full float32.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.get_float32_matmul_precision()
    'highest'
    >>> tp.set_float32_matmul_precision("high")
    >>> tp.backends.cuda.matmul.allow_tf32
    True
    >>> tp.set_float32_matmul_precision("highest")
"""

from __future__ import annotations

import warnings

from .. import _C

_LEVELS = ("highest", "high", "medium")


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision: ``"highest"`` (default), ``"high"`` or ``"medium"``."""
    return _LEVELS[_C._cuda._float32_matmul_precision()]


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matrix products on CUDA (PyTorch's semantics).

    ``"highest"``: full float32. ``"high"`` and ``"medium"``: TF32 tensor cores allowed (TensorPlay has no
    bfloat16-based float32 GEMM, so ``"medium"`` computes as ``"high"``). Like PyTorch, any other string
    warns and leaves the setting as it was.
    """
    if not isinstance(precision, str):
        # PyTorch's error type and wording
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _LEVELS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            stacklevel=2,
        )
        return
    _C._cuda._set_float32_matmul_precision(_LEVELS.index(precision))


from . import cuda  # noqa: E402  (cuda reads the functions above)

__all__ = ["cuda", "get_float32_matmul_precision", "set_float32_matmul_precision"]
