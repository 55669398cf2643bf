"""tensorplay_tpx.autograd — the public autograd API (seen as ``tensorplay.autograd``).

Where it sits: the Python surface of TPX (docs/design.md §4). The engine and the graph are C++
(``tensorplay_tpx._C``: csrc/engine.cpp, record.cpp, node.h); this package holds what users call —
``backward``, ``grad``, ``Function``, the grad modes, ``gradcheck``, ``functional``, ``forward_ad``,
``graph`` —
and the derivative formulas (``formulas/``), one file per P10 kernel family.

    >>> import tensorplay as tp
    >>> x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = tp.tensor([[5.0, 6.0], [7.0, 8.0]])
    >>> z = x.matmul(y) + tp.ones_like(x)
    >>> z.sum().backward()
    >>> x.grad
    tensor([[11., 15.],
            [11., 15.]])
"""

from __future__ import annotations

from . import formulas, functional, graph, node  # noqa: F401  (formulas register the Autograd kernels on import)  # noqa: E402
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck

__all__ = [
    "Function",
    "FunctionCtx",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]
