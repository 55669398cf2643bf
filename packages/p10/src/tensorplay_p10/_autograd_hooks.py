"""The extension point through which tpx gives P10 tensors autograd (docs/design.md §1).

P10 never imports tpx (tests/test_layering.py checks it). Instead, ``tensorplay_tpx`` calls
:func:`register_engine` at import with an object (``tensorplay_tpx/autograd/engine.py``'s ``_Engine``) that
offers
- the autograd surface of a tensor (``get_grad``, ``grad_fn``, ``backward``, ``register_hook``, …), which
  ``_tensor.py`` calls; until an engine is registered those attributes behave as on a tensor with no history;
- ``grad`` (``autograd.grad``) and ``Function`` (``autograd.Function``), for P10 code that records a backward
  of its own: ``cuda/graphs.py``'s ``make_graphed_callables``.
Whatever needs the engine and finds none calls :func:`require_engine`, which says which package to install.
"""

from __future__ import annotations

from typing import Any

_engine: Any = None


def register_engine(engine: Any) -> None:
    """Install the autograd engine (called by tensorplay_tpx at import)."""
    global _engine
    _engine = engine


def engine() -> Any:
    """The registered engine, or None while tensorplay_tpx has not been imported."""
    return _engine


def require_engine(what: str) -> Any:
    """The registered engine; RuntimeError naming ``what`` and the package to install when there is none."""
    if _engine is None:
        raise RuntimeError(
            f"{what} needs the autograd engine, which lives in the tensorplay-tpx package: "
            "`pip install tensorplay-tpx` (or the whole `tensorplay`) and `import tensorplay_tpx`."
        )
    return _engine
