"""Tests of the per-channel gated delta rule and `KimiDeltaAttention` (nn/modules/kimi_delta.py): the rule
functions against the float64 NumPy recurrence of test_gated_delta.py (which decays each key row by its own
gate), chunked == recurrent, continuation, gradcheck, strong per-channel decays; the mixer against a NumPy
forward from its weights, in a TransformerBlock (shapes, gradients, causality), with a `LinearStateCache`
(prefill + decode == full pass), through `generate`, a tiny LM that trains; the docs page's example."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from test_gated_delta import (
    MixerLM,
    W,
    as_tp,
    check_causal,
    check_conv1d_init,
    check_prefill_then_decode,
    check_remembers_beyond_the_conv_window,
    check_trains,
    composite_rule,
    np_delta_rule,
    np_gated_rms,
    np_l2norm,
    np_short_conv,
    np_softplus,
    randomize_convs,
    rule_inputs,
    run_doc_examples,
)

import tensorplay as tp
from tensorplay.nn.cache import LinearStateCache
from tensorplay.nn.generation import generate
from tensorplay.nn.modules._delta_rule import _chunk_delta_rule_reference
from tensorplay.nn.modules.gated_delta import GatedRMSNorm
from tensorplay.nn.modules.kimi_delta import (
    KimiDeltaAttention,
    chunk_kimi_delta_rule,
    recurrent_kimi_delta_rule,
)
from tensorplay.nn.modules.modern_block import TransformerBlock

NAMES = ("q", "k", "v", "g", "beta")

# ---------------------------------------------------------------- the rule functions


@pytest.mark.parametrize("l2", [False, True])
def test_recurrent_rule_matches_numpy(l2: bool) -> None:
    a = rule_inputs(2, 9, 3, 4, 5, per_channel=True, seed=1, dtype=np.float64)
    t = as_tp(a)
    out, state = recurrent_kimi_delta_rule(*(t[n] for n in NAMES), t["s0"], True, l2)
    want_out, want_state = np_delta_rule(*(a[n] for n in NAMES), a["s0"], l2)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(state.numpy(), want_state, rtol=1e-10, atol=1e-12)


def test_per_channel_gates_decay_each_state_row_on_its_own() -> None:
    # One head, keys zero: the state only decays, row d by exp(sum of g[:, d]).
    s0 = np.arange(1.0, 7.0).reshape(1, 1, 3, 2)
    g = np.array([-0.1, -1.0, 0.0])[None, None, None].repeat(4, 1)  # [1, 4, 1, 3]
    zeros = tp.zeros(1, 4, 1, 3, dtype=tp.float64)
    _, state = recurrent_kimi_delta_rule(
        zeros, zeros, tp.zeros(1, 4, 1, 2, dtype=tp.float64), tp.tensor(g),
        tp.ones(1, 4, 1, dtype=tp.float64), tp.tensor(s0), True,
    )  # fmt: skip
    np.testing.assert_allclose(state.numpy(), s0 * np.exp(4 * g[0, 0, 0])[None, None, :, None], rtol=1e-12)


@pytest.mark.parametrize("t,chunk", [(1, 64), (6, 4), (37, 8), (37, 7), (70, 64)])
def test_chunk_equals_recurrent_float32(t: int, chunk: int) -> None:
    tt = as_tp(rule_inputs(2, t, 3, 16, 8, per_channel=True, seed=t))
    args = tuple(tt[n] for n in NAMES)
    out_c, s_c = chunk_kimi_delta_rule(*args, chunk, tt["s0"], True, True)
    out_r, s_r = recurrent_kimi_delta_rule(*args, tt["s0"], True, True)
    out_x, s_x = composite_rule(*args, chunk, tt["s0"])
    for out, state in ((out_c, s_c), (out_x, s_x)):  # the native op, and the composite reference
        assert out.dtype == tp.float32 and state.dtype == tp.float32 and tuple(state.shape) == (2, 3, 16, 8)
        np.testing.assert_allclose(out.numpy(), out_r.numpy(), atol=1e-5)
        np.testing.assert_allclose(state.numpy(), s_r.numpy(), atol=1e-5)


def test_chunk_survives_gates_that_decay_by_more_than_float32_range() -> None:
    # Per-step decays of e^-30 per channel: e^{-γ} of one chunk is e^{+1800}, which would overflow a
    # factorised form; the pairwise exp(γ_t − γ_j) never does.
    a = rule_inputs(1, 64, 2, 8, 4, per_channel=True, seed=2)
    a["g"] = a["g"] * 30.0
    t = as_tp(a)
    out_c, s_c = chunk_kimi_delta_rule(*(t[n] for n in NAMES), 64, t["s0"], True, True)
    out_r, s_r = recurrent_kimi_delta_rule(*(t[n] for n in NAMES), t["s0"], True, True)
    out_x, s_x = composite_rule(*(t[n] for n in NAMES), 64, t["s0"])
    for out, state in ((out_c, s_c), (out_x, s_x)):
        assert bool(tp.isfinite(out).all()) and bool(tp.isfinite(state).all())
        np.testing.assert_allclose(out.numpy(), out_r.numpy(), atol=1e-5)
        np.testing.assert_allclose(state.numpy(), s_r.numpy(), atol=1e-5)


def test_chunk_matches_numpy_and_the_composite_reference() -> None:
    a = rule_inputs(1, 45, 2, 8, 6, per_channel=True, seed=3, dtype=np.float64)
    t = as_tp(a)
    out, state = chunk_kimi_delta_rule(
        *(t[n] for n in NAMES), 16, t["s0"], True, use_qk_l2norm_in_kernel=True
    )
    want_out, want_state = np_delta_rule(*(a[n] for n in NAMES), a["s0"], l2=True)
    np.testing.assert_allclose(out.numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(state.numpy(), want_state, atol=1e-10)
    qn, kn = tp.tensor(np_l2norm(a["q"]) / np.sqrt(8)), tp.tensor(np_l2norm(a["k"]))
    ref_out, ref_state = _chunk_delta_rule_reference(
        qn, kn, t["v"], t["g"], t["beta"], initial_state=t["s0"], chunk_size=16
    )
    np.testing.assert_allclose(ref_out.numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(ref_state.numpy(), want_state, atol=1e-10)
    nat_out, nat_state = tp.delta_rule(
        qn, kn, t["v"], t["g"], t["beta"], initial_state=t["s0"], chunk_size=16
    )
    np.testing.assert_allclose(nat_out.numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(nat_state.numpy(), want_state, atol=1e-10)


@pytest.mark.parametrize("split", [1, 16, 29])
@pytest.mark.parametrize("rule", ["chunk", "recurrent"])
def test_continuing_from_a_final_state_equals_the_full_sequence(split: int, rule: str) -> None:
    tt = as_tp(rule_inputs(2, 40, 2, 8, 4, per_channel=True, seed=4, state=False))
    fn = chunk_kimi_delta_rule if rule == "chunk" else recurrent_kimi_delta_rule
    kw = (
        {"chunk_size": 16, "use_qk_l2norm_in_kernel": True}
        if rule == "chunk"
        else {"use_qk_l2norm_in_kernel": True}
    )
    full, full_state = fn(*(tt[n] for n in NAMES), output_final_state=True, **kw)
    first, mid = fn(*(tt[n][:, :split] for n in NAMES), output_final_state=True, **kw)
    second, end = fn(*(tt[n][:, split:] for n in NAMES), initial_state=mid, output_final_state=True, **kw)
    np.testing.assert_allclose(np.concatenate([first.numpy(), second.numpy()], 1), full.numpy(), atol=1e-5)
    np.testing.assert_allclose(end.numpy(), full_state.numpy(), atol=1e-5)


def test_rule_shapes_empty_and_errors() -> None:
    t = as_tp(rule_inputs(1, 4, 2, 3, 5, per_channel=True, seed=5))
    out, state = chunk_kimi_delta_rule(*(t[n] for n in NAMES))
    assert tuple(out.shape) == (1, 4, 2, 5) and state is None
    out0, s0 = recurrent_kimi_delta_rule(*(t[n][:, :0] for n in NAMES), t["s0"], True)
    assert tuple(out0.shape) == (1, 0, 2, 5) and tuple(s0.shape) == (1, 2, 3, 5)
    with pytest.raises(ValueError, match=r"chunk_kimi_delta_rule: g must be \[1, 4, 2, 3\], got \(1, 4, 2\)"):
        chunk_kimi_delta_rule(t["q"], t["k"], t["v"], t["g"][..., 0], t["beta"])
    with pytest.raises(
        ValueError, match=r"recurrent_kimi_delta_rule: beta must be \[1, 4, 2\], got \(1, 4, 2, 3\)"
    ):
        recurrent_kimi_delta_rule(t["q"], t["k"], t["v"], t["g"], t["g"])


@pytest.mark.parametrize("rule", ["chunk", "composite", "recurrent"])
def test_rule_gradcheck(rule: str) -> None:
    t = as_tp(rule_inputs(1, 5, 2, 3, 2, per_channel=True, seed=6, dtype=np.float64))
    inputs = tuple(t[n].requires_grad_(True) for n in (*NAMES, "s0"))

    def fn(q, k, v, g, beta, s0):
        if rule == "chunk":  # chunk 2 over T = 5: two full chunks and a padded one
            return chunk_kimi_delta_rule(q, k, v, g, beta, 2, s0, True, use_qk_l2norm_in_kernel=True)
        if rule == "composite":
            return composite_rule(q, k, v, g, beta, 2, s0)
        return recurrent_kimi_delta_rule(q, k, v, g, beta, s0, True, use_qk_l2norm_in_kernel=True)

    assert tp.autograd.gradcheck(fn, inputs)


# ---------------------------------------------------------------- KimiDeltaAttention


def np_kimi(m: KimiDeltaAttention, x: np.ndarray) -> np.ndarray:
    """KimiDeltaAttention's forward in float64 from its weights."""
    b, t, _ = x.shape
    h, d = m.num_heads, m.head_dim
    mixed = np.concatenate([x @ W(m.q_proj).T, x @ W(m.k_proj).T, x @ W(m.v_proj).T], -1)
    mixed = np_short_conv(mixed, W(m.conv1d_weight))
    q, k, v = (mixed[..., i * h * d : (i + 1) * h * d].reshape(b, t, h, d) for i in range(3))
    f = (x @ W(m.f_a_proj).T @ W(m.f_b_proj).T + W(m.dt_bias)).reshape(b, t, h, d)
    g = -np.exp(W(m.A_log)) * np_softplus(f)  # A_log [1, 1, H, 1] broadcasts over batch, time, channel
    beta = 1 / (1 + np.exp(-(x @ W(m.b_proj).T)))
    o, _ = np_delta_rule(q, k, v, g, beta, l2=True)
    gate = (x @ W(m.g_a_proj).T @ W(m.g_b_proj).T).reshape(b, t, h, d)
    o = np_gated_rms(o, gate, W(m.o_norm.weight), m.o_norm.eps, "sigmoid")
    return o.reshape(b, t, h * d) @ W(m.o_proj).T


