"""Derivative of scaled_dot_product_attention (P10's attention kernel file).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). The forward kernel
never builds the L x S score matrix (Note [Online softmax] in attention.cpp); this backward recomputes it with
ordinary ops, which keeps it readable and differentiable but costs O(L S) memory per head.

With P = softmax(Q K^T * scale + mask) and O = P V:
  dV = P^T dO,   dP = dO V^T,   dS = P * (dP - rowsum(dP * P)),   dQ = dS K * scale,   dK = dS^T Q * scale.

Note [Attention backward paths]
  The common training case (no attn_mask, float32/float64 — on CUDA also float16/bfloat16, which the CUDA
  kernel accumulates in float32 — Q, K and V of one batch shape after the GQA repeat,
  the backward not recorded, i.e. grad mode off inside backward) runs P10's fused
  scaled_dot_product_attention_backward, which never holds more than a block of P per thread (Note [Attention
  backward] in kernels/attention_backward.cpp). Every other case, and create_graph=True / JVPs (which need
  the gradients themselves differentiable), runs the composite below, which materialises P.
"""

from __future__ import annotations

import math

import tensorplay_p10 as tp

from ..grad_mode import is_grad_enabled
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
    fused = (
        not is_grad_enabled()
        and mask is None
        and (q.dtype in (tp.float32, tp.float64) or (q.is_cuda and q.dtype in (tp.float16, tp.bfloat16)))
        and q.dtype == k.dtype == v.dtype
        and q.dim() >= 2
        and q.shape[:-2] == k.shape[:-2] == v.shape[:-2]
    )
    if fused:  # Note [Attention backward paths]
        dq, dk, dv = tp.scaled_dot_product_attention_backward(grad.to(q.dtype), q, k, v, ctx.is_causal, scale)
        return dq, *_ungroup(dk, dv, rep), None
    s = (q @ k.transpose(-2, -1)) * scale
    L, S = q.shape[-2], k.shape[-2]
    if ctx.is_causal:
        s = s.masked_fill(~tp.ones(L, S, dtype=tp.bool, device=s.device).tril(), -math.inf)
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == tp.bool else s + mask
    p = s.softmax(-1)
    p = tp.where(p.isnan(), tp.zeros_like(p), p)  # fully masked rows: output 0, no gradient (PyTorch's CPU)
    dv = p.transpose(-2, -1) @ grad
    dp = grad @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = (ds @ k) * scale
    dk = (ds.transpose(-2, -1) @ q) * scale
    dmask = ds if mask is not None and mask.dtype != tp.bool and ctx.needs_input_grad["attn_mask"] else None
    return dq, *_ungroup(dk, dv, rep), dmask


def _ungroup(dk: tp.Tensor, dv: tp.Tensor, rep: int) -> tuple[tp.Tensor, tp.Tensor]:
    """Grouped-query attention: each kv head served `rep` query heads, so its gradient is their sum."""
    if rep > 1:
        dk = dk.unflatten(-3, (dk.shape[-3] // rep, rep)).sum(-3)
        dv = dv.unflatten(-3, (dv.shape[-3] // rep, rep)).sum(-3)
    return dk, dv
