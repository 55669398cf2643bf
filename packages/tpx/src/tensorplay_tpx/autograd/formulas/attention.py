"""Derivative of scaled_dot_product_attention (P10's attention kernel file).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). The forward kernel
never builds the L x S score matrix (Note [Online softmax] in attention.cpp); this backward recomputes it with
ordinary ops, which keeps it readable and differentiable but costs O(L S) memory per head.

With P = softmax(Q K^T * scale + mask) and O = P V:
  dV = P^T dO,   dP = dO V^T,   dS = P * (dP - rowsum(dP * P)),   dQ = dS K * scale,   dK = dS^T Q * scale.
"""

from __future__ import annotations

import math

import tensorplay_p10 as tp

from . import derivative


@derivative("scaled_dot_product_attention", save=("query", "key", "value", "attn_mask"))
def _sdpa(ctx, grad):
    if ctx.dropout_p > 0:
        raise NotImplementedError(
            "the derivative for 'scaled_dot_product_attention' with dropout_p > 0 is not implemented "
            "(the dropout mask is not kept); apply dropout to the attention output instead"
        )
    q, k, v, mask = ctx.query, ctx.key, ctx.value, ctx.attn_mask
    scale = ctx.scale if ctx.scale is not None else 1.0 / math.sqrt(q.shape[-1])
    rep = 1
    if ctx.enable_gqa and q.dim() >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = k.repeat_interleave(rep, dim=-3)
        v = v.repeat_interleave(rep, dim=-3)
    s = (q @ k.transpose(-2, -1)) * scale
    L, S = q.shape[-2], k.shape[-2]
    if ctx.is_causal:
        s = s.masked_fill(~tp.ones(L, S, dtype=tp.bool).tril(), -math.inf)
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == tp.bool else s + mask
    p = s.softmax(-1)
    p = tp.where(p.isnan(), tp.zeros_like(p), p)  # fully masked rows: output 0, no gradient (PyTorch's CPU)
    dv = p.transpose(-2, -1) @ grad
    dp = grad @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = (ds @ k) * scale
    dk = (ds.transpose(-2, -1) @ q) * scale
    if rep > 1:  # grouped-query attention: each kv head served `rep` query heads
        dk = dk.unflatten(-3, (dk.shape[-3] // rep, rep)).sum(-3)
        dv = dv.unflatten(-3, (dv.shape[-3] // rep, rep)).sum(-3)
    dmask = ds if mask is not None and mask.dtype != tp.bool and ctx.needs_input_grad["attn_mask"] else None
    return dq, dk, dv, dmask
