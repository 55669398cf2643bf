"""tensorplay_nn.nn — neural-network modules (seen as ``tensorplay.nn``).

Following ``torch.nn`` (docs/design.md §6): :class:`Module` and :class:`Parameter`, the containers, the layer
zoo (in ``modules/``, one concept per file), ``functional`` (imported as ``F``) and ``init``. The LLM stack
(rotary embeddings, attention mixers, ``TransformerBlock``, ``nn.cache``, ``nn.generation``) joins it; names
and shapes in shared/reference/llm-api.md.

Example:
    >>> import tensorplay as tp
    >>> from tensorplay import nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2))
    >>> model(tp.ones(3, 4)).shape
    tensorplay.Size([3, 2])
"""

from __future__ import annotations

from . import cache, functional, generation, init, utils  # noqa: F401
from .modules import *  # noqa: F403  (every layer class; the list is nn/modules/__init__.py's __all__)
from .parameter import Buffer, Parameter  # noqa: F401
