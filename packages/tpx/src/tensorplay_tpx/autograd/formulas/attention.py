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


def _with_dropout(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """Attention with dropout in recorded ops (Note [Attention with dropout under autograd]); else None."""
    if dropout_p <= 0:
        return None

    def meta(t):
        return None if t is None else tp.empty(tuple(t.shape), dtype=t.dtype, device="meta")

    # The kernel's own argument checks and messages (a meta call checks, then returns at once).
    tp.scaled_dot_product_attention(
        meta(query),
        meta(key),
        meta(value),
        meta(attn_mask),
        dropout_p,
        is_causal,
        scale=scale,
        enable_gqa=enable_gqa,
    )
    dt = query.dtype
    q, k, v = query, key, value
    if dt in (tp.float16, tp.bfloat16):  # the kernel computes 16-bit inputs in float32
        q, k, v = q.to(tp.float32), k.to(tp.float32), v.to(tp.float32)
    if enable_gqa and q.dim() >= 3 and k.shape[-3] != q.shape[-3]:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
    if enable_gqa and q.dim() >= 3 and v.shape[-3] != q.shape[-3]:
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
    sc = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    s = (q @ k.transpose(-2, -1)) * sc
    if is_causal:
        L, S = q.shape[-2], k.shape[-2]
        s = s.masked_fill(~tp.ones(L, S, dtype=tp.bool, device=s.device).tril(), -math.inf)
    elif attn_mask is not None:
        s = s.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == tp.bool else s + attn_mask.to(s.dtype)
    # A row with no key left gives zeros (the kernel's _safe_softmax). Its scores are zeroed before the
    # softmax too, so that row's gradient is 0 rather than the NaN of a softmax over -inf.
    dead = s.amax(-1, keepdim=True) == -math.inf
    attn = s.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)
    out = tp.dropout(attn, dropout_p, True) @ v
    return out if out.dtype == dt else out.to(dt)


# Note [Attention with dropout under autograd]
#   The fused kernel draws its dropout mask inside and keeps nothing, so with dropout_p > 0 and a gradient
#   being recorded the call is decomposed instead (Note [Decomposed under autograd] in csrc/record.cpp): the
#   kernel's own dropout path, op for op (scores, mask, safe softmax, dropout, @ V), each op recorded,
#   dropout's mask saved by its node. The draws are the kernel's, in the same order, so the values equal the
#   fused call's under the same seed, and the backward uses exactly the mask the forward drew (CPU, CUDA).
@derivative(
    "scaled_dot_product_attention", save=("query", "key", "value", "attn_mask"), decompose=_with_dropout
)
def _sdpa(ctx, grad):
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
