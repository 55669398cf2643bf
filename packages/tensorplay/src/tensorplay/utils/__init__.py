"""tensorplay.utils — the meta-package's home for PyTorch's `torch.utils` names.

It holds no code: `tensorplay.utils.data` is `tensorplay_nn.utils.data` itself, made by the import hook in
`tensorplay/_alias.py` (key "utils.data" of its table). This file exists so that `tensorplay.utils` is a
package the hook's children can hang under.
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import _alias


def __getattr__(name: str) -> Any:
    """Load an aliased child on first attribute access: `tp.utils.data` after `import tensorplay`."""
    if name in _alias.children("utils"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _alias.children("utils"))
