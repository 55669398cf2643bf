"""tensorplay_stax — TensorPlay's capture-and-compile pillar (the `tensorplay-stax` wheel).

Where it sits: Stax sits on P10 and TPX. It will hold graph capture through the `Tracer` dispatch key, the
graph API, passes, AOT autograd and partitioners, lowering, and `compile` (docs/design.md §5). Its native
module `tensorplay_stax._C` talks to P10 only through the C ABI table in native/include/tensorplay/tp_abi.h.

The graph API will live in `tensorplay_stax.graph` (seen as `tensorplay.graph`).
"""

from __future__ import annotations

# P10 first (our native module imports its C ABI table at init), then TPX, so that captured graphs see
# autograd's kernels registered.
try:
    import tensorplay_p10  # noqa: F401
    import tensorplay_tpx  # noqa: F401
except ModuleNotFoundError as exc:
    if exc.name not in ("tensorplay_p10", "tensorplay_tpx"):
        raise
    wheel = exc.name.replace("_", "-")
    raise ImportError(f"tensorplay-stax needs {wheel}: pip install {wheel}") from exc

from . import _C, graph  # noqa: E402,F401  (after P10 and TPX, on purpose)

__all__ = ["graph"]
