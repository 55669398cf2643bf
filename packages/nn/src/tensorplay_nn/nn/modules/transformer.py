"""The Transformer family of `torch.nn`: encoder and decoder layers, their stacks, and the full `Transformer`.

Where it sits: `tensorplay.nn.TransformerEncoderLayer`, `TransformerDecoderLayer`, `TransformerEncoder`,
`TransformerDecoder`, `Transformer`, built from `MultiheadAttention` (multihead_attention.py), `Linear`,
`LayerNorm` and `Dropout`, with PyTorch's names, defaults and submodule names so state dicts are
interchangeable.
The LLM-style pre-norm blocks with RoPE and caches are elsewhere (modern_block.py); these are the 2017 layers.

Note [Post-norm and pre-norm]
  With sublayers SA (self-attention), CA (cross-attention to `memory`) and FF
  (linear2(dropout(act(linear1)))), each followed by its own dropout:
    norm_first=False (the paper): x = norm1(x + SA(x)); [x = norm2(x + CA(x, mem))]; x = normN(x + FF(x))
    norm_first=True  (pre-norm):  x = x + SA(norm1(x)); [x = x + CA(norm2(x), mem)]; x = x + FF(normN(x))
  N is 2 in the encoder layer and 3 in the decoder layer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import init
from ..functional.attention import _canonical_mask, _none_or_dtype
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .multihead_attention import MultiheadAttention
from .normalization import LayerNorm

__all__ = [
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerDecoder",
    "Transformer",
]

Activation = str | Callable[[Tensor], Tensor]


def _relu(x: Tensor) -> Tensor:
    return tp.relu(x)


def _gelu(x: Tensor) -> Tensor:
    return tp.gelu(x)


def _get_activation_fn(activation: Activation) -> Callable[[Tensor], Tensor]:
    """The names "relu" / "gelu" pick the ops; anything callable (a function or a module) is used as given.

    The names map to plain Python functions rather than to the op objects themselves: the encoder and
    decoder stacks deep-copy their layer, and P10's op objects cannot be copied (functions copy as
    themselves).
    """
    if activation == "relu":
        return _relu
    if activation == "gelu":
        return _gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """[sz, sz] float mask, -inf above the diagonal and 0 elsewhere: position i sees positions <= i."""
    return tp.triu(tp.full((sz, sz), float("-inf"), dtype=dtype or tp.float32, device=device), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:  # unbatched [S, E]
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """`is_causal` if given; when it is None, whether `mask` equals the square subsequent mask."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoderLayer(Module):
    r"""Self-attention and a feed-forward network, each in a residual branch with LayerNorm.

    Post-norm (default, the paper) or pre-norm with `norm_first=True` (Note [Post-norm and pre-norm]):

    .. math::
        x \leftarrow \text{LN}_1(x + \text{SA}(x)), \quad
        x \leftarrow \text{LN}_2(x + W_2\, \text{drop}(\text{act}(W_1 x + b_1)) + b_2)

    `forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)`: `src` `[S, N, d_model]`
    (`[N, S, d_model]` with `batch_first`, `[S, d_model]` unbatched); masks as in `MultiheadAttention`.

    Example::

        >>> import tensorplay as tp
        >>> layer = tp.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
        >>> layer(tp.randn(2, 7, 16)).shape
        tensorplay.Size([2, 7, 16])
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _get_activation_fn(activation)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(src_mask), "src_mask", src.dtype
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(
        self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    r"""Self-attention, cross-attention to the encoder's `memory`, and a feed-forward network, each residual.

    .. math::
        x \leftarrow \text{LN}_1(x + \text{SA}(x)), \quad x \leftarrow \text{LN}_2(x + \text{CA}(x, m)), \quad
        x \leftarrow \text{LN}_3(x + \text{FF}(x))

    (or pre-norm with `norm_first=True`, Note [Post-norm and pre-norm]). `forward(tgt, memory, tgt_mask=None,
    memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False,
    memory_is_causal=False)`.

    Example::

        >>> import tensorplay as tp
        >>> layer = tp.nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> layer(tp.randn(5, 2, 16), tp.randn(7, 2, 16)).shape
        tensorplay.Size([5, 2, 16])
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(
        self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool,
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    r"""`num_layers` copies of an encoder layer applied in turn, then the optional final `norm`.

    The layers are deep copies of `encoder_layer` (independent parameters). `enable_nested_tensor` and
    `mask_check` are accepted for PyTorch compatibility and have no effect (there is no nested-tensor fast
    path). `forward(src, mask=None, src_key_padding_mask=None, is_causal=None)`: with `is_causal=None` a
    `mask` equal to `Transformer.generate_square_subsequent_mask` is recognised as causal.

    Example::

        >>> import tensorplay as tp
        >>> layer = tp.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> encoder = tp.nn.TransformerEncoder(layer, num_layers=3)
        >>> encoder(tp.randn(7, 2, 16)).shape
        tensorplay.Size([7, 2, 16])
    """

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask), "mask", src.dtype
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first if len(self.layers) else False
        causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    r"""`num_layers` copies of a decoder layer applied in turn (each reading the same `memory`), then `norm`.

    Example::

        >>> import tensorplay as tp
        >>> layer = tp.nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> decoder = tp.nn.TransformerDecoder(layer, num_layers=2)
        >>> decoder(tp.randn(5, 2, 16), tp.randn(7, 2, 16)).shape
        tensorplay.Size([5, 2, 16])
    """

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch_first = self.layers[0].self_attn.batch_first if len(self.layers) else False
        causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _get_seq_len(tgt, batch_first))
        output = tgt
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    r"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017).

    An encoder stack of `num_encoder_layers` layers with a final LayerNorm reads `src`; a decoder stack of
    `num_decoder_layers` layers with a final LayerNorm reads `tgt` and attends to the encoder's output. All
    parameters with more than one dimension start `xavier_uniform_`. `forward(src, tgt, src_mask=None,
    tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)` returns
    `[T, N, d_model]`. `custom_encoder` / `custom_decoder` replace the stacks.

    Example::

        >>> import tensorplay as tp
        >>> model = tp.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
        ...                           dim_feedforward=32)
        >>> src, tgt = tp.randn(7, 2, 16), tp.randn(5, 2, 16)
        >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(5)).shape
        tensorplay.Size([5, 2, 16])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = "relu",
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(*layer_args, **factory)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(*layer_args, **factory)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask for a sequence of `sz` positions: -inf above the diagonal, 0 on and below it."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
