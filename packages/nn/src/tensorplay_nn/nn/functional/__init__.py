"""``tensorplay.nn.functional`` (imported as ``F``): the stateless forms of the layers.

Where it sits: each topic has its own file here (linear, sparse, normalization, dropout, ...), written on
P10's public ops; this package only re-exports them, one plain import line per file, so that every topic can
add its functions without touching the others.
"""

from __future__ import annotations

from .dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout  # noqa: F401
from .linear import bilinear, linear  # noqa: F401
from .normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from .sparse import embedding, embedding_bag, one_hot  # noqa: F401
