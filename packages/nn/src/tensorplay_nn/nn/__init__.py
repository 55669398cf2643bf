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
from .modules.activation import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .modules.causal_attention import GroupedQueryAttention  # noqa: F401
from .modules.channelshuffle import ChannelShuffle  # noqa: F401
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .modules.conv import (  # noqa: F401
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from .modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .modules.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .modules.flatten import Flatten, Unflatten  # noqa: F401
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .modules.linear import Bilinear, Identity, Linear  # noqa: F401
from .modules.loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .modules.modern_block import SwiGLUMLP, TransformerBlock  # noqa: F401
from .modules.module import Module  # noqa: F401
from .modules.multihead_attention import MultiheadAttention  # noqa: F401
from .modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm  # noqa: F401
from .modules.padding import (  # noqa: F401
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .modules.pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .modules.pooling import (  # noqa: F401
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from .modules.rnn import GRU, LSTM, RNN, RNNBase  # noqa: F401
from .modules.rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401
from .modules.rotary import RotaryEmbedding  # noqa: F401
from .modules.sparse import Embedding, EmbeddingBag  # noqa: F401
from .modules.transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
