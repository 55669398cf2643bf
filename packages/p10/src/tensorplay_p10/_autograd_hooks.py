"""The extension point through which tpx gives P10 tensors autograd (DESIGN.md §1).

P10 never imports tpx. Instead, ``tensorplay_tpx`` calls :func:`register_engine` at import with an object that
implements the autograd surface of a tensor (``grad``, ``grad_fn``, ``backward``, …). Until then those
attributes behave as on a tensor with no history, and ``backward()`` says which package to install.
"""

from __future__ import annotations

from typing import Any

_engine: Any = None


def register_engine(engine: Any) -> None:
    """Install the autograd engine (called by tensorplay_tpx at import)."""
    global _engine
    _engine = engine


def engine() -> Any:
    return _engine


def require_engine(what: str) -> Any:
    if _engine is None:
        raise RuntimeError(
            f"{what} needs the autograd engine, which lives in the tensorplay-tpx package: "
            "`pip install tensorplay-tpx` (or the whole `tensorplay`) and `import tensorplay_tpx`."
        )
    return _engine