def make_kda(**kw) -> KimiDeltaAttention:
    args = dict(hidden_size=24, num_heads=3, head_dim=8, chunk_size=8)
    m = KimiDeltaAttention(**{**args, **kw})
    randomize_convs(m)
    return m


def test_kimi_attributes_parameters_and_init() -> None:
    tp.manual_seed(7)
    m = KimiDeltaAttention(32, num_heads=4, head_dim=8, layer_idx=2)
    assert (m.hidden_size, m.num_heads, m.head_dim, m.conv_kernel_size, m.chunk_size) == (32, 4, 8, 4, 64)
    assert (m.layer_idx, m.activation, m.qkv_dim, m.conv_dim) == (2, "silu", 32, 96)
    for name, shape in [
        ("q_proj", (32, 32)), ("k_proj", (32, 32)), ("v_proj", (32, 32)), ("f_a_proj", (8, 32)),
        ("f_b_proj", (32, 8)), ("b_proj", (4, 32)), ("g_a_proj", (8, 32)), ("g_b_proj", (32, 8)),
        ("o_proj", (32, 32)),
    ]:  # fmt: skip
        layer = getattr(m, name)
        assert tuple(layer.weight.shape) == shape and layer.bias is None, name
    assert tuple(m.conv1d_weight.shape) == (96, 4)
    check_conv1d_init(m.conv1d_weight.detach().numpy(), kernel_size=4)
    assert m.conv1d_bias is None
    np.testing.assert_array_equal(m.dt_bias.detach().numpy(), np.zeros(32))
    a = np.exp(m.A_log.detach().numpy())
    assert a.shape == (1, 1, 4, 1) and a.min() >= 1.0 - 1e-5 and a.max() <= 16.0 + 1e-4
    assert isinstance(m.o_norm, GatedRMSNorm) and m.o_norm.activation == "sigmoid" and m.o_norm.dim == 8
    m2 = KimiDeltaAttention(16, 2, 4, conv_kernel_size=2, rms_norm_eps=1e-5, dtype=tp.float64)
    assert m2.o_norm.eps == 1e-5 and m2.A_log.dtype == tp.float64 and tuple(m2.conv1d_weight.shape) == (24, 2)
    with pytest.raises(
        ValueError, match=r"KimiDeltaAttention: expected hidden_states \[B, T, 16\], got \(1, 2, 3\)"
    ):
        m2(tp.zeros(1, 2, 3, dtype=tp.float64))


