"""tensorplay — one PyTorch-style API over TensorPlay's four pillars: `import tensorplay as tp`.

Where it sits: this is the thin meta-package (packages/tensorplay, docs/design.md §1). It holds no framework
code:
- `tp.<name>` is `tensorplay_p10`'s public API, re-exported (`from tensorplay_p10 import *`);
- `tp.autograd`, `tp.graph`, `tp.nn`, `tp.optim`, `tp.utils.data`/`tp.data`, `tp.library`, `tp.ops`,
  `tp.random`, `tp.cuda` are the pillars' own module objects under a second name, made by the import hook in
  `_alias.py` (the one mapping table lives there). They load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _alias

_alias.install()

try:
    import tensorplay_p10 as _p10
except ModuleNotFoundError as _exc:
    if _exc.name != "tensorplay_p10":
        raise
    raise ImportError("tensorplay needs tensorplay-p10: pip install tensorplay-p10") from _exc

from tensorplay_p10 import *  # noqa: E402,F403

# Autograd is not optional in practice: TPX fills P10's autograd extension point (Tensor.backward) when it is
# imported, so load it now rather than on the first `tp.autograd` access. Missing TPX stays a clear error at
# `backward()` time, raised by P10.
try:
    import tensorplay_tpx as _tpx  # noqa: F401
except ModuleNotFoundError as _exc:
    if _exc.name != "tensorplay_tpx":
        raise
else:  # PyTorch keeps the grad modes at top level too: tp.no_grad() is torch.no_grad()
    from tensorplay_tpx.autograd.grad_mode import (  # noqa: F401
        enable_grad,
        inference_mode,
        is_grad_enabled,
        is_inference_mode_enabled,
        no_grad,
        set_grad_enabled,
    )

# `from tensorplay import *` gives what `from tensorplay_p10 import *` gives (the aliases load lazily).
__all__: list[str] = list(getattr(_p10, "__all__", [n for n in vars(_p10) if not n.startswith("_")]))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tensorplay")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


__version__ = _version()


def __getattr__(name: str) -> Any:
    """Load an aliased pillar module on first attribute access: `tp.nn` after a bare `import tensorplay`."""
    if name in _alias.children("") or name == "utils":
        return importlib.import_module(f"{__name__}.{name}")
    try:  # every op is a function too: tp.exp is tensorplay_p10.exp (Note [Ops as functions and methods])
        value = getattr(_p10, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    if isinstance(value, _p10._C.OpPacket):  # an op keeps its packet: the next tp.<name> is a plain read
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | _alias.children("") | {"utils"} | set(dir(_p10)))
