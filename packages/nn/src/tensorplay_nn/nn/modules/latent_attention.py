"""`MultiheadLatentAttention` (MLA, DeepSeek-V2): causal self-attention whose cache holds one low-rank latent
and one shared rotary key per token instead of per-head keys and values.

Where it sits: a token mixer inside `TransformerBlock` (modules/modern_block.py), beside
`GroupedQueryAttention`. It files the normed latent and the rotated shared key as an ordinary key/value pair
in any `Cache` (nn/cache/) under `layer_idx`, and expands them to per-head keys and values only after the
cache read — or, for decoding, never (Note [Absorbed MLA]). docs/mixers/mla.md derives the maths.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from ..cache import Cache
from .linear import Linear
from .module import Module
from .normalization import RMSNorm
from .rotary import RotaryEmbedding, apply_rotary_emb

__all__ = ["MultiheadLatentAttention"]

# Note [Absorbed MLA]
#   kv_b_proj's weight W [H·(n+v), r] holds, per head h, W_uk[h] [n, r] (key half) and W_uv[h] [v, r]
#   (value half). With the cached latents c_j [r] the expanded keys and values are k_j = W_uk c_j and
#   v_j = W_uv c_j, so
#       q_nope · k_j = q_nope · (W_uk c_j) = (W_ukᵀ q_nope) · c_j
#       Σ_j p_j v_j  = W_uv (Σ_j p_j c_j)
#   The absorbed form turns each query into the latent space once (q_lat = W_ukᵀ q_nope, [B,H,T,r]), attends
#   with keys [c_j | k_rope_j] and values c_j (one key/value head shared by all query heads), then maps the
#   attended latent through W_uv. Its cost is H·T·S·(2r + rope) plus H·T·r·(n+v); the expanded form pays
#   S·r·H·(n+v) to expand every cached position plus H·T·S·(n + rope + v). For a decode step (T = 1) the
#   expansion dominates, so decoding never materialises per-head keys and values for all S positions; for a
#   long prefill the expanded form is usually cheaper. Both are the same function up to rounding, masks
#   included, and the tests hold them to 1e-5.


class MultiheadLatentAttention(Module):
    """Multi-head latent attention: keys and values come from a shared low-rank latent (DeepSeek-V2's MLA).

    For input `x` `[B, T, C]`, `H` heads, key width `n + p` (`qk_nope_head_dim` + `qk_rope_head_dim`), value
    width `v` and latent rank `r` (`kv_lora_rank`)::

        q = q_proj(x)  or  q_b_proj(q_a_layernorm(q_a_proj(x)))    [B, H, T, n + p], per head [nope | rope]
        c, k_rope = split(kv_a_proj_with_mqa(x), [r, p])           c [B, 1, T, r], k_rope [B, 1, T, p]
        c = kv_a_layernorm(c);  q_rope, k_rope = rope(q_rope), rope(k_rope)
        c, k_rope = cache.update(c, k_rope, layer_idx)             (if a cache is given: [B, 1, S, ·])
        k_nope, v = split(kv_b_proj(c), [n, v]) per head           [B, H, S, n], [B, H, S, v]
        k = [k_nope | k_rope broadcast to every head]
        o = softmax(q kᵀ · (n + p)^-1/2 + mask) v;   out = o_proj(merge(o)) [B, T, C]

    The cache stores `r + p` numbers per token and layer, against `2·H·D` for multi-head attention. With
    `v == n + p` attention is the fused op, causal iff the query and key lengths agree (as
    `GroupedQueryAttention`); otherwise the mask is bottom-right aligned (query `i` sits at absolute position
    `S - T + i`) and there is no dropout. Decoding uses the absorbed form (Note [Absorbed MLA]): `kv_b_proj`'s
    key half moves into the query and its value half after the attention, so keys and values are never
    expanded per head; `absorb` (`None`: pick the cheaper form from `T` and `S`; `True`/`False`: force it)
    chooses.

    Args:
        embed_dim: model width `C` (divisible by `num_heads`). num_heads: `H`. kv_lora_rank: `r`.
        qk_nope_head_dim: `n`, the query/key channels without position. qk_rope_head_dim: `p` (even), the
        rotated ones. v_head_dim: `v` (default `n`). q_lora_rank: rank of the low-rank query path (`None`:
        one `q_proj`). dropout: on the attention weights, in training, fused path only. bias: of `q_proj` /
        `q_a_proj`, `kv_a_proj_with_mqa` and `o_proj`. rope_base, rope_interleaved: of the `RotaryEmbedding`.
        layer_idx: the cache slot this layer reads and writes.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import DynamicCache
        >>> mla = tp.nn.MultiheadLatentAttention(64, 4, kv_lora_rank=16, qk_nope_head_dim=16,
        ...                                      qk_rope_head_dim=8)
        >>> cache = DynamicCache()
        >>> mla(tp.randn(2, 5, 64), past_key_values=cache).shape
        tensorplay.Size([2, 5, 64])
        >>> tuple(cache.key_cache[0].shape), tuple(cache.value_cache[0].shape)
        ((2, 1, 5, 16), (2, 1, 5, 8))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        kv_lora_rank: int,
        qk_nope_head_dim: int,
        qk_rope_head_dim: int,
        v_head_dim: int | None = None,
        q_lora_rank: int | None = None,
        dropout: float = 0.0,
        bias: bool = False,
        rope_base: float = 10000.0,
        rope_interleaved: bool = False,
        layer_idx: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_heads <= 0:
            raise ValueError(f"MultiheadLatentAttention: num_heads must be positive, got {num_heads}")
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadLatentAttention: embed_dim ({embed_dim}) must be divisible by "
                f"num_heads ({num_heads})"
            )
        if qk_rope_head_dim <= 0 or qk_rope_head_dim % 2:
            raise ValueError(
                "MultiheadLatentAttention: qk_rope_head_dim must be a positive even number, "
                f"got {qk_rope_head_dim}"
            )
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.kv_lora_rank = kv_lora_rank
        self.qk_nope_head_dim = qk_nope_head_dim
        self.qk_rope_head_dim = qk_rope_head_dim
        self.v_head_dim = v_head_dim if v_head_dim is not None else qk_nope_head_dim
        self.q_lora_rank = q_lora_rank
        self.dropout = dropout
        self.layer_idx = layer_idx
        self.qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
        self.scaling = self.qk_head_dim**-0.5
        self.absorb: bool | None = None
        factory = {"device": device, "dtype": dtype}
        q_width = num_heads * self.qk_head_dim
        if q_lora_rank is None:
            self.q_proj = Linear(embed_dim, q_width, bias=bias, **factory)
            self.q_a_proj = self.q_a_layernorm = self.q_b_proj = None
        else:
            self.q_proj = None
            self.q_a_proj = Linear(embed_dim, q_lora_rank, bias=bias, **factory)
            self.q_a_layernorm = RMSNorm(q_lora_rank, **factory)
            self.q_b_proj = Linear(q_lora_rank, q_width, bias=False, **factory)
        self.kv_a_proj_with_mqa = Linear(embed_dim, kv_lora_rank + qk_rope_head_dim, bias=bias, **factory)
        self.kv_a_layernorm = RMSNorm(kv_lora_rank, **factory)
        self.kv_b_proj = Linear(
            kv_lora_rank, num_heads * (qk_nope_head_dim + self.v_head_dim), bias=False, **factory
        )
        self.o_proj = Linear(num_heads * self.v_head_dim, embed_dim, bias=bias, **factory)
        self.rope = RotaryEmbedding(
            qk_rope_head_dim, base=rope_base, interleaved=rope_interleaved, device=device
        )

    def forward(
        self, hidden_states: Tensor, position_ids: Tensor | None = None, past_key_values: Cache | None = None
    ) -> Tensor:
        if hidden_states.dim() != 3 or int(hidden_states.shape[-1]) != self.embed_dim:
            raise ValueError(
                f"MultiheadLatentAttention: expected hidden_states [B, T, {self.embed_dim}], "
                f"got {tuple(hidden_states.shape)}"
            )
        b, t, _ = (int(s) for s in hidden_states.shape)
        h, n, p, r = self.num_heads, self.qk_nope_head_dim, self.qk_rope_head_dim, self.kv_lora_rank
        if self.q_proj is not None:
            q = self.q_proj(hidden_states)
        else:
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)))
        q = q.view(b, t, h, n + p).transpose(1, 2)
        q_nope, q_rope = q[..., :n], q[..., n:]
        compressed = self.kv_a_proj_with_mqa(hidden_states).unsqueeze(1)  # [B, 1, T, r + p]
        latent = self.kv_a_layernorm(compressed[..., :r])
        k_rope = compressed[..., r:]
        if position_ids is None:
            offset = past_key_values.get_seq_length(self.layer_idx) if past_key_values is not None else 0
            position_ids = tp.arange(offset, offset + t, dtype=tp.int64, device=hidden_states.device).expand(
                b, t
            )
        cos, sin = self.rope(q, position_ids)
        q_rope, k_rope = apply_rotary_emb(q_rope, k_rope, cos, sin, interleaved=self.rope.interleaved)
        if past_key_values is not None:
            latent, k_rope = past_key_values.update(latent, k_rope, self.layer_idx)
            # A quantizing cache hands back float32; attend in the module's own dtype.
            latent, k_rope = latent.to(q.dtype), k_rope.to(q.dtype)
        s = int(latent.shape[2])
        absorb = self.absorb if self.absorb is not None else self._absorbed_is_cheaper(t, s)
        attend = self._attend_absorbed if absorb else self._attend_expanded
        out = attend(q_nope, q_rope, latent, k_rope)  # [B, H, T, v]
        return self.o_proj(out.transpose(1, 2).reshape(b, t, h * self.v_head_dim))

    def _absorbed_is_cheaper(self, t: int, s: int) -> bool:
        """Multiply-adds of the two forms for `t` queries over `s` keys (Note [Absorbed MLA])."""
        h, n, p, r, v = (
            self.num_heads,
            self.qk_nope_head_dim,
            self.qk_rope_head_dim,
            self.kv_lora_rank,
            self.v_head_dim,
        )
        expanded = s * r * h * (n + v) + h * t * s * (n + p + v)
        absorbed = h * t * r * (n + v) + h * t * s * (2 * r + p)
        return absorbed < expanded

    def _mask(self, t: int, s: int, device) -> tuple[Tensor | None, bool]:
        """The attention mask for `t` queries over `s` keys, as `(attn_mask, is_causal)`.

        The fused path (`v == n + p`) is causal iff `t == s`, like `GroupedQueryAttention`; the other path
        masks by absolute position: query `i` (at `s - t + i`) sees keys `j <= s - t + i`. For `t == s` both
        are the plain causal mask, which the attention op applies without materialising it.
        """
        if t <= 1:
            return None, False
        if t == s:
            return None, True
        if self.v_head_dim == self.qk_head_dim:
            return None, False
        keys = tp.arange(s, dtype=tp.int64, device=device)
        queries = tp.arange(s - t, s, dtype=tp.int64, device=device)
        return keys[None, :] <= queries[:, None], False

    def _dropout_p(self) -> float:
        # The contract gives dropout to the fused path only.
        fused = self.v_head_dim == self.qk_head_dim
        return self.dropout if (fused and self.training) else 0.0

    def _attend_expanded(self, q_nope: Tensor, q_rope: Tensor, latent: Tensor, k_rope: Tensor) -> Tensor:
        """Expand the latents to per-head keys `[k_nope | k_rope]` and values, then attend."""
        b, h, t, n = (int(d) for d in q_nope.shape)
        s = int(latent.shape[2])
        kv = self.kv_b_proj(latent.squeeze(1)).view(b, s, h, n + self.v_head_dim).transpose(1, 2)
        k = tp.cat([kv[..., :n], k_rope.expand(b, h, s, self.qk_rope_head_dim)], -1)
        value = kv[..., n:]
        q = tp.cat([q_nope, q_rope], -1)
        mask, causal = self._mask(t, s, q.device)
        return tp.scaled_dot_product_attention(
            q, k, value, attn_mask=mask, dropout_p=self._dropout_p(), is_causal=causal, scale=self.scaling
        )

    def _attend_absorbed(self, q_nope: Tensor, q_rope: Tensor, latent: Tensor, k_rope: Tensor) -> Tensor:
        """Attend in the latent space: queries through `W_ukᵀ`, the attended latent through `W_uv`."""
        h, t, n = int(q_nope.shape[1]), int(q_nope.shape[2]), self.qk_nope_head_dim
        s = int(latent.shape[2])
        w = self.kv_b_proj.weight.view(h, n + self.v_head_dim, self.kv_lora_rank)
        w_uk, w_uv = w[:, :n], w[:, n:]  # [H, n, r], [H, v, r]
        q = tp.cat([q_nope @ w_uk, q_rope], -1)  # [B, H, T, r + p]
        k = tp.cat([latent, k_rope], -1)  # [B, 1, S, r + p]: one key head shared by every query head
        mask, causal = self._mask(t, s, q.device)
        if mask is None and not causal:
            # Every head reads the same keys and values and no row is masked, so the H·T query rows go in as
            # one head: the attention op then does one [H·T, S] product instead of H one-row ones (a decode
            # step runs ~6x faster so).
            b = int(q.shape[0])
            rows = q.reshape(b, 1, h * t, int(q.shape[-1]))
            ctx = tp.scaled_dot_product_attention(
                rows, k, latent, dropout_p=self._dropout_p(), scale=self.scaling
            ).view(b, h, t, self.kv_lora_rank)
        else:
            ctx = tp.scaled_dot_product_attention(
                q,
                k,
                latent,
                attn_mask=mask,
                dropout_p=self._dropout_p(),
                is_causal=causal,
                scale=self.scaling,
                enable_gqa=h != 1,
            )
        return ctx @ w_uv.transpose(-1, -2)  # [B, H, T, r] @ [H, r, v]

    def extra_repr(self) -> str:
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, kv_lora_rank={self.kv_lora_rank}, "
            f"qk_nope_head_dim={self.qk_nope_head_dim}, qk_rope_head_dim={self.qk_rope_head_dim}, "
            f"v_head_dim={self.v_head_dim}, q_lora_rank={self.q_lora_rank}, layer_idx={self.layer_idx}"
        )
