"""The cross-mixer test matrix of the sequence-mixer zoo (issue 6): every token mixer, inside
TransformerBlock in a tiny language model, checked for forward shapes, finite gradients for every
parameter, causality, prefill + cached decode against full recompute, greedy `generate` with each compatible
cache against cache-free decoding, and that a couple of hundred optimiser steps make the loss fall.

The references here are the model itself run without a cache (full recompute), the same model's outputs with
a future token changed (causality) and a NumPy cross-entropy of held-out rows; each mixer's own maths is
checked against NumPy in its own test file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import functional as F
from tensorplay.nn.cache import (
    DynamicCache,
    LinearStateCache,
    PagedCache,
    QuantizedCache,
    SlidingWindowCache,
    StaticCache,
)
from tensorplay.nn.generation import generate
from tensorplay.nn.modules.causal_attention import GroupedQueryAttention
from tensorplay.nn.modules.causal_encoder_decoder import CausalEncoderDecoder
from tensorplay.nn.modules.compressed_attention import CompressedSparseAttention
from tensorplay.nn.modules.gated_delta import GatedDeltaNet
from tensorplay.nn.modules.kimi_delta import KimiDeltaAttention
from tensorplay.nn.modules.latent_attention import MultiheadLatentAttention

VOCAB, HIDDEN, LAYERS = 24, 32, 2


@dataclass(frozen=True)
class Mixer:
    """One row of the matrix: how to build the mixer, its preferred cache and the caches it works with."""

    name: str
    make: Callable[[int, int], nn.Module]  # (hidden_size, layer_idx) -> mixer
    preferred: Callable[[nn.Module], object]  # the first mixer -> an empty cache
    caches: tuple[tuple[str, Callable[[nn.Module], object]], ...]  # id, first mixer -> a cache
    decode_atol: float = 1e-5
    # Caches that hold an approximation (int8): cached decoding is checked against a relative bound only.
    approximate_caches: tuple[tuple[str, Callable[[nn.Module], object]], ...] = ()
    # Submodules that the language-model loss cannot reach by construction (checked to get no gradient).
    no_grad_parts: tuple[str, ...] = ()


_KV_CACHES = (
    ("dynamic", lambda m: DynamicCache()),
    ("static", lambda m: StaticCache(64)),
    ("paged", lambda m: PagedCache(4, 16)),
    ("quantized", lambda m: QuantizedCache()),
)

MIXERS = [
    Mixer(
        "gqa",
        lambda c, i: GroupedQueryAttention(c, 4, num_kv_heads=2, qk_norm=True, layer_idx=i),
        lambda m: DynamicCache(),
        (*_KV_CACHES, ("sliding_window", lambda m: SlidingWindowCache(64))),
    ),
    # v_head_dim != nope + rope: the explicit bottom-right-masked path; low-rank queries.
    Mixer(
        "mla",
        lambda c, i: MultiheadLatentAttention(
            c,
            4,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=6,
            q_lora_rank=12,
            layer_idx=i,
        ),
        lambda m: DynamicCache(),
        (*_KV_CACHES, ("sliding_window", lambda m: SlidingWindowCache(64))),
    ),
    # A window of 4 and compression rate 4: sequences of 6-14 tokens use both the window and the entries.
    Mixer(
        "csa",
        lambda c, i: CompressedSparseAttention(
            c,
            num_heads=4,
            head_dim=8,
            q_lora_rank=16,
            compress_rate=4,
            window_size=4,
            index_n_heads=2,
            index_head_dim=8,
            index_topk=2,
            layer_idx=i,
        ),
        lambda m: SlidingWindowCache(m.sliding_window),
        (
            ("sliding_window", lambda m: SlidingWindowCache(m.sliding_window)),
            ("dynamic", lambda m: DynamicCache()),
            ("static", lambda m: StaticCache(64)),
            ("paged", lambda m: PagedCache(4, 16)),
        ),
        decode_atol=1e-4,
        approximate_caches=(("quantized", lambda m: QuantizedCache()),),
        # The lightning indexer only chooses which entries are visible (top-k, a 0 / -inf mask): a discrete
        # choice with no gradient; DeepSeek-V3.2 trains it with a separate distillation loss.
        no_grad_parts=(".indexer.",),
    ),
    # chunk_size 4 so that prefills of 6-14 tokens cross chunk boundaries.
    Mixer(
        "gated_delta",
        lambda c, i: GatedDeltaNet(c, num_v_heads=4, num_k_heads=2, head_k_dim=8, chunk_size=4, layer_idx=i),
        lambda m: LinearStateCache(),
        (("linear_state", lambda m: LinearStateCache()),),
    ),
    Mixer(
        "kimi_delta",
        lambda c, i: KimiDeltaAttention(c, num_heads=4, head_dim=8, chunk_size=4, layer_idx=i),
        lambda m: LinearStateCache(),
        (("linear_state", lambda m: LinearStateCache()),),
    ),
]


class ZooLM(nn.Module):
    """Embedding, `LAYERS` TransformerBlocks around the mixer, final RMSNorm and an lm head."""

    def __init__(self, mixer: Mixer) -> None:
        super().__init__()
        self.spec = mixer
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(
            nn.TransformerBlock(HIDDEN, mixer.make(HIDDEN, i), mlp_intermediate_size=48)
            for i in range(LAYERS)
        )
        self.norm = nn.RMSNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.head(self.norm(x))

    def create_empty_cache(self):
        return self.spec.preferred(self.blocks[0].mixer)


def _model(mixer: Mixer, seed: int = 0) -> ZooLM:
    tp.manual_seed(seed)
    model = ZooLM(mixer)
    return model.eval()  # as constructed: test_mixer_init.py checks that no path starts dead


def _ids(b: int, t: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, (b, t))


def _logits(model: ZooLM, ids: np.ndarray, cache=None) -> np.ndarray:
    with tp.no_grad():
        return model(tp.tensor(ids), past_key_values=cache).numpy()


mixers = pytest.mark.parametrize("mixer", MIXERS, ids=lambda m: m.name)


@mixers
def test_forward_shapes(mixer: Mixer) -> None:
    model = _model(mixer)
    for b, t in ((2, 7), (1, 1)):
        x = tp.randn(b, t, HIDDEN)
        assert tuple(model.blocks[0].mixer(x).shape) == (b, t, HIDDEN)
        assert tuple(model(tp.tensor(_ids(b, t))).shape) == (b, t, VOCAB)


def _check_gradients(mixer: Mixer, model: nn.Module) -> None:
    """Every parameter has a finite gradient, except those of `mixer.no_grad_parts`, which have none."""
    for name, p in model.named_parameters():
        if any(part in f".{name}" for part in mixer.no_grad_parts):
            assert p.grad is None, f"{mixer.name}: {name} was expected to get no gradient"
        else:
            assert p.grad is not None, f"{mixer.name}: no gradient reached {name}"
            assert np.isfinite(p.grad.numpy()).all(), name


@mixers
def test_every_parameter_gets_a_finite_gradient(mixer: Mixer) -> None:
    model = _model(mixer).train()
    ids = tp.tensor(_ids(2, 12))
    loss = F.cross_entropy(model(ids[:, :-1]).reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    loss.backward()
    _check_gradients(mixer, model)
    # Something flowed through every mixer's own projections.
    for block in model.blocks:
        assert any(np.abs(p.grad.numpy()).max() > 0 for p in block.mixer.parameters())


@mixers
def test_changing_a_future_token_never_changes_past_outputs(mixer: Mixer) -> None:
    model = _model(mixer)
    ids = _ids(2, 10)
    base = _logits(model, ids)
    for j in (3, 9):
        changed = ids.copy()
        changed[:, j] = (changed[:, j] + 5) % VOCAB
        out = _logits(model, changed)
        np.testing.assert_allclose(out[:, :j], base[:, :j], atol=1e-6, rtol=0)
        assert np.abs(out[:, j] - base[:, j]).max() > 1e-4  # the changed token itself does matter


def _cache_cases(with_approximate: bool) -> list:
    """(mixer, cache factory, cache id) for every compatible cache, plus the model's preferred one (None)."""
    cases = []
    for m in MIXERS:
        caches = m.caches + (m.approximate_caches if with_approximate else ())
        for cache_id, make in caches:
            cases.append(pytest.param(m, make, cache_id, id=f"{m.name}-{cache_id}"))
        cases.append(pytest.param(m, None, "preferred", id=f"{m.name}-preferred"))
    return cases


