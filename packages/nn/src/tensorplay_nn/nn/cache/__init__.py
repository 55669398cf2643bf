"""tensorplay_nn.nn.cache — key/value caches for autoregressive decoding (seen as `tensorplay.nn.cache`).

Where it sits: attention mixers (`GroupedQueryAttention`, ...) call `cache.update(key, value, layer_idx)`
after RoPE and attend over what it returns; `nn.generation.generate` creates one cache and hands it to every
step. Each class lives in its own file; the protocol they share is `Cache` in `base.py`
(shared/reference/llm-api.md, "Caches", is the contract).
"""

from __future__ import annotations

from .base import Cache, KeyValue
from .dynamic import DynamicCache
from .linear_state import LinearStateCache
from .paged import PagedCache
from .quantized import QuantizedCache
from .sliding_window import SlidingWindowCache
from .static import StaticCache

__all__ = [
    "Cache",
    "DynamicCache",
    "KeyValue",
    "LinearStateCache",
    "PagedCache",
    "QuantizedCache",
    "SlidingWindowCache",
    "StaticCache",
]
