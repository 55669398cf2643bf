"""The delta rule with decay, shared by `GatedDeltaNet` (one log-decay per head, gated_delta.py) and
`KimiDeltaAttention` (one log-decay per key channel, kimi_delta.py): the token-by-token recurrence, the
chunked (WY / UT-transform) form written with tensor ops, and the causal short convolution both mixers run
first.

Where it sits: below the two mixer modules and their public rule functions. `chunk_delta_rule` runs the native
P10 op `delta_rule` (a fused scan kernel with a fused backward, p10/csrc/kernels/delta_rule.cpp);
`_chunk_delta_rule_reference` here is the chunked algorithm written with tensor ops, with the op's contract —
the documented composite the tests compare the op against. See Note [Chunked delta rule].

Note [Chunked delta rule]
  Per head, with state S [Dk, Dv] and the decay d_t = exp(g_t) (a scalar, or one factor per key row), a step
  is
      S'_t = d_t ⊙ S_{t-1};   u_t = β_t (v_t − S'_tᵀ k_t);   S_t = S'_t + k_t u_tᵀ;   o_t = S_tᵀ q_t.
  Split the sequence into chunks of C tokens. Inside a chunk starting from state S_0, with the cumulative log
  decay γ_t = g_1 + … + g_t (so everything from j to t decays by exp(γ_t − γ_j)), unrolling gives
      S_t = e^{γ_t} S_0 + Σ_{j≤t} e^{γ_t−γ_j} k_j u_jᵀ,
      u_t + Σ_{j<t} A_tj u_j = β_t v_t − β_t (e^{γ_t} k_t)ᵀ S_0,   A_tj = β_t Σ_d k_td k_jd e^{γ_td−γ_jd}.
  A is strictly lower triangular, so with T = (I + A)^-1 (the UT transform; `_unit_lower_inverse`)
      U = W_v − W_k S_0,   W_v = T (β ⊙ V),   W_k = T (β ⊙ e^{γ} ⊙ K),
  and then, for every t of the chunk at once,
      o_t = (e^{γ_t} ⊙ q_t)ᵀ S_0 + Σ_{j≤t} (Σ_d q_td k_jd e^{γ_td−γ_jd}) u_j,
      S_C = e^{γ_C} ⊙ S_0 + Σ_j (e^{γ_C−γ_j} ⊙ k_j) u_jᵀ.
  W_v, W_k and the pairwise products need no state, so they are computed for all chunks in one batch; only
  the last three lines run chunk after chunk. Pairwise decays are formed as exp(γ_t − γ_j) with the future
  (j > t) set to −inf before the exponential: a factorised exp(γ_t)·exp(−γ_j) would overflow float32 once a
  chunk decays by more than e^88, and an unmasked exp of a positive difference would poison gradients with
  inf·0. Padding (T up to a multiple of C) uses k = v = q = 0, β = 0, g = 0, which leaves the state unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter

__all__: list[str] = []  # private: the public names live in gated_delta.py and kimi_delta.py


def l2norm(x: Tensor, dim: int = -1, eps: float = 1e-6) -> Tensor:
    """`x / sqrt(sum(x², dim) + eps)`: scale each vector along `dim` to unit length (zero stays zero).

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.gated_delta import l2norm
        >>> l2norm(tp.tensor([3.0, 4.0]), eps=0.0).tolist()
        [0.6000000238418579, 0.800000011920929]
    """
    return x * tp.rsqrt((x * x).sum(dim, keepdim=True) + eps)


def compute_dtype(x: Tensor) -> Any:
    """The dtype the scans run in: float64 for float64 inputs, float32 for everything else."""
    return tp.float64 if x.dtype == tp.float64 else tp.float32


def check_rule_inputs(
    op: str,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Tensor | None,
    per_channel: bool,
) -> None:
    """Raise `ValueError` naming `op`, the argument and the shapes when the inputs do not fit together."""
    if query.dim() != 4 or tuple(query.shape) != tuple(key.shape):
        raise ValueError(
            f"{op}: query and key must both be [B, T, H, Dk], got query {tuple(query.shape)} and key "
            f"{tuple(key.shape)}"
        )
    b, t, h, dk = (int(s) for s in query.shape)
    if value.dim() != 4 or tuple(value.shape[:3]) != (b, t, h):
        raise ValueError(f"{op}: value must be [B, T, H, Dv] = [{b}, {t}, {h}, Dv], got {tuple(value.shape)}")
    want_g = (b, t, h, dk) if per_channel else (b, t, h)
    if tuple(g.shape) != want_g:
        raise ValueError(f"{op}: g must be {list(want_g)}, got {tuple(g.shape)}")
    if tuple(beta.shape) != (b, t, h):
        raise ValueError(f"{op}: beta must be [{b}, {t}, {h}], got {tuple(beta.shape)}")
    dv = int(value.shape[3])
    if initial_state is not None and tuple(initial_state.shape) != (b, h, dk, dv):
        raise ValueError(
            f"{op}: initial_state must be [B, H, Dk, Dv] = [{b}, {h}, {dk}, {dv}], "
            f"got {tuple(initial_state.shape)}"
        )


def _prepare_query_key(query: Tensor, key: Tensor, use_qk_l2norm: bool) -> tuple[Tensor, Tensor]:
    """Cast q, k to the scan dtype, L2-normalise them if asked, and scale q by Dk^-1/2."""
    ct = compute_dtype(query)
    query, key = query.to(ct), key.to(ct)
    if use_qk_l2norm:
        query, key = l2norm(query), l2norm(key)
    return query * (int(query.shape[-1]) ** -0.5), key


def recurrent_delta_rule(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Tensor | None,
    output_final_state: bool,
    use_qk_l2norm: bool,
) -> tuple[Tensor, Tensor | None]:
    """The recurrence of Note [Chunked delta rule], one token at a time; `g` is `[B,T,H]` or `[B,T,H,Dk]`."""
    out_dtype = query.dtype
    q, k = _prepare_query_key(query, key, use_qk_l2norm)
    ct = q.dtype
    b, t, h, dk = (int(s) for s in q.shape)
    dv = int(value.shape[-1])
    v, g, beta = value.to(ct), g.to(ct), beta.to(ct)
    state = (
        tp.zeros(b, h, dk, dv, dtype=ct, device=query.device)
        if initial_state is None
        else initial_state.to(ct)
    )
    # A per-head decay scales the whole [Dk, Dv] state ([.., 1, 1]); a per-channel one, each key row
    # ([.., Dk, 1]).
    decay = g.exp()[..., None] if g.dim() == 4 else g.exp()[..., None, None]
    # Rows and columns as [.., 1, D] / [.., D, 1] matrices, split per token by one unbind per tensor.
    per_token = (
        x.unbind(1)
        for x in (
            decay,
            k[..., None, :],
            k[..., None],
            v[..., None, :],
            beta[..., None, None],
            q[..., None, :],
        )
    )
    outs = []
    for d_t, k_row, k_col, v_row, b_t, q_row in zip(*per_token, strict=True):  # each [B, H, ., .]
        state = state * d_t
        u = b_t * (v_row - k_row @ state)  # β (v − Sᵀk), as a row [B, H, 1, Dv]
        state = state + k_col @ u  # S + k uᵀ
        outs.append(q_row @ state)  # (Sᵀq)ᵀ
    out = tp.stack(outs, 1).squeeze(3) if outs else tp.zeros(b, 0, h, dv, dtype=ct, device=query.device)
    return out.to(out_dtype), (state if output_final_state else None)


def _unit_lower_inverse(a: Tensor) -> Tensor:
    """`(I + a)^-1` for strictly lower-triangular `a` `[..., C, C]`, batched over every chunk and head.

    `I + a` is unit lower triangular, so its LU factorisation is itself and the inverse is plain forward
    substitution, `T_t = e_t − Σ_{j<t} a_tj T_j` row by row; `linalg.inv` runs that in LAPACK for the whole
    batch as one op with its own derivative (`−Tᵀ grad Tᵀ`), where a Python loop over C rows would record
    C dependent steps in the autograd graph.
    """
    c = int(a.shape[-1])
    return tp.linalg.inv(tp.eye(c, dtype=a.dtype, device=a.device) + a)


def _pad_time(x: Tensor, pad: int) -> Tensor:
    """Zero-pad dim 2 (time, in the [B, H, T, ...] layout) of a 3-D or 4-D tensor by `pad` at the end."""
    if pad == 0:
        return x
    return tp.pad(x, [0, pad] if x.dim() == 3 else [0, 0, 0, pad])


def _chunk_delta_rule_reference(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[Tensor, Tensor]:
    """The composite reference of the native op `delta_rule` (same contract): Note [Chunked delta rule].

    `query`/`key` `[B,T,H,Dk]` used as given (already normalised and scaled), `value` `[B,T,H,Dv]`, `g`
    `[B,T,H]` or `[B,T,H,Dk]`, `beta` `[B,T,H]`, `initial_state` `[B,H,Dk,Dv]`. Returns the output in the
    query's dtype and the final state in float32 (float64 for float64 inputs).
    """
    out_dtype, ct = query.dtype, compute_dtype(query)
    b, t, h, dk = (int(s) for s in query.shape)
    dv = int(value.shape[-1])
    state = (
        tp.zeros(b, h, dk, dv, dtype=ct, device=query.device)
        if initial_state is None
        else initial_state.to(ct)
    )
    if t == 0:
        return tp.zeros(b, 0, h, dv, dtype=out_dtype, device=query.device), state
    per_channel = g.dim() == 4
    c = chunk_size
    pad = (-t) % c
    n = (t + pad) // c
    # [B, T, H, ...] -> [B, H, N, C, ...]: heads and chunks become batch dimensions.
    q, k, v, g, beta = (_pad_time(x.transpose(1, 2).to(ct), pad) for x in (query, key, value, g, beta))
    q, k, v = (x.reshape(b, h, n, c, int(x.shape[-1])) for x in (q, k, v))
    g = g.reshape(b, h, n, c, dk) if per_channel else g.reshape(b, h, n, c)
    beta = beta.reshape(b, h, n, c, 1)
    gamma = g.cumsum(3)  # γ_t: log decay from the chunk's start through token t
    causal = tp.tril(tp.ones(c, c, dtype=tp.bool, device=query.device))
    if per_channel:
        diff = gamma[..., :, None, :] - gamma[..., None, :, :]  # [.., C(t), C(j), Dk]
        decay = diff.masked_fill(~causal[..., None], float("-inf")).exp()
        kk = (k[..., :, None, :] * decay * k[..., None, :, :]).sum(-1)
        qk = (q[..., :, None, :] * decay * k[..., None, :, :]).sum(-1)
        from_start, to_end = gamma.exp(), (gamma[..., -1:, :] - gamma).exp()
        chunk_decay = gamma[..., -1, :, None].exp()  # [B, H, N, Dk, 1]: one factor per state row
    else:
        decay = (gamma[..., :, None] - gamma[..., None, :]).masked_fill(~causal, float("-inf")).exp()
        kk = (k @ k.transpose(-1, -2)) * decay
        qk = (q @ k.transpose(-1, -2)) * decay
        from_start, to_end = gamma.exp()[..., None], (gamma[..., -1:] - gamma).exp()[..., None]
        chunk_decay = gamma[..., -1, None, None].exp()  # [B, H, N, 1, 1]
    strict = tp.tril(tp.ones(c, c, dtype=tp.bool, device=query.device), -1)
    t_inv = _unit_lower_inverse((beta * kk).masked_fill(~strict, 0.0))
    w_v = t_inv @ (beta * v)
    w_k = t_inv @ (beta * from_start * k)
    q_start, k_end = q * from_start, (k * to_end).transpose(-1, -2)
    outs = []
    # Only this loop carries state from chunk to chunk (unbind: one autograd node per tensor, not per chunk).
    per_chunk = (x.unbind(2) for x in (w_v, w_k, q_start, qk, k_end, chunk_decay))
    for wv, wk, qs, qk_i, ke, cd in zip(*per_chunk, strict=True):
        u = wv - wk @ state
        outs.append(qs @ state + qk_i @ u)
        state = state * cd + ke @ u
    out = tp.stack(outs, 2).reshape(b, h, n * c, dv)[:, :, :t]  # [B, H, T, Dv]
    return out.transpose(1, 2).to(out_dtype), state


def chunk_delta_rule(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    chunk_size: int,
    initial_state: Tensor | None,
    output_final_state: bool,
    use_qk_l2norm: bool,
    op: str,
) -> tuple[Tensor, Tensor | None]:
    """Normalise and scale q, k, then run the scan through the native P10 op `delta_rule` (a fused kernel
    with its own backward; `_chunk_delta_rule_reference` is the composite it is tested against)."""
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size <= 0:
        raise ValueError(f"{op}: chunk_size must be a positive int, got {chunk_size!r}")
    out_dtype = query.dtype
    q, k = _prepare_query_key(query, key, use_qk_l2norm)
    value = value.to(q.dtype)  # the op takes q, k, v in one dtype (the scan's)
    out, state = tp.delta_rule(q, k, value, g, beta, initial_state=initial_state, chunk_size=chunk_size)
    return out.to(out_dtype), (state if output_final_state else None)


def short_conv_weight(conv_dim: int, kernel_size: int, device: Any = None, dtype: Any = None) -> Parameter:
    """The depthwise filter `[conv_dim, kernel_size]` of `short_conv`, initialised as PyTorch's `nn.Conv1d`.

    The reference layers' short convolution is an `nn.Conv1d` with `groups = conv_dim` (fla's
    ShortConvolution, Qwen3-Next's `conv1d`), whose weight `[conv_dim, 1, k]` PyTorch draws from
    kaiming_uniform(a=sqrt(5)) over fan_in = k: U(±1/sqrt(k)). Dropping the middle dim keeps fan_in = k.
    A zero filter would make q, k and v zero, so the mixer would add nothing and no parameter of it would
    get a gradient: a model of such layers could not learn.
    """
    weight = Parameter(tp.empty(conv_dim, kernel_size, device=device, dtype=dtype))
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    return weight


def short_conv(
    x: Tensor, weight: Tensor, cache: Any, layer_idx: int, owner: str
) -> tuple[Tensor, Tensor | None, bool]:
    """Causal depthwise convolution with SiLU over `x` `[B, T, conv_dim]`, through a `LinearStateCache`.

    `y_t = silu(Σ_j weight[:, j] · x_{t−(k−1)+j})` with zeros before the first input. With a cache, the inputs
    are first handed to `cache.update_conv_state`, which prepends the last `k−1` inputs of earlier calls, and
    only the last T outputs are kept. Returns `(y [B, T, conv_dim], initial_state, has_state)`, where
    `initial_state` is the layer's stored recurrent state when the layer has one (`has_state`).
    """
    t, k = int(x.shape[1]), int(weight.shape[1])
    x = x.transpose(1, 2)  # [B, conv_dim, T]
    has_state, initial_state = False, None
    if cache is not None:
        if not hasattr(cache, "update_conv_state"):
            raise TypeError(
                f"{owner}: past_key_values must be a LinearStateCache (it keeps conv and recurrent states), "
                f"got {type(cache).__name__}"
            )
        has_state = cache.has_previous_state(layer_idx)
        x = cache.update_conv_state(layer_idx, x, k)
        if has_state:
            initial_state = cache.recurrent_states.get(layer_idx)
    length = int(x.shape[2])
    padded = tp.pad(x, [k - 1, 0])
    # A depthwise kernel of k taps is k shifted multiply-adds: cheaper and clearer than a grouped conv1d.
    taps = weight[..., None].unbind(1)  # tap j multiplies the input j - (k - 1) steps back: [conv_dim, 1]
    y = padded.narrow(2, 0, length) * taps[0]
    for j in range(1, k):
        y = y + padded.narrow(2, j, length) * taps[j]
    y = y.narrow(2, length - t, t)
    return F.silu(y).transpose(1, 2), initial_state, has_state