@pytest.mark.parametrize("mixer,make_cache,cache_id", _cache_cases(with_approximate=True))
def test_prefill_then_cached_decode_equals_full_recompute(mixer: Mixer, make_cache, cache_id: str) -> None:
    model = _model(mixer)
    ids = _ids(2, 14, seed=3)
    full = _logits(model, ids)
    cache = model.create_empty_cache() if make_cache is None else make_cache(model.blocks[0].mixer)
    # int8 keys and values: each within 1/254 of its vector's absmax, a few per mille of the logits here.
    atol = 0.02 * np.abs(full).max() if cache_id == "quantized" else mixer.decode_atol
    prefill = _logits(model, ids[:, :9], cache)
    np.testing.assert_allclose(prefill, full[:, :9], atol=atol, rtol=0)
    for j in range(9, 14):
        step = _logits(model, ids[:, j : j + 1], cache)
        np.testing.assert_allclose(step[:, 0], full[:, j], atol=atol, rtol=0)


@pytest.mark.parametrize("mixer,make_cache,cache_id", _cache_cases(with_approximate=False))
def test_greedy_generate_with_each_cache_equals_cache_free(mixer: Mixer, make_cache, cache_id: str) -> None:
    model = _model(mixer, seed=2)
    prompt = tp.tensor(_ids(2, 6, seed=4))
    want = generate(model, prompt, max_new_tokens=10, use_cache=False)
    cache = make_cache(model.blocks[0].mixer) if make_cache is not None else None
    got = generate(model, prompt, max_new_tokens=10, past_key_values=cache)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _np_cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    z = logits.reshape(-1, VOCAB).astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-logp[np.arange(len(targets.ravel())), targets.ravel()].mean())


