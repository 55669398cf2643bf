"""tensorplay_nn.nn — neural-network modules (seen as ``tensorplay.nn``).

Following ``torch.nn`` (DESIGN.md §6): :class:`Module` and :class:`Parameter`, the containers, the layer zoo
(in ``modules/``, one concept per file), ``functional`` (imported as ``F``) and ``init``. The LLM stack
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
from .modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .modules.causal_attention import GroupedQueryAttention  # noqa: F401
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .modules.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .modules.flatten import Flatten, Unflatten  # noqa: F401
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .modules.linear import Bilinear, Identity, Linear  # noqa: F401
from .modules.modern_block import SwiGLUMLP, TransformerBlock  # noqa: F401
from .modules.module import Module  # noqa: F401
from .modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm  # noqa: F401
from .modules.rotary import RotaryEmbedding  # noqa: F401
from .modules.sparse import Embedding, EmbeddingBag  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
