"""``tensorplay.nn.modules``: the layer classes, one concept per file.

Each file lists its public classes in its own ``__all__``; this package re-exports them and sums those
lists into its ``__all__``, which ``tensorplay.nn`` takes whole (``from .modules import *``). A new layer
file means one import line and one ``__all__ +=`` line here, nothing in ``nn/__init__.py``.
(``__all__ += <module>.__all__`` is a form editors' static analysers follow, so completion still lists
every layer.)
"""

from __future__ import annotations

from . import (
    activation,
    batchnorm,
    causal_attention,
    causal_encoder_decoder,
    channelshuffle,
    compressed_attention,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    gated_delta,
    instancenorm,
    kimi_delta,
    latent_attention,
    linear,
    loss,
    modern_block,
    module,
    multihead_attention,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    rnn_cell,
    sparse,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .causal_attention import *  # noqa: F403
from .causal_encoder_decoder import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .compressed_attention import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .gated_delta import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .kimi_delta import *  # noqa: F403
from .latent_attention import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .modern_block import *  # noqa: F403
from .module import *  # noqa: F403
from .multihead_attention import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .rnn_cell import *  # noqa: F403
from .rotary import RotaryEmbedding  # apply_rotary_emb stays in nn.modules.rotary
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

__all__ = ["RotaryEmbedding"]  # a literal list, then the `+=` lines: the forms pyright/pylance read
__all__ += activation.__all__
__all__ += batchnorm.__all__
__all__ += causal_attention.__all__
__all__ += causal_encoder_decoder.__all__
__all__ += channelshuffle.__all__
__all__ += compressed_attention.__all__
__all__ += container.__all__
__all__ += conv.__all__
__all__ += distance.__all__
__all__ += dropout.__all__
__all__ += flatten.__all__
__all__ += fold.__all__
__all__ += gated_delta.__all__
__all__ += instancenorm.__all__
__all__ += kimi_delta.__all__
__all__ += latent_attention.__all__
__all__ += linear.__all__
__all__ += loss.__all__
__all__ += modern_block.__all__
__all__ += module.__all__
__all__ += multihead_attention.__all__
__all__ += normalization.__all__
__all__ += padding.__all__
__all__ += pixelshuffle.__all__
__all__ += pooling.__all__
__all__ += rnn.__all__
__all__ += rnn_cell.__all__
__all__ += sparse.__all__
__all__ += transformer.__all__
__all__ += upsampling.__all__