def _np_bigram_loss(rows: np.ndarray) -> float:
    """The lowest cross-entropy any model that sees only the current token can reach on `rows`' transitions:
    the empirical conditional entropy H(next | current)."""
    prev, nxt = rows[:, :-1].ravel(), rows[:, 1:].ravel()
    counts = np.zeros((VOCAB, VOCAB))
    np.add.at(counts, (prev, nxt), 1)
    p_next = counts / np.maximum(counts.sum(1, keepdims=True), 1)
    return float(-np.log(p_next[prev, nxt]).mean())


@mixers
def test_a_small_model_trains_and_uses_the_context(mixer: Mixer) -> None:
    # 16 random rows of 12 tokens: tokens recur with different successors, so a model that ignores the
    # sequence cannot beat the bigram bound; a working mixer memorises the rows well below it.
    rows = np.random.default_rng(0).integers(0, VOCAB, (16, 12))
    bigram = _np_bigram_loss(rows)
    model = _model(mixer).train()
    opt = tp.optim.AdamW(model.parameters(), lr=1e-2)
    batch = tp.tensor(rows)

    def np_loss() -> float:
        return _np_cross_entropy(_logits(model, rows[:, :-1]), rows[:, 1:])

    before = np_loss()
    for _ in range(60):
        loss = F.cross_entropy(model(batch[:, :-1]).reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = np_loss()
    assert before > 0.8 * np.log(VOCAB)  # it starts near chance
    assert after < 0.5 * bigram < before, (before, bigram, after)


@mixers
def test_each_mixer_fits_causal_encoder_decoder(mixer: Mixer) -> None:
    tp.manual_seed(0)
    model = CausalEncoderDecoder(
        HIDDEN, num_heads=4, n_encoder_layers=1, n_decoder_layers=1, mixer_factory=mixer.make
    )
    assert type(model.decoder[0].mixer) is type(model.encoder[0].mixer) is type(mixer.make(HIDDEN, 0))
    x = tp.randn(2, 6, HIDDEN, requires_grad=True)
    out = model(x)
    assert tuple(out.shape) == (2, 6, HIDDEN)
    out.square().mean().backward()
    assert np.isfinite(x.grad.numpy()).all() and np.abs(x.grad.numpy()).max() > 0
    _check_gradients(mixer, model)
