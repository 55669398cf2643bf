"""Tests of MultiheadLatentAttention (modules/latent_attention.py): a float64 NumPy reference written from the
maths (both query paths, both attention paths, both rope layouts), the absorbed decode form against the
expanded one, causality, prefill + cached decode against full recompute, the cache slots (layout, values,
memory per token against multi-head attention), gradients, a tiny MLA language model that trains, greedy
`generate` with a cache against cache-free decoding, and the runnable code of docs/mixers/mla.md."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import cache as cache_module
from tensorplay.nn.cache import DynamicCache, SlidingWindowCache, StaticCache
from tensorplay.nn.generation import generate
from tensorplay.nn.modules import latent_attention
from tensorplay.nn.modules.causal_attention import GroupedQueryAttention
from tensorplay.nn.modules.latent_attention import MultiheadLatentAttention
from tensorplay.nn.modules.modern_block import TransformerBlock

DOC = Path(__file__).resolve().parents[3] / "docs" / "mixers" / "mla.md"


def _np(t: tp.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def _lin(layer, x: np.ndarray) -> np.ndarray:
    y = x @ _np(layer.weight).T
    return y if layer.bias is None else y + _np(layer.bias)


def _rms(norm, x: np.ndarray) -> np.ndarray:
    eps = norm.eps if norm.eps is not None else np.finfo(norm.weight.detach().numpy().dtype).eps
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * _np(norm.weight)


def _rope(x: np.ndarray, pos: np.ndarray, base: float, interleaved: bool) -> np.ndarray:
    """Rotate all of `x` [B, H, T, p] by the angles of positions `pos` [B, T]."""
    p = x.shape[-1]
    ang = pos[:, None, :, None] * base ** (-np.arange(0, p, 2) / p)
    c, s = np.cos(ang), np.sin(ang)
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * c - b * s, b * c + a * s], -1).reshape(x.shape)
    a, b = x[..., : p // 2], x[..., p // 2 :]
    return np.concatenate([a * c - b * s, b * c + a * s], -1)


def _np_mla(
    m: MultiheadLatentAttention, x: np.ndarray, pos: np.ndarray | None = None, causal: bool = True
) -> np.ndarray:
    """MLA in float64 from the maths: per-head keys/values expanded from the latent, one head at a time,
    query i of T at absolute position pos[i] seeing keys at positions <= pos[i] (all keys if not causal)."""
    b, t, _ = x.shape
    h, n, p, r, v = m.num_heads, m.qk_nope_head_dim, m.qk_rope_head_dim, m.kv_lora_rank, m.v_head_dim
    pos = np.tile(np.arange(t), (b, 1)) if pos is None else pos
    if m.q_lora_rank is None:
        q = _lin(m.q_proj, x)
    else:
        q = _lin(m.q_b_proj, _rms(m.q_a_layernorm, _lin(m.q_a_proj, x)))
    q = q.reshape(b, t, h, n + p).transpose(0, 2, 1, 3)
    ckv = _lin(m.kv_a_proj_with_mqa, x)
    latent = _rms(m.kv_a_layernorm, ckv[..., :r])  # [B, T, r]
    base, inter = m.rope.base, m.rope.interleaved
    q = np.concatenate([q[..., :n], _rope(q[..., n:], pos, base, inter)], -1)
    k_rope = _rope(ckv[:, None, :, r:], pos, base, inter)[:, 0]  # [B, T, p]
    kv = (latent @ _np(m.kv_b_proj.weight).T).reshape(b, t, h, n + v)
    out = np.empty((b, t, h, v))
    visible = (pos[:, None, :] <= pos[:, :, None]) | (not causal)  # [B, query, key]
    for head in range(h):
        k = np.concatenate([kv[:, :, head, :n], k_rope], -1)  # [B, T, n + p]
        scores = q[:, head] @ k.transpose(0, 2, 1) / np.sqrt(n + p)
        scores = np.where(visible, scores, -np.inf)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        out[:, :, head] = (w / w.sum(-1, keepdims=True)) @ kv[:, :, head, n:]
    return _lin(m.o_proj, out.reshape(b, t, h * v))


def _x(b: int, t: int, c: int, seed: int = 0, dtype=tp.float32) -> tp.Tensor:
    return tp.tensor(np.random.default_rng(seed).standard_normal((b, t, c)), dtype=dtype)


def _perturb_norms(m: MultiheadLatentAttention) -> None:
    """Non-trivial norm weights, so that a skipped norm shows in the comparisons."""
    with tp.no_grad():
        m.kv_a_layernorm.weight.copy_(tp.linspace(0.5, 1.5, m.kv_lora_rank))
        if m.q_a_layernorm is not None:
            m.q_a_layernorm.weight.copy_(tp.linspace(1.5, 0.5, m.q_lora_rank))


# (embed, heads, kv_lora_rank, nope, rope, v_head_dim, q_lora_rank): v == nope + rope takes the fused path.
CONFIGS = {
    "fused": (32, 4, 12, 6, 4, 10, None),
    "explicit": (32, 4, 12, 6, 4, None, None),
    "fused-qlora": (32, 2, 8, 4, 2, 6, 10),
    "explicit-qlora": (24, 3, 10, 4, 6, 5, 7),
}


def _make(name: str, **kwargs) -> MultiheadLatentAttention:
    c, h, r, n, p, v, ql = CONFIGS[name]
    m = MultiheadLatentAttention(c, h, r, n, p, v_head_dim=v, q_lora_rank=ql, **kwargs)
    _perturb_norms(m)
    return m


def test_attributes_defaults_and_parameter_shapes() -> None:
    m = MultiheadLatentAttention(32, 4, 16, 8, 4, layer_idx=2)
    assert (m.embed_dim, m.num_heads, m.kv_lora_rank, m.layer_idx) == (32, 4, 16, 2)
    assert (m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim, m.qk_head_dim) == (8, 4, 8, 12)
    assert m.q_lora_rank is None and m.dropout == 0.0 and m.scaling == 12**-0.5
    assert m.q_a_proj is None and m.q_a_layernorm is None and m.q_b_proj is None
    assert tuple(m.q_proj.weight.shape) == (48, 32) and m.q_proj.bias is None
    assert tuple(m.kv_a_proj_with_mqa.weight.shape) == (20, 32)
    assert isinstance(m.kv_a_layernorm, nn.RMSNorm) and tuple(m.kv_a_layernorm.weight.shape) == (16,)
    assert tuple(m.kv_b_proj.weight.shape) == (4 * (8 + 8), 16) and m.kv_b_proj.bias is None
    assert tuple(m.o_proj.weight.shape) == (32, 32)
    assert isinstance(m.rope, nn.RotaryEmbedding) and (m.rope.dim, m.rope.base) == (4, 10000.0)
    m = MultiheadLatentAttention(
        32, 4, 16, 8, 4, v_head_dim=6, q_lora_rank=10, bias=True, rope_base=500.0, rope_interleaved=True
    )
    assert m.q_proj is None and tuple(m.q_a_proj.weight.shape) == (10, 32) and m.q_a_proj.bias is not None
    assert isinstance(m.q_a_layernorm, nn.RMSNorm) and m.q_a_layernorm.eps is None
    assert tuple(m.q_b_proj.weight.shape) == (48, 10) and m.q_b_proj.bias is None
    assert m.kv_a_proj_with_mqa.bias is not None and m.kv_b_proj.bias is None and m.o_proj.bias is not None
    assert tuple(m.kv_b_proj.weight.shape) == (4 * (8 + 6), 16) and tuple(m.o_proj.weight.shape) == (32, 24)
    assert m.rope.base == 500.0 and m.rope.interleaved is True
    names = {name for name, _ in m.named_parameters()}
    assert "q_proj.weight" not in names and "q_a_layernorm.weight" in names


def test_value_errors() -> None:
    with pytest.raises(ValueError, match=r"embed_dim \(30\) must be divisible by num_heads \(4\)"):
        MultiheadLatentAttention(30, 4, 8, 4, 4)
    with pytest.raises(ValueError, match=r"qk_rope_head_dim must be a positive even number, got 3"):
        MultiheadLatentAttention(32, 4, 8, 4, 3)
    with pytest.raises(ValueError, match=r"num_heads must be positive, got 0"):
        MultiheadLatentAttention(32, 0, 8, 4, 4)
    with pytest.raises(ValueError, match=r"expected hidden_states \[B, T, 32\], got \(2, 3, 8\)"):
        MultiheadLatentAttention(32, 4, 8, 4, 4)(tp.zeros(2, 3, 8))


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("interleaved,bias", [(False, False), (True, True)])
def test_forward_matches_numpy_float64(name: str, interleaved: bool, bias: bool) -> None:
    tp.manual_seed(0)
    m = _make(name, bias=bias, rope_interleaved=interleaved, dtype=tp.float64)
    x = _x(2, 7, m.embed_dim, seed=1, dtype=tp.float64)
    ref = _np_mla(m, x.numpy())
    for absorb in (False, True):
        m.absorb = absorb
        # Not 1e-12: the contract has RotaryEmbedding make its cos/sin tables in float32 for every dtype.
        np.testing.assert_allclose(m(x).detach().numpy(), ref, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", ["fused", "explicit-qlora"])
def test_forward_float32_and_explicit_positions(name: str) -> None:
    tp.manual_seed(2)
    m = _make(name)
    x = _x(2, 5, m.embed_dim, seed=3)
    np.testing.assert_allclose(m(x).detach().numpy(), _np_mla(m, _np(x)), atol=2e-5)
    pos = np.array([[10, 11, 12, 13, 14], [3, 4, 5, 6, 7]])
    got = m(x, position_ids=tp.tensor(pos)).detach().numpy()
    np.testing.assert_allclose(got, _np_mla(m, _np(x), pos), atol=2e-5)


def test_size_one_and_size_zero_batch() -> None:
    m = _make("explicit")
    assert m(_x(1, 1, 32)).shape == (1, 1, 32)
    assert m(tp.zeros(0, 3, 32)).shape == (0, 3, 32)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_causality(name: str) -> None:
    tp.manual_seed(4)
    m = _make(name)
    x = _x(2, 8, m.embed_dim, seed=5)
    y = m(x).detach().numpy()
    x2 = x.clone()
    x2[:, 5:] = 50.0  # change the future of position 4
    y2 = m(x2).detach().numpy()
    np.testing.assert_allclose(y2[:, :5], y[:, :5], atol=1e-6)
    assert np.abs(y2[:, 5:] - y[:, 5:]).max() > 1e-2


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize(
    "make_cache", [DynamicCache, lambda: StaticCache(16), lambda: SlidingWindowCache(16)], ids=str
)
def test_prefill_then_cached_decode_equals_full_recompute(name: str, make_cache) -> None:
    tp.manual_seed(6)
    m = _make(name, layer_idx=1)
    x = _x(2, 10, m.embed_dim, seed=7)
    full = m(x).detach().numpy()
    cache = make_cache()
    with tp.no_grad():
        parts = [m(x[:, :6], past_key_values=cache)]
        parts += [m(x[:, i : i + 1], past_key_values=cache) for i in range(6, 10)]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, atol=1e-5)
    assert cache.get_seq_length(1) == 10 and cache.get_seq_length(0) == 0


@pytest.mark.parametrize("name", ["explicit", "explicit-qlora"])
def test_explicit_path_takes_several_tokens_into_a_filled_cache(name: str) -> None:
    # The explicit path masks by absolute position, so a block of new tokens after a prefill is exact too.
    tp.manual_seed(8)
    m = _make(name)
    x = _x(2, 9, m.embed_dim, seed=9)
    full = m(x).detach().numpy()
    for absorb in (False, True):
        m.absorb = absorb
        cache = DynamicCache()
        with tp.no_grad():
            parts = [m(x[:, :4], past_key_values=cache), m(x[:, 4:7], past_key_values=cache)]
            parts.append(m(x[:, 7:], past_key_values=cache))
        np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, atol=1e-5)


def test_fused_path_with_several_tokens_into_a_filled_cache_is_unmasked() -> None:
    # The contract's fused path is causal only when query and key lengths agree: three tokens after a
    # prefill all see each other. Both forms must agree on that too.
    tp.manual_seed(10)
    m = _make("fused")
    x = _x(1, 7, 32, seed=11)
    outs = []
    for absorb in (False, True):
        m.absorb = absorb
        cache = DynamicCache()
        with tp.no_grad():
            m(x[:, :4], past_key_values=cache)
            outs.append(m(x[:, 4:], past_key_values=cache).numpy())
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-5)
    # Reference: each of the three new queries sees all 7 positions, its own future included.
    np.testing.assert_allclose(outs[0], _np_mla(m, _np(x), causal=False)[:, 4:], atol=2e-5)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_absorbed_form_equals_expanded_form(name: str) -> None:
    tp.manual_seed(12)
    m = _make(name)
    x = _x(3, 9, m.embed_dim, seed=13)
    outs = {}
    for absorb in (False, True):
        m.absorb = absorb
        cache = DynamicCache()
        with tp.no_grad():
            steps = [m(x, past_key_values=cache)]
            steps += [m(_x(3, 1, m.embed_dim, seed=20 + i), past_key_values=cache) for i in range(3)]
        outs[absorb] = np.concatenate([s.numpy() for s in steps], 1)
    np.testing.assert_allclose(outs[True], outs[False], atol=1e-5)


def test_decode_never_expands_the_cache() -> None:
    tp.manual_seed(14)
    m = _make("explicit-qlora")
    calls = []
    m.kv_b_proj.register_forward_hook(lambda mod, args, out: calls.append(tuple(args[0].shape)))
    cache = DynamicCache()
    x = _x(2, 12, m.embed_dim, seed=15)
    with tp.no_grad():
        m(x[:, :8], past_key_values=cache)
        prefill_calls = list(calls)
        for i in range(8, 12):
            m(x[:, i : i + 1], past_key_values=cache)
    assert calls == prefill_calls  # the decode steps attended in the latent space
    assert m._absorbed_is_cheaper(1, 4096) and m._absorbed_is_cheaper(1, 2)
    # A long prefill with a wide latent is cheaper expanded (2r > n + v).
    wide = MultiheadLatentAttention(64, 4, 64, 8, 4)
    assert not wide._absorbed_is_cheaper(512, 512)


def test_cache_slots_hold_the_normed_latent_and_rotated_shared_key() -> None:
    tp.manual_seed(16)
    m = _make("fused-qlora", layer_idx=2)
    x = _x(2, 5, m.embed_dim, seed=17)
    cache = DynamicCache()
    m(x, past_key_values=cache)
    r, p = m.kv_lora_rank, m.qk_rope_head_dim
    key, value = cache.key_cache[2], cache.value_cache[2]
    assert cache.key_cache[:2] == [None, None]
    assert tuple(key.shape) == (2, 1, 5, r) and tuple(value.shape) == (2, 1, 5, p)
    ckv = _lin(m.kv_a_proj_with_mqa, _np(x))
    np.testing.assert_allclose(_np(key)[:, 0], _rms(m.kv_a_layernorm, ckv[..., :r]), atol=1e-5)
    pos = np.tile(np.arange(5), (2, 1))
    rotated = _rope(ckv[:, None, :, r:], pos, m.rope.base, m.rope.interleaved)
    np.testing.assert_allclose(_np(value), rotated, atol=1e-5)


def test_cache_memory_per_token_against_multi_head_attention() -> None:
    c, h, r, p = 64, 8, 16, 4
    mla = MultiheadLatentAttention(c, h, kv_lora_rank=r, qk_nope_head_dim=8, qk_rope_head_dim=p)
    mha = GroupedQueryAttention(c, h)
    x = _x(2, 6, c, seed=18)
    caches = {"mla": DynamicCache(), "mha": DynamicCache()}
    with tp.no_grad():
        mla(x, past_key_values=caches["mla"])
        mha(x, past_key_values=caches["mha"])

    def per_token(cache: DynamicCache) -> int:
        key, value = cache.key_cache[0], cache.value_cache[0]
        b, s = int(key.shape[0]), int(key.shape[2])
        return (key.numel() + value.numel()) // (b * s)

    assert per_token(caches["mla"]) == r + p == 20
    assert per_token(caches["mha"]) == 2 * h * mha.head_dim == 128
    assert per_token(caches["mla"]) / per_token(caches["mha"]) == pytest.approx(20 / 128)


def test_quantized_cache_round_trip() -> None:
    quantized = getattr(cache_module, "QuantizedCache", None)
    if quantized is None:
        pytest.skip("QuantizedCache is not on this branch yet (branch `caches`)")
    tp.manual_seed(19)
    m = _make("explicit")
    x = _x(2, 8, 32, seed=20)
    full = m(x).detach().numpy()
    cache = quantized()
    with tp.no_grad():
        parts = [m(x[:, :5], past_key_values=cache)]
        parts += [m(x[:, i : i + 1], past_key_values=cache) for i in range(5, 8)]
    got = np.concatenate([q.numpy() for q in parts], 1)
    assert np.abs(got - full).max() <= 0.05 * np.abs(full).max()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gradients_reach_every_parameter_and_are_finite(name: str) -> None:
    tp.manual_seed(21)
    m = _make(name, bias=True)
    x = _x(2, 6, m.embed_dim, seed=22).requires_grad_(True)
    for absorb in (False, True):
        m.zero_grad()
        m.absorb = absorb
        m(x).square().sum().backward()
        for pname, param in m.named_parameters():
            assert param.grad is not None, pname
            assert bool(tp.isfinite(param.grad).all()), pname
            assert float(param.grad.abs().sum()) > 0, pname


@pytest.mark.parametrize("absorb", [False, True])
@pytest.mark.parametrize("v_head_dim,q_lora_rank", [(None, None), (6, 5)])
def test_gradcheck(absorb: bool, v_head_dim, q_lora_rank) -> None:
    tp.manual_seed(23)
    m = MultiheadLatentAttention(
        8, 2, 4, 2, 4, v_head_dim=v_head_dim, q_lora_rank=q_lora_rank, dtype=tp.float64
    )
    m.absorb = absorb
    x = _x(1, 3, 8, seed=24, dtype=tp.float64).requires_grad_(True)
    assert tp.autograd.gradcheck(m, (x,))


class _MLALM(nn.Module):
    """Embedding, two TransformerBlocks with MLA mixers, RMSNorm and an lm head: the generation contract."""

    def __init__(self, vocab: int = 16, hidden: int = 32, v_head_dim: int | None = None) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                hidden,
                MultiheadLatentAttention(
                    hidden, 4, 16, 8, 4, v_head_dim=v_head_dim, q_lora_rank=12, layer_idx=i
                ),
                mlp_intermediate_size=48,
            )
            for i in range(2)
        )
        self.norm = nn.RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.lm_head(self.norm(x))


def test_tiny_mla_language_model_trains() -> None:
    tp.manual_seed(25)
    vocab, seq = 16, 12
    model = _MLALM(vocab)
    rng = np.random.default_rng(26)
    # Each row counts up by a row-specific step mod 16: the next token needs the two previous ones.
    start, step = rng.integers(0, vocab, (64, 1)), rng.integers(1, 4, (64, 1))
    data = tp.tensor((start + step * np.arange(seq + 1)) % vocab)
    opt = tp.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for i in range(200):
        batch = data[(i * 16) % 64 : (i * 16) % 64 + 16]
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert np.isfinite(losses).all()
    assert np.mean(losses[-10:]) < 0.3 * np.mean(losses[:10]), (losses[:10], losses[-10:])


@pytest.mark.parametrize("v_head_dim", [None, 12])
def test_greedy_generate_with_cache_equals_cache_free(v_head_dim) -> None:
    tp.manual_seed(27)
    model = _MLALM(v_head_dim=v_head_dim).eval()
    with tp.no_grad():
        for p in model.parameters():
            p.mul_(3.0)  # sharper logits, so that greedy choices are far from ties
    prompt = tp.tensor(np.random.default_rng(28).integers(0, 16, (3, 5)))
    uncached = generate(model, prompt, max_new_tokens=12, use_cache=False)
    for cache in (None, DynamicCache(), StaticCache(32)):
        out = generate(model, prompt, max_new_tokens=12, past_key_values=cache)
        np.testing.assert_array_equal(out.numpy(), uncached.numpy())
    # And greedy decoding really is argmax of a full recompute at each step.
    seq = prompt
    with tp.no_grad():
        for _ in range(12):
            seq = tp.cat([seq, model(seq)[:, -1].argmax(-1)[:, None]], 1)
    np.testing.assert_array_equal(uncached.numpy(), seq.numpy())


def test_docstring_example_runs() -> None:
    result = doctest.testmod(latent_attention, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_doc_page_code_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, f"{DOC} has no python code block"
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {})
