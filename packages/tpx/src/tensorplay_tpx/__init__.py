"""tensorplay_tpx — TensorPlay's autograd pillar (the `tensorplay-tpx` wheel).

Where it sits: TPX sits on P10 (`tensorplay_p10`) and nothing else. It holds the autograd engine, the
derivative formulas, `Function`, grad modes and hooks, and registers an `Autograd` kernel for every
differentiable P10 op (docs/design.md §4). Its native module `tensorplay_tpx._C` talks to P10 only through the
C ABI table in native/include/tensorplay/tp_abi.h.

The public autograd API lives in `tensorplay_tpx.autograd` (seen as `tensorplay.autograd`).
"""

from __future__ import annotations

# P10 first: our native module imports P10's C ABI table at init, and a missing P10 deserves a plain message.
try:
    import tensorplay_p10  # noqa: F401
except ModuleNotFoundError as exc:
    if exc.name != "tensorplay_p10":
        raise
    raise ImportError("tensorplay-tpx needs tensorplay-p10: pip install tensorplay-p10") from exc

from . import _C, autograd  # noqa: E402,F401  (after P10, on purpose)
from .autograd.engine import ENGINE as _ENGINE  # noqa: E402

# P10's tensors reach autograd through this extension point (docs/design.md §1: p10 never imports tpx).
tensorplay_p10._autograd_hooks.register_engine(_ENGINE)

__all__ = ["autograd"]
