"""`nn.MultiheadAttention`: the attention block of the original Transformer, as `torch.nn.MultiheadAttention`.

Where it sits: the module holds the parameters, in PyTorch's layout and names so that state dicts move between
the two; the computation is `F.multi_head_attention_forward` (nn/functional/attention.py), which with
`need_weights=False` runs P10's fused `scaled_dot_product_attention` kernel. The encoder and decoder layers in
transformer.py are built from it.
"""

from __future__ import annotations

from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import functional as F
from .. import init
from ..functional.attention import _canonical_mask, _none_or_dtype
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    r"""Attention over `num_heads` learned subspaces, concatenated and projected back to `embed_dim`.

    .. math::
        \text{MultiHead}(Q, K, V) = \text{Concat}(\text{head}_1, \dots, \text{head}_h) W^O, \quad
        \text{head}_i = \text{softmax}\left(\frac{Q W_i^Q (K W_i^K)^T}{\sqrt{d}} + M\right) V W_i^V

    with `d = embed_dim // num_heads`. Parameters: `in_proj_weight` [3E, E] (the rows of W^Q, W^K, W^V
    stacked) when `kdim == vdim == embed_dim`, else `q_proj_weight` [E, E], `k_proj_weight` [E, kdim],
    `v_proj_weight` [E, vdim]; `in_proj_bias` [3E]; `out_proj` (a Linear E -> E); with `add_bias_kv`,
    `bias_k` and `bias_v` [1, 1, E], one extra learned key and value. Projection weights start
    `xavier_uniform_`, the projection biases at zero.

    `forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`: query `[L, N, E]` (`[N, L, E]` with `batch_first`, `[L, E]`
    unbatched), key/value `[S, N, kdim/vdim]`. `key_padding_mask` [N, S] and `attn_mask` [L, S] or
    [N * num_heads, L, S] are bool (True = not allowed to attend) or float (added to the scores). Returns the
    output `[L, N, E]` and, if `need_weights`, the attention weights `[N, L, S]` (averaged over heads) or
    `[N, num_heads, L, S]`; else None. `dropout` applies to the attention weights in training.

    Example::

        >>> import tensorplay as tp
        >>> mha = tp.nn.MultiheadAttention(16, 4, batch_first=True)
        >>> x = tp.randn(2, 5, 16)
        >>> out, weights = mha(x, x, x)
        >>> out.shape, weights.shape
        (tensorplay.Size([2, 5, 16]), tensorplay.Size([2, 5, 5]))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(tp.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(tp.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(tp.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(tp.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(tp.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        # Linear's own init draws first (as in PyTorch), then _reset_parameters below
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(tp.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(tp.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
        )
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            # transpose each distinct tensor once, so that self-attention stays recognisable (query is key)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights
