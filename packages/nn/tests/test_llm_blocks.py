"""Tests of the LLM blocks: GroupedQueryAttention (modules/causal_attention.py), SwiGLUMLP and
TransformerBlock (modules/modern_block.py), against float64 NumPy references computed from the modules'
weights; causality; prefill + cached decode against full recompute for every cache; gradients; and the
README's TinyLM."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn.cache import DynamicCache, SlidingWindowCache, StaticCache
from tensorplay.nn.modules.causal_attention import GroupedQueryAttention
from tensorplay.nn.modules.modern_block import SwiGLUMLP, TransformerBlock


def _w(linear) -> np.ndarray:
    return linear.weight.detach().numpy().astype(np.float64)


def _np_rms(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * weight


def _np_rope(x: np.ndarray, pos: np.ndarray, base: float = 10000.0) -> np.ndarray:
    d = x.shape[-1]
    ang = pos[:, None, :, None] * base ** (-np.arange(0, d, 2) / d)  # [B, 1, T, D/2]
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([x1 * np.cos(ang) - x2 * np.sin(ang), x2 * np.cos(ang) + x1 * np.sin(ang)], -1)


def _np_gqa(m: GroupedQueryAttention, x: np.ndarray, pos: np.ndarray | None = None) -> np.ndarray:
    """Causal grouped-query attention in float64, one query head at a time."""
    b, t, _ = x.shape
    h, kv, d = m.num_heads, m.num_kv_heads, m.head_dim
    pos = np.tile(np.arange(t), (b, 1)) if pos is None else pos
    q = (x @ _w(m.q_proj).T).reshape(b, t, h, d).transpose(0, 2, 1, 3)
    k = (x @ _w(m.k_proj).T).reshape(b, t, kv, d).transpose(0, 2, 1, 3)
    v = (x @ _w(m.v_proj).T).reshape(b, t, kv, d).transpose(0, 2, 1, 3)
    if m.qk_norm:
        q = _np_rms(q, m.q_norm.weight.detach().numpy(), m.q_norm.eps)
        k = _np_rms(k, m.k_norm.weight.detach().numpy(), m.k_norm.eps)
    q, k = _np_rope(q, pos), _np_rope(k, pos)
    out = np.empty((b, h, t, d))
    mask = np.triu(np.full((t, t), -np.inf), 1)
    for head in range(h):
        g = head // (h // kv)
        s = q[:, head] @ k[:, g].transpose(0, 2, 1) / np.sqrt(d) + mask
        p = np.exp(s - s.max(-1, keepdims=True))
        out[:, head] = (p / p.sum(-1, keepdims=True)) @ v[:, g]
    return out.transpose(0, 2, 1, 3).reshape(b, t, h * d) @ _w(m.o_proj).T


def _x(b: int, t: int, c: int, seed: int = 0, dtype=tp.float32) -> tp.Tensor:
    return tp.tensor(np.random.default_rng(seed).standard_normal((b, t, c)), dtype=dtype)


@pytest.mark.parametrize("heads,kv_heads,qk_norm", [(4, 4, False), (4, 2, False), (4, 1, True), (8, 2, True)])
def test_gqa_matches_numpy(heads: int, kv_heads: int, qk_norm: bool) -> None:
    tp.manual_seed(0)
    m = GroupedQueryAttention(32, heads, kv_heads, qk_norm=qk_norm)
    if qk_norm:  # non-trivial norm weights, so a missing norm would show
        with tp.no_grad():
            m.q_norm.weight.copy_(tp.linspace(0.5, 1.5, m.head_dim))
            m.k_norm.weight.copy_(tp.linspace(1.5, 0.5, m.head_dim))
    x = _x(2, 6, 32)
    np.testing.assert_allclose(m(x).detach().numpy(), _np_gqa(m, x.numpy().astype(np.float64)), atol=2e-5)


def test_gqa_attributes_and_defaults() -> None:
    m = GroupedQueryAttention(48, 6, layer_idx=3)
    assert (m.embed_dim, m.num_heads, m.num_kv_heads, m.head_dim, m.layer_idx) == (48, 6, 6, 8, 3)
    assert m.scaling == 8**-0.5 and m.qk_norm is False and m.q_norm is None and m.k_norm is None
    assert isinstance(m.rope, nn.RotaryEmbedding) and m.rope.dim == 8
    assert m.q_proj.bias is None
    m = GroupedQueryAttention(
        48, 6, 2, head_dim=16, bias=True, qk_norm=True, rms_norm_eps=1e-5, rope_base=500.0
    )
    assert tuple(m.q_proj.weight.shape) == (96, 48) and tuple(m.k_proj.weight.shape) == (32, 48)
    assert tuple(m.o_proj.weight.shape) == (48, 96) and m.v_proj.bias is not None
    assert isinstance(m.q_norm, nn.RMSNorm) and m.q_norm.eps == 1e-5 and m.rope.base == 500.0
    assert m(_x(1, 3, 48)).shape == (1, 3, 48)


def test_gqa_value_errors() -> None:
    with pytest.raises(ValueError, match=r"embed_dim \(30\) must be divisible by num_heads \(4\)"):
        GroupedQueryAttention(30, 4)
    with pytest.raises(ValueError, match=r"embed_dim \(30\) must be divisible by num_heads \(4\)"):
        GroupedQueryAttention(30, 4, head_dim=8)  # checked even when head_dim is given
    with pytest.raises(ValueError, match=r"num_heads \(6\) must be divisible by num_kv_heads \(4\)"):
        GroupedQueryAttention(24, 6, 4)
    with pytest.raises(ValueError, match=r"expected hidden_states \[B, T, 16\], got \(2, 3, 8\)"):
        GroupedQueryAttention(16, 2)(tp.zeros(2, 3, 8))


def test_gqa_is_causal() -> None:
    tp.manual_seed(1)
    m = GroupedQueryAttention(16, 4, 2)
    x = _x(1, 7, 16, seed=2)
    y = m(x).detach().numpy()
    x2 = x.clone()
    x2[:, 4:] = 100.0  # change the future of position 3
    y2 = m(x2).detach().numpy()
    np.testing.assert_allclose(y2[:, :4], y[:, :4], atol=1e-6)
    assert np.abs(y2[:, 4:] - y[:, 4:]).max() > 1e-2


@pytest.mark.parametrize(
    "make_cache", [DynamicCache, lambda: StaticCache(16), lambda: SlidingWindowCache(16)], ids=str
)
@pytest.mark.parametrize("qk_norm", [False, True])
def test_prefill_then_cached_decode_equals_full_recompute(make_cache, qk_norm: bool) -> None:
    tp.manual_seed(3)
    m = GroupedQueryAttention(32, 8, 2, qk_norm=qk_norm, layer_idx=1)
    x = _x(2, 9, 32, seed=4)
    full = m(x).detach().numpy()
    cache = make_cache()
    with tp.no_grad():
        parts = [m(x[:, :5], past_key_values=cache)]
        parts += [m(x[:, i : i + 1], past_key_values=cache) for i in range(5, 9)]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, atol=1e-5)
    assert cache.get_seq_length(1) == 9 and cache.get_seq_length(0) == 0
    key = cache.key_cache[1]
    assert key.shape[:2] == (2, 2) and key.shape[3] == 4


def test_sliding_window_decode_attends_to_the_window_only() -> None:
    tp.manual_seed(5)
    m = GroupedQueryAttention(16, 4, 2)
    x = _x(1, 8, 16, seed=6)
    cache = SlidingWindowCache(3)
    with tp.no_grad():
        m(x[:, :6], past_key_values=cache)
        last = m(x[:, 6:7], past_key_values=cache).numpy()
    # Reference: position 6 attends to positions 4, 5, 6 only (the window after the write).
    xs = x.numpy().astype(np.float64)
    pos = np.array([[4, 5, 6]])
    ref = _np_gqa(m, xs[:, 4:7], pos)[:, -1:]
    np.testing.assert_allclose(last, ref, atol=2e-5)


def test_explicit_position_ids_shift_rope() -> None:
    tp.manual_seed(7)
    m = GroupedQueryAttention(16, 2)
    x = _x(2, 4, 16, seed=8)
    pos = np.array([[10, 11, 12, 13], [3, 4, 5, 6]])
    got = m(x, position_ids=tp.tensor(pos)).detach().numpy()
    np.testing.assert_allclose(got, _np_gqa(m, x.numpy().astype(np.float64), pos), atol=2e-5)


def test_gqa_gradients_are_finite_and_gradcheck() -> None:
    tp.manual_seed(9)
    m = GroupedQueryAttention(16, 4, 2, qk_norm=True)
    x = _x(2, 5, 16, seed=10).requires_grad_(True)
    m(x).square().sum().backward()
    grads = [x.grad] + [p.grad for p in m.parameters()]
    assert all(g is not None and bool(tp.isfinite(g).all()) for g in grads)
    assert float(m.k_proj.weight.grad.abs().sum()) > 0
    m64 = GroupedQueryAttention(8, 2, 1, qk_norm=True, dtype=tp.float64)
    x64 = _x(1, 3, 8, seed=11, dtype=tp.float64).requires_grad_(True)
    assert tp.autograd.gradcheck(m64, (x64,))


def test_swiglu_mlp_matches_numpy() -> None:
    tp.manual_seed(12)
    mlp = SwiGLUMLP(12)
    assert (mlp.hidden_size, mlp.intermediate_size) == (12, 32)
    assert SwiGLUMLP(12, 20, bias=True).up_proj.bias is not None
    x = np.random.default_rng(13).standard_normal((2, 3, 12))
    g, u = x @ _w(mlp.gate_proj).T, x @ _w(mlp.up_proj).T
    ref = (g / (1 + np.exp(-g)) * u) @ _w(mlp.down_proj).T
    np.testing.assert_allclose(mlp(tp.tensor(x, dtype=tp.float32)).detach().numpy(), ref, atol=1e-5)
    assert mlp(tp.zeros(12)).shape == (12,) and mlp(tp.zeros(0, 12)).shape == (0, 12)


def test_transformer_block_matches_numpy_and_passes_cache_args() -> None:
    tp.manual_seed(14)
    block = TransformerBlock(16, GroupedQueryAttention(16, 4, 2), mlp_intermediate_size=24, rms_norm_eps=1e-5)
    assert isinstance(block.input_norm, nn.RMSNorm) and block.post_norm.eps == 1e-5
    assert block.mlp.intermediate_size == 24
    with tp.no_grad():
        block.input_norm.weight.copy_(tp.linspace(0.5, 2.0, 16))
    x = np.random.default_rng(15).standard_normal((2, 5, 16))
    h = x + _np_gqa(block.mixer, _np_rms(x, block.input_norm.weight.detach().numpy(), 1e-5))
    n = _np_rms(h, block.post_norm.weight.detach().numpy(), 1e-5)
    g, u = n @ _w(block.mlp.gate_proj).T, n @ _w(block.mlp.up_proj).T
    ref = h + (g / (1 + np.exp(-g)) * u) @ _w(block.mlp.down_proj).T
    np.testing.assert_allclose(block(tp.tensor(x, dtype=tp.float32)).detach().numpy(), ref, atol=3e-5)

    seen = {}

    class Spy(nn.Module):
        def forward(self, hidden_states, position_ids=None, past_key_values=None):
            seen.update(position_ids=position_ids, past_key_values=past_key_values)
            return hidden_states

    cache, pos = DynamicCache(), tp.arange(5)[None]
    TransformerBlock(16, Spy())(tp.zeros(1, 5, 16), position_ids=pos, past_key_values=cache)
    assert seen["position_ids"] is pos and seen["past_key_values"] is cache


def _tinylm():
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    try:
        from tinylm import TinyLM
    finally:
        sys.path.pop(0)
    return TinyLM


def test_tinylm_cached_decode_equals_full_recompute() -> None:
    tp.manual_seed(16)
    model = _tinylm()(hidden=32, layers=2, heads=4, kv_heads=2)
    assert model.lm_head.weight is model.embed.weight
    ids = tp.tensor(np.random.default_rng(17).integers(0, 256, (2, 10)))
    with tp.no_grad():
        full = model(ids).numpy()
        cache = DynamicCache()
        steps = [model(ids[:, :6], past_key_values=cache)]
        steps += [model(ids[:, i : i + 1], past_key_values=cache) for i in range(6, 10)]
    np.testing.assert_allclose(np.concatenate([s.numpy() for s in steps], 1), full, atol=1e-4)
    assert len(cache) == 2 and cache.get_seq_length(1) == 10
    untied = _tinylm()(hidden=32, layers=1, heads=4, kv_heads=1, tie_embeddings=False)
    assert untied.lm_head.weight is not untied.embed.weight
