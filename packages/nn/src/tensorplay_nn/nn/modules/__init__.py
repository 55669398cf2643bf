"""``tensorplay.nn.modules``: the layer classes, one concept per file, re-exported one import line per
file."""

from __future__ import annotations

from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .causal_attention import GroupedQueryAttention  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .modern_block import SwiGLUMLP, TransformerBlock  # noqa: F401
from .module import Module  # noqa: F401
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm  # noqa: F401
from .rotary import RotaryEmbedding  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
