"""`KimiDeltaAttention` (Kimi Linear, Moonshot AI 2025): the gated delta rule with one forget gate per key
channel instead of one per head, and its rule functions `chunk_kimi_delta_rule` / `recurrent_kimi_delta_rule`.

Where it sits: a mixer inside `TransformerBlock`, keeping a `LinearStateCache` like `GatedDeltaNet`
(gated_delta.py, whose `GatedRMSNorm` it reuses). The recurrence, the chunked scan and the short convolution
are shared with it in _delta_rule.py.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import functional as F
from ..cache.linear_state import LinearStateCache
from ..parameter import Parameter
from ._delta_rule import (
    check_rule_inputs,
    chunk_delta_rule,
    compute_dtype,
    recurrent_delta_rule,
    short_conv,
    short_conv_weight,
)
from .gated_delta import GatedRMSNorm
from .linear import Linear
from .module import Module

__all__ = ["KimiDeltaAttention", "chunk_kimi_delta_rule", "recurrent_kimi_delta_rule"]


def recurrent_kimi_delta_rule(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Tensor | None = None,
    output_final_state: bool = False,
    use_qk_l2norm_in_kernel: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """The delta rule with a per-channel decay, one token at a time. Per head, state `S` `[Dk, Dv]`::

        S ← diag(exp(g_t)) · S;   u_t = β_t (v_t − Sᵀ k_t);   S ← S + k_t u_tᵀ;   o_t = Sᵀ q̂_t

    with `q̂ = q · Dk^-1/2` (q, k L2-normalised first when `use_qk_l2norm_in_kernel`): row `d` of the state,
    what key channel `d` addresses, forgets at its own rate `g_t[d]`. Shapes as in
    `recurrent_gated_delta_rule` except `g` `[B,T,H,Dk]`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.kimi_delta import recurrent_kimi_delta_rule
        >>> q = k = tp.randn(1, 5, 2, 4); v = tp.randn(1, 5, 2, 3)
        >>> out, state = recurrent_kimi_delta_rule(q, k, v, -tp.rand(1, 5, 2, 4), tp.rand(1, 5, 2),
        ...                                        output_final_state=True)
        >>> out.shape, state.shape
        (tensorplay.Size([1, 5, 2, 3]), tensorplay.Size([1, 2, 4, 3]))
    """
    check_rule_inputs("recurrent_kimi_delta_rule", query, key, value, g, beta, initial_state, True)
    return recurrent_delta_rule(
        query, key, value, g, beta, initial_state, output_final_state, use_qk_l2norm_in_kernel
    )


def chunk_kimi_delta_rule(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    chunk_size: int = 64,
    initial_state: Tensor | None = None,
    output_final_state: bool = False,
    use_qk_l2norm_in_kernel: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """`recurrent_kimi_delta_rule` over a whole sequence through the native op `tensorplay.delta_rule`
    (`chunk_size` sets its backward's checkpoint spacing). Any `T`. The chunked composite it is tested
    against is Note [Chunked delta rule] in _delta_rule.py, where the pairwise decays become
    `Σ_d q_td k_jd exp(γ_td − γ_jd)`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.kimi_delta import chunk_kimi_delta_rule, recurrent_kimi_delta_rule
        >>> q, k, v = tp.randn(1, 40, 2, 8), tp.randn(1, 40, 2, 8), tp.randn(1, 40, 2, 4)
        >>> g, beta = -tp.rand(1, 40, 2, 8), tp.rand(1, 40, 2)
        >>> a, _ = chunk_kimi_delta_rule(q, k, v, g, beta, chunk_size=16, use_qk_l2norm_in_kernel=True)
        >>> b, _ = recurrent_kimi_delta_rule(q, k, v, g, beta, use_qk_l2norm_in_kernel=True)
        >>> bool((a - b).abs().max() < 1e-5)
        True
    """
    check_rule_inputs("chunk_kimi_delta_rule", query, key, value, g, beta, initial_state, True)
    return chunk_delta_rule(
        query,
        key,
        value,
        g,
        beta,
        chunk_size,
        initial_state,
        output_final_state,
        use_qk_l2norm_in_kernel,
        "chunk_kimi_delta_rule",
    )


class KimiDeltaAttention(Module):
    """Kimi Delta Attention: a delta-rule mixer whose state forgets per key channel.

    For input `x` `[B, T, C]`, `H` heads of width `D` (`qkv_dim = H·D`)::

        q, k, v = silu(causal depthwise conv over [q_proj(x) | k_proj(x) | v_proj(x)])
        g = −exp(A_log) · softplus(f_b_proj(f_a_proj(x)) + dt_bias)       [B, T, H, D]   (float32)
        β = sigmoid(b_proj(x))                                            [B, T, H]
        o = kimi_delta_rule(l2norm(q), l2norm(k), v, g, β)
        out = o_proj(GatedRMSNorm(o, g_b_proj(g_a_proj(x))))               (per head, sigmoid gate)

    The forget gate and the output gate are low-rank (through `head_dim`). With a `LinearStateCache` the
    layer stores its last `conv_kernel_size − 1` conv inputs and the `[D, D]` state per head, exactly as
    `GatedDeltaNet` does. Initialisation follows fla's KDA layer: `Linear`'s for the projections,
    `nn.Conv1d`'s for `conv1d_weight` (see `short_conv_weight` in _delta_rule.py), `dt_bias` 0, `A_log`
    log U(1, 16), the norm's weight 1.

    Args:
        hidden_size: `C`. num_heads: `H`. head_dim: `D`. conv_kernel_size: taps of the short convolution.
        rms_norm_eps: of the output norm. chunk_size: of the chunked scan. layer_idx: the cache slot.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.kimi_delta import KimiDeltaAttention
        >>> mixer = KimiDeltaAttention(32, num_heads=4, head_dim=8)
        >>> mixer(tp.randn(2, 10, 32)).shape
        tensorplay.Size([2, 10, 32])
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        head_dim: int,
        conv_kernel_size: int = 4,
        rms_norm_eps: float = 1e-6,
        chunk_size: int = 64,
        layer_idx: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.conv_kernel_size = conv_kernel_size
        self.chunk_size = chunk_size
        self.layer_idx = layer_idx
        self.activation = "silu"
        self.qkv_dim = head_dim * num_heads
        self.conv_dim = 3 * self.qkv_dim
        factory = {"device": device, "dtype": dtype}
        self.q_proj = Linear(hidden_size, self.qkv_dim, bias=False, **factory)
        self.k_proj = Linear(hidden_size, self.qkv_dim, bias=False, **factory)
        self.v_proj = Linear(hidden_size, self.qkv_dim, bias=False, **factory)
        self.conv1d_weight = short_conv_weight(self.conv_dim, conv_kernel_size, **factory)
        self.conv1d_bias = None
        self.f_a_proj = Linear(hidden_size, head_dim, bias=False, **factory)
        self.f_b_proj = Linear(head_dim, self.qkv_dim, bias=False, **factory)
        # fla's KDA init: dt_bias = 0 and A = exp(A_log) ~ U(1, 16) per head, shaped to broadcast over
        # [B, T, H, D].
        self.dt_bias = Parameter(tp.zeros(self.qkv_dim, **factory))
        self.A_log = Parameter(tp.empty(1, 1, num_heads, 1, **factory).uniform_(1.0, 16.0).log())
        self.b_proj = Linear(hidden_size, num_heads, bias=False, **factory)
        self.g_a_proj = Linear(hidden_size, head_dim, bias=False, **factory)
        self.g_b_proj = Linear(head_dim, self.qkv_dim, bias=False, **factory)
        self.o_norm = GatedRMSNorm(head_dim, eps=rms_norm_eps, activation="sigmoid", **factory)
        self.o_proj = Linear(self.qkv_dim, hidden_size, bias=False, **factory)

    def forward(
        self,
        hidden_states: Tensor,
        past_key_values: LinearStateCache | None = None,
        position_ids: Tensor | None = None,
    ) -> Tensor:
        """`hidden_states` `[B, T, C]` → `[B, T, C]`; `position_ids` is accepted and ignored."""
        if hidden_states.dim() != 3 or int(hidden_states.shape[-1]) != self.hidden_size:
            raise ValueError(
                f"KimiDeltaAttention: expected hidden_states [B, T, {self.hidden_size}], "
                f"got {tuple(hidden_states.shape)}"
            )
        b, t, _ = (int(s) for s in hidden_states.shape)
        h, d = self.num_heads, self.head_dim
        x = hidden_states
        mixed = tp.cat([self.q_proj(x), self.k_proj(x), self.v_proj(x)], -1)
        mixed, initial_state, has_state = short_conv(
            mixed, self.conv1d_weight, past_key_values, self.layer_idx, "KimiDeltaAttention"
        )
        q, k, v = (y.reshape(b, t, h, d) for y in mixed.split([self.qkv_dim] * 3, -1))
        ct = compute_dtype(x)
        forget = (self.f_b_proj(self.f_a_proj(x)).to(ct) + self.dt_bias.to(ct)).reshape(b, t, h, d)
        g = -self.A_log.to(ct).exp() * F.softplus(forget)
        beta = tp.sigmoid(self.b_proj(x).to(ct))
        want_state = past_key_values is not None
        if has_state and t == 1:
            out, state = recurrent_kimi_delta_rule(
                q, k, v, g, beta, initial_state, want_state, use_qk_l2norm_in_kernel=True
            )
        else:
            out, state = chunk_kimi_delta_rule(
                q, k, v, g, beta, self.chunk_size, initial_state, want_state, use_qk_l2norm_in_kernel=True
            )
        if past_key_values is not None:
            past_key_values.update_recurrent_state(self.layer_idx, state)
        gate = self.g_b_proj(self.g_a_proj(x)).reshape(b, t, h, d)
        return self.o_proj(self.o_norm(out, gate).reshape(b, t, self.qkv_dim))

    def extra_repr(self) -> str:
        return (
            f"hidden_size={self.hidden_size}, num_heads={self.num_heads}, head_dim={self.head_dim}, "
            f"conv_kernel_size={self.conv_kernel_size}, layer_idx={self.layer_idx}"
        )
