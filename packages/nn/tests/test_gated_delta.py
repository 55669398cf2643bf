"""Tests of the gated delta rule and `GatedDeltaNet` (nn/modules/gated_delta.py, _delta_rule.py): the rule
functions against a float64 NumPy recurrence written here, chunked == recurrent, continuation from a state,
gradcheck; `l2norm` and `GatedRMSNorm` against NumPy; the mixer against a NumPy forward from its weights (the
fused qkvz/ba layout), inside a TransformerBlock (shapes, gradients, causality), with a `LinearStateCache`
(prefill + decode == full pass), through `generate`, and a tiny LM that trains; the docs page's example.

The NumPy references and the small model are also used by test_kimi_delta.py.
"""

from __future__ import annotations

import doctest
import importlib
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn.cache import LinearStateCache
from tensorplay.nn.generation import generate
from tensorplay.nn.modules._delta_rule import _chunk_delta_rule_reference, _unit_lower_inverse
from tensorplay.nn.modules.gated_delta import (
    GatedDeltaNet,
    GatedRMSNorm,
    chunk_gated_delta_rule,
    l2norm,
    recurrent_gated_delta_rule,
)
from tensorplay.nn.modules.modern_block import TransformerBlock

ROOT = Path(__file__).resolve().parents[3]


# ---------------------------------------------------------------- NumPy references (float64, loops)


def np_l2norm(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).sum(-1, keepdims=True) + 1e-6)


def np_delta_rule(q, k, v, g, beta, state=None, l2: bool = False):
    """The decayed delta rule one head and one token at a time; `g` is [B,T,H] or [B,T,H,Dk]."""
    q, k, v, g, beta = (np.asarray(a, dtype=np.float64) for a in (q, k, v, g, beta))
    if l2:
        q, k = np_l2norm(q), np_l2norm(k)
    b, t, h, dk = q.shape
    q = q / np.sqrt(dk)
    dv = v.shape[-1]
    s_all = np.zeros((b, h, dk, dv)) if state is None else np.array(state, dtype=np.float64)
    out = np.zeros((b, t, h, dv))
    for bi in range(b):
        for hi in range(h):
            s = s_all[bi, hi]
            for ti in range(t):
                decay = np.exp(g[bi, ti, hi])
                s = s * (decay[:, None] if np.ndim(decay) else decay)
                kt = k[bi, ti, hi]
                u = beta[bi, ti, hi] * (v[bi, ti, hi] - s.T @ kt)
                s = s + np.outer(kt, u)
                out[bi, ti, hi] = s.T @ q[bi, ti, hi]
            s_all[bi, hi] = s
    return out, s_all


def np_short_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """silu of the causal depthwise conv of x [B, T, C] with w [C, K] (tap K-1 reads the current token)."""
    b, t, c = x.shape
    kk = w.shape[1]
    y = np.zeros_like(x)
    for ti in range(t):
        for j in range(kk):
            src = ti - (kk - 1) + j
            if src >= 0:
                y[:, ti] += x[:, src] * w[:, j]
    return y / (1 + np.exp(-y))


def np_gated_rms(x: np.ndarray, gate: np.ndarray, weight: np.ndarray, eps: float, act: str) -> np.ndarray:
    a = gate / (1 + np.exp(-gate)) if act == "silu" else 1 / (1 + np.exp(-gate))
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * weight * a


def np_softplus(x: np.ndarray) -> np.ndarray:
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


def W(p) -> np.ndarray:
    """A parameter (or Linear's weight) as float64 NumPy."""
    return (p.weight if hasattr(p, "weight") else p).detach().numpy().astype(np.float64)


def rule_inputs(b, t, h, dk, dv, per_channel=False, seed=0, dtype=np.float32, state=True):
    rng = np.random.default_rng(seed)
    arrays = {
        "q": rng.standard_normal((b, t, h, dk)),
        "k": rng.standard_normal((b, t, h, dk)),
        "v": rng.standard_normal((b, t, h, dv)),
        "g": -rng.uniform(0.01, 1.0, (b, t, h, dk) if per_channel else (b, t, h)),
        "beta": rng.uniform(0.05, 1.0, (b, t, h)),
    }
    if state:
        arrays["s0"] = rng.standard_normal((b, h, dk, dv)) * 0.5
    return {name: a.astype(dtype) for name, a in arrays.items()}


