"""Attention in functional form: `scaled_dot_product_attention` and `multi_head_attention_forward`.

Where it sits: `tensorplay.nn.functional`, as in `torch.nn.functional`. `scaled_dot_product_attention` is
P10's op (its own memory-efficient kernel, packages/p10/csrc/kernels/attention.cpp) re-exported unchanged.
`multi_head_attention_forward` is the whole of `nn.MultiheadAttention`'s computation on explicit weights, in
PyTorch's sequence-first layout `[L, N, E]` (or unbatched `[L, E]`); the module only holds the parameters.

Note [MHA masks]
  In MultiheadAttention a bool mask means "True = may NOT attend" (the opposite of
  scaled_dot_product_attention, where True means "keep"). Both masks are therefore made additive floats first
  (`_canonical_mask`: True -> -inf, False -> 0; a float mask is used as is), then added together: `attn_mask`
  [L, S] or [N*H, L, S] and `key_padding_mask` [N, S], which masks the same keys for every query and head of
  one batch element. The scores are `q k^T / sqrt(head_dim) + mask`; a row with every key masked gives NaN
  weights with `need_weights=True` (a softmax over -inf), as PyTorch does, and zeros through the fused path.
"""

from __future__ import annotations

import math
import warnings

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor, scaled_dot_product_attention

from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _none_or_dtype(input: Tensor | None) -> tp.dtype | None:
    """The dtype of an optional mask (what `_canonical_mask` compares the other mask's dtype with)."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or tensorplay.Tensor")


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: tp.dtype | None,
    other_name: str,
    target_type: tp.dtype,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask becomes an additive float mask of `target_type` (True -> -inf); see Note [MHA masks]."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != tp.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. "
            "Use same type for both instead.",
            stacklevel=3,
        )
    if is_float:
        return mask
    return tp.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the call is batched (3-D query) or not (2-D), with PyTorch's checks of the other ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found "
                f"{key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found "
                f"{key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                    f"{attn_mask.dim()}-D tensor instead"
                )
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}"
                )
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
    )


def _heads(t: Tensor, batch_heads: int, head_dim: int) -> Tensor:
    """[S, N, E] -> [N*H, S, d]: the heads moved into the batch dimension."""
    return t.reshape(t.shape[0], batch_heads, head_dim).transpose(0, 1)


def _check_static(name: str, t: Tensor, batch_heads: int, head_dim: int) -> Tensor:
    """A caller-given key or value already in the [N*H, S, d] layout."""
    for dim, want in ((0, batch_heads), (2, head_dim)):
        if t.size(dim) != want:
            raise AssertionError(f"expecting {name}.size({dim}) of {want}, but got {t.size(dim)}")
    return t


def _pad_last(mask: Tensor) -> Tensor:
    """One more key column that masks nothing (for the bias_k / zero-attention key)."""
    return tp.cat([mask, tp.zeros((*mask.shape[:-1], 1), dtype=mask.dtype, device=mask.device)], -1)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    r"""Multi-head attention on explicit weights (what `nn.MultiheadAttention.forward` computes).

    With `E = embed_dim`, `H = num_heads`, `d = E / H`, query `[L, N, E]`, key `[S, N, kdim]`, value
    `[S, N, vdim]`::

        q, k, v = query W_q^T + b_q,  key W_k^T + b_k,  value W_v^T + b_v      (split into H heads of d)
        head_h  = softmax(q_h k_h^T / sqrt(d) + mask) v_h                          (Note [MHA masks])
        out     = concat_h(head_h) W_o^T + b_o                                     -> [L, N, E]

    `bias_k`/`bias_v` append one learned key/value, `add_zero_attn` one zero key/value. The weights returned
    with `need_weights=True` are `[N, L, S]` averaged over heads (`[N, H, L, S]` with
    `average_attn_weights=False`); with `need_weights=False` the fused `scaled_dot_product_attention` runs and
    the weights are None.

    Example::

        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> E, H = 4, 2
        >>> x = tp.randn(3, 1, E)
        >>> w_in, w_out = tp.randn(3 * E, E), tp.randn(E, E)
        >>> out, w = F.multi_head_attention_forward(
        ...     x, x, x, E, H, w_in, None, None, None, False, 0.0, w_out, None
        ... )
        >>> out.shape, w.shape
        (tensorplay.Size([3, 1, 4]), tensorplay.Size([1, 3, 3]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # unbatched: a batch of one, squeezed again at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # the hint is trusted: the fused kernel applies the causal mask itself
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask below is no longer purely causal

    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # input projections
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        q, k, v = (
            linear(query, q_proj_weight, b_q),
            linear(key, k_proj_weight, b_k),
            linear(value, v_proj_weight, b_v),
        )
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:  # self-attention: one GEMM for the three projections
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            expected = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != expected:
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = tp.cat([k, bias_k.repeat(1, bsz, 1)])
        v = tp.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads into the batch dim: [L, N, E] -> [N*H, L, d]
    bh = bsz * num_heads
    q = _heads(q, bh, head_dim)
    k = _heads(k, bh, head_dim) if static_k is None else _check_static("static_k", static_k, bh, head_dim)
    v = _heads(v, bh, head_dim) if static_v is None else _check_static("static_v", static_v, bh, head_dim)

    if add_zero_attn:
        zeros = tp.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = tp.cat([k, zeros], 1), tp.cat([v, zeros], 1)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)

    src_len = k.size(1)
    if key_padding_mask is not None:
        for dim, want in ((0, bsz), (1, src_len)):
            if key_padding_mask.shape[dim] != want:
                raise AssertionError(
                    f"Expected key_padded_mask.shape[{dim}] to be {want}, "
                    f"but got {key_padding_mask.shape[dim]}"
                )
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        # the weights are wanted, so the [N*H, L, S] matrix is built explicitly
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = tp.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = tp.bmm(q_scaled, k.transpose(-2, -1))
        weights = tp.softmax(weights, -1)
        if dropout_p > 0.0:
            weights = tp.dropout(weights, dropout_p, True)
        out = tp.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # fused path: [N, H, L, d] through P10's attention kernel, which takes an additive float mask as is
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