def test_kimi_matches_numpy() -> None:
    tp.manual_seed(8)
    m = make_kda()
    with tp.no_grad():
        m.dt_bias.copy_(tp.linspace(-1.0, 1.0, 24))
        m.o_norm.weight.copy_(tp.linspace(0.5, 1.5, 8))
    x = np.random.default_rng(9).standard_normal((2, 19, 24))
    got = m(tp.tensor(x, dtype=tp.float32)).detach().numpy()
    np.testing.assert_allclose(got, np_kimi(m, x), atol=2e-5)


def test_kimi_in_a_block_shapes_gradients_and_causality() -> None:
    tp.manual_seed(10)
    block = TransformerBlock(24, make_kda(layer_idx=1))
    x = tp.randn(2, 20, 24).requires_grad_(True)
    y = block(x, position_ids=tp.arange(20)[None].expand(2, 20))
    assert y.shape == (2, 20, 24)
    y.square().sum().backward()
    assert x.grad is not None and bool(tp.isfinite(x.grad).all())
    for name, p in block.named_parameters():
        assert p.grad is not None and bool(tp.isfinite(p.grad).all()), name
        assert float(p.grad.abs().sum()) > 0, name
    with tp.no_grad():
        for cut in (1, 7, 8, 13):
            check_causal(block, x.detach(), cut)
        block.mixer.A_log.fill_(-2.0)  # slow decays (A = e^-2), so token 0 still counts 12 steps later
        check_remembers_beyond_the_conv_window(block, x.detach())