def as_tp(arrays: dict) -> dict:
    return {name: tp.tensor(a) for name, a in arrays.items()}


def composite_rule(q, k, v, g, beta, chunk_size, initial_state, l2: bool = True):
    """The tensor-op chunked scan (`_chunk_delta_rule_reference`) behind the rule functions' contract: the
    public functions run the native op `delta_rule`, and this is what it is checked against."""
    if l2:
        q, k = l2norm(q), l2norm(k)
    q = q * int(q.shape[-1]) ** -0.5
    return _chunk_delta_rule_reference(q, k, v, g, beta, initial_state=initial_state, chunk_size=chunk_size)


# ---------------------------------------------------------------- a tiny LM around any mixer


class MixerLM(nn.Module):
    """Embedding -> TransformerBlocks around `make_mixer(layer_idx)` -> RMSNorm -> lm head, with the
    generation contract; its preferred cache is a `LinearStateCache`."""

    def __init__(self, make_mixer: Callable[[int], nn.Module], vocab: int = 16, hidden: int = 16, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(
            TransformerBlock(hidden, make_mixer(i), mlp_intermediate_size=2 * hidden) for i in range(layers)
        )
        self.norm = nn.RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.caches_made = 0

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.lm_head(self.norm(x))

    def create_empty_cache(self) -> LinearStateCache:
        self.caches_made += 1
        return LinearStateCache()


def check_conv1d_init(w: np.ndarray, kernel_size: int) -> None:
    """`w` looks drawn from nn.Conv1d's init of a depthwise filter: U(±1/sqrt(kernel_size)), fan_in = taps."""
    bound = 1.0 / np.sqrt(kernel_size)
    assert np.abs(w).max() <= bound + 1e-7, "outside nn.Conv1d's init bound"
    assert np.abs(w).max() > 0.8 * bound and abs(w.mean()) < 0.1 * bound  # spread over the range, centred
    np.testing.assert_allclose(w.std(), bound / np.sqrt(3), rtol=0.15)  # the std of U(-b, b)


def randomize_convs(model: nn.Module, std: float = 0.5) -> None:
    """Larger conv weights than the init's U(±1/2), so that a test's short sequences exercise the conv."""
    with tp.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("conv1d_weight"):
                p.normal_(0.0, std)


def check_prefill_then_decode(mixer: nn.Module, x: tp.Tensor, split: int, atol: float = 1e-5) -> None:
    """Prefill x[:, :split], then one token at a time, equals one full pass within atol."""
    full = mixer(x).detach().numpy()
    cache = LinearStateCache()
    with tp.no_grad():
        parts = [mixer(x[:, :split], past_key_values=cache)]
        parts += [mixer(x[:, i : i + 1], past_key_values=cache) for i in range(split, int(x.shape[1]))]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, atol=atol)


def check_causal(model: nn.Module, x: tp.Tensor, cut: int) -> None:
    y = model(x).detach().numpy()
    x2 = x.clone()
    x2[:, cut:] = 3.0 * x2[:, cut:] + 1.0
    y2 = model(x2).detach().numpy()
    np.testing.assert_allclose(y2[:, :cut], y[:, :cut], atol=1e-6)
    assert np.abs(y2[:, cut:] - y[:, cut:]).max() > 1e-3


def check_remembers_beyond_the_conv_window(model: nn.Module, x: tp.Tensor) -> None:
    """Changing only token 0 changes the output at position 12, which the 4-tap convolution cannot see:
    the information travelled through the recurrent state."""
    x2 = x.clone()
    x2[:, 0] = x2[:, 0] + 1.0
    assert np.abs(model(x2).detach().numpy()[:, 12] - model(x).detach().numpy()[:, 12]).max() > 1e-5


def check_trains(make_mixer: Callable[[int], nn.Module], steps: int = 200) -> tuple[float, float]:
    """A 2-layer LM of width 16 learns to output the token two places back; returns (first, last) losses."""
    threads = tp.get_num_threads()
    tp.set_num_threads(1)  # tensors this small gain nothing from the pool; its wake-ups would dominate
    try:
        return _train(make_mixer, steps)
    finally:
        tp.set_num_threads(threads)


