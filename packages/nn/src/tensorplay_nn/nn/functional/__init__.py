"""``tensorplay.nn.functional`` (imported as ``F``): the stateless forms of the layers.

Where it sits: each topic has its own file here (linear, sparse, normalization, dropout, ...), written on
P10's public ops; this package only re-exports them, one plain import line per file, so that every topic can
add its functions without touching the others.
"""

from __future__ import annotations

from .activation import (  # noqa: F401
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401
from .conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from .distance import cosine_similarity, pairwise_distance, pdist  # noqa: F401
from .dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout  # noqa: F401
from .linear import bilinear, linear  # noqa: F401
from .loss import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from .loss_margin import (  # noqa: F401
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from .pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .sparse import embedding, embedding_bag, one_hot  # noqa: F401
from .vision import (  # noqa: F401
    affine_grid,
    channel_shuffle,
    grid_sample,
    interpolate,
    native_channel_shuffle,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