def test_kimi_gradcheck_float64() -> None:
    tp.manual_seed(11)
    m = make_kda(hidden_size=6, num_heads=2, head_dim=2, chunk_size=2).to(tp.float64)
    x = tp.randn(1, 5, 6, dtype=tp.float64).requires_grad_(True)
    assert tp.autograd.gradcheck(m, (x,))


@pytest.mark.parametrize("t", [4, 9, 17])
def test_prefill_then_one_decode_step_equals_the_full_pass(t: int) -> None:
    tp.manual_seed(12)
    m = make_kda(layer_idx=1)
    x = tp.randn(2, t, 24)
    check_prefill_then_decode(m, x, split=t - 1)
    cache = LinearStateCache()
    with tp.no_grad():
        m(x, past_key_values=cache)
    assert sorted(cache.conv_states) == [1] and tuple(cache.conv_states[1].shape) == (2, 72, 3)
    state = cache.recurrent_states[1]
    assert tuple(state.shape) == (2, 3, 8, 8) and state.dtype == tp.float32


def test_cached_decoding_token_by_token_and_in_blocks() -> None:
    tp.manual_seed(13)
    m = make_kda()
    x = tp.randn(1, 22, 24)
    check_prefill_then_decode(m, x, split=3)
    full = m(x).detach().numpy()
    cache = LinearStateCache()
    with tp.no_grad():
        parts = [m(x[:, a:b], past_key_values=cache) for a, b in ((0, 6), (6, 7), (7, 15), (15, 22))]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, atol=1e-5)


def test_generate_with_linear_state_cache_equals_cache_free_greedy() -> None:
    tp.manual_seed(14)
    model = MixerLM(lambda i: KimiDeltaAttention(16, 2, 8, chunk_size=4, layer_idx=i))
    randomize_convs(model)
    prompt = tp.tensor(np.random.default_rng(15).integers(0, 16, (3, 5)))
    cached = generate(model, prompt, max_new_tokens=12)
    assert model.caches_made == 1
    uncached = generate(model, prompt, max_new_tokens=12, use_cache=False)
    np.testing.assert_array_equal(cached.numpy(), uncached.numpy())


def test_a_tiny_lm_with_kimi_delta_attention_trains() -> None:
    first, last = check_trains(lambda i: KimiDeltaAttention(16, 2, 8, chunk_size=8, layer_idx=i))
    assert last < 0.5 * first, (first, last)


def test_docstring_examples_and_docs_page() -> None:
    module = importlib.import_module("tensorplay_nn.nn.modules.kimi_delta")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
    run_doc_examples("kimi_delta.md")
