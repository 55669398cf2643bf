"""`GatedDeltaNet` (Yang, Kautz & Hatamizadeh 2024; the linear mixer of Qwen3-Next): a token mixer whose
memory is one `[Dk, Dv]` matrix per head, updated by the gated delta rule, plus the rule functions, `l2norm`
and `GatedRMSNorm`.

Where it sits: a mixer inside `TransformerBlock` (modules/modern_block.py), like `GroupedQueryAttention`,
but it keeps a `LinearStateCache` (nn/cache/linear_state.py) instead of keys and values. The maths shared with
`KimiDeltaAttention` (the recurrence, the chunked scan, the short convolution) is in _delta_rule.py.
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
from ._delta_rule import (
    l2norm as l2norm,  # programs import it from here (kept out of __all__ and tensorplay.nn)
)
from .linear import Linear
from .module import Module

__all__ = ["GatedDeltaNet", "GatedRMSNorm", "chunk_gated_delta_rule", "recurrent_gated_delta_rule"]


def recurrent_gated_delta_rule(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Tensor | None = None,
    output_final_state: bool = False,
    use_qk_l2norm_in_kernel: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """The gated delta rule, one token at a time. Per head, with state `S` `[Dk, Dv]` (float32)::

        S ← exp(g_t) · S;   u_t = β_t (v_t − Sᵀ k_t);   S ← S + k_t u_tᵀ;   o_t = Sᵀ q̂_t,   q̂ = q · Dk^-1/2

    (q and k L2-normalised first when `use_qk_l2norm_in_kernel`). `query`, `key` `[B,T,H,Dk]`, `value`
    `[B,T,H,Dv]`, `g` (log decay, ≤ 0) and `beta` `[B,T,H]`, `initial_state` `[B,H,Dk,Dv]`. Returns the output
    `[B,T,H,Dv]` in the query's dtype and, if `output_final_state`, the final state (float32; float64 for
    float64 inputs), else `None`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.gated_delta import recurrent_gated_delta_rule
        >>> q = k = tp.randn(1, 5, 2, 4); v = tp.randn(1, 5, 2, 3)
        >>> out, state = recurrent_gated_delta_rule(q, k, v, -tp.rand(1, 5, 2), tp.rand(1, 5, 2),
        ...                                         output_final_state=True)
        >>> out.shape, state.shape
        (tensorplay.Size([1, 5, 2, 3]), tensorplay.Size([1, 2, 4, 3]))
    """
    check_rule_inputs("recurrent_gated_delta_rule", query, key, value, g, beta, initial_state, False)
    return recurrent_delta_rule(
        query, key, value, g, beta, initial_state, output_final_state, use_qk_l2norm_in_kernel
    )


def chunk_gated_delta_rule(
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
    """The gated delta rule of `recurrent_gated_delta_rule` over a whole sequence, for training and prefill.

    Same arguments and results as the recurrent form, which it matches to float rounding, for any `T`. It runs
    the native op `tensorplay.delta_rule` (a fused scan; `chunk_size` sets how often its backward keeps a
    state checkpoint). The chunked algorithm it is tested against — tokens of a chunk solved together in the
    WY / UT-transform form, the state passed from chunk to chunk — is Note [Chunked delta rule] in
    _delta_rule.py.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.gated_delta import chunk_gated_delta_rule, recurrent_gated_delta_rule
        >>> q, k, v = tp.randn(1, 50, 2, 8), tp.randn(1, 50, 2, 8), tp.randn(1, 50, 2, 4)
        >>> g, beta = -tp.rand(1, 50, 2), tp.rand(1, 50, 2)
        >>> a, _ = chunk_gated_delta_rule(q, k, v, g, beta, chunk_size=16, use_qk_l2norm_in_kernel=True)
        >>> b, _ = recurrent_gated_delta_rule(q, k, v, g, beta, use_qk_l2norm_in_kernel=True)
        >>> bool((a - b).abs().max() < 1e-5)
        True
    """
    check_rule_inputs("chunk_gated_delta_rule", query, key, value, g, beta, initial_state, False)
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
        "chunk_gated_delta_rule",
    )


class GatedRMSNorm(Module):
    """RMS normalisation followed by a gate: `y = x / sqrt(mean(x²) + eps) · weight · act(gate)`.

    Normalises over the last dimension in float32 (float64 for float64 input) and returns `x`'s dtype;
    `act` is SiLU (`activation="silu"`, GatedDeltaNet) or the logistic sigmoid (`"sigmoid"`, Kimi).
    `weight` `[dim]` starts at ones.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.gated_delta import GatedRMSNorm
        >>> norm = GatedRMSNorm(8)
        >>> norm(tp.randn(2, 3, 8), tp.randn(2, 3, 8)).shape
        tensorplay.Size([2, 3, 8])
    """

    def __init__(
        self, dim: int, eps: float = 1e-6, activation: str = "silu", device=None, dtype=None
    ) -> None:
        super().__init__()
        if activation not in ("silu", "sigmoid"):
            raise ValueError(f"GatedRMSNorm: activation must be 'silu' or 'sigmoid', got {activation!r}")
        self.dim = dim
        self.eps = eps
        self.activation = activation
        self.weight = Parameter(tp.ones(dim, device=device, dtype=dtype))

    def forward(self, x: Tensor, gate: Tensor) -> Tensor:
        ct = compute_dtype(x)
        gate = gate.to(ct)
        act = F.silu(gate) if self.activation == "silu" else tp.sigmoid(gate)
        y = F.rms_norm(x.to(ct), (self.dim,), None, self.eps) * self.weight.to(ct) * act
        return y.to(x.dtype)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}, activation={self.activation!r}"


class GatedDeltaNet(Module):
    """A token mixer with a fixed-size memory per head, written by the gated delta rule.

    For input `x` `[B, T, C]`, with `Hk` key heads, `Hv` value heads (`r = Hv / Hk` per key head)::

        q, k, v, z = in_proj_qkvz(x)          grouped per key head: [q (Dk) | k (Dk) | v (r·Dv) | z (r·Dv)]
        b, a       = in_proj_ba(x)            grouped per key head: [b (r) | a (r)]
        q, k, v    = silu(causal depthwise conv over [q | k | v], kernel conv_kernel_size)
        β = sigmoid(b),  g = −exp(A_log) · softplus(a + dt_bias)          (per value head, float32)
        o = delta_rule(l2norm(q), l2norm(k), v, g, β)                       (q, k repeated r× per value head)
        out = out_proj(GatedRMSNorm(o, z))                                  (per head, SiLU gate)

    The rule (see `recurrent_gated_delta_rule`) keeps `S` `[Dk, Dv]` per value head: each token decays it by
    `exp(g_t)` and writes `v_t` under key `k_t` with strength `β_t`, replacing what `k_t` read before. With a
    `LinearStateCache` the layer stores its last `conv_kernel_size − 1` conv inputs and `S`, so decoding costs
    the same at every position. A single token after a stored state takes the recurrent path, anything else
    the chunked one.

    Initialisation follows the reference layers: the projections are `Linear`'s, `conv1d_weight` is
    `nn.Conv1d`'s (U(±1/sqrt(conv_kernel_size)), see `short_conv_weight`), `dt_bias` is 1, `A_log` is
    log U(0.01, 16) and the norm's weight 1.

    Args:
        hidden_size: `C`. num_v_heads: `Hv`. num_k_heads: `Hk` (must divide `Hv`). head_k_dim: `Dk`.
        head_v_dim: `Dv` (default `Dk`). conv_kernel_size: taps of the short convolution. rms_norm_eps: of
        the output norm. chunk_size: tokens per chunk of the chunked scan. layer_idx: the cache slot.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.modules.gated_delta import GatedDeltaNet
        >>> mixer = GatedDeltaNet(32, num_v_heads=4, num_k_heads=2, head_k_dim=8)
        >>> mixer(tp.randn(2, 10, 32)).shape
        tensorplay.Size([2, 10, 32])
    """

    def __init__(
        self,
        hidden_size: int,
        num_v_heads: int,
        num_k_heads: int,
        head_k_dim: int,
        head_v_dim: int | None = None,
        conv_kernel_size: int = 4,
        rms_norm_eps: float = 1e-6,
        chunk_size: int = 64,
        layer_idx: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_k_heads <= 0 or num_v_heads % num_k_heads:
            raise ValueError(
                f"GatedDeltaNet: num_v_heads ({num_v_heads}) must be divisible by num_k_heads ({num_k_heads})"
            )
        self.hidden_size = hidden_size
        self.num_v_heads = num_v_heads
        self.num_k_heads = num_k_heads
        self.head_k_dim = head_k_dim
        self.head_v_dim = head_v_dim if head_v_dim is not None else head_k_dim
        self.conv_kernel_size = conv_kernel_size
        self.chunk_size = chunk_size
        self.layer_idx = layer_idx
        self.activation = "silu"
        self.key_dim = self.head_k_dim * num_k_heads
        self.value_dim = self.head_v_dim * num_v_heads
        self.conv_dim = 2 * self.key_dim + self.value_dim
        factory = {"device": device, "dtype": dtype}
        self.in_proj_qkvz = Linear(hidden_size, 2 * self.key_dim + 2 * self.value_dim, bias=False, **factory)
        self.in_proj_ba = Linear(hidden_size, 2 * num_v_heads, bias=False, **factory)
        self.conv1d_weight = short_conv_weight(self.conv_dim, conv_kernel_size, **factory)
        self.conv1d_bias = None
        # Qwen3-Next's init, whose fused layout this is: dt_bias = 1 and A = exp(A_log) ~ U(0, 16), per-head
        # decay rates from slow to fast; the lower end is 0.01 here because log(0) would be -inf.
        self.dt_bias = Parameter(tp.ones(num_v_heads, **factory))
        self.A_log = Parameter(tp.empty(num_v_heads, **factory).uniform_(0.01, 16.0).log())
        self.norm = GatedRMSNorm(self.head_v_dim, eps=rms_norm_eps, activation="silu", **factory)
        self.out_proj = Linear(self.value_dim, hidden_size, bias=False, **factory)

    def forward(
        self,
        hidden_states: Tensor,
        past_key_values: LinearStateCache | None = None,
        position_ids: Tensor | None = None,
    ) -> Tensor:
        """`hidden_states` `[B, T, C]` → `[B, T, C]`; `position_ids` is accepted and ignored."""
        if hidden_states.dim() != 3 or int(hidden_states.shape[-1]) != self.hidden_size:
            raise ValueError(
                f"GatedDeltaNet: expected hidden_states [B, T, {self.hidden_size}], "
                f"got {tuple(hidden_states.shape)}"
            )
        b, t, _ = (int(s) for s in hidden_states.shape)
        hk, hv, dk, dv = self.num_k_heads, self.num_v_heads, self.head_k_dim, self.head_v_dim
        r = hv // hk
        qkvz = self.in_proj_qkvz(hidden_states).view(b, t, hk, 2 * dk + 2 * r * dv)
        q, k, v, z = qkvz.split([dk, dk, r * dv, r * dv], 3)
        b_gate, a = self.in_proj_ba(hidden_states).view(b, t, hk, 2 * r).split([r, r], 3)
        mixed = tp.cat(
            [q.reshape(b, t, self.key_dim), k.reshape(b, t, self.key_dim), v.reshape(b, t, self.value_dim)],
            -1,
        )
        mixed, initial_state, has_state = short_conv(
            mixed, self.conv1d_weight, past_key_values, self.layer_idx, "GatedDeltaNet"
        )
        q, k, v = mixed.split([self.key_dim, self.key_dim, self.value_dim], -1)
        q, k, v = q.reshape(b, t, hk, dk), k.reshape(b, t, hk, dk), v.reshape(b, t, hv, dv)
        if r > 1:  # value heads of one group read the same query and key
            q, k = q.repeat_interleave(r, 2), k.repeat_interleave(r, 2)
        ct = compute_dtype(hidden_states)
        beta = tp.sigmoid(b_gate.reshape(b, t, hv))
        g = -self.A_log.to(ct).exp() * F.softplus(a.reshape(b, t, hv).to(ct) + self.dt_bias.to(ct))
        want_state = past_key_values is not None
        if has_state and t == 1:
            out, state = recurrent_gated_delta_rule(
                q, k, v, g, beta, initial_state, want_state, use_qk_l2norm_in_kernel=True
            )
        else:
            out, state = chunk_gated_delta_rule(
                q, k, v, g, beta, self.chunk_size, initial_state, want_state, use_qk_l2norm_in_kernel=True
            )
        if past_key_values is not None:
            past_key_values.update_recurrent_state(self.layer_idx, state)
        out = self.norm(out, z.reshape(b, t, hv, dv)).reshape(b, t, self.value_dim)
        return self.out_proj(out)

    def extra_repr(self) -> str:
        return (
            f"hidden_size={self.hidden_size}, num_v_heads={self.num_v_heads}, "
            f"num_k_heads={self.num_k_heads}, head_k_dim={self.head_k_dim}, head_v_dim={self.head_v_dim}, "
            f"conv_kernel_size={self.conv_kernel_size}, layer_idx={self.layer_idx}"
        )