def _train(make_mixer: Callable[[int], nn.Module], steps: int) -> tuple[float, float]:
    tp.manual_seed(0)
    model = MixerLM(make_mixer)
    randomize_convs(model, 0.3)
    opt = tp.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        ids = tp.tensor(rng.integers(0, 16, (8, 12)))
        logits = model(ids[:, 2:])  # predict the token two places back (inside the conv's reach)
        loss = nn.functional.cross_entropy(logits[:, 2:].reshape(-1, 16), ids[:, 2:-2].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return float(np.mean(losses[:10])), float(np.mean(losses[-10:]))


def run_doc_examples(page: str) -> dict:
    """Run every ```python block of docs/mixers/<page> in one namespace (as a reader pasting them would)."""
    text = (ROOT / "docs" / "mixers" / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, f"{page} has no python example"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)
    return namespace


# ---------------------------------------------------------------- l2norm and GatedRMSNorm


def test_l2norm_matches_numpy() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4, 5))
    np.testing.assert_allclose(l2norm(tp.tensor(x)).numpy(), np_l2norm(x), rtol=1e-12)
    np.testing.assert_allclose(
        l2norm(tp.tensor(x), dim=0, eps=0.5).numpy(), x / np.sqrt((x * x).sum(0, keepdims=True) + 0.5)
    )
    assert float(l2norm(tp.zeros(4)).abs().max()) == 0.0  # zero stays zero (eps keeps it finite)


@pytest.mark.parametrize("act", ["silu", "sigmoid"])
def test_gated_rms_norm_matches_numpy(act: str) -> None:
    rng = np.random.default_rng(2)
    x, gate, w = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 3, 8)), rng.uniform(0.5, 2, 8)
    norm = GatedRMSNorm(8, eps=1e-5, activation=act)
    assert tuple(norm.weight.shape) == (8,) and float(norm.weight.sum()) == 8.0  # ones
    with tp.no_grad():
        norm.weight.copy_(tp.tensor(w, dtype=tp.float32))
    got = norm(tp.tensor(x, dtype=tp.float32), tp.tensor(gate, dtype=tp.float32))
    assert got.dtype == tp.float32
    np.testing.assert_allclose(got.detach().numpy(), np_gated_rms(x, gate, w, 1e-5, act), atol=2e-6)
    norm64 = GatedRMSNorm(8, activation=act, dtype=tp.float64)
    got64 = norm64(tp.tensor(x), tp.tensor(gate))
    assert got64.dtype == tp.float64
    np.testing.assert_allclose(
        got64.detach().numpy(), np_gated_rms(x, gate, np.ones(8), 1e-6, act), rtol=1e-12
    )


def test_gated_rms_norm_rejects_other_activations() -> None:
    with pytest.raises(ValueError, match=r"GatedRMSNorm: activation must be 'silu' or 'sigmoid', got 'relu'"):
        GatedRMSNorm(4, activation="relu")


# ---------------------------------------------------------------- the rule functions


@pytest.mark.parametrize("l2", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_rule_matches_numpy(l2: bool, with_state: bool) -> None:
    a = rule_inputs(2, 9, 3, 4, 5, seed=3, dtype=np.float64)
    t = as_tp(a)
    out, state = recurrent_gated_delta_rule(
        t["q"], t["k"], t["v"], t["g"], t["beta"], t["s0"] if with_state else None, True, l2
    )
    want_out, want_state = np_delta_rule(
        a["q"], a["k"], a["v"], a["g"], a["beta"], a["s0"] if with_state else None, l2
    )
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(state.numpy(), want_state, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("t,chunk", [(1, 64), (5, 4), (16, 16), (37, 8), (37, 7), (70, 64), (130, 64)])
def test_chunk_equals_recurrent_float32(t: int, chunk: int) -> None:
    tt = as_tp(rule_inputs(2, t, 3, 16, 8, seed=t))
    args = (tt["q"], tt["k"], tt["v"], tt["g"], tt["beta"])
    out_c, s_c = chunk_gated_delta_rule(
        *args, chunk_size=chunk, initial_state=tt["s0"], output_final_state=True, use_qk_l2norm_in_kernel=True
    )
    out_r, s_r = recurrent_gated_delta_rule(
        *args, initial_state=tt["s0"], output_final_state=True, use_qk_l2norm_in_kernel=True
    )
    out_x, s_x = composite_rule(*args, chunk, tt["s0"])
    for out, state in ((out_c, s_c), (out_x, s_x)):  # the native op, and the composite reference
        assert out.dtype == tp.float32 and state.dtype == tp.float32 and tuple(state.shape) == (2, 3, 16, 8)
        np.testing.assert_allclose(out.numpy(), out_r.numpy(), atol=1e-5)
        np.testing.assert_allclose(state.numpy(), s_r.numpy(), atol=1e-5)


def test_chunk_matches_numpy_and_the_composite_reference() -> None:
    a = rule_inputs(1, 45, 2, 8, 6, seed=4, dtype=np.float64)
    t = as_tp(a)
    out, state = chunk_gated_delta_rule(
        t["q"], t["k"], t["v"], t["g"], t["beta"], 16, t["s0"], True, use_qk_l2norm_in_kernel=True
    )
    want_out, want_state = np_delta_rule(a["q"], a["k"], a["v"], a["g"], a["beta"], a["s0"], l2=True)
    np.testing.assert_allclose(out.numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(state.numpy(), want_state, atol=1e-10)
    # The composite reference takes q, k as given: normalise and scale them here.
    qn, kn = np_l2norm(a["q"]) / np.sqrt(8), np_l2norm(a["k"])
    ref_out, ref_state = _chunk_delta_rule_reference(
        tp.tensor(qn), tp.tensor(kn), t["v"], t["g"], t["beta"], initial_state=t["s0"], chunk_size=16
    )
    np.testing.assert_allclose(ref_out.numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(ref_state.numpy(), want_state, atol=1e-10)
    nat_out, nat_state = tp.delta_rule(  # the native op, called directly with the same contract
        tp.tensor(qn), tp.tensor(kn), t["v"], t["g"], t["beta"], initial_state=t["s0"], chunk_size=16
    )
    np.testing.assert_allclose(nat_out.numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(nat_state.numpy(), want_state, atol=1e-10)


@pytest.mark.parametrize("split", [1, 20, 32, 33])
@pytest.mark.parametrize("rule", ["chunk", "recurrent"])
def test_continuing_from_a_final_state_equals_the_full_sequence(split: int, rule: str) -> None:
    tt = as_tp(rule_inputs(2, 50, 2, 8, 4, seed=5, state=False))
    fn = chunk_gated_delta_rule if rule == "chunk" else recurrent_gated_delta_rule
    kw = {"chunk_size": 16} if rule == "chunk" else {}
    kw.update(output_final_state=True, use_qk_l2norm_in_kernel=True)
    names = ("q", "k", "v", "g", "beta")
    full, full_state = fn(*(tt[n] for n in names), **kw)
    first, mid = fn(*(tt[n][:, :split] for n in names), **kw)
    second, end = fn(*(tt[n][:, split:] for n in names), initial_state=mid, **kw)
    np.testing.assert_allclose(np.concatenate([first.numpy(), second.numpy()], 1), full.numpy(), atol=1e-5)
    np.testing.assert_allclose(end.numpy(), full_state.numpy(), atol=1e-5)


def test_rule_dtypes_state_flag_empty_and_noncontiguous_inputs() -> None:
    a = rule_inputs(1, 6, 2, 4, 3, seed=6)
    t = as_tp(a)
    out, state = chunk_gated_delta_rule(t["q"], t["k"], t["v"], t["g"], t["beta"])
    assert state is None and out.dtype == tp.float32 and tuple(out.shape) == (1, 6, 2, 3)
    out_r, state_r = recurrent_gated_delta_rule(t["q"], t["k"], t["v"], t["g"], t["beta"])
    assert state_r is None
    np.testing.assert_allclose(out.numpy(), out_r.numpy(), atol=1e-6)
    # float64 inputs keep float64 all the way (state too).
    a64 = rule_inputs(1, 6, 2, 4, 3, seed=6, dtype=np.float64)
    t64 = as_tp(a64)
    out64, s64 = chunk_gated_delta_rule(
        t64["q"], t64["k"], t64["v"], t64["g"], t64["beta"], output_final_state=True
    )
    assert out64.dtype == tp.float64 and s64.dtype == tp.float64
    # T = 0: an empty output, and the state passes through.
    empty = {n: x[:, :0] for n, x in t.items() if n != "s0"}
    for fn in (chunk_gated_delta_rule, recurrent_gated_delta_rule):
        out0, s0 = fn(*(empty[n] for n in ("q", "k", "v", "g", "beta")), output_final_state=True)
        assert tuple(s0.shape) == (1, 2, 4, 3) and float(s0.abs().max()) == 0.0  # zeros when none given
        out0, s0 = fn(
            *(empty[n] for n in ("q", "k", "v", "g", "beta")), initial_state=t["s0"], output_final_state=True
        )
        assert tuple(out0.shape) == (1, 0, 2, 3)
        np.testing.assert_allclose(s0.numpy(), a["s0"], atol=0)
    # Non-contiguous inputs (views with permuted strides) give the same results.
    qt = tp.tensor(np.ascontiguousarray(a["q"].transpose(0, 2, 1, 3))).transpose(1, 2)
    assert not qt.is_contiguous()
    out_nc, _ = chunk_gated_delta_rule(qt, t["k"], t["v"], t["g"], t["beta"], chunk_size=4)
    np.testing.assert_allclose(out_nc.numpy(), out.numpy(), atol=1e-6)


def test_rule_errors_name_the_function_and_shapes() -> None:
    t = as_tp(rule_inputs(1, 4, 2, 3, 5, seed=7))
    q, k, v, g, beta, s0 = t["q"], t["k"], t["v"], t["g"], t["beta"], t["s0"]
    with pytest.raises(
        ValueError,
        match=r"chunk_gated_delta_rule: query and key must both be \[B, T, H, Dk\], "
        r"got query \(1, 4, 2, 3\) and key \(1, 4, 2\)",
    ):
        chunk_gated_delta_rule(q, k[..., 0], v, g, beta)
    with pytest.raises(
        ValueError,
        match=r"recurrent_gated_delta_rule: value must be \[B, T, H, Dv\] = \[1, 4, 2, Dv\], "
        r"got \(1, 4, 3, 5\)",
    ):
        recurrent_gated_delta_rule(q, k, tp.zeros(1, 4, 3, 5), g, beta)
    with pytest.raises(
        ValueError, match=r"chunk_gated_delta_rule: g must be \[1, 4, 2\], got \(1, 4, 2, 3\)"
    ):
        chunk_gated_delta_rule(q, k, v, tp.zeros(1, 4, 2, 3), beta)
    with pytest.raises(ValueError, match=r"beta must be \[1, 4, 2\], got \(1, 4\)"):
        chunk_gated_delta_rule(q, k, v, g, beta[..., 0])
    with pytest.raises(
        ValueError, match=r"initial_state must be \[B, H, Dk, Dv\] = \[1, 2, 3, 5\], got \(1, 2, 5, 3\)"
    ):
        recurrent_gated_delta_rule(q, k, v, g, beta, s0.transpose(2, 3))
    with pytest.raises(ValueError, match=r"chunk_gated_delta_rule: chunk_size must be a positive int, got 0"):
        chunk_gated_delta_rule(q, k, v, g, beta, chunk_size=0)


def test_unit_lower_inverse_matches_numpy() -> None:
    rng = np.random.default_rng(8)
    for c in (1, 2, 5, 16, 23):
        a = np.tril(rng.standard_normal((3, c, c)), -1)
        want = np.linalg.inv(np.eye(c) + a)
        np.testing.assert_allclose(_unit_lower_inverse(tp.tensor(a)).numpy(), want, atol=1e-10)


@pytest.mark.parametrize("rule", ["chunk", "composite", "recurrent"])
def test_rule_gradcheck(rule: str) -> None:
    t = as_tp(rule_inputs(1, 5, 2, 3, 2, seed=9, dtype=np.float64))
    inputs = tuple(t[n].requires_grad_(True) for n in ("q", "k", "v", "g", "beta", "s0"))

    def fn(q, k, v, g, beta, s0):
        if rule == "chunk":  # chunk 2 over T = 5: two full chunks and a padded one
            return chunk_gated_delta_rule(q, k, v, g, beta, 2, s0, True, use_qk_l2norm_in_kernel=True)
        if rule == "composite":
            return composite_rule(q, k, v, g, beta, 2, s0)
        return recurrent_gated_delta_rule(q, k, v, g, beta, s0, True, use_qk_l2norm_in_kernel=True)

    assert tp.autograd.gradcheck(fn, inputs)


def test_chunk_composite_and_recurrent_gradients_agree() -> None:
    names = ("q", "k", "v", "g", "beta", "s0")
    grads = {}
    for rule in ("chunk", "composite", "recurrent"):
        t = as_tp(rule_inputs(2, 21, 2, 8, 4, seed=10))
        ins = [t[n].requires_grad_(True) for n in names]
        if rule == "chunk":
            out, s = chunk_gated_delta_rule(*ins[:5], 8, ins[5], True, True)
        elif rule == "composite":
            out, s = composite_rule(*ins[:5], 8, ins[5])
        else:
            out, s = recurrent_gated_delta_rule(*ins[:5], ins[5], True, True)
        (out.sin().sum() + s.square().sum()).backward()
        grads[rule] = [x.grad.numpy() for x in ins]
    for rule in ("chunk", "composite"):
        for name, got, want in zip(names, grads[rule], grads["recurrent"], strict=True):
            np.testing.assert_allclose(got, want, atol=2e-4, rtol=1e-4, err_msg=f"{rule}: {name}")


# ---------------------------------------------------------------- GatedDeltaNet


def np_gated_delta_net(m: GatedDeltaNet, x: np.ndarray) -> np.ndarray:
    """GatedDeltaNet's forward in float64 from its weights, with the fused layout spelled out."""
    b, t, _ = x.shape
    hk, hv, dk, dv = m.num_k_heads, m.num_v_heads, m.head_k_dim, m.head_v_dim
    r = hv // hk
    qkvz = (x @ W(m.in_proj_qkvz).T).reshape(b, t, hk, 2 * dk + 2 * r * dv)
    q, k = qkvz[..., :dk], qkvz[..., dk : 2 * dk]
    v, z = qkvz[..., 2 * dk : 2 * dk + r * dv], qkvz[..., 2 * dk + r * dv :]
    ba = (x @ W(m.in_proj_ba).T).reshape(b, t, hk, 2 * r)
    bb, a = ba[..., :r].reshape(b, t, hv), ba[..., r:].reshape(b, t, hv)
    mixed = np.concatenate([q.reshape(b, t, -1), k.reshape(b, t, -1), v.reshape(b, t, -1)], -1)
    mixed = np_short_conv(mixed, W(m.conv1d_weight))
    q = mixed[..., : hk * dk].reshape(b, t, hk, dk)
    k = mixed[..., hk * dk : 2 * hk * dk].reshape(b, t, hk, dk)
    v = mixed[..., 2 * hk * dk :].reshape(b, t, hv, dv)
    q, k = np.repeat(q, r, axis=2), np.repeat(k, r, axis=2)  # value head j reads key head j // r
    beta = 1 / (1 + np.exp(-bb))
    g = -np.exp(W(m.A_log)) * np_softplus(a + W(m.dt_bias))
    o, _ = np_delta_rule(q, k, v, g, beta, l2=True)
    o = np_gated_rms(o, z.reshape(b, t, hv, dv), W(m.norm.weight), m.norm.eps, "silu")
    return o.reshape(b, t, hv * dv) @ W(m.out_proj).T


def make_gdn(**kw) -> GatedDeltaNet:
    args = dict(hidden_size=24, num_v_heads=4, num_k_heads=2, head_k_dim=8, head_v_dim=6, chunk_size=8)
    m = GatedDeltaNet(**{**args, **kw})
    randomize_convs(m)
    return m


def test_gated_delta_net_attributes_parameters_and_init() -> None:
    tp.manual_seed(11)
    m = GatedDeltaNet(32, num_v_heads=6, num_k_heads=2, head_k_dim=8, layer_idx=3)
    assert (m.hidden_size, m.num_v_heads, m.num_k_heads, m.head_k_dim, m.head_v_dim) == (32, 6, 2, 8, 8)
    assert (m.conv_kernel_size, m.chunk_size, m.layer_idx, m.activation) == (4, 64, 3, "silu")
    assert (m.key_dim, m.value_dim, m.conv_dim) == (16, 48, 80)
    assert tuple(m.in_proj_qkvz.weight.shape) == (2 * 16 + 2 * 48, 32) and m.in_proj_qkvz.bias is None
    assert tuple(m.in_proj_ba.weight.shape) == (12, 32) and m.in_proj_ba.bias is None
    assert tuple(m.conv1d_weight.shape) == (80, 4)
    check_conv1d_init(m.conv1d_weight.detach().numpy(), kernel_size=4)
    assert m.conv1d_bias is None
    np.testing.assert_array_equal(m.dt_bias.detach().numpy(), np.ones(6))
    a = np.exp(m.A_log.detach().numpy())
    assert a.shape == (6,) and a.min() >= 0.01 - 1e-6 and a.max() <= 16.0 + 1e-4
    assert isinstance(m.norm, GatedRMSNorm) and m.norm.activation == "silu" and m.norm.dim == 8
    assert tuple(m.out_proj.weight.shape) == (32, 48) and m.out_proj.bias is None
    names = "in_proj_qkvz.weight in_proj_ba.weight conv1d_weight dt_bias A_log norm.weight out_proj.weight"
    assert {n for n, _ in m.named_parameters()} == set(names.split())
    m2 = GatedDeltaNet(
        16, 2, 2, 4, head_v_dim=3, conv_kernel_size=2, rms_norm_eps=1e-5, chunk_size=16, dtype=tp.float64
    )
    assert m2.norm.eps == 1e-5 and m2.conv1d_weight.dtype == tp.float64 and m2.value_dim == 6


def test_gated_delta_net_errors() -> None:
    with pytest.raises(
        ValueError, match=r"GatedDeltaNet: num_v_heads \(6\) must be divisible by num_k_heads \(4\)"
    ):
        GatedDeltaNet(32, 6, 4, 8)
    m = GatedDeltaNet(16, 2, 1, 4)
    with pytest.raises(
        ValueError, match=r"GatedDeltaNet: expected hidden_states \[B, T, 16\], got \(2, 3, 8\)"
    ):
        m(tp.zeros(2, 3, 8))
    with pytest.raises(
        TypeError, match=r"GatedDeltaNet: past_key_values must be a LinearStateCache.*DynamicCache"
    ):
        m(tp.zeros(1, 3, 16), past_key_values=tp.nn.cache.DynamicCache())


@pytest.mark.parametrize("hv,hk", [(4, 2), (2, 2), (3, 1)])
def test_gated_delta_net_matches_numpy(hv: int, hk: int) -> None:
    tp.manual_seed(12)
    m = make_gdn(num_v_heads=hv, num_k_heads=hk)
    with tp.no_grad():
        m.dt_bias.copy_(tp.linspace(-1.0, 1.0, hv))
        m.norm.weight.copy_(tp.linspace(0.5, 1.5, m.head_v_dim))
    x = np.random.default_rng(13).standard_normal((2, 19, 24))
    got = m(tp.tensor(x, dtype=tp.float32)).detach().numpy()
    np.testing.assert_allclose(got, np_gated_delta_net(m, x), atol=2e-5)
    assert m(tp.zeros(1, 0, 24)).shape == (1, 0, 24)


def test_gated_delta_net_in_bfloat16_keeps_a_float32_state() -> None:
    tp.manual_seed(19)
    m = make_gdn()
    m16 = make_gdn().to(tp.bfloat16)
    m16.load_state_dict({k: v.to(tp.bfloat16) for k, v in m.state_dict().items()})
    x = tp.randn(2, 9, 24)
    cache = LinearStateCache()
    with tp.no_grad():
        y16 = m16(x.to(tp.bfloat16), past_key_values=cache)
        step = m16(x[:, :1].to(tp.bfloat16), past_key_values=cache)
    assert y16.dtype == tp.bfloat16 and step.dtype == tp.bfloat16
    assert cache.recurrent_states[0].dtype == tp.float32
    ref = m.to(tp.float32)(tp.tensor(x.to(tp.bfloat16).float().numpy())).detach().numpy()
    np.testing.assert_allclose(y16.float().numpy(), ref, atol=0.05 * np.abs(ref).max())


def test_gated_delta_net_in_a_block_shapes_gradients_and_causality() -> None:
    tp.manual_seed(14)
    block = TransformerBlock(24, make_gdn(layer_idx=1))
    x = tp.randn(2, 20, 24).requires_grad_(True)
    y = block(x, position_ids=tp.arange(20)[None].expand(2, 20))
    assert y.shape == (2, 20, 24)
    y.square().sum().backward()
    assert x.grad is not None and bool(tp.isfinite(x.grad).all())
    for name, p in block.named_parameters():
        assert p.grad is not None and bool(tp.isfinite(p.grad).all()), name
        assert float(p.grad.abs().sum()) > 0, name  # every parameter is wired in
    with tp.no_grad():
        for cut in (1, 7, 8, 13):  # inside and at the edges of the 8-token chunks
            check_causal(block, x.detach(), cut)
        block.mixer.A_log.fill_(-2.0)  # slow decays (A = e^-2), so token 0 still counts 12 steps later
        check_remembers_beyond_the_conv_window(block, x.detach())


def test_gated_delta_net_gradcheck_float64() -> None:
    tp.manual_seed(15)
    m = make_gdn(hidden_size=8, num_v_heads=2, num_k_heads=1, head_k_dim=3, head_v_dim=2, chunk_size=2)
    m = m.to(tp.float64)
    x = tp.randn(1, 5, 8, dtype=tp.float64).requires_grad_(True)
    assert tp.autograd.gradcheck(m, (x,))


@pytest.mark.parametrize("t", [4, 9, 17])
def test_prefill_then_one_decode_step_equals_the_full_pass(t: int) -> None:
    tp.manual_seed(16)
    m = make_gdn(layer_idx=2)
    x = tp.randn(2, t, 24)
    full = m(x).detach().numpy()
    cache = LinearStateCache()
    with tp.no_grad():
        first = m(x[:, : t - 1], past_key_values=cache)
        last = m(x[:, t - 1 :], past_key_values=cache)
    np.testing.assert_allclose(np.concatenate([first.numpy(), last.numpy()], 1), full, atol=1e-5)
    assert sorted(cache.conv_states) == [2] and sorted(cache.recurrent_states) == [2]
    assert tuple(cache.conv_states[2].shape) == (2, m.conv_dim, 3)
    state = cache.recurrent_states[2]
    assert tuple(state.shape) == (2, 4, 8, 6) and state.dtype == tp.float32


def test_cached_decoding_token_by_token_and_in_blocks() -> None:
    tp.manual_seed(17)
    m = make_gdn()
    x = tp.randn(1, 26, 24)
    check_prefill_then_decode(m, x, split=3)  # the shortest prefill that fills the conv window
    full = m(x).detach().numpy()
    cache = LinearStateCache()
    with tp.no_grad():  # several tokens into a non-empty cache take the chunked path from the state
        parts = [m(x[:, a:b], past_key_values=cache) for a, b in ((0, 5), (5, 9), (9, 10), (10, 26))]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, atol=1e-5)
    # The state's memory does not grow with the sequence.
    assert tuple(cache.recurrent_states[0].shape) == (1, 4, 8, 6)
    assert tuple(cache.conv_states[0].shape) == (1, m.conv_dim, 3)


def test_generate_with_linear_state_cache_equals_cache_free_greedy() -> None:
    tp.manual_seed(18)
    model = MixerLM(lambda i: GatedDeltaNet(16, 2, 1, 8, chunk_size=4, layer_idx=i))
    randomize_convs(model)
    prompt = tp.tensor(np.random.default_rng(19).integers(0, 16, (3, 5)))
    cached = generate(model, prompt, max_new_tokens=12)
    assert model.caches_made == 1  # generate asked the model for its preferred cache
    uncached = generate(model, prompt, max_new_tokens=12, use_cache=False)
    np.testing.assert_array_equal(cached.numpy(), uncached.numpy())
    cache = LinearStateCache()
    again = generate(model, prompt, max_new_tokens=12, past_key_values=cache)
    np.testing.assert_array_equal(again.numpy(), cached.numpy())
    assert sorted(cache.recurrent_states) == [0, 1] and tuple(cache.recurrent_states[1].shape) == (3, 2, 8, 8)


def test_a_tiny_lm_with_gated_delta_net_trains() -> None:
    first, last = check_trains(lambda i: GatedDeltaNet(16, 2, 1, 8, chunk_size=8, layer_idx=i))
    assert last < 0.5 * first, (first, last)


def test_docstring_examples_and_docs_page() -> None:
    for name in ("gated_delta", "_delta_rule"):
        module = importlib.import_module(f"tensorplay_nn.nn.modules.{name}")
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, name
    run_doc_examples("gated_delta.md")
